// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Queue pairs: creation, the state machine, and teardown that is safe
 * against the receive path.
 *
 * dev->qps maps a QPN to its QP for the receive demux.  Lookups hold RCU
 * and take a reference; destroy unpublishes the QPN, waits for a grace
 * period, stops the engine and then waits for the last reference, so the
 * memory ib_core frees after destroy_qp returns is no longer in use.
 *
 * qp->state changes under state_spin (modify_qp also holds state_lock,
 * the engine may fail a QP from softirq); readers use READ_ONCE().
 */
#include "sroce_obj.h"

#define SROCE_GSI_QPN		1
#define SROCE_QPN_MAX		((1U << 24) - 1)

struct sroce_qp *sroce_qp_get(struct sroce_dev *dev, u32 qpn)
{
	struct sroce_qp *qp;

	rcu_read_lock();
	qp = xa_load(&dev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->free_done);
}

static void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Returns true if this call moved the QP into the error state. */
static bool sroce_qp_set_err(struct sroce_qp *qp)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&qp->state_spin, flags);
	changed = qp->state != IB_QPS_ERR;
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	qp->attr.qp_state = IB_QPS_ERR;
	qp->attr.cur_qp_state = IB_QPS_ERR;
	sroce_queue_set_state(&qp->sq, SROCE_RING_ERROR);
	sroce_queue_set_state(&qp->rq, SROCE_RING_ERROR);
	if (qp->sq.ctl)
		WRITE_ONCE(qp->sq.ctl->flags, 0);
	spin_unlock_irqrestore(&qp->state_spin, flags);
	/*
	 * A post that still saw the ring OK and the doorbell not needed
	 * published its WQE before: the flush that follows must see it.
	 */
	smp_mb();
	return changed;
}

/*
 * With the QP in error complete everything outstanding, send side first.
 * Called after the engine was told (it forgets its WQEs and its responder
 * completes the receive WQE it holds, keeping completions in order).
 */
void sroce_qp_flush(struct sroce_qp *qp)
{
	sroce_sq_flush(qp);
	sroce_rq_flush(qp);
}

void sroce_qp_error(struct sroce_qp *qp, enum ib_event_type ev)
{
	if (!sroce_qp_set_err(qp))
		return;
	/* Safe from engine and responder code: it takes no requester lock. */
	sroce_engine_qp_modified(qp, NULL, 0);
	sroce_qp_flush(qp);
	/* IB_EVENT_CQ_ERR (0) doubles as "no async event". */
	if (ev)
		sroce_qp_event(qp, ev);
}

/* Every send WQE begun before the move to SQD has completed. */
void sroce_qp_sq_drained(struct sroce_qp *qp)
{
	sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

static int sroce_qp_check_caps(struct sroce_dev *dev,
			       struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			   cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	return 0;
}

static u32 sroce_send_stride(u32 max_sge, u32 max_inline)
{
	u32 body = max_t(u32, max_sge * sizeof(struct sroce_sge), max_inline);

	return SROCE_SEND_WQE_HDR + round_up(max_t(u32, body, 16), 16);
}

static int sroce_qp_alloc_rings(struct sroce_qp *qp,
				struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 stride, num;
	int err;

	stride = sroce_send_stride(cap->max_send_sge, cap->max_inline_data);
	/* Hand out whatever the stride makes room for anyway. */
	qp->max_send_sge = min_t(u32, (stride - SROCE_SEND_WQE_HDR) /
				 sizeof(struct sroce_sge), SROCE_MAX_SGE);
	qp->max_inline = min_t(u32, stride - SROCE_SEND_WQE_HDR,
			       SROCE_MAX_INLINE);
	num = sroce_queue_num(cap->max_send_wr);
	err = sroce_queue_init(&qp->sq, num, stride);
	if (err)
		return err;
	qp->swqe = kvcalloc(num, sizeof(*qp->swqe), SROCE_GFP_USER);
	if (!qp->swqe)
		return -ENOMEM;
	if (!qp->is_user) {
		qp->sq_kmr = kvcalloc(num, sizeof(*qp->sq_kmr), SROCE_GFP_USER);
		if (!qp->sq_kmr)
			return -ENOMEM;
	}
	cap->max_send_wr = num;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;
	/* A TGT QP's SQ of one slot, asked for nothing, is never posted to. */
	if (init->qp_type == IB_QPT_XRC_TGT || init->rwq_ind_tbl)
		memset(cap, 0, sizeof(*cap));

	if (qp->srq || init->rwq_ind_tbl || init->qp_type == IB_QPT_XRC_INI ||
	    init->qp_type == IB_QPT_XRC_TGT) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	qp->max_recv_sge = max(cap->max_recv_sge, 1U);
	num = sroce_queue_num(cap->max_recv_wr);
	err = sroce_queue_init(&qp->rq, num, SROCE_RECV_WQE_HDR +
			       qp->max_recv_sge * sizeof(struct sroce_sge));
	if (err)
		return err;
	cap->max_recv_wr = num;
	cap->max_recv_sge = qp->max_recv_sge;
	return 0;
}

static void sroce_qp_free_rings(struct sroce_qp *qp)
{
	u32 i;

	/* References still held by WQEs the engine never retired. */
	if (qp->swqe && qp->sq.ctl) {
		for (i = qp->sq.kidx; i != qp->sq.kfetch; i++) {
			struct sroce_swqe *s = &qp->swqe[i & (qp->sq.num - 1)];

			if (s->ah)
				sroce_ah_put(s->ah);
			s->ah = NULL;
		}
	}
	kvfree(qp->swqe);
	qp->swqe = NULL;
	kvfree(qp->sq_kmr);
	qp->sq_kmr = NULL;
	sroce_queue_cleanup(&qp->sq);
	if (qp->rq.ctl)
		sroce_queue_cleanup(&qp->rq);
}

static int sroce_qp_map(struct sroce_qp *qp, struct ib_udata *udata)
{
	struct sroce_create_qp_resp resp = {};
	struct ib_ucontext *uctx = sroce_udata_uctx(udata);
	int err;

	/* an RSS QP's one-slot SQ is never posted to: not even mapped */
	if (!qp->ibqp.rwq_ind_tbl) {
		err = sroce_queue_map(&qp->sq, uctx, &resp.sq_mi);
		if (err)
			return err;
	}
	if (qp->rq.ctl) {
		err = sroce_queue_map(&qp->rq, uctx, &resp.rq_mi);
		if (err)
			return err;
	}
	return sroce_udata_out(udata, &resp, sizeof(resp));
}

static int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			   struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != SROCE_PORT)
			return -EINVAL;
		break;
	case IB_QPT_XRC_INI:
		/* an ib_send_wr cannot name the remote XRC SRQ */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_RAW_PACKET:
		/* for processes with CAP_NET_RAW (ib_core checks), not ULPs */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/* ib_core makes it for its opener, without udata */
		if (!init->xrcd)
			return -EINVAL;
		/* it only responds: no queue of its own is posted to */
		memset(&init->cap, 0, sizeof(init->cap));
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->source_qpn ||
	    (init->xrcd && init->qp_type != IB_QPT_XRC_TGT) ||
	    (init->rwq_ind_tbl && init->qp_type != IB_QPT_RAW_PACKET))
		return -EOPNOTSUPP;
	if (init->rwq_ind_tbl) {
		/* it only receives, into the WQs of its table */
		err = sroce_rss_qp_init(qp, init, udata);
		if (err)
			return err;
	} else if (init->qp_type == IB_QPT_XRC_TGT) {
		if (init->send_cq || init->recv_cq || init->srq)
			return -EINVAL;
	} else if (!init->send_cq ||
		   (!init->recv_cq && init->qp_type != IB_QPT_XRC_INI) ||
		   (init->srq && init->qp_type == IB_QPT_XRC_INI)) {
		return -EINVAL;
	}
	if (!init->rwq_ind_tbl && !sroce_udata_in_ok(udata))
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(struct sroce_create_qp_resp))
		return -EINVAL;
	err = sroce_qp_check_caps(dev, init);
	if (err)
		return err;
	if (atomic_inc_return(&dev->num_qp) > SROCE_MAX_QP) {
		atomic_dec(&dev->num_qp);
		return -ENOMEM;
	}

	qp->dev = dev;
	qp->pd = ibqp->pd ? to_spd(ibqp->pd) : NULL;
	qp->scq = init->send_cq ? to_scq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_scq(init->recv_cq) : NULL;
	qp->xrcd = init->xrcd ? to_sxrcd(init->xrcd) : NULL;
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->state_spin);
	mutex_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.cur_qp_state = IB_QPS_RESET;
	qp->attr.port_num = SROCE_PORT;
	qp->attr.path_mtu = dev->active_mtu;
	qp->mtu = init->qp_type == IB_QPT_RAW_PACKET ?
		  sroce_raw_max_frame(dev) : ib_mtu_enum_to_int(dev->active_mtu);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->free_done);

	err = sroce_qp_alloc_rings(qp, init);
	if (err)
		goto err_rings;

	/* Reserve the QPN; the QP becomes visible only once complete. */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = SROCE_GSI_QPN;
		err = xa_insert(&dev->qps, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&dev->qps, &qpn, NULL,
				      XA_LIMIT(SROCE_GSI_QPN + 1, SROCE_QPN_MAX),
				      &dev->next_qpn, GFP_KERNEL);
		err = err < 0 ? err : 0;
	}
	if (err)
		goto err_rings;
	ibqp->qp_num = qpn;
	qp->src_port = sroce_net_src_port(qpn);

	err = sroce_engine_qp_init(qp);
	if (err)
		goto err_engine;
	if (udata) {
		err = sroce_qp_map(qp, udata);
		if (err)
			goto err_engine;
	}
	if (qp->xrcd) {
		mutex_lock(&qp->xrcd->lock);
		list_add(&qp->xrcd_link, &qp->xrcd->tgts);
		mutex_unlock(&qp->xrcd->lock);
	}
	xa_store(&dev->qps, qpn, qp, GFP_KERNEL);
	return 0;

err_engine:
	sroce_engine_qp_stop(qp);
	sroce_engine_qp_cleanup(qp);
	xa_erase(&dev->qps, qpn);
err_rings:
	sroce_qp_free_rings(qp);
	atomic_dec(&dev->num_qp);
	return err;
}

static int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *dev = qp->dev;

	sroce_mcast_qp_destroy(qp);
	xa_erase(&dev->qps, ibqp->qp_num);
	/* No lookup can find the QP any more, nor still be taking a ref. */
	synchronize_rcu();
	sroce_engine_qp_stop(qp);
	/*
	 * Only now: until its responder stopped (and let go of its receive
	 * WQE), an XRC SRQ's destroy must find this QP to take it back.
	 */
	if (qp->xrcd) {
		mutex_lock(&qp->xrcd->lock);
		list_del(&qp->xrcd_link);
		mutex_unlock(&qp->xrcd->lock);
	}
	sroce_qp_put(qp);
	wait_for_completion(&qp->free_done);
	sroce_engine_qp_cleanup(qp);
	sroce_qp_free_rings(qp);
	atomic_dec(&dev->num_qp);
	return 0;
}

/* Drop every posted WQE without completions, as RESET requires. */
static void sroce_qp_reset_rings(struct sroce_qp *qp)
{
	struct sroce_queue *sq = &qp->sq, *rq = &qp->rq;
	unsigned long flags;
	u32 n, i;

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (i = sq->kidx; i != sq->kfetch; i++) {
		struct sroce_swqe *s = &qp->swqe[i & (sq->num - 1)];

		if (s->ah)
			sroce_ah_put(s->ah);
		s->ah = NULL;
	}
	sq->kfetch = sq->kidx;
	/* A corrupt producer index leaves the ring in error, not reset. */
	if (!sroce_queue_avail(sq, sq->kidx, &n)) {
		sq->kidx += n;
		sq->kfetch = sq->kidx;
		sroce_queue_publish_cons(sq);
		sroce_queue_set_state(sq, SROCE_RING_OK);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);

	if (!rq->ctl)
		return;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (!sroce_queue_avail(rq, rq->kidx, &n)) {
		rq->kidx += n;
		sroce_queue_publish_cons(rq);
		sroce_queue_set_state(rq, SROCE_RING_OK);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

#define SROCE_QP_UNSUPPORTED_MASK (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE)

static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	struct sroce_dev *dev = qp->dev;

	if (mask & SROCE_QP_UNSUPPORTED_MASK)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != SROCE_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096 ||
	     attr->path_mtu > dev->active_mtu))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn > 0xffffff)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn > 0xffffff)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SROCE_QPN_MAX)
		return -EINVAL;
	/*
	 * The FLUSH bits allow RDMA FLUSH of their placement type; rdma-core
	 * 56 sets them on every RC QP, so the region's bits decide.
	 * ON_DEMAND means nothing for a QP, but pyverbs' ODP tests pass their
	 * regions' flags here and NICs ignore it: so do we.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_ON_DEMAND |
				       SROCE_ACCESS_FLUSH)))
		return -EINVAL;
	return 0;
}

static void sroce_qp_apply_attr(struct sroce_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		a->ah_attr = attr->ah_attr;
		/* ib_core owns the GID reference; do not hand it out again. */
		a->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

static int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	struct sroce_av av;
	unsigned long flags;
	int err;

	if (!sroce_udata_in_ok(udata))
		return -EOPNOTSUPP;
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state :
					  READ_ONCE(qp->state);
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != READ_ONCE(qp->state) ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_AV) {
		memset(&av, 0, sizeof(av));
		err = sroce_av_from_attr(qp->dev, &attr->ah_attr, &av);
		if (err)
			goto out;
	}

	spin_lock_irqsave(&qp->state_spin, flags);
	/*
	 * The engine fails a QP under state_spin alone, so it may have moved
	 * it to ERR since the check above: then only what the spec allows
	 * from ERR may go on, or a zombie would come back to life.
	 */
	if (qp->state != cur &&
	    !ib_modify_qp_is_ok(qp->state, next, ibqp->qp_type, mask)) {
		spin_unlock_irqrestore(&qp->state_spin, flags);
		err = -EINVAL;
		goto out;
	}
	if (mask & IB_QP_AV)
		qp->av = av;
	sroce_qp_apply_attr(qp, attr, mask);
	if (ibqp->qp_type == IB_QPT_UD || ibqp->qp_type == IB_QPT_GSI)
		qp->mtu = ib_mtu_enum_to_int(qp->dev->active_mtu);
	else if (ibqp->qp_type == IB_QPT_RAW_PACKET)
		qp->mtu = sroce_raw_max_frame(qp->dev);
	if (next != IB_QPS_ERR) {
		WRITE_ONCE(qp->state, next);
		qp->attr.qp_state = next;
		qp->attr.cur_qp_state = next;
		if (next == IB_QPS_RESET) {
			sroce_queue_set_state(&qp->sq, SROCE_RING_OK);
			sroce_queue_set_state(&qp->rq, SROCE_RING_OK);
		}
	}
	spin_unlock_irqrestore(&qp->state_spin, flags);
	if (next == IB_QPS_ERR)
		sroce_qp_set_err(qp);

	err = sroce_engine_qp_modified(qp, attr, mask);
	if (err) {
		/* e.g. no memory for responder resources: the QP is unusable */
		if (sroce_qp_set_err(qp))
			sroce_engine_qp_modified(qp, NULL, 0);
		sroce_qp_flush(qp);
		goto out;
	}
	/* The engine has let go of the fetched WQEs; now drop the rest. */
	if (next == IB_QPS_RESET)
		sroce_qp_reset_rings(qp);
	if (next == IB_QPS_ERR)
		sroce_qp_flush(qp);
out:
	mutex_unlock(&qp->state_lock);
	return err;
}

static int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;

	/* Userspace may have posted to an errored QP since: complete it. */
	if (qp->is_user && READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_qp_flush(qp);

	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->state_spin, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irqrestore(&qp->state_spin, flags);
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    READ_ONCE(qp->req.draining);
	if (ibqp->qp_type != IB_QPT_XRC_TGT) {
		attr->cap.max_send_wr = qp->sq.num;
		attr->cap.max_send_sge = qp->max_send_sge;
		attr->cap.max_inline_data = qp->max_inline;
	}
	if (qp->rq.ctl) {
		attr->cap.max_recv_wr = qp->rq.num;
		attr->cap.max_recv_sge = qp->max_recv_sge;
	}

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = SROCE_PORT;
	return 0;
}

const struct ib_device_ops sroce_qp_ops = {
	.create_qp = sroce_create_qp,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,

	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
};
