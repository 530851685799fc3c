// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Work queues of a QP: kernel post_send/post_recv, the user doorbell, and
 * the engine's view of the queues (fetch, retire, complete, take) and the
 * error flush of both queues.
 *
 * Kernel and user QPs share one path: kernel posts are written into the
 * ring exactly as libsroce would write them, and every WQE is copied out
 * of the ring into kernel memory before a single field of it is checked.
 * Kernel-only side data (the ib_mr of REG_MR) lives in qp->sq_kmr, indexed
 * like the ring.
 *
 * Locks: sq_lock covers the SQ indices and qp->swqe; rq_lock the RQ
 * indices.  CQ locks nest inside them.
 */
#include "sroce_obj.h"
#include "sroce_keys.h"

#define SROCE_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)
#define SROCE_QKEY_PRIVILEGED	0x80000000U

u32 sroce_wr_to_wc_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

static void sroce_flush_cqe(struct sroce_qp *qp, struct sroce_cq *cq,
			    u64 wr_id, u32 opcode, u32 status, bool *notify)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.qp_num = qp->ibqp.qp_num,
		.port_num = SROCE_PORT,
	};

	/* A full CQ is already in error; nothing more can be reported. */
	sroce_cq_post_quiet(cq, &cqe, false, notify);
}

static void sroce_swqe_release(struct sroce_swqe *swqe)
{
	if (swqe->ah) {
		sroce_ah_put(swqe->ah);
		swqe->ah = NULL;
	}
	swqe->av = NULL;
}

/* sq_lock held. */
static void sroce_sq_retire_locked(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq;

	sroce_swqe_release(&qp->swqe[q->kidx & (q->num - 1)]);
	q->kidx++;
	sroce_queue_publish_cons(q);
}

void sroce_sq_flush(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq;
	struct sroce_send_wqe hdr;
	unsigned long flags;
	bool notify = false;
	u32 n;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (READ_ONCE(qp->state) != IB_QPS_ERR)
		goto out;
	/* In order: WQEs the engine holds, then those never fetched. */
	while (q->kidx != q->kfetch) {
		struct sroce_swqe *s = &qp->swqe[q->kidx & (q->num - 1)];

		sroce_flush_cqe(qp, qp->scq, s->wqe.wr_id,
				sroce_wr_to_wc_opcode(s->wqe.opcode),
				s->st.status ?: s->fetch_status ?:
				IB_WC_WR_FLUSH_ERR, &notify);
		sroce_sq_retire_locked(qp);
	}
	if (sroce_queue_avail(q, q->kfetch, &n))
		goto out;	/* corrupt ring: nothing trustworthy to flush */
	while (n--) {
		memcpy(&hdr, sroce_queue_slot(q, q->kidx), sizeof(hdr));
		sroce_flush_cqe(qp, qp->scq, hdr.wr_id,
				sroce_wr_to_wc_opcode(hdr.opcode),
				IB_WC_WR_FLUSH_ERR, &notify);
		q->kidx++;
	}
	q->kfetch = q->kidx;
	sroce_queue_publish_cons(q);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (notify)
		sroce_cq_notify(qp->scq);
}

int sroce_recv_drain_locked(struct sroce_queue *q, struct sroce_cq *cq,
			    u32 qpn, bool complete, bool *notify)
{
	struct sroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qpn,
		.port_num = SROCE_PORT,
	};
	struct sroce_recv_wqe hdr;
	u32 n;

	if (sroce_queue_avail(q, q->kidx, &n))
		return -EIO;	/* corrupt ring: nothing trustworthy to flush */
	while (n--) {
		if (complete) {
			memcpy(&hdr, sroce_queue_slot(q, q->kidx), sizeof(hdr));
			cqe.wr_id = hdr.wr_id;
			/* A full CQ is already in error; nothing more to say. */
			sroce_cq_post_quiet(cq, &cqe, false, notify);
		}
		q->kidx++;
	}
	sroce_queue_publish_cons(q);
	return 0;
}

void sroce_rq_flush(struct sroce_qp *qp)
{
	unsigned long flags;
	bool notify = false;

	if (qp->srq || !qp->rq.ctl)
		return;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_recv_drain_locked(&qp->rq, qp->rcq, qp->ibqp.qp_num,
					true, &notify);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (notify)
		sroce_cq_notify(qp->rcq);
}

static bool sroce_opcode_ok(struct sroce_qp *qp, u32 op)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM;
	case IB_QPT_RAW_PACKET:
		return op == IB_WR_SEND;
	case IB_QPT_RC:
	case IB_QPT_XRC_INI:
		switch (op) {
		case IB_WR_RDMA_READ:
		case IB_WR_ATOMIC_CMP_AND_SWP:
		case IB_WR_ATOMIC_FETCH_AND_ADD:
		case IB_WR_SEND_WITH_INV:
			return true;
		case SROCE_WR_FLUSH:
		case SROCE_WR_ATOMIC_WRITE:
			return qp->is_user && qp->ibqp.qp_type == IB_QPT_RC;
		}
		fallthrough;
	case IB_QPT_UC:
		switch (op) {
		case IB_WR_RDMA_WRITE:
		case IB_WR_RDMA_WRITE_WITH_IMM:
		case IB_WR_SEND:
		case IB_WR_SEND_WITH_IMM:
		case IB_WR_LOCAL_INV:
			return true;
		case IB_WR_BIND_MW:
			return qp->is_user;
		case IB_WR_REG_MR:
			return !qp->is_user;
		}
		return false;
	default:
		return false;
	}
}

static bool sroce_opcode_has_data(u32 op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case SROCE_WR_ATOMIC_WRITE:
		return true;
	default:
		return false;
	}
}

/*
 * Check the kernel copy in @swqe (header already copied from @src, the
 * ring slot) and copy the rest.  Returns the completion status for a bad
 * WQE, IB_WC_SUCCESS otherwise.
 */
static enum ib_wc_status sroce_swqe_check(struct sroce_qp *qp,
					  struct sroce_swqe *swqe,
					  const void *src)
{
	struct sroce_send_wqe *w = &swqe->wqe;
	u32 op = w->opcode, flags = w->send_flags, i;
	u64 total = 0;

	if (!sroce_opcode_ok(qp, op) || (flags & ~SROCE_SEND_FLAGS))
		return IB_WC_LOC_QP_OP_ERR;
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI && w->xrc_srqn > 0xffffff)
		return IB_WC_LOC_QP_OP_ERR;
	if (qp->sig_all)
		w->send_flags |= IB_SEND_SIGNALED;

	if (flags & IB_SEND_INLINE) {
		if (!sroce_opcode_has_data(op))
			return IB_WC_LOC_QP_OP_ERR;
		if (w->inline_len > qp->max_inline)
			return IB_WC_LOC_LEN_ERR;
		memcpy(swqe->inline_data, src + SROCE_SEND_WQE_HDR,
		       w->inline_len);
		w->num_sge = 0;
		total = w->inline_len;
	} else {
		if (w->inline_len)
			return IB_WC_LOC_QP_OP_ERR;
		if (w->num_sge > qp->max_send_sge)
			return IB_WC_LOC_QP_OP_ERR;
		memcpy(swqe->sge, src + SROCE_SEND_WQE_HDR,
		       w->num_sge * sizeof(struct sroce_sge));
		for (i = 0; i < w->num_sge; i++)
			total += swqe->sge[i].length;
	}
	if (total > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;

	switch (op) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (total != sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
		if (!sroce_atomic_va_ok(w->wr.atomic.remote_addr))
			return IB_WC_LOC_QP_OP_ERR;
		break;
	case SROCE_WR_ATOMIC_WRITE:
		/* the 8 bytes are taken at post time, as the provider does */
		if (!(flags & IB_SEND_INLINE) || total != sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
		if (!sroce_atomic_va_ok(w->wr.rdma.remote_addr))
			return IB_WC_LOC_QP_OP_ERR;
		break;
	case SROCE_WR_FLUSH:
		if (total || (w->wr.flush.type & ~(SROCE_FLUSH_TYPE_GLOBAL |
						   SROCE_FLUSH_TYPE_PERSISTENT)) ||
		    w->wr.flush.level > SROCE_FLUSH_LEVEL_MR)
			return IB_WC_LOC_QP_OP_ERR;
		if (w->wr.flush.length > SROCE_MAX_MSG_SIZE)
			return IB_WC_LOC_LEN_ERR;
		break;
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		w->num_sge = 0;
		total = 0;
		break;
	case IB_WR_REG_MR:
		if (!swqe->reg_mr)
			return IB_WC_LOC_QP_OP_ERR;
		swqe->reg_key = w->wr.bind.mw_rkey;
		swqe->reg_access = w->wr.bind.access;
		w->num_sge = 0;
		total = 0;
		break;
	}
	swqe->total_len = total;

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		struct sroce_ah *ah;

		if (total > qp->mtu)
			return IB_WC_LOC_LEN_ERR;
		if (w->wr.ud.remote_qpn > 0xffffff)
			return IB_WC_LOC_QP_OP_ERR;
		ah = sroce_ah_get(qp->dev, w->wr.ud.ah_num, qp->pd);
		if (IS_ERR_OR_NULL(ah))
			return IB_WC_LOC_QP_OP_ERR;
		swqe->ah = ah;
		swqe->av = &ah->av;
		/* IBA: a Q_Key with the top bit set means "use the QP's". */
		if (w->wr.ud.remote_qkey & SROCE_QKEY_PRIVILEGED)
			w->wr.ud.remote_qkey = qp->attr.qkey;
	} else if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET) {
		/* a whole Ethernet frame, header included */
		if (total < ETH_HLEN || total > qp->mtu)
			return IB_WC_LOC_LEN_ERR;
		swqe->av = NULL;
	} else {
		swqe->av = &qp->av;
	}
	return IB_WC_SUCCESS;
}

bool sroce_sq_unfetched(const struct sroce_qp *qp)
{
	/* A hint only: sroce_sq_fetch() validates whatever prod says. */
	return READ_ONCE(qp->sq.ctl->prod) != READ_ONCE(qp->sq.kfetch);
}

struct sroce_swqe *sroce_sq_fetch(struct sroce_qp *qp)
{
	struct sroce_queue *q = &qp->sq;
	struct sroce_swqe *swqe = NULL;
	enum ib_qp_state state;
	unsigned long flags;
	bool corrupt = false;
	const void *src;
	u32 n, slot;

	spin_lock_irqsave(&qp->sq_lock, flags);
	state = READ_ONCE(qp->state);
	/* In ERR the flush owns whatever is left in the ring. */
	if (state != IB_QPS_RTS)
		goto out;
	if (sroce_queue_avail(q, q->kfetch, &n)) {
		corrupt = true;
		goto out;
	}
	if (!n)
		goto out;
	slot = q->kfetch & (q->num - 1);
	src = sroce_queue_slot(q, q->kfetch);
	swqe = &qp->swqe[slot];
	memcpy(&swqe->wqe, src, SROCE_SEND_WQE_HDR);
	memset(&swqe->st, 0, sizeof(swqe->st));
	swqe->ah = NULL;
	swqe->av = NULL;
	swqe->reg_mr = qp->sq_kmr ? qp->sq_kmr[slot] : NULL;
	swqe->reg_key = 0;
	swqe->reg_access = 0;
	swqe->total_len = 0;
	swqe->fetch_status = IB_WC_SUCCESS;
	q->kfetch++;
	swqe->fetch_status = sroce_swqe_check(qp, swqe, src);
	if (swqe->fetch_status != IB_WC_SUCCESS) {
		/*
		 * Hand it over anyway so it completes in order; an opcode no
		 * QP accepts makes sure it is failed, never executed.
		 */
		sroce_swqe_release(swqe);
		swqe->wqe.opcode = SROCE_WQE_OPCODE_BAD;
		swqe->wqe.num_sge = 0;
		swqe->wqe.inline_len = 0;
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
	}
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/* The engine allows this under its requester lock. */
	if (corrupt)
		sroce_qp_error(qp, IB_EVENT_QP_FATAL);
	return swqe;
}

void sroce_sq_retire(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	/* Already flushed if the QP went to error meanwhile. */
	if (qp->sq.kidx != qp->sq.kfetch)
		sroce_sq_retire_locked(qp);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

int sroce_sq_complete(struct sroce_qp *qp, const struct sroce_cqe *cqe)
{
	unsigned long flags;
	bool notify = false;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->sq.kidx == qp->sq.kfetch) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return -ENOENT;
	}
	/*
	 * Free the slot before the CQE shows: a process that polls it and
	 * posts again at once (perftest keeps exactly tx_depth in flight)
	 * must find the room it was promised, not a full ring.
	 */
	sroce_sq_retire_locked(qp);
	if (cqe)
		err = sroce_cq_post_quiet(qp->scq, cqe, false, &notify);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (notify)
		sroce_cq_notify(qp->scq);
	if (err)
		sroce_qp_error(qp, IB_EVENT_QP_FATAL);
	return err;
}

int sroce_rq_take(struct sroce_qp *qp, struct sroce_srq *srq,
		  struct sroce_rwqe *out)
{
	struct sroce_cq *cq = (srq && srq->cq) ? srq->cq : qp->rcq;
	enum ib_qp_state state;
	unsigned long flags;
	int err;

	if (srq) {
		err = sroce_srq_take(srq, out);
	} else {
		spin_lock_irqsave(&qp->rq_lock, flags);
		state = READ_ONCE(qp->state);
		if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
		    state == IB_QPS_ERR) {
			/* Nothing may be received; the flush owns the RQ. */
			spin_unlock_irqrestore(&qp->rq_lock, flags);
			return -EIO;
		}
		err = sroce_recv_take(&qp->rq, qp->max_recv_sge, out);
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
	if (!err || err == -EAGAIN)
		return err;
	/*
	 * A malformed WQE completes in error here; the responder fails the
	 * QP (it may hold locks sroce_qp_error() would need).
	 */
	if (err == -EINVAL) {
		bool notify = false;

		sroce_flush_cqe(qp, cq, out->wr_id, IB_WC_RECV,
				IB_WC_LOC_QP_OP_ERR, &notify);
		if (notify)
			sroce_cq_notify(cq);
	}
	return -EIO;
}

/* Translate one kernel WR into the ring slot @idx. */
static int sroce_build_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
			    u32 idx)
{
	void *slot = sroce_queue_slot(&qp->sq, idx);
	struct sroce_send_wqe *w = slot;
	struct sroce_sge *sge = slot + SROCE_SEND_WQE_HDR;
	bool ud = qp->ibqp.qp_type == IB_QPT_UD ||
		  qp->ibqp.qp_type == IB_QPT_GSI;
	struct ib_mr *kmr = NULL;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	if (!sroce_opcode_ok(qp, wr->opcode) ||
	    (wr->send_flags & ~SROCE_SEND_FLAGS))
		return -EINVAL;
	memset(w, 0, SROCE_SEND_WQE_HDR);
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (ud) {
			if (!ud_wr(wr)->ah)
				return -EINVAL;
			w->wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
			w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		}
		break;
	case IB_WR_REG_MR:
		kmr = reg_wr(wr)->mr;
		if (!kmr)
			return -EINVAL;
		w->wr.bind.mw_rkey = reg_wr(wr)->key;
		w->wr.bind.access = reg_wr(wr)->access;
		break;
	default:
		/* The rest carry no addressing beyond the SGEs. */
		break;
	}
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		w->ex.imm_data = wr->ex.imm_data;
	else if (wr->opcode == IB_WR_SEND_WITH_INV ||
		 wr->opcode == IB_WR_LOCAL_INV)
		w->ex.invalidate_rkey = wr->ex.invalidate_rkey;
	qp->sq_kmr[idx & (qp->sq.num - 1)] = kmr;

	if (wr->send_flags & IB_SEND_INLINE) {
		u32 len = 0;

		/* Kernel SGE addresses are virtual addresses. */
		for (i = 0; i < wr->num_sge; i++) {
			u32 n = wr->sg_list[i].length;

			if (n > qp->max_inline - len)
				return -EINVAL;
			memcpy(slot + SROCE_SEND_WQE_HDR + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr, n);
			len += n;
		}
		w->inline_len = len;
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		w->num_sge = wr->num_sge;
	}
	return 0;
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_queue *q = &qp->sq;
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	if (qp->is_user) {
		/* Userspace rings the doorbell with an empty WR list. */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		sroce_qp_count(qp, SROCE_CNT_DOORBELLS);
		if (state == IB_QPS_ERR)
			sroce_qp_flush(qp);
		else
			sroce_req_kick(qp);
		return 0;
	}
	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		if (q->kpeer - q->kidx >= q->num) {
			err = -ENOMEM;
			break;
		}
		err = sroce_build_send(qp, wr, q->kpeer);
		if (err)
			break;
		q->kpeer++;
		/* Entries are written before the index that publishes them. */
		smp_store_release(&q->ctl->prod, q->kpeer);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (err)
		*bad_wr = wr;
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_sq_flush(qp);
	else
		sroce_req_kick(qp);
	return err;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_queue *q = &qp->rq;
	unsigned long flags;
	int err;

	/* XRC QPs have no RQ; uverbs lets a process post to a TGT QP */
	if (qp->is_user || qp->srq || !q->ctl ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	err = sroce_recv_post(q, qp->max_recv_sge, wr, bad_wr);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_rq_flush(qp);
	return err;
}
