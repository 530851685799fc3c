// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Completion queues.  The kernel produces struct sroce_cqe into a ring we
 * consume without a system call; only arming and resizing go to the kernel.
 */
#define _GNU_SOURCE		/* sched_getcpu */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "sroce.h"

/* What a CQE may say about itself; everything else is dropped. */
#define SROCE_WC_FLAGS_KNOWN \
	(IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_IP_CSUM_OK | IBV_WC_WITH_INV)

#define SROCE_WC_EX_SUPPORTED \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

/*
 * Entries available to us.  A producer index more than the ring size
 * ahead (or behind us) was never written by a working kernel: after a
 * device removal ib_core replaces the mapping with zeroed pages, where
 * prod reads 0.  Then nothing is available and sroce_cq_dead() says so;
 * handing out slots nobody wrote would give the application bogus
 * successful completions.
 */
static uint32_t sroce_cq_avail(struct sroce_cq *cq, bool *broken)
{
	uint32_t n = sroce_load_acquire(&cq->ring.ctl->prod) - cq->ring.idx;

	*broken = n > cq->ring.num;
	return *broken ? 0 : n;
}

/*
 * The kernel destroyed the CQ under us (device removal) and every entry it
 * wrote has been taken, or the ring is no longer the kernel's: polling
 * again would spin forever.  The mark is stored after the last entry, so
 * avail is re-read once it is seen.
 */
static bool sroce_cq_dead(struct sroce_cq *cq)
{
	bool broken;
	uint32_t n = sroce_cq_avail(cq, &broken);

	return broken ||
	       (sroce_load_acquire(&cq->ring.ctl->state) == SROCE_RING_DEAD &&
		!n);
}

/*
 * An empty poll on the CPU where the kernel is, right now, processing our
 * packets in a task (ksoftirqd: the receive softirq fell behind) takes
 * that CPU from the very work we wait for: the scheduler splits it evenly
 * between the two, and sched_yield() does not change that (measured).
 * Sleep a moment instead.  When the softirq keeps up it runs on interrupt
 * exit, the sequence does not move and polling stays a pure spin, so
 * round trips pay nothing; a few packets since the last look are not a
 * backlog either.  Called under the ring lock; returns whether
 * to sleep once the lock is dropped.
 */
static bool sroce_cq_starves_rx(struct sroce_cq *cq)
{
	uint32_t seq = sroce_load_acquire(&cq->ring.ctl->rx_task_seq);
	uint32_t moved = seq - cq->rx_task_seen;

	if (!moved || !to_sctx(cq->vcq.cq.context)->give_way)
		return false;
	cq->rx_task_seen = seq;
	return moved >= SROCE_CQ_GIVE_WAY_PKTS &&
	       (int)sroce_load_acquire(&cq->ring.ctl->rx_task_cpu) ==
	       sched_getcpu();
}

static void sroce_cq_give_way(void)
{
	const struct timespec ts = { .tv_nsec = SROCE_CQ_GIVE_WAY_NS };

	nanosleep(&ts, NULL);
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex.imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags & SROCE_WC_FLAGS_KNOWN;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int sroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	bool broken, give_way = false;
	uint32_t avail;
	int n = 0;

	if (num_entries <= 0)
		return 0;

	pthread_spin_lock(&cq->ring.lock);
	avail = sroce_cq_avail(cq, &broken);
	while (n < num_entries && avail) {
		struct sroce_cqe cqe;

		/* Copy first: the fields are then stable while we convert. */
		memcpy(&cqe, sroce_ring_slot(&cq->ring, cq->ring.idx),
		       sizeof(cqe));
		sroce_cqe_to_wc(&cqe, &wc[n]);
		cq->ring.idx++;
		avail--;
		n++;
	}
	if (n)
		sroce_store_release(&cq->ring.ctl->cons, cq->ring.idx);
	else if (sroce_cq_dead(cq))
		n = -EIO;
	else
		give_way = sroce_cq_starves_rx(cq);
	pthread_spin_unlock(&cq->ring.lock);
	if (give_way)
		sroce_cq_give_way();
	return n;
}

/*
 * Drop the unpolled completions of QP @qpn, as a QP reset requires: a QP
 * brought back to RTS must not hand its new user the flushes of its old
 * life.  Only slots between our consumer index and the producer index we
 * read are touched, which the kernel never writes; survivors slide towards
 * the producer end, oldest last, so their order is kept, and the freed
 * slots are returned by moving the consumer index past them.
 */
void sroce_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct sroce_cq *cq = to_scq(ibcq);
	uint32_t avail, i, gone = 0;
	bool broken;

	pthread_spin_lock(&cq->ring.lock);
	avail = sroce_cq_avail(cq, &broken);
	for (i = cq->ring.idx + avail; i-- != cq->ring.idx;) {
		struct sroce_cqe *e = sroce_ring_slot(&cq->ring, i);

		if (e->qp_num == qpn)
			gone++;
		else if (gone)
			memcpy(sroce_ring_slot(&cq->ring, i + gone), e,
			       sizeof(*e));
	}
	if (gone) {
		cq->ring.idx += gone;
		sroce_store_release(&cq->ring.ctl->cons, cq->ring.idx);
	}
	pthread_spin_unlock(&cq->ring.lock);
}

/*
 * Arming is a store into the ring where the kernel allows it (see
 * SROCE_CQ_ARM_NEXT): the system call it replaces was one of two per
 * event.  The ring lock keeps a resize from copying the old ring's arm
 * while we change it.
 */
int sroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sroce_cq *cq = to_scq(ibcq);
	uint32_t want = solicited_only ? SROCE_CQ_ARM_SOLICITED :
					 SROCE_CQ_ARM_NEXT;
	uint32_t cur;

	if (!(to_sctx(ibcq->context)->flags & SROCE_UCTX_F_CQ_ARM))
		return ibv_cmd_req_notify_cq(ibcq, solicited_only);
	pthread_spin_lock(&cq->ring.lock);
	cur = __atomic_load_n(&cq->ring.ctl->arm, __ATOMIC_RELAXED);
	do {
		if (cur == SROCE_CQ_ARM_NEXT)
			break;
	} while (!__atomic_compare_exchange_n(&cq->ring.ctl->arm, &cur, want,
					      false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	/* Orders the arm before the caller's next look at 'prod'. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->ring.lock);
	return 0;
}

void sroce_cq_event(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);

	__atomic_fetch_add(&cq->events, 1, __ATOMIC_RELAXED);
}

/* ibv_cq_ex polling: start_poll takes the lock, end_poll drops it. */
static int sroce_cq_read_one(struct sroce_cq *cq)
{
	bool broken;

	if (!sroce_cq_avail(cq, &broken))
		return sroce_cq_dead(cq) ? EIO : ENOENT;
	memcpy(&cq->cur, sroce_ring_slot(&cq->ring, cq->ring.idx),
	       sizeof(cq->cur));
	cq->ring.idx++;
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = (enum ibv_wc_status)cq->cur.status;
	return 0;
}

static int sroce_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = to_scq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->ring.lock);
	ret = sroce_cq_read_one(cq);
	if (ret) {
		bool give_way = ret == ENOENT && sroce_cq_starves_rx(cq);

		pthread_spin_unlock(&cq->ring.lock);
		if (give_way)
			sroce_cq_give_way();
		return ret;
	}
	cq->polling = true;
	return 0;
}

static int sroce_next_poll(struct ibv_cq_ex *ibcq)
{
	return sroce_cq_read_one(to_scq_ex(ibcq));
}

static void sroce_end_poll(struct ibv_cq_ex *ibcq)
{
	struct sroce_cq *cq = to_scq_ex(ibcq);

	if (!cq->polling)
		return;
	cq->polling = false;
	sroce_store_release(&cq->ring.ctl->cons, cq->ring.idx);
	pthread_spin_unlock(&cq->ring.lock);
}

static enum ibv_wc_opcode sroce_read_opcode(struct ibv_cq_ex *ibcq)
{
	return (enum ibv_wc_opcode)to_scq_ex(ibcq)->cur.opcode;
}

static uint32_t sroce_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.vendor_err;
}

static uint32_t sroce_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.byte_len;
}

static __be32 sroce_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.ex.imm_data;
}

static uint32_t sroce_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.qp_num;
}

static uint32_t sroce_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.src_qp;
}

static unsigned int sroce_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.wc_flags & SROCE_WC_FLAGS_KNOWN;
}

static uint32_t sroce_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.slid;
}

static uint8_t sroce_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.sl;
}

static uint8_t sroce_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur.dlid_path_bits;
}

/* Not offered at create time; set so a stray call reads zero, not NULL. */
static uint64_t sroce_read_u64_zero(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint16_t sroce_read_cvlan(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint32_t sroce_read_flow_tag(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static void sroce_read_tm_info(struct ibv_cq_ex *ibcq,
			       struct ibv_wc_tm_info *tm_info)
{
	(void)ibcq;
	memset(tm_info, 0, sizeof(*tm_info));
}

static void sroce_cq_ex_init(struct sroce_cq *cq)
{
	struct ibv_cq_ex *c = &cq->vcq.cq_ex;

	c->start_poll = sroce_start_poll;
	c->next_poll = sroce_next_poll;
	c->end_poll = sroce_end_poll;
	c->read_opcode = sroce_read_opcode;
	c->read_vendor_err = sroce_read_vendor_err;
	c->read_byte_len = sroce_read_byte_len;
	c->read_imm_data = sroce_read_imm_data;
	c->read_qp_num = sroce_read_qp_num;
	c->read_src_qp = sroce_read_src_qp;
	c->read_wc_flags = sroce_read_wc_flags;
	c->read_slid = sroce_read_slid;
	c->read_sl = sroce_read_sl;
	c->read_dlid_path_bits = sroce_read_dlid_path_bits;
	c->read_completion_ts = sroce_read_u64_zero;
	c->read_cvlan = sroce_read_cvlan;
	c->read_flow_tag = sroce_read_flow_tag;
	c->read_tm_info = sroce_read_tm_info;
	c->read_completion_wallclock_ns = sroce_read_u64_zero;
}

static struct sroce_cq *sroce_cq_new(struct ibv_context *ctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct sroce_create_cq_resp_w resp;
	struct ibv_create_cq cmd;
	struct sroce_cq *cq;
	int ret;

	if (cqe <= 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd),
				SROCE_CORE_RESP(&resp, struct ib_uverbs_create_cq_resp),
				sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	ret = sroce_ring_map(&cq->ring, ctx->cmd_fd, &resp.drv.mi,
			     SROCE_CQE_SIZE);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		free(cq);
		errno = ret;
		return NULL;
	}
	return cq;
}

struct ibv_cq *sroce_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct sroce_cq *cq = sroce_cq_new(ctx, cqe, channel, comp_vector);

	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct sroce_cq *cq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD) ||
	    attr->wc_flags & ~(uint64_t)SROCE_WC_EX_SUPPORTED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* only a parent domain may be named, and it changes nothing here */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ctx ||
	     !to_spd(attr->parent_domain)->protection)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS && attr->flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = sroce_cq_new(ctx, (int)attr->cqe, attr->channel,
			  (int)attr->comp_vector);
	if (!cq)
		return NULL;
	cq->ex = true;
	cq->wc_flags = attr->wc_flags;
	sroce_cq_ex_init(cq);
	return &cq->vcq.cq_ex;
}

int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	sroce_ring_unmap(&cq->ring);
	free(cq);
	return 0;
}

/*
 * The kernel copies the entries we have not consumed (everything from the
 * cons we last published) into a new ring and hands back its mapping; we
 * continue at the new ring's cons.
 */
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_resize_cq_resp_w resp;
	struct ibv_resize_cq cmd;
	struct sroce_ring nr;
	int ret;

	if (cqe <= 0)
		return EINVAL;
	/*
	 * Held across the system call on purpose: no poller may consume from
	 * the old ring once the kernel has started copying it.
	 */
	pthread_spin_lock(&cq->ring.lock);
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd),
				SROCE_CORE_RESP(&resp, struct ib_uverbs_resize_cq_resp),
				sizeof(resp));
	if (ret)
		goto out;
	/*
	 * If this fails the kernel already completes into a ring we cannot
	 * see; the error tells the caller the CQ is lost.
	 */
	ret = sroce_ring_map(&nr, ibcq->context->cmd_fd, &resp.drv.mi,
			     SROCE_CQE_SIZE);
	if (ret)
		goto out;
	nr.idx = sroce_load_acquire(&nr.ctl->cons);
	sroce_ring_adopt(&cq->ring, &nr);
out:
	pthread_spin_unlock(&cq->ring.lock);
	return ret;
}
