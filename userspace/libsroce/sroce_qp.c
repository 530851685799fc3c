// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Queue pairs and shared receive queues.  Work requests are validated here
 * and written straight into the rings; receive queues never enter the
 * kernel, the send queue rings it once per call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

#define SROCE_SEND_FLAGS_OK \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

#if SROCE_HAVE_WR_FLUSH
#define SROCE_QP_EX_WITH_FLUSH	IBV_QP_EX_WITH_FLUSH
#else
#define SROCE_QP_EX_WITH_FLUSH	0
#endif

#define SROCE_QP_EX_OPS_RC \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV | \
	 IBV_QP_EX_WITH_ATOMIC_WRITE | SROCE_QP_EX_WITH_FLUSH)
#define SROCE_QP_EX_OPS_UC \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define SROCE_QP_EX_OPS_UD \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
/* IBA defines ATOMIC WRITE and FLUSH for RC only */
#define SROCE_QP_EX_OPS_XRC \
	(SROCE_QP_EX_OPS_RC & \
	 ~(uint64_t)(IBV_QP_EX_WITH_ATOMIC_WRITE | SROCE_QP_EX_WITH_FLUSH))

static uint64_t sroce_qp_ops_allowed(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return SROCE_QP_EX_OPS_RC;
	case IBV_QPT_UC:
		return SROCE_QP_EX_OPS_UC;
	case IBV_QPT_UD:
		return SROCE_QP_EX_OPS_UD;
	case IBV_QPT_XRC_SEND:
		return SROCE_QP_EX_OPS_XRC;
	case IBV_QPT_RAW_PACKET:
		/* the SEND carries a whole Ethernet frame */
		return IBV_QP_EX_WITH_SEND;
	default:
		return 0;
	}
}

/* ibv opcode -> (uverbs opcode, the IBV_QP_EX_WITH_* bit that allows it) */
static int sroce_map_opcode(enum ibv_wr_opcode op, uint32_t *uop,
			    uint64_t *bit)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		*uop = IB_UVERBS_WR_RDMA_WRITE;
		*bit = IBV_QP_EX_WITH_RDMA_WRITE;
		return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*uop = IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
		*bit = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
		return 0;
	case IBV_WR_SEND:
		*uop = IB_UVERBS_WR_SEND;
		*bit = IBV_QP_EX_WITH_SEND;
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		*uop = IB_UVERBS_WR_SEND_WITH_IMM;
		*bit = IBV_QP_EX_WITH_SEND_WITH_IMM;
		return 0;
	case IBV_WR_RDMA_READ:
		*uop = IB_UVERBS_WR_RDMA_READ;
		*bit = IBV_QP_EX_WITH_RDMA_READ;
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		*uop = IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
		*bit = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		*uop = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
		*bit = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		return 0;
	case IBV_WR_LOCAL_INV:
		*uop = IB_UVERBS_WR_LOCAL_INV;
		*bit = IBV_QP_EX_WITH_LOCAL_INV;
		return 0;
	case IBV_WR_BIND_MW:
		*uop = IB_UVERBS_WR_BIND_MW;
		*bit = IBV_QP_EX_WITH_BIND_MW;
		return 0;
	case IBV_WR_SEND_WITH_INV:
		*uop = IB_UVERBS_WR_SEND_WITH_INV;
		*bit = IBV_QP_EX_WITH_SEND_WITH_INV;
		return 0;
	case IBV_WR_ATOMIC_WRITE:
		*uop = SROCE_WR_ATOMIC_WRITE;
		*bit = IBV_QP_EX_WITH_ATOMIC_WRITE;
		return 0;
#if SROCE_HAVE_WR_FLUSH
	case IBV_WR_FLUSH:
		*uop = SROCE_WR_FLUSH;
		*bit = IBV_QP_EX_WITH_FLUSH;
		return 0;
#endif
	default:
		return EINVAL;
	}
}

static uint32_t sroce_map_send_flags(struct sroce_qp *qp, unsigned int f)
{
	uint32_t u = 0;

	if (f & IBV_SEND_FENCE)
		u |= SROCE_SEND_FENCE;
	if (f & IBV_SEND_SIGNALED || qp->sq_sig_all)
		u |= SROCE_SEND_SIGNALED;
	if (f & IBV_SEND_SOLICITED)
		u |= SROCE_SEND_SOLICITED;
	if (f & IBV_SEND_INLINE)
		u |= SROCE_SEND_INLINE;
	return u;
}

static struct sroce_sge *sroce_wqe_sges(struct sroce_send_wqe *w)
{
	return (struct sroce_sge *)((uint8_t *)w + SROCE_SEND_WQE_HDR);
}

static int sroce_copy_inline(struct sroce_qp *qp, struct sroce_send_wqe *w,
			     const struct ibv_sge *sg, int num_sge)
{
	uint8_t *dst = (uint8_t *)w + SROCE_SEND_WQE_HDR;
	uint64_t total = 0;
	int i;

	for (i = 0; i < num_sge; i++) {
		total += sg[i].length;
		if (total > qp->max_inline)
			return EINVAL;
	}
	for (i = 0; i < num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		dst += sg[i].length;
	}
	w->inline_len = (uint32_t)total;
	w->num_sge = 0;
	return 0;
}

static int sroce_copy_sges(struct sroce_qp *qp, struct sroce_send_wqe *w,
			   const struct ibv_sge *sg, int num_sge)
{
	struct sroce_sge *d = sroce_wqe_sges(w);
	int i;

	if ((uint32_t)num_sge > qp->max_send_sge)
		return EINVAL;
	for (i = 0; i < num_sge; i++) {
		d[i].addr = sg[i].addr;
		d[i].length = sg[i].length;
		d[i].lkey = sg[i].lkey;
	}
	w->num_sge = (uint32_t)num_sge;
	return 0;
}

static void sroce_fill_bind(struct sroce_send_wqe *w, uint32_t rkey,
			    const struct ibv_mw_bind_info *bi)
{
	w->wr.bind.addr = bi->addr;
	w->wr.bind.length = bi->length;
	w->wr.bind.mw_rkey = rkey;
	w->wr.bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
	w->wr.bind.access = bi->mw_access_flags;
}

/*
 * Validate one work request and write it into slot w.  type1_bind is only
 * set by ibv_bind_mw(), the one legal way to bind a type 1 window.
 */
static int sroce_build_send_wqe(struct sroce_qp *qp, struct sroce_send_wqe *w,
				const struct ibv_send_wr *wr, bool type1_bind)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	uint32_t uop;
	uint64_t bit;
	bool inl = wr->send_flags & IBV_SEND_INLINE;
	int ret;

	if (sroce_map_opcode(wr->opcode, &uop, &bit) ||
	    !(sroce_qp_ops_allowed(type) & bit))
		return EINVAL;
	if (wr->send_flags & ~(unsigned int)SROCE_SEND_FLAGS_OK)
		return EINVAL;
	if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
		return EINVAL;

	memset(w, 0, SROCE_SEND_WQE_HDR);
	w->wr_id = wr->wr_id;
	w->opcode = uop;
	w->send_flags = sroce_map_send_flags(qp, wr->send_flags);
	if (type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->ex.imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		w->ex.invalidate_rkey = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		if (type == IBV_QPT_UD) {
			if (!wr->wr.ud.ah)
				return EINVAL;
			w->wr.ud.ah_num = to_sah(wr->wr.ud.ah)->ah_num;
			w->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			w->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* The original value lands in exactly one 8-byte buffer. */
		if (wr->num_sge != 1 || wr->sg_list[0].length < 8)
			return EINVAL;
		w->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w->wr.atomic.swap = wr->wr.atomic.swap;
		w->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW:
		if (!wr->bind_mw.mw)
			return EINVAL;
		if ((wr->bind_mw.mw->type == IBV_MW_TYPE_1) != type1_bind)
			return EINVAL;
		if (wr->bind_mw.bind_info.length && !wr->bind_mw.bind_info.mr)
			return EINVAL;
		sroce_fill_bind(w, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		return 0;
	case IBV_WR_LOCAL_INV:
		return 0;
	default:
		return EINVAL;
	}

	if (inl) {
		if (wr->opcode == IBV_WR_RDMA_READ ||
		    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			return EINVAL;
		ret = sroce_copy_inline(qp, w, wr->sg_list, wr->num_sge);
	} else {
		ret = sroce_copy_sges(qp, w, wr->sg_list, wr->num_sge);
	}
	return ret;
}

/*
 * libibverbs records the state of every successful ibv_modify_qp() in
 * ibqp->state.  The kernel may also move the QP to ERR on its own, but
 * posting stays legal there (the WRs flush), so the recorded state is
 * enough to refuse the states where IBA forbids posting at all.
 */
static bool sroce_sq_open(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

static bool sroce_rq_open(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET;
}

/* The doorbell: a post_send with no WRs tells the kernel to drain the SQ. */
static int sroce_ring_doorbell(struct sroce_qp *qp)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

/*
 * After publishing prod: may the doorbell be skipped?  Only while the
 * kernel says it will look at the SQ on its own (uapi
 * SROCE_RING_F_NO_DOORBELL); the full fence orders our prod store before
 * these loads, as the kernel orders its clearing before rereading prod.
 * Even then every SROCE_DB_EVERY-th post rings: should the ACK the kernel
 * waits for be lost, the packets this sends draw a new one within a round
 * trip instead of the QP idling until its ACK timeout.
 */
#define SROCE_DB_EVERY	16

static bool sroce_doorbell_needed(struct sroce_qp *qp)
{
	struct sroce_ring_ctl *ctl = qp->sq.ctl;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&ctl->flags, __ATOMIC_RELAXED) &
	      SROCE_RING_F_NO_DOORBELL) ||
	    __atomic_load_n(&ctl->state, __ATOMIC_RELAXED) != SROCE_RING_OK)
		return true;
	return __atomic_add_fetch(&qp->db_skipped, 1, __ATOMIC_RELAXED) %
	       SROCE_DB_EVERY == 0;
}

static int sroce_post_send_common(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
				  struct ibv_send_wr **bad_wr, bool type1_bind)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	uint32_t posted = 0;
	int ret = 0, db;

	*bad_wr = NULL;
	if (!qp->has_sq || !sroce_sq_open(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq.lock);
	for (; wr; wr = wr->next) {
		struct sroce_send_wqe *w;

		if (!sroce_ring_space(&qp->sq)) {
			ret = ENOMEM;
			break;
		}
		w = sroce_ring_slot(&qp->sq, qp->sq.idx);
		ret = sroce_build_send_wqe(qp, w, wr, type1_bind);
		if (ret)
			break;
		qp->sq.idx++;
		posted++;
	}
	if (posted)
		sroce_store_release(&qp->sq.ctl->prod, qp->sq.idx);
	pthread_spin_unlock(&qp->sq.lock);

	if (ret)
		*bad_wr = wr;
	if (posted && sroce_doorbell_needed(qp)) {
		db = sroce_ring_doorbell(qp);
		/*
		 * The WQEs are already visible to the kernel and will run at
		 * the next doorbell; report the failure all the same.
		 */
		if (db && !ret)
			ret = db;
	}
	return ret;
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	return sroce_post_send_common(ibqp, wr, bad_wr, false);
}

int sroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *bi;
	struct ibv_send_wr wr, *bad;
	uint32_t rkey;
	int ret;

	if (!mw || !mw_bind || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	bi = &mw_bind->bind_info;
	/* a parent domain is its protection domain here */
	if (bi->length && (!bi->mr ||
			   bi->mr->pd->handle != ibqp->pd->handle ||
			   mw->pd->handle != ibqp->pd->handle))
		return EINVAL;

	rkey = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = *bi;
	ret = sroce_post_send_common(ibqp, &wr, &bad, true);
	if (!ret)
		mw->rkey = rkey;
	return ret;
}

/* Shared by QP receive queues and SRQs: same WQE format, no syscall. */
static int sroce_post_recv_ring(struct sroce_ring *ring, uint32_t max_sge,
				struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	uint32_t posted = 0;
	int ret = 0;

	pthread_spin_lock(&ring->lock);
	for (; wr; wr = wr->next) {
		struct sroce_recv_wqe *w;
		struct sroce_sge *d;
		int i;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			ret = EINVAL;
			break;
		}
		if (!sroce_ring_space(ring)) {
			ret = ENOMEM;
			break;
		}
		w = sroce_ring_slot(ring, ring->idx);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->rsvd = 0;
		d = (struct sroce_sge *)((uint8_t *)w + SROCE_RECV_WQE_HDR);
		for (i = 0; i < wr->num_sge; i++) {
			d[i].addr = wr->sg_list[i].addr;
			d[i].length = wr->sg_list[i].length;
			d[i].lkey = wr->sg_list[i].lkey;
		}
		ring->idx++;
		posted++;
	}
	if (posted)
		sroce_store_release(&ring->ctl->prod, ring->idx);
	pthread_spin_unlock(&ring->lock);
	*bad_wr = ret ? wr : NULL;
	return ret;
}

int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	if (!qp->has_rq || !sroce_rq_open(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	return sroce_post_recv_ring(&qp->rq, qp->max_recv_sge, wr, bad_wr);
}

int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	return sroce_post_recv_ring(&srq->ring, srq->max_sge, wr, bad_wr);
}

/* ---- ibv_qp_ex work request API ---- */

static struct sroce_send_wqe *sroce_wr_new(struct ibv_qp_ex *ibqp,
					   enum ibv_wr_opcode op)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w;
	uint32_t uop;
	uint64_t bit;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (sroce_map_opcode(op, &uop, &bit) || !(qp->send_ops_flags & bit) ||
	    ibqp->wr_flags & ~(unsigned int)SROCE_SEND_FLAGS_OK) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (!sroce_ring_space(&qp->sq)) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	w = sroce_ring_slot(&qp->sq, qp->sq.idx);
	memset(w, 0, SROCE_SEND_WQE_HDR);
	w->wr_id = ibqp->wr_id;
	w->opcode = uop;
	/* INLINE is decided by wr_set_inline_data*, not by the flag. */
	w->send_flags = sroce_map_send_flags(qp, ibqp->wr_flags) &
			~(uint32_t)SROCE_SEND_INLINE;
	qp->sq.idx++;
	qp->wr_cur = w;
	return w;
}

static void sroce_wr_send(struct ibv_qp_ex *ibqp)
{
	sroce_wr_new(ibqp, IBV_WR_SEND);
}

static void sroce_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm)
{
	struct sroce_send_wqe *w = sroce_wr_new(ibqp, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->ex.imm_data = imm;
}

static void sroce_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct sroce_send_wqe *w = sroce_wr_new(ibqp, IBV_WR_SEND_WITH_INV);

	if (w)
		w->ex.invalidate_rkey = rkey;
}

static void sroce_wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct sroce_send_wqe *w = sroce_wr_new(ibqp, op);

	if (!w)
		return;
	w->wr.rdma.remote_addr = raddr;
	w->wr.rdma.rkey = rkey;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->ex.imm_data = imm;
}

static void sroce_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t raddr)
{
	sroce_wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void sroce_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t raddr, __be32 imm)
{
	sroce_wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void sroce_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t raddr)
{
	sroce_wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void sroce_wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t raddr, uint64_t cmp_add,
			    uint64_t swap)
{
	struct sroce_send_wqe *w = sroce_wr_new(ibqp, op);

	if (!w)
		return;
	w->wr.atomic.remote_addr = raddr;
	w->wr.atomic.compare_add = cmp_add;
	w->wr.atomic.swap = swap;
	w->wr.atomic.rkey = rkey;
}

static void sroce_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t raddr, uint64_t compare,
				    uint64_t swap)
{
	sroce_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare,
			swap);
}

static void sroce_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				      uint64_t raddr, uint64_t add)
{
	sroce_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

static void sroce_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bi)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w;

	if (!qp->wr_err && (!mw || !bi || mw->type != IBV_MW_TYPE_2 ||
			    (bi->length && !bi->mr))) {
		qp->wr_err = EINVAL;
		return;
	}
	w = sroce_wr_new(ibqp, IBV_WR_BIND_MW);
	if (w)
		sroce_fill_bind(w, rkey, bi);
	/* A bind carries no data: later set_sge calls are the caller's bug. */
	qp->wr_cur = NULL;
}

static void sroce_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w = sroce_wr_new(ibqp, IBV_WR_LOCAL_INV);

	if (w)
		w->ex.invalidate_rkey = rkey;
	qp->wr_cur = NULL;
}

/* A setter without a WR to apply to leaves the batch failed. */
static struct sroce_send_wqe *sroce_wr_cur(struct sroce_qp *qp)
{
	if (qp->wr_err)
		return NULL;
	if (!qp->wr_cur)
		qp->wr_err = EINVAL;
	return qp->wr_cur;
}

static bool sroce_wr_is_data_less(const struct sroce_send_wqe *w)
{
	return w->opcode == IB_UVERBS_WR_RDMA_READ ||
	       w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static void sroce_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				  const struct ibv_sge *sg)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w = sroce_wr_cur(qp);

	if (!w)
		return;
	if (num_sge > qp->max_send_sge || (num_sge && !sg)) {
		qp->wr_err = EINVAL;
		return;
	}
	if ((w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) &&
	    (num_sge != 1 || sg[0].length < 8)) {
		qp->wr_err = EINVAL;
		return;
	}
	sroce_copy_sges(qp, w, sg, (int)num_sge);
	w->inline_len = 0;
	w->send_flags &= ~(uint32_t)SROCE_SEND_INLINE;
}

static void sroce_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	sroce_wr_set_sge_list(ibqp, 1, &sge);
}

static void sroce_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					  size_t num_buf,
					  const struct ibv_data_buf *buf)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w = sroce_wr_cur(qp);
	uint8_t *dst;
	uint64_t total = 0;
	size_t i;

	if (!w)
		return;
	if (sroce_wr_is_data_less(w) || (num_buf && !buf)) {
		qp->wr_err = EINVAL;
		return;
	}
	for (i = 0; i < num_buf; i++) {
		total += buf[i].length;
		if (total > qp->max_inline) {
			qp->wr_err = EINVAL;
			return;
		}
	}
	dst = (uint8_t *)w + SROCE_SEND_WQE_HDR;
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, buf[i].addr, buf[i].length);
		dst += buf[i].length;
	}
	w->inline_len = (uint32_t)total;
	w->num_sge = 0;
	w->send_flags |= SROCE_SEND_INLINE;
}

static void sroce_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				     size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	sroce_wr_set_inline_data_list(ibqp, 1, &b);
}

static void sroce_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w = sroce_wr_cur(qp);

	if (!w)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		qp->wr_err = EINVAL;
		return;
	}
	w->wr.ud.ah_num = to_sah(ah)->ah_num;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

static void sroce_wr_set_xrc_srqn(struct ibv_qp_ex *ibqp, uint32_t srqn)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w = sroce_wr_cur(qp);

	if (!w)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) {
		qp->wr_err = EINVAL;
		return;
	}
	w->xrc_srqn = srqn;
}

/* Operations sroce does not offer: fail the batch rather than crash. */

static void sroce_wr_send_tso(struct ibv_qp_ex *ibqp, void *hdr,
			      uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	to_sqp_ex(ibqp)->wr_err = EOPNOTSUPP;
}

/*
 * ATOMIC WRITE: the 8 bytes travel as inline data, taken now, in memory
 * order; the responder stores them at once.  The target must be aligned.
 */
static void sroce_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t raddr, const void *atomic_wr)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w;

	if (!qp->wr_err && (!atomic_wr || (raddr & 7))) {
		qp->wr_err = EINVAL;
		return;
	}
	w = sroce_wr_new(ibqp, IBV_WR_ATOMIC_WRITE);
	if (!w)
		return;
	w->wr.rdma.remote_addr = raddr;
	w->wr.rdma.rkey = rkey;
	memcpy((uint8_t *)w + SROCE_SEND_WQE_HDR, atomic_wr, 8);
	w->inline_len = 8;
	w->send_flags |= SROCE_SEND_INLINE;
	/* its data is set: later set_sge/inline calls are the caller's bug */
	qp->wr_cur = NULL;
}

#if SROCE_HAVE_WR_FLUSH
/* The longest message IB allows, and what a RETH's DMA length holds. */
#define SROCE_MAX_MSG_LEN	(1ULL << 31)
_Static_assert(IBV_FLUSH_GLOBAL == SROCE_FLUSH_TYPE_GLOBAL &&
	       IBV_FLUSH_PERSISTENT == SROCE_FLUSH_TYPE_PERSISTENT &&
	       IBV_FLUSH_RANGE == SROCE_FLUSH_LEVEL_RANGE &&
	       IBV_FLUSH_MR == SROCE_FLUSH_LEVEL_MR, "flush values");

static void sroce_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			   uint64_t raddr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	struct sroce_send_wqe *w;

	if (!qp->wr_err &&
	    (len > SROCE_MAX_MSG_LEN ||
	     (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	     (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR))) {
		qp->wr_err = EINVAL;
		return;
	}
	w = sroce_wr_new(ibqp, IBV_WR_FLUSH);
	if (!w)
		return;
	w->wr.flush.remote_addr = raddr;
	w->wr.flush.rkey = rkey;
	w->wr.flush.length = (uint32_t)len;
	w->wr.flush.type = type;
	w->wr.flush.level = level;
	qp->wr_cur = NULL;
}
#endif

static void sroce_wr_start(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_start_idx = qp->sq.idx;
	qp->wr_cur = NULL;
	/* Without a usable send queue every WR in the batch is refused. */
	qp->wr_err = qp->has_sq && sroce_sq_open(&qp->vqp.qp) ? 0 : EINVAL;
}

static int sroce_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);
	uint32_t n;
	int ret = qp->wr_err;

	if (ret)
		qp->sq.idx = qp->wr_start_idx;
	n = qp->sq.idx - qp->wr_start_idx;
	if (n)
		sroce_store_release(&qp->sq.ctl->prod, qp->sq.idx);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	if (n && sroce_doorbell_needed(qp))
		ret = sroce_ring_doorbell(qp);
	return ret;
}

static void sroce_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = to_sqp_ex(ibqp);

	qp->sq.idx = qp->wr_start_idx;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static void sroce_qp_ex_init(struct sroce_qp *qp)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	x->wr_atomic_cmp_swp = sroce_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = sroce_wr_atomic_fetch_add;
	x->wr_bind_mw = sroce_wr_bind_mw;
	x->wr_local_inv = sroce_wr_local_inv;
	x->wr_rdma_read = sroce_wr_rdma_read;
	x->wr_rdma_write = sroce_wr_rdma_write;
	x->wr_rdma_write_imm = sroce_wr_rdma_write_imm;
	x->wr_send = sroce_wr_send;
	x->wr_send_imm = sroce_wr_send_imm;
	x->wr_send_inv = sroce_wr_send_inv;
	x->wr_send_tso = sroce_wr_send_tso;
	x->wr_set_ud_addr = sroce_wr_set_ud_addr;
	x->wr_set_xrc_srqn = sroce_wr_set_xrc_srqn;
	x->wr_set_inline_data = sroce_wr_set_inline_data;
	x->wr_set_inline_data_list = sroce_wr_set_inline_data_list;
	x->wr_set_sge = sroce_wr_set_sge;
	x->wr_set_sge_list = sroce_wr_set_sge_list;
	x->wr_start = sroce_wr_start;
	x->wr_complete = sroce_wr_complete;
	x->wr_abort = sroce_wr_abort;
	x->wr_atomic_write = sroce_wr_atomic_write;
#if SROCE_HAVE_WR_FLUSH
	x->wr_flush = sroce_wr_flush;
#endif
}

/* ---- QP control path ---- */

static uint32_t sroce_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * An RSS QP: a raw packet QP that receives through a table of WQs and
 * has no queue of its own, so nothing is mapped; whatever the caller left
 * in its caps and CQs (pyverbs leaves its defaults) is not asked for.
 */
static struct ibv_qp *sroce_create_rss_qp(struct ibv_context *ctx,
					  struct ibv_qp_init_attr_ex *in)
{
	const struct ibv_rx_hash_conf *h = &in->rx_hash_conf;
	struct sroce_create_qp_ex_resp_w resp;
	struct sroce_create_qp_rss_w cmd;
	struct ibv_qp_init_attr_ex ax;
	struct sroce_qp *qp;
	int ret;

	if (!(in->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE) ||
	    !(in->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	    !(in->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    in->qp_type != IBV_QPT_RAW_PACKET || !in->rwq_ind_tbl ||
	    ((in->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     in->create_flags) ||
	    h->rx_hash_function != SROCE_RX_HASH_FUNC_TOEPLITZ ||
	    h->rx_hash_key_len != SROCE_RX_HASH_KEY_LEN || !h->rx_hash_key ||
	    (h->rx_hash_fields_mask & ~SROCE_RX_HASH_FIELDS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&ax, 0, sizeof(ax));
	ax.qp_context = in->qp_context;
	ax.qp_type = IBV_QPT_RAW_PACKET;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE;
	ax.pd = in->pd;
	ax.rwq_ind_tbl = in->rwq_ind_tbl;
	memset(&cmd, 0, sizeof(cmd));
	cmd.drv.rx_hash_fields_mask = h->rx_hash_fields_mask;
	cmd.drv.rx_hash_function = h->rx_hash_function;
	cmd.drv.rx_key_len = h->rx_hash_key_len;
	memcpy(cmd.drv.rx_hash_key, h->rx_hash_key, SROCE_RX_HASH_KEY_LEN);

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_qp_ex2(ctx, &qp->vqp, &ax, &cmd.ibv, sizeof(cmd),
				    SROCE_CORE_RESP(&resp, struct ib_uverbs_ex_create_qp_resp),
				    sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	memset(&in->cap, 0, sizeof(in->cap));
	return &qp->vqp.qp;
}

struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *in)
{
	struct sroce_create_qp_resp_w resp;
	struct ibv_qp_init_attr_ex ax, *attr = &ax;
	struct ibv_create_qp cmd;
	struct sroce_qp *qp;
	uint64_t ops = 0;
	int ret;

	if (in->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					IBV_QP_INIT_ATTR_XRCD |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					IBV_QP_INIT_ATTR_CREATE_FLAGS |
					IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
					IBV_QP_INIT_ATTR_IND_TABLE |
					IBV_QP_INIT_ATTR_RX_HASH)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/*
	 * No creation flag and no TSO are offered, but naming them with a
	 * zero value asks for nothing (rdma-core's tests do so at random);
	 * the kernel command then goes without them.
	 */
	if (((in->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     in->create_flags) ||
	    ((in->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) &&
	     in->max_tso_header)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	ax = *in;
	ax.comp_mask &= ~(uint32_t)(IBV_QP_INIT_ATTR_CREATE_FLAGS |
				    IBV_QP_INIT_ATTR_MAX_TSO_HEADER);
	/* an XRC receive QP only answers: it has no work queue at all */
	if (!sroce_qp_ops_allowed(attr->qp_type) &&
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (ops & ~sroce_qp_ops_allowed(attr->qp_type)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		/* A kernel whose MRs cannot grant FLUSH would fail every one. */
		if ((ops & SROCE_QP_EX_WITH_FLUSH) &&
		    !(to_sctx(ctx)->flags & SROCE_UCTX_F_FLUSH)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}

	if (in->comp_mask & (IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH))
		return sroce_create_rss_qp(ctx, in);

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				   SROCE_CORE_RESP(&resp, struct ib_uverbs_create_qp_resp),
				   sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}

	if (resp.drv.sq_mi.size) {
		ret = sroce_ring_map(&qp->sq, ctx->cmd_fd, &resp.drv.sq_mi,
				     SROCE_SEND_WQE_HDR);
		if (ret)
			goto err_destroy;
		qp->has_sq = true;
		qp->max_send_sge = sroce_min_u32(attr->cap.max_send_sge,
				(qp->sq.stride - SROCE_SEND_WQE_HDR) /
				sizeof(struct sroce_sge));
		qp->max_inline = sroce_min_u32(attr->cap.max_inline_data,
				qp->sq.stride - SROCE_SEND_WQE_HDR);
	}
	if (resp.drv.rq_mi.size) {
		if (attr->srq) {
			ret = EPROTO;
			goto err_unmap;
		}
		ret = sroce_ring_map(&qp->rq, ctx->cmd_fd, &resp.drv.rq_mi,
				     SROCE_RECV_WQE_HDR);
		if (ret)
			goto err_unmap;
		qp->has_rq = true;
		qp->max_recv_sge = sroce_min_u32(attr->cap.max_recv_sge,
				(qp->rq.stride - SROCE_RECV_WQE_HDR) /
				sizeof(struct sroce_sge));
	}
	qp->sq_sig_all = attr->sq_sig_all;
	qp->send_ops_flags = ops;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		sroce_qp_ex_init(qp);
		qp->vqp.comp_mask |= SROCE_VERBS_QP_EX;
	}
	/* The caller learns the capabilities it was granted. */
	in->cap = ax.cap;
	return &qp->vqp.qp;

err_unmap:
	sroce_ring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qp;

	memset(&ax, 0, sizeof(ax));
	ax.qp_context = attr->qp_context;
	ax.send_cq = attr->send_cq;
	ax.recv_cq = attr->recv_cq;
	ax.srq = attr->srq;
	ax.cap = attr->cap;
	ax.qp_type = attr->qp_type;
	ax.sq_sig_all = attr->sq_sig_all;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	qp = sroce_create_qp_ex(pd->context, &ax);
	if (qp)
		attr->cap = ax.cap;
	return qp;
}

/*
 * Another process's (or our own) XRC receive QP, by number: nothing to
 * map, only the handle to modify and destroy it with.
 */
struct ibv_qp *sroce_open_qp(struct ibv_context *ctx,
			     struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct sroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_qp cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET)
		return ret;
	/* The kernel has emptied the work queues; empty the CQs too. */
	if (qp->recv_cq)
		sroce_cq_clean(qp->recv_cq, qp->qp_num);
	if (qp->send_cq && qp->send_cq != qp->recv_cq)
		sroce_cq_clean(qp->send_cq, qp->qp_num);
	return 0;
}

int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	sroce_ring_unmap(&qp->sq);
	sroce_ring_unmap(&qp->rq);
	free(qp);
	return 0;
}

/* ---- receive WQs and indirection tables (RSS) ---- */

static int sroce_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	struct sroce_wq *wq = (struct sroce_wq *)ibwq;
	struct ibv_wq_attr attr = {
		.attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE,
		.wq_state = IBV_WQS_ERR,
		.curr_wq_state = IBV_WQS_ERR,
	};
	struct ibv_modify_wq cmd;
	int ret;

	ret = sroce_post_recv_ring(&wq->ring, wq->max_sge, wr, bad_wr);
	if (ret && *bad_wr == wr)
		return ret;
	/*
	 * A WQ in ERR completes what is posted to it with a flush error, and
	 * no doorbell tells the kernel: a move from ERR to ERR makes it flush
	 * (refused if the WQ left ERR meanwhile). The fence orders the
	 * producer index published above before the read of in_err, against
	 * sroce_modify_wq() setting in_err before the kernel reads the index.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&wq->in_err, __ATOMIC_RELAXED)) {
		memset(&cmd, 0, sizeof(cmd));
		ibv_cmd_modify_wq(ibwq, &attr, &cmd, sizeof(cmd));
	}
	return ret;
}

struct ibv_wq *sroce_create_wq(struct ibv_context *ctx,
			       struct ibv_wq_init_attr *attr)
{
	struct sroce_create_wq_resp_w resp;
	struct ibv_create_wq cmd;
	struct sroce_wq *wq;
	int ret;

	if (attr->wq_type != IBV_WQT_RQ ||
	    (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS) ||
	    ((attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || !attr->cq || attr->pd->context != ctx ||
	    attr->cq->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_create_wq(ctx, attr, &wq->ibv_wq, &cmd, sizeof(cmd),
				SROCE_CORE_RESP(&resp, struct ib_uverbs_ex_create_wq_resp),
				sizeof(resp));
	if (ret) {
		free(wq);
		errno = ret;
		return NULL;
	}
	ret = sroce_ring_map(&wq->ring, ctx->cmd_fd, &resp.drv.mi,
			     SROCE_RECV_WQE_HDR);
	if (ret) {
		ibv_cmd_destroy_wq(&wq->ibv_wq);
		free(wq);
		errno = ret;
		return NULL;
	}
	wq->max_sge = sroce_min_u32(attr->max_sge,
				    (wq->ring.stride - SROCE_RECV_WQE_HDR) /
				    sizeof(struct sroce_sge));
	pthread_mutex_init(&wq->modify_lock, NULL);
	wq->ibv_wq.post_recv = sroce_post_wq_recv;
	return &wq->ibv_wq;
}

/*
 * in_err follows the WQ's state for post_wq_recv: set before a move to ERR
 * (a post racing the move then flushes what it added), cleared after a
 * move out of it; the mutex keeps it in the order the moves took.
 */
int sroce_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct sroce_wq *wq = (struct sroce_wq *)ibwq;
	bool state = attr->attr_mask & IBV_WQ_ATTR_STATE;
	struct ibv_modify_wq cmd;
	bool was;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	pthread_mutex_lock(&wq->modify_lock);
	was = __atomic_load_n(&wq->in_err, __ATOMIC_RELAXED);
	if (state && attr->wq_state == IBV_WQS_ERR)
		__atomic_store_n(&wq->in_err, true, __ATOMIC_SEQ_CST);
	ret = ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
	if (state)
		__atomic_store_n(&wq->in_err,
				 ret ? was : attr->wq_state == IBV_WQS_ERR,
				 __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&wq->modify_lock);
	return ret;
}

int sroce_destroy_wq(struct ibv_wq *ibwq)
{
	struct sroce_wq *wq = (struct sroce_wq *)ibwq;
	int ret = ibv_cmd_destroy_wq(ibwq);

	if (ret)
		return ret;
	sroce_ring_unmap(&wq->ring);
	pthread_mutex_destroy(&wq->modify_lock);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *
sroce_create_rwq_ind_table(struct ibv_context *ctx,
			   struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp;
	struct ibv_rwq_ind_table *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_rwq_ind_table(ctx, attr, t, &resp, sizeof(resp));
	if (ret) {
		free(t);
		errno = ret;
		return NULL;
	}
	return t;
}

int sroce_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t)
{
	int ret = ibv_cmd_destroy_rwq_ind_table(t);

	if (!ret)
		free(t);
	return ret;
}

/* ---- SRQ ---- */

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct sroce_create_srq_resp_w resp;
	struct ibv_create_srq cmd;
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 SROCE_CORE_RESP(&resp, struct ib_uverbs_create_srq_resp),
				 sizeof(resp));
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	ret = sroce_ring_map(&srq->ring, pd->context->cmd_fd, &resp.drv.mi,
			     SROCE_RECV_WQE_HDR);
	if (ret) {
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->max_sge = sroce_min_u32(attr->attr.max_sge,
				     (srq->ring.stride - SROCE_RECV_WQE_HDR) /
				     sizeof(struct sroce_sge));
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	srq->vsrq.srq_num = resp.drv.srq_num;
	return &srq->vsrq.srq;
}

/* What ibv_create_srq would have set up around create_srq. */
static void sroce_srq_ex_init(struct ibv_srq *srq, struct ibv_context *ctx,
			      const struct ibv_srq_init_attr_ex *attr)
{
	srq->context = ctx;
	srq->srq_context = attr->srq_context;
	srq->pd = attr->pd;
	srq->events_completed = 0;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
}

/* An XRC SRQ: a basic one that TGT QPs of its domain find by number. */
static struct ibv_srq *sroce_create_xsrq(struct ibv_context *ctx,
					 struct ibv_srq_init_attr_ex *attr)
{
	struct sroce_create_srq_resp_w resp;
	struct ibv_create_xsrq cmd;
	struct sroce_srq *srq;
	int ret;

	const uint32_t need = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			      IBV_SRQ_INIT_ATTR_CQ;

	if ((attr->comp_mask & ~(uint32_t)IBV_SRQ_INIT_ATTR_TYPE) != need ||
	    !attr->pd || !attr->xrcd || !attr->cq ||
	    attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    SROCE_CORE_RESP(&resp, struct ib_uverbs_create_srq_resp),
				    sizeof(resp));
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	ret = sroce_ring_map(&srq->ring, ctx->cmd_fd, &resp.drv.mi,
			     SROCE_RECV_WQE_HDR);
	if (!ret && resp.drv.srq_num != srq->vsrq.srq_num)
		ret = EPROTO;
	if (ret) {
		sroce_ring_unmap(&srq->ring);
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->max_sge = sroce_min_u32(attr->attr.max_sge,
				     (srq->ring.stride - SROCE_RECV_WQE_HDR) /
				     sizeof(struct sroce_sge));
	sroce_srq_ex_init(&srq->vsrq.srq, ctx, attr);
	return &srq->vsrq.srq;
}

/*
 * libibverbs routes basic SRQs to create_srq itself; this entry only sees
 * requests that ask for more: XRC SRQs, and basic ones named with extra
 * attributes.
 */
struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;
	struct ibv_srq *srq;

	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type == IBV_SRQT_XRC)
		return sroce_create_xsrq(ctx, attr);
	if (attr->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE |
					  IBV_SRQ_INIT_ATTR_PD) ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC) ||
	    attr->pd->context != ctx) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	srq = sroce_create_srq(attr->pd, &a);
	if (!srq)
		return NULL;
	attr->attr = a.attr;
	sroce_srq_ex_init(srq, ctx, attr);
	return srq;
}

/*
 * A new size gets a new ring: the kernel moves the WQEs not yet consumed
 * to its start and writes its mapping into @mi (the command has no
 * response); we go on posting at the new ring's prod.
 */
int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_modify_srq_cmd_w cmd;
	struct sroce_mmap_info mi;
	struct sroce_ring nr;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv,
					  sizeof(cmd.ibv));
	memset(&mi, 0, sizeof(mi));
	cmd.drv.mi_addr = (uintptr_t)&mi;
	/* Held across the call: no post may land in the ring being copied. */
	pthread_spin_lock(&srq->ring.lock);
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv, sizeof(cmd));
	if (ret)
		goto out;
	ret = mi.stride == srq->ring.stride ?
	      sroce_ring_map(&nr, ibsrq->context->cmd_fd, &mi,
			     SROCE_RECV_WQE_HDR) : EPROTO;
	if (ret) {
		/*
		 * The kernel reads only the new ring, which we cannot see: a
		 * ring of no slots makes every later post fail (ENOMEM)
		 * rather than vanish.
		 */
		srq->ring.num = 0;
		goto out;
	}
	nr.idx = sroce_load_acquire(&nr.ctl->prod);
	sroce_ring_adopt(&srq->ring, &nr);
out:
	pthread_spin_unlock(&srq->ring.lock);
	return ret;
}

int sroce_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = to_ssrq(srq)->vsrq.srq_num;
	return 0;
}

int sroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	sroce_ring_unmap(&srq->ring);
	free(srq);
	return 0;
}
