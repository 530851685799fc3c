// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Shared receive queues.  The producer is userspace (or a kernel ULP via
 * post_srq_recv); the responders of every attached QP consume under
 * srq->lock through sroce_srq_take().
 */
#include "sroce_obj.h"

static u32 sroce_recv_stride(u32 max_sge)
{
	return SROCE_RECV_WQE_HDR + max(max_sge, 1U) * sizeof(struct sroce_sge);
}

/* The receive ring and its consumer state; also a WQ's (sroce_raw.c). */
int sroce_srq_ring_init(struct sroce_srq *srq, struct sroce_pd *pd,
			u32 max_wr, u32 max_sge, bool is_user)
{
	spin_lock_init(&srq->lock);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->free_done);
	srq->pd = pd;
	srq->is_user = is_user;
	srq->max_sge = max(max_sge, 1U);
	/* The limit is only armed by modify_srq (IBA: ignored at create). */
	srq->limit = 0;
	return sroce_queue_init(&srq->rq, sroce_queue_num(max_wr),
				sroce_recv_stride(srq->max_sge));
}

static int sroce_create_srq(struct ib_srq *ibsrq,
			    struct ib_srq_init_attr *init,
			    struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_create_srq_resp resp = {};
	u32 num;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (init->srq_type == IB_SRQT_XRC &&
	    (!init->ext.cq || !init->ext.xrc.xrcd))
		return -EINVAL;
	/*
	 * Kernel ULPs have no XRC: a kernel CQ's completions point at their
	 * QP, and a TGT QP's outlive it in the SRQ's CQ.
	 */
	if (init->srq_type == IB_SRQT_XRC && !udata)
		return -EOPNOTSUPP;
	if (!init->attr.max_wr || init->attr.max_wr > SROCE_MAX_SRQ_WR ||
	    init->attr.max_sge > SROCE_MAX_SGE)
		return -EINVAL;
	if (!sroce_udata_in_ok(udata))
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_srq) > SROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	if (init->srq_type == IB_SRQT_XRC) {
		srq->xrcd = to_sxrcd(init->ext.xrc.xrcd);
		srq->cq = to_scq(init->ext.cq);
	}
	err = sroce_srq_ring_init(srq, to_spd(ibsrq->pd), init->attr.max_wr,
				  init->attr.max_sge, !!udata);
	if (err)
		goto err_count;
	num = srq->rq.num;
	/*
	 * The number is reserved now; only an XRC SRQ is published, once
	 * complete, for TGT QPs to look up: a basic SRQ is never found, so
	 * its memory is not read under RCU after destroy.
	 */
	err = xa_alloc_cyclic(&dev->srqs, &srq->srq_num, NULL,
			      XA_LIMIT(1, (1U << 24) - 1), &dev->next_srq,
			      GFP_KERNEL);
	if (err < 0)
		goto err_queue;
	/* ib_core reports it to the creator; TGT requests name it */
	if (srq->xrcd)
		ibsrq->ext.xrc.srq_num = srq->srq_num;
	if (udata) {
		err = sroce_queue_map(&srq->rq, sroce_udata_uctx(udata),
				      &resp.mi);
		if (err)
			goto err_xa;
		resp.srq_num = srq->srq_num;
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}
	init->attr.max_wr = num;
	init->attr.max_sge = srq->max_sge;
	init->attr.srq_limit = 0;
	if (srq->xrcd)
		xa_store(&dev->srqs, srq->srq_num, srq, GFP_KERNEL);
	return 0;

err_xa:
	xa_erase(&dev->srqs, srq->srq_num);
err_queue:
	sroce_queue_cleanup(&srq->rq);
err_count:
	atomic_dec(&dev->num_srq);
	return err;
}

/*
 * The driver data of a user modify_srq: a new size needs somewhere to put
 * the new ring's mapping (struct sroce_modify_srq_cmd); anything beyond
 * it must be zero.
 */
static int sroce_modify_srq_cmd(struct ib_udata *udata,
				struct sroce_modify_srq_cmd *cmd)
{
	size_t n = min(udata->inlen, sizeof(*cmd));

	memset(cmd, 0, sizeof(*cmd));
	if (n && ib_copy_from_udata(cmd, udata, n))
		return -EFAULT;
	if (udata->inlen > sizeof(*cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(*cmd),
				 udata->inlen - sizeof(*cmd)))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * Replace @srq's ring by one of @max_wr entries.  WQEs posted and not yet
 * consumed move to the start of the new ring, in order; if they do not
 * fit, or the limit (@limit if given, else the armed one) would exceed
 * the new size, nothing changes (-EINVAL).  A user SRQ learns the new
 * mapping at @mi_addr, written before the swap so that a bad address
 * changes nothing.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    const u32 *limit, struct ib_udata *udata,
			    u64 mi_addr)
{
	struct sroce_queue nq, oq;
	struct sroce_mmap_info mi;
	unsigned long flags;
	u32 num, count, i;
	int err;

	if (!max_wr || max_wr > SROCE_MAX_SRQ_WR)
		return -EINVAL;
	if (udata && !mi_addr)
		return -EINVAL;
	num = sroce_queue_num(max_wr);
	err = sroce_queue_init(&nq, num, srq->rq.stride);
	if (err)
		return err;
	if (udata) {
		err = sroce_queue_map(&nq, sroce_udata_uctx(udata), &mi);
		if (!err && copy_to_user(u64_to_user_ptr(mi_addr), &mi,
					 sizeof(mi)))
			err = -EFAULT;
		if (err)
			goto out;
	}

	spin_lock_irqsave(&srq->lock, flags);
	err = sroce_queue_avail(&srq->rq, srq->rq.kidx, &count);
	if (!err && (count > num || (limit ? *limit : srq->limit) > num))
		err = -EINVAL;
	if (err) {
		spin_unlock_irqrestore(&srq->lock, flags);
		goto out;
	}
	for (i = 0; i < count; i++)
		memcpy(sroce_queue_slot(&nq, i),
		       sroce_queue_slot(&srq->rq, srq->rq.kidx + i), nq.stride);
	nq.kidx = 0;
	nq.kpeer = count;
	nq.ctl->cons = 0;
	nq.ctl->state = srq->rq.ctl->state;
	/* Entries are written before the index that publishes them. */
	smp_store_release(&nq.ctl->prod, count);
	oq = srq->rq;
	srq->rq = nq;
	nq = oq;
	if (limit)
		srq->limit = *limit;
	spin_unlock_irqrestore(&srq->lock, flags);
out:
	/* The old ring, or the new one that did not replace it. */
	sroce_queue_cleanup(&nq);
	return err;
}

static int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_modify_srq_cmd cmd = {};
	unsigned long flags;
	int err = 0;

	if (udata) {
		err = sroce_modify_srq_cmd(udata, &cmd);
		if (err)
			return err;
	}
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return sroce_srq_resize(srq, attr->max_wr,
					(mask & IB_SRQ_LIMIT) ?
					&attr->srq_limit : NULL,
					udata, cmd.mi_addr);
	if (mask & IB_SRQ_LIMIT) {
		/* Checked under the lock: a resize may run at the same time. */
		spin_lock_irqsave(&srq->lock, flags);
		if (attr->srq_limit > srq->rq.num)
			err = -EINVAL;
		else
			srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return err;
}

static int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.num;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

struct sroce_srq *sroce_xsrq_get(struct sroce_dev *dev, u32 srqn,
				 struct sroce_xrcd *xrcd)
{
	struct sroce_srq *srq;

	rcu_read_lock();
	srq = xa_load(&dev->srqs, srqn);
	if (srq && (srq->xrcd != xrcd || !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

void sroce_srq_put(struct sroce_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->free_done);
}

/*
 * ib_core refuses while QPs are attached, and an XRC SRQ's TGT QPs hold
 * it only while a request is handled: once those let go, none can find
 * it again, and the message one of them was receiving into it is
 * dropped (sroce_resp_forget_srq()).
 */
static int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_qp *qp;

	xa_erase(&dev->srqs, srq->srq_num);
	if (srq->xrcd) {
		/* a lookup may have found it just before: let it finish */
		synchronize_rcu();
		sroce_srq_put(srq);
		wait_for_completion(&srq->free_done);
		mutex_lock(&srq->xrcd->lock);
		list_for_each_entry(qp, &srq->xrcd->tgts, xrcd_link)
			sroce_resp_forget_srq(qp, srq);
		mutex_unlock(&srq->xrcd->lock);
	}
	sroce_queue_cleanup(&srq->rq);
	atomic_dec(&dev->num_srq);
	return 0;
}

/*
 * Kernel consumers' producer side of a receive ring (RQ or SRQ); the
 * caller holds the ring's lock.  Stops at the first bad WR.
 */
int sroce_recv_post(struct sroce_queue *q, u32 max_sge,
		    const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	for (; wr; wr = wr->next) {
		struct sroce_recv_wqe *e;
		struct sroce_sge *sge;
		int i;

		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (q->kpeer - q->kidx >= q->num) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		e = sroce_queue_slot(q, q->kpeer);
		e->wr_id = wr->wr_id;
		e->num_sge = wr->num_sge;
		e->rsvd = 0;
		sge = (struct sroce_sge *)(e + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		q->kpeer++;
		/* Entries are written before the index that publishes them. */
		smp_store_release(&q->ctl->prod, q->kpeer);
	}
	return 0;
}

static int sroce_post_srq_recv(struct ib_srq *ibsrq,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_queue *q = &srq->rq;
	unsigned long flags;
	int err;

	if (srq->is_user) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&srq->lock, flags);
	err = sroce_recv_post(q, srq->max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/*
 * Copy one receive WQE out of @q (its consumer lock held) and check it.
 * -EAGAIN: empty; -EIO: the ring is corrupt; -EINVAL: the WQE is bad but
 * consumed, @out->wr_id is valid.
 */
int sroce_recv_take(struct sroce_queue *q, u32 max_sge, struct sroce_rwqe *out)
{
	struct sroce_recv_wqe hdr;
	u64 total = 0;
	u32 count, i;
	void *slot;

	if (sroce_queue_avail(q, q->kidx, &count))
		return -EIO;
	if (!count)
		return -EAGAIN;
	slot = sroce_queue_slot(q, q->kidx);
	memcpy(&hdr, slot, sizeof(hdr));
	q->kidx++;
	out->wr_id = hdr.wr_id;
	out->num_sge = 0;
	out->total_len = 0;
	if (hdr.num_sge > max_sge) {
		sroce_queue_publish_cons(q);
		return -EINVAL;
	}
	memcpy(out->sge, slot + SROCE_RECV_WQE_HDR,
	       hdr.num_sge * sizeof(struct sroce_sge));
	sroce_queue_publish_cons(q);
	for (i = 0; i < hdr.num_sge; i++)
		total += out->sge[i].length;
	if (total > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	out->num_sge = hdr.num_sge;
	out->total_len = total;
	return 0;
}

int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *out)
{
	struct ib_event ev = {};
	unsigned long flags;
	bool fire = false;
	u32 left;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	err = sroce_recv_take(&srq->rq, srq->max_sge, out);
	if (err == -EIO)
		sroce_queue_set_state(&srq->rq, SROCE_RING_ERROR);
	if ((!err || err == -EINVAL) && srq->limit &&
	    !sroce_queue_avail(&srq->rq, srq->rq.kidx, &left) &&
	    left < srq->limit) {
		/* Fires once; the owner re-arms with modify_srq. */
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (fire && srq->ibsrq.event_handler) {
		ev.device = srq->ibsrq.device;
		ev.element.srq = &srq->ibsrq;
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return err;
}

const struct ib_device_ops sroce_srq_ops = {
	.create_srq = sroce_create_srq,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,
	.post_srq_recv = sroce_post_srq_recv,

	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
};
