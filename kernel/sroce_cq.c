// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Completion queues.  The kernel is the only producer (under cq->lock);
 * the consumer is userspace (libsroce polls the mapped ring) or a kernel
 * ULP through poll_cq.  Userspace's 'cons' index is read only to learn how
 * much room is left and is validated every time.
 */
#include "sroce_obj.h"

static int sroce_cq_shadow_alloc(struct sroce_cq *cq, u32 num,
				 struct ib_qp ***out)
{
	*out = NULL;
	if (cq->is_user)
		return 0;
	*out = kvcalloc(num, sizeof(**out), SROCE_GFP_USER);
	return *out ? 0 : -ENOMEM;
}

static int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			   struct sroce_cq_attrs *attrs)
{
	struct ib_udata *udata = sroce_cq_udata(attrs);
	struct sroce_dev *dev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_create_cq_resp resp = {};
	u32 num;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= max(ibcq->device->num_comp_vectors, 1))
		return -EINVAL;
	if (!sroce_udata_in_ok(udata))
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_cq) > SROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	cq->is_user = !!udata;
	num = sroce_queue_num(attr->cqe);
	err = sroce_queue_init(&cq->q, num, SROCE_CQE_SIZE);
	if (err)
		goto err_count;
	err = sroce_cq_shadow_alloc(cq, num, &cq->kqp);
	if (err)
		goto err_queue;
	if (udata) {
		err = sroce_queue_map(&cq->q, sroce_udata_uctx(udata), &resp.mi);
		if (err)
			goto err_queue;
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	ibcq->cqe = num;
	return 0;

err_queue:
	kvfree(cq->kqp);
	cq->kqp = NULL;
	sroce_queue_cleanup(&cq->q);
err_count:
	atomic_dec(&dev->num_cq);
	return err;
}

static int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	/*
	 * On device removal ib_core destroys the objects of processes that
	 * keep running; their ring pages stay mapped.  A process polls
	 * without a system call, so only this mark can tell it that no
	 * completion will ever come.
	 */
	if (cq->q.ctl)
		/* Pairs with the provider's acquire: the mark follows the last CQE. */
		smp_store_release(&cq->q.ctl->state, SROCE_RING_DEAD);
	sroce_queue_cleanup(&cq->q);
	kvfree(cq->kqp);
	cq->kqp = NULL;
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

/* Completions the consumer has not taken yet; cq->lock held. */
static int sroce_cq_pending(struct sroce_cq *cq, u32 *first, u32 *count)
{
	u32 space;

	if (!cq->is_user) {
		*first = cq->q.kpeer;
		*count = cq->q.kidx - cq->q.kpeer;
		return 0;
	}
	if (sroce_queue_space(&cq->q, &space))
		return -EIO;
	*count = cq->q.num - space;
	*first = cq->q.kidx - *count;
	return 0;
}

static int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_resize_cq_resp resp = {};
	struct sroce_queue nq, oq;
	struct ib_qp **nkqp, **okqp;
	unsigned long flags;
	u32 num, first, count, i;
	int err;

	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (!sroce_udata_in_ok(udata))
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	num = sroce_queue_num(cqe);
	err = sroce_queue_init(&nq, num, SROCE_CQE_SIZE);
	if (err)
		return err;
	err = sroce_cq_shadow_alloc(cq, num, &nkqp);
	if (err)
		goto err_queue;
	if (udata) {
		err = sroce_queue_map(&nq, sroce_udata_uctx(udata), &resp.mi);
		if (err)
			goto err_queue;
	}

	spin_lock_irqsave(&cq->lock, flags);
	err = sroce_cq_pending(cq, &first, &count);
	if (!err && count > num)
		err = -EINVAL;		/* would lose completions */
	if (err) {
		spin_unlock_irqrestore(&cq->lock, flags);
		goto err_queue;
	}
	/* Pending completions move to the start of the new ring. */
	for (i = 0; i < count; i++) {
		memcpy(sroce_queue_slot(&nq, i),
		       sroce_queue_slot(&cq->q, first + i), SROCE_CQE_SIZE);
		if (nkqp)
			nkqp[i] = cq->kqp[(first + i) & (cq->q.num - 1)];
	}
	nq.kidx = count;
	nq.kpeer = 0;
	nq.ctl->cons = 0;
	/* An arm stored in the old ring still holds; so does the rx report. */
	nq.ctl->arm = READ_ONCE(cq->q.ctl->arm);
	nq.ctl->rx_task_seq = READ_ONCE(cq->q.ctl->rx_task_seq);
	nq.ctl->rx_task_cpu = READ_ONCE(cq->q.ctl->rx_task_cpu);
	nq.ctl->state = cq->overflowed ? SROCE_RING_ERROR : SROCE_RING_OK;
	/* Entries are written before the index that publishes them. */
	smp_store_release(&nq.ctl->prod, count);
	oq = cq->q;
	cq->q = nq;
	okqp = cq->kqp;
	cq->kqp = nkqp;
	spin_unlock_irqrestore(&cq->lock, flags);

	sroce_queue_cleanup(&oq);
	kvfree(okqp);
	ibcq->cqe = num;
	if (udata) {
		/* The new ring is live; a lost response only hurts the caller. */
		return sroce_udata_out(udata, &resp, sizeof(resp));
	}
	return 0;

err_queue:
	kvfree(nkqp);
	sroce_queue_cleanup(&nq);
	return err;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *e, struct ib_qp *qp,
			    struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = e->wr_id;
	wc->status = e->status;
	wc->opcode = e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	wc->qp = qp;
	if (e->wc_flags & IB_WC_WITH_INVALIDATE)
		wc->ex.invalidate_rkey = e->ex.invalidate_rkey;
	else
		wc->ex.imm_data = e->ex.imm_data;
	wc->src_qp = e->src_qp;
	wc->slid = e->slid;
	wc->wc_flags = e->wc_flags;
	wc->pkey_index = e->pkey_index;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
	wc->port_num = e->port_num;
	memcpy(wc->smac, e->smac, ETH_ALEN);
	wc->vlan_id = e->vlan_id;
	wc->network_hdr_type = e->network_hdr_type;
}

static int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;

	/* Kernel CQs only: userspace polls its mapping directly. */
	if (cq->is_user)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && cq->q.kpeer != cq->q.kidx) {
		u32 i = cq->q.kpeer;

		sroce_cqe_to_wc(sroce_queue_slot(&cq->q, i),
				cq->kqp[i & (cq->q.num - 1)], &wc[n++]);
		cq->q.kpeer++;
	}
	/* Entries are read before their slots are handed back. */
	smp_store_release(&cq->q.ctl->cons, cq->q.kpeer);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

static int sroce_req_notify_cq(struct ib_cq *ibcq,
			       enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	u32 first, count;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* "Next completion" covers "next solicited": keep the wider one. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !sroce_cq_pending(cq, &first, &count) && count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static struct ib_qp *sroce_cq_find_qp(struct sroce_cq *cq, u32 qpn)
{
	struct sroce_dev *dev = to_sdev(cq->ibcq.device);
	struct sroce_qp *qp;

	/*
	 * The poster holds a reference on the QP, and kernel ULPs drain a QP
	 * before destroying it, so the pointer stays good until polled.
	 */
	rcu_read_lock();
	qp = xa_load(&dev->qps, qpn);
	rcu_read_unlock();
	return qp ? &qp->ibqp : NULL;
}

static void sroce_cq_fail(struct sroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	sroce_count(to_sdev(cq->ibcq.device), SROCE_CNT_CQ_OVERFLOW);
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Does @cqe satisfy an arm stored in a user CQ's ring?  The value is the
 * process's to write at any time, so it is read once and cleared only if
 * unchanged; a process that scribbles on it only loses or gains events of
 * its own CQ.  The fence orders the caller's publication of 'prod' before
 * the read (see SROCE_CQ_ARM_NEXT).
 */
static bool sroce_cq_user_armed(struct sroce_cq *cq, bool fire_solicited)
{
	u32 *arm = &cq->q.ctl->arm;
	u32 v;

	smp_mb();	/* 'prod' published before 'arm' is read */
	v = READ_ONCE(*arm);
	if (!v || (v == SROCE_CQ_ARM_SOLICITED && !fire_solicited))
		return false;
	return cmpxchg(arm, v, 0) == v;
}

int sroce_cq_post_quiet(struct sroce_cq *cq, const struct sroce_cqe *cqe,
			bool solicited, bool *notify)
{
	struct ib_qp *kqp = NULL;
	unsigned long flags;
	bool failed = false;
	u32 space;

	if (!cq->is_user)
		kqp = sroce_cq_find_qp(cq, cqe->qp_num);

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -ENOSPC;
	}
	if (sroce_queue_space(&cq->q, &space) || !space) {
		/* A full or corrupt CQ is an error until destroyed (IBA). */
		cq->overflowed = true;
		sroce_queue_set_state(&cq->q, SROCE_RING_ERROR);
		failed = true;
	} else {
		bool sol = solicited || cqe->status != IB_WC_SUCCESS;
		u32 i = cq->q.kidx;

		memcpy(sroce_queue_slot(&cq->q, i), cqe, SROCE_CQE_SIZE);
		if (cq->kqp)
			cq->kqp[i & (cq->q.num - 1)] = kqp;
		cq->q.kidx++;
		sroce_queue_publish_prod(&cq->q);
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED && sol)) {
			cq->notify = 0;
			*notify = true;
		} else if (cq->is_user && sroce_cq_user_armed(cq, sol)) {
			*notify = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (failed) {
		sroce_cq_fail(cq);
		return -ENOSPC;
	}
	return 0;
}

/*
 * A packet for a QP of @cq is being processed in a task, which a busy
 * poller of the CQ on this CPU competes with (see rx_task_seq).  The lock
 * keeps the ring from being swapped by a resize meanwhile; interrupt-exit
 * processing, the usual case, never gets here.
 */
void sroce_cq_rx_task(struct sroce_cq *cq)
{
	struct sroce_ring_ctl *ctl;
	unsigned long flags;

	if (!cq || !cq->is_user)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	ctl = cq->q.ctl;
	WRITE_ONCE(ctl->rx_task_cpu, raw_smp_processor_id());
	smp_wmb();	/* the CPU is read after the sequence that names it */
	WRITE_ONCE(ctl->rx_task_seq, READ_ONCE(ctl->rx_task_seq) + 1);
	spin_unlock_irqrestore(&cq->lock, flags);
}

void sroce_cq_notify(struct sroce_cq *cq)
{
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited)
{
	bool notify = false;
	int err;

	err = sroce_cq_post_quiet(cq, cqe, solicited, &notify);
	if (notify)
		sroce_cq_notify(cq);
	return err;
}

const struct ib_device_ops sroce_cq_ops = {
	.create_cq = sroce_create_cq,
	.destroy_cq = sroce_destroy_cq,
	.resize_cq = sroce_resize_cq,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = sroce_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
};
