// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The completer: consumes ACKs, NAKs, READ responses and atomic ACKs for
 * an RC QP, completes send WQEs strictly in order and drives
 * retransmission (local ACK timeout, RNR NAK, PSN sequence NAK).
 *
 * Runs in softirq (receive path, timers) under qp->req.lock, which it
 * shares with the requester.  It never sends itself: when sending should
 * resume it schedules the requester's work.
 */
#include "sroce.h"
#include "sroce_psn.h"
#include "sroce_trace.h"

/*
 * Floor for the local ACK timeout.  The IBA value is a minimum and a
 * software peer under load (or an emulated machine) answers far slower
 * than a NIC; a timer that fires while ACKs are still coming only wastes
 * the link with retransmissions.
 */
#define SROCE_MIN_ACK_TIMEOUT_MS	100

/*
 * Each timeout without progress doubles the next wait, up to this many
 * times.  A stalled peer (a busy emulated CPU, a host swapping) is then
 * given seconds instead of retry_cnt short periods before the QP fails,
 * while a lost packet on a healthy link is still resent after the first,
 * unscaled period.  Legal because the IBA timeout is a lower bound.
 */
#define SROCE_ACK_TIMEOUT_MAX_SHIFT	4

/* Timeouts at one PSN waited out for a peer on this host (comp_answer_late). */
#define SROCE_LATE_WAITS	8

static struct sroce_swqe *comp_wqe(struct sroce_qp *qp, u32 i)
{
	return &qp->swqe[(qp->req.oldest + i) & (qp->sq.num - 1)];
}

static bool comp_outstanding(const struct sroce_qp *qp)
{
	return qp->comp.psn != qp->req.high_psn;
}

/* Timeouts in a row without progress, as a shift of the ACK timeout. */
static unsigned int comp_backoff(const struct sroce_qp *qp)
{
	u32 limit = READ_ONCE(qp->attr.retry_cnt);
	u32 left = qp->comp.retry_cnt;

	/* retry_cnt may have been lowered by a modify since the last reset. */
	if (left >= limit)
		return 0;
	return min_t(u32, limit - left, SROCE_ACK_TIMEOUT_MAX_SHIFT);
}

void sroce_comp_arm_retry(struct sroce_qp *qp, bool restart)
{
	u8 t = READ_ONCE(qp->attr.timeout);
	unsigned long j;

	if (qp->req.stopped || qp->req.rnr_wait || !comp_outstanding(qp)) {
		del_timer(&qp->req.retry_timer);
		return;
	}
	/* 0 means wait forever; anything beyond 2^31 * 4.096 us is too. */
	if (!t || t > 31)
		return;
	if (!restart && timer_pending(&qp->req.retry_timer))
		return;
	j = nsecs_to_jiffies(4096ULL << t);
	j = max(j, msecs_to_jiffies(SROCE_MIN_ACK_TIMEOUT_MS));
	j <<= comp_backoff(qp);
	mod_timer(&qp->req.retry_timer, jiffies + j);
}

static void comp_wqe_done(struct sroce_qp *qp, struct sroce_swqe *swqe,
			  enum ib_wc_status status)
{
	if (swqe->st.done)
		return;
	swqe->st.done = true;
	swqe->st.status = status;
	if (swqe->st.rd_res && qp->req.rd_out)
		qp->req.rd_out--;
	if (status != IB_WC_SUCCESS)
		qp->req.err = true;
}

/* Forget every fetched WQE: the objects role has flushed the SQ. */
static void comp_forget(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->nfetched = 0;
	req->cur = 0;
	req->rd_out = 0;
	req->rnr_wait = false;
	del_timer(&req->retry_timer);
	del_timer(&qp->comp.rnr_timer);
}

void sroce_comp_complete(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;
	struct sroce_cqe cqe;
	int err;

	while (req->nfetched) {
		swqe = comp_wqe(qp, 0);
		if (!swqe->st.done)
			break;
		/* Errors are always reported, successes only when signaled. */
		if (swqe->st.status != IB_WC_SUCCESS ||
		    (swqe->wqe.send_flags & IB_SEND_SIGNALED)) {
			memset(&cqe, 0, sizeof(cqe));
			cqe.wr_id = swqe->wqe.wr_id;
			cqe.status = swqe->st.status;
			cqe.opcode = swqe->st.wc_opcode;
			cqe.byte_len = swqe->st.len;
			cqe.qp_num = qp->ibqp.qp_num;
			cqe.port_num = SROCE_PORT;
			err = sroce_sq_complete(qp, &cqe);
		} else {
			err = sroce_sq_complete(qp, NULL);
		}
		if (err == -ENOENT) {
			/* The error flush got there first and owns the rest. */
			comp_forget(qp);
			return;
		}
		/* -ENOSPC: CQ overflow; sroce_sq_complete() failed the QP. */
		req->oldest = (req->oldest + 1) & (qp->sq.num - 1);
		req->nfetched--;
		if (req->cur)
			req->cur--;
	}
}

void sroce_comp_flush(struct sroce_qp *qp)
{
	comp_forget(qp);
}

/* The next PSN a READ/atomic WQE waits for. */
static u32 comp_rd_next_psn(struct sroce_qp *qp, const struct sroce_swqe_state *st)
{
	return sroce_psn_add(st->first_psn, st->acked / sroce_req_mtu(qp));
}

/*
 * Everything up to and including @psn is acknowledged.  A READ or atomic
 * whose response should have come by then was lost: returns true and the
 * caller re-requests it.
 */
static bool comp_ack_upto(struct sroce_qp *qp, u32 psn)
{
	struct sroce_comp *comp = &qp->comp;
	struct sroce_swqe_state *st;
	bool implicit_nak = false;
	u32 boundary = sroce_psn_next(psn);
	u32 i;

	for (i = 0; i < qp->req.nfetched; i++) {
		st = &comp_wqe(qp, i)->st;
		if (!st->started)
			break;
		if (st->done || st->local)
			continue;
		if (st->rd_atomic) {
			u32 next = comp_rd_next_psn(qp, st);

			if (sroce_psn_after_eq(psn, next)) {
				implicit_nak = true;
				boundary = next;
			}
			break;
		}
		if (sroce_psn_before(psn, st->last_psn))
			break;
		comp_wqe_done(qp, comp_wqe(qp, i), IB_WC_SUCCESS);
	}
	if (sroce_psn_after(boundary, comp->psn)) {
		comp->psn = boundary;
		comp->retry_cnt = qp->attr.retry_cnt;
		comp->rnr_retry = qp->attr.rnr_retry;
		comp->rd_rerequest_valid = false;
		/* ACKs for originals overtook a go-back-N: skip ahead. */
		if (sroce_psn_after(comp->psn, qp->req.psn))
			sroce_req_rewind(qp, comp->psn);
		sroce_comp_arm_retry(qp, true);
	}
	return implicit_nak;
}

/* Acknowledge everything before @psn (a NAK or response for @psn). */
static bool comp_ack_before(struct sroce_qp *qp, u32 psn)
{
	if (psn == qp->comp.psn)
		return false;
	return comp_ack_upto(qp, sroce_psn_sub(psn, 1));
}

/* Go back to the oldest unacknowledged PSN, once per position. */
static void comp_rerequest(struct sroce_qp *qp, enum sroce_retx_reason why)
{
	struct sroce_comp *comp = &qp->comp;

	if (comp->rd_rerequest_valid && comp->rd_rerequested == comp->psn)
		return;
	comp->rd_rerequest_valid = true;
	comp->rd_rerequested = comp->psn;
	sroce_qp_count(qp, SROCE_CNT_RETRANSMITS);
	trace_sroce_retransmit(qp, comp->psn, why);
	sroce_req_rewind(qp, comp->psn);
	sroce_req_schedule(qp);
}

/* The oldest WQE still waiting for the network; NULL if none. */
static struct sroce_swqe *comp_head(struct sroce_qp *qp)
{
	struct sroce_swqe *swqe;
	u32 i;

	for (i = 0; i < qp->req.nfetched; i++) {
		swqe = comp_wqe(qp, i);
		if (!swqe->st.started)
			return NULL;
		if (!swqe->st.done && !swqe->st.local)
			return swqe;
	}
	return NULL;
}

static void comp_nak(struct sroce_qp *qp, u32 psn, u8 syn)
{
	struct sroce_comp *comp = &qp->comp;
	enum ib_wc_status status;
	struct sroce_swqe *swqe;

	trace_sroce_nak_rcvd(qp, psn, syn);
	if (comp_ack_before(qp, psn)) {
		comp_rerequest(qp, SROCE_RETX_IMPLIED);
		return;
	}

	if (sroce_aeth_syn_type(syn) == SROCE_AETH_TYPE_RNR_NAK) {
		sroce_qp_count(qp, SROCE_CNT_RNR_NAKS_RCVD);
		if (!comp->rnr_retry) {
			sroce_qp_count(qp, SROCE_CNT_RNR_RETRY_EXCEEDED);
			swqe = comp_head(qp);
			if (swqe)
				comp_wqe_done(qp, swqe, IB_WC_RNR_RETRY_EXC_ERR);
			qp->req.err = true;
			return;
		}
		if (qp->req.rnr_wait)
			return;		/* already waiting for this one */
		if (comp->rnr_retry != 7)
			comp->rnr_retry--;
		qp->req.rnr_wait = true;
		del_timer(&qp->req.retry_timer);
		sroce_req_rewind(qp, psn);
		mod_timer(&comp->rnr_timer, jiffies +
			  usecs_to_jiffies(sroce_rnr_timer_usec(sroce_aeth_syn_value(syn))));
		return;
	}

	sroce_qp_count(qp, SROCE_CNT_NAKS_RCVD);
	switch (sroce_aeth_syn_value(syn)) {
	case SROCE_NAK_PSN_SEQ_ERR:
		/* The responder expects @psn: resend from there, once. */
		comp_rerequest(qp, SROCE_RETX_NAK_SEQ);
		return;
	case SROCE_NAK_INVALID_REQ:
		status = IB_WC_REM_INV_REQ_ERR;
		break;
	case SROCE_NAK_REMOTE_ACCESS:
		status = IB_WC_REM_ACCESS_ERR;
		break;
	case SROCE_NAK_REMOTE_OP:
		status = IB_WC_REM_OP_ERR;
		break;
	case SROCE_NAK_INVALID_RD_REQ:
		status = IB_WC_REM_INV_RD_REQ_ERR;
		break;
	default:
		status = IB_WC_BAD_RESP_ERR;
		break;
	}
	swqe = comp_head(qp);
	if (swqe)
		comp_wqe_done(qp, swqe, status);
	qp->req.err = true;
}

/* Copy a response payload into the WQE's SGEs at byte @off. */
static int comp_copy_payload(struct sroce_qp *qp, struct sroce_swqe *swqe,
			     struct sroce_rx *rx, u32 off)
{
	struct sk_buff *skb = rx->skb;
	u32 len = rx->pkt.payload_len;
	struct skb_seq_state seq;
	u32 consumed = 0, n;
	const u8 *data;
	int err = 0;

	/* skb_seq_read() may hand out more than asked for: clamp */
	skb_prepare_seq_read(skb, rx->payload_off, rx->payload_off + len, &seq);
	while (consumed < len &&
	       (n = skb_seq_read(consumed, &data, &seq)) != 0) {
		n = min(n, len - consumed);
		err = sroce_sge_copy(qp->dev, qp->pd, swqe->sge,
				     swqe->wqe.num_sge, off + consumed,
				     (void *)data, n, IB_ACCESS_LOCAL_WRITE,
				     SROCE_TO_MR);
		if (err)
			break;
		consumed += n;
	}
	skb_abort_seq_read(&seq);
	if (!err && consumed != len)
		err = -EFAULT;
	return err;
}

static void comp_read_resp(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_pkt *pkt = &rx->pkt;
	u32 psn = pkt->h.psn, mtu = sroce_req_mtu(qp);
	struct sroce_swqe_state *st;
	struct sroce_swqe *swqe;
	u32 idx, off, want;
	bool last;
	int err;

	/* A response implicitly acknowledges the requests before it. */
	if (comp_ack_before(qp, psn)) {
		comp_rerequest(qp, SROCE_RETX_IMPLIED);
		return;
	}
	swqe = comp_head(qp);
	if (swqe && swqe->st.one_pkt) {
		/* FLUSH/ATOMIC WRITE: only an empty response ONLY answers it */
		if (psn != swqe->st.first_psn)
			return;
		if (pkt->h.opcode != SROCE_RC_READ_RESP_ONLY || pkt->payload_len)
			comp_wqe_done(qp, swqe, IB_WC_BAD_RESP_ERR);
		else if (comp_ack_upto(qp, psn))
			comp_rerequest(qp, SROCE_RETX_IMPLIED);
		return;
	}
	if (!swqe || swqe->wqe.opcode != IB_UVERBS_WR_RDMA_READ)
		return;
	st = &swqe->st;
	if (psn != comp_rd_next_psn(qp, st) || psn != qp->comp.psn)
		return;		/* duplicate or stale */

	idx = sroce_psn_diff(psn, st->first_psn);
	off = idx * mtu;
	last = psn == st->last_psn;
	want = last ? st->len - off : mtu;
	/*
	 * FIRST vs MIDDLE is not checked: the answer to a re-requested READ
	 * starts with FIRST in the middle of the message.
	 */
	if (!!(pkt->info->flags & SROCE_OPF_LAST) != last ||
	    pkt->payload_len != want) {
		comp_wqe_done(qp, swqe, IB_WC_BAD_RESP_ERR);
		return;
	}
	err = want ? comp_copy_payload(qp, swqe, rx, off) : 0;
	if (err == -EAGAIN) {
		/* an ODP page of the buffer is being faulted in */
		sroce_comp_odp_wait(qp, true);
		return;
	}
	if (err) {
		comp_wqe_done(qp, swqe, IB_WC_LOC_PROT_ERR);
		return;
	}
	st->acked = off + want;
	qp->comp.psn = sroce_psn_next(psn);
	qp->comp.retry_cnt = qp->attr.retry_cnt;
	qp->comp.rnr_retry = qp->attr.rnr_retry;
	qp->comp.rd_rerequest_valid = false;
	if (last)
		comp_wqe_done(qp, swqe, IB_WC_SUCCESS);
	sroce_comp_arm_retry(qp, true);
}

static void comp_atomic_ack(struct sroce_qp *qp, struct sroce_rx *rx)
{
	u32 psn = rx->pkt.h.psn;
	struct sroce_swqe *swqe;
	u64 orig;
	int err;

	if (comp_ack_before(qp, psn)) {
		comp_rerequest(qp, SROCE_RETX_IMPLIED);
		return;
	}
	swqe = comp_head(qp);
	if (!swqe || !swqe->st.rd_atomic ||
	    swqe->wqe.opcode == IB_UVERBS_WR_RDMA_READ ||
	    psn != swqe->st.first_psn || psn != qp->comp.psn)
		return;
	orig = rx->pkt.h.atmack_orig;
	err = sroce_sge_copy(qp->dev, qp->pd, swqe->sge, swqe->wqe.num_sge, 0,
			     &orig, sizeof(orig), IB_ACCESS_LOCAL_WRITE,
			     SROCE_TO_MR);
	if (err == -EAGAIN) {
		/* asked again once the ODP page is in: atomics replay */
		sroce_comp_odp_wait(qp, true);
		return;
	}
	if (err) {
		comp_wqe_done(qp, swqe, IB_WC_LOC_PROT_ERR);
		return;
	}
	swqe->st.acked = sizeof(orig);
	qp->comp.psn = sroce_psn_next(psn);
	qp->comp.retry_cnt = qp->attr.retry_cnt;
	qp->comp.rnr_retry = qp->attr.rnr_retry;
	qp->comp.rd_rerequest_valid = false;
	comp_wqe_done(qp, swqe, IB_WC_SUCCESS);
	sroce_comp_arm_retry(qp, true);
}

void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_req *req = &qp->req;
	struct sroce_pkt *pkt = &rx->pkt;
	u32 psn = pkt->h.psn, rd_out, old_psn;
	bool fatal, drained = false;
	u8 syn;

	/* net.c passed only responses of the QP's own service */
	if (!sroce_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return;

	spin_lock_bh(&req->lock);
	if (req->stopped || req->err || !qp->sq.num ||
	    (READ_ONCE(qp->state) != IB_QPS_RTS &&
	     READ_ONCE(qp->state) != IB_QPS_SQD))
		goto unlock;

	/*
	 * Only PSNs sent and not yet acknowledged count, not every PSN the
	 * WQEs were given: a large message has far more PSNs than are ever
	 * on the wire, and an ACK for one never sent is stale or forged.
	 */
	if (!sroce_psn_in_range(psn, qp->comp.psn, req->sent_psn)) {
		sroce_qp_count(qp, SROCE_CNT_ACK_OUT_OF_WINDOW);
		goto unlock;
	}

	old_psn = qp->comp.psn;
	rd_out = req->rd_out;

	switch (pkt->h.opcode & SROCE_OPC_OP_MASK) {
	case SROCE_OP_ACK:
		syn = pkt->h.aeth_syn;
		if (sroce_aeth_syn_type(syn) == SROCE_AETH_TYPE_ACK) {
			if (comp_ack_upto(qp, psn))
				comp_rerequest(qp, SROCE_RETX_IMPLIED);
		} else {
			comp_nak(qp, psn, syn);
		}
		break;
	case SROCE_OP_ATOMIC_ACK:
		if (sroce_aeth_syn_type(pkt->h.aeth_syn) == SROCE_AETH_TYPE_ACK)
			comp_atomic_ack(qp, rx);
		break;
	case SROCE_OP_READ_RESP_FIRST:
	case SROCE_OP_READ_RESP_MIDDLE:
	case SROCE_OP_READ_RESP_LAST:
	case SROCE_OP_READ_RESP_ONLY:
		comp_read_resp(qp, rx);
		break;
	default:
		break;
	}

	sroce_comp_complete(qp);
	/*
	 * Wake the requester if the window or a READ/atomic slot opened, or
	 * for WQEs posted without a doorbell (sroce_req_doorbell()).
	 */
	if (!req->err && (old_psn != qp->comp.psn || req->rd_out < rd_out) &&
	    (req->blocked || req->cur < req->nfetched ||
	     (req->no_db && sroce_sq_unfetched(qp))))
		sroce_req_schedule(qp);
	sroce_req_doorbell(qp);
	drained = !req->err && sroce_req_drained(qp);
unlock:
	fatal = req->err && !req->err_raised;
	spin_unlock_bh(&req->lock);
	if (fatal)
		sroce_req_raise_error(qp);
	if (drained)
		sroce_qp_sq_drained(qp);
}

/*
 * A peer on this host answers through our own queues, which lose nothing
 * but overflows: while packets are still on their way inside the host,
 * a missing answer is late (the responder waits for budget, softirqs for
 * busy-polling processes), and a resend would only add to the load that
 * made it late.  A few timeouts at one PSN are waited out; then, or with
 * nothing moving, it counts as a loss as usual.
 */
static bool comp_answer_late(struct sroce_qp *qp)
{
	struct sroce_comp *comp = &qp->comp;

	if (!READ_ONCE(qp->loop_peer) || qp->req.tx_budget)
		return false;
	if (comp->late_psn != comp->psn) {
		comp->late_psn = comp->psn;
		comp->late_waits = 0;
	}
	if (comp->late_waits >= SROCE_LATE_WAITS || !sroce_net_loop_busy(qp))
		return false;
	comp->late_waits++;
	sroce_qp_count(qp, SROCE_CNT_ACK_LATE);
	return true;
}

void sroce_comp_retry_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, req.retry_timer);
	struct sroce_comp *comp = &qp->comp;
	struct sroce_swqe *swqe;
	bool fatal;

	spin_lock_bh(&qp->req.lock);
	if (qp->req.stopped || qp->req.err || qp->req.rnr_wait ||
	    !comp_outstanding(qp) ||
	    (READ_ONCE(qp->state) != IB_QPS_RTS &&
	     READ_ONCE(qp->state) != IB_QPS_SQD))
		goto unlock;
	if (comp_answer_late(qp)) {
		sroce_comp_arm_retry(qp, true);
		goto unlock;
	}
	if (timer_pending(&comp->odp_timer)) {
		/* waiting for our own ODP page fault: no sign of loss */
		sroce_comp_arm_retry(qp, true);
		goto unlock;
	}
	if (qp->req.tx_budget && sroce_net_tx_moved(qp)) {
		/*
		 * Waiting for our own netdev's budget, which is draining, is
		 * no sign of loss: look again later.  A netdev that freed
		 * nothing for a whole timeout counts as a loss below, so a
		 * stuck one ends in RETRY_EXC_ERR, not in a hang.
		 */
		sroce_comp_arm_retry(qp, true);
		goto unlock;
	}
	if (!comp->retry_cnt) {
		sroce_qp_count(qp, SROCE_CNT_RETRY_EXCEEDED);
		swqe = comp_head(qp);
		if (swqe)
			comp_wqe_done(qp, swqe, IB_WC_RETRY_EXC_ERR);
		qp->req.err = true;
		sroce_comp_complete(qp);
		goto unlock;
	}
	comp->retry_cnt--;
	comp->rd_rerequest_valid = false;
	sroce_qp_count(qp, SROCE_CNT_RETRANSMITS);
	trace_sroce_retransmit(qp, comp->psn, SROCE_RETX_TIMEOUT);
	sroce_req_rewind(qp, comp->psn);
	sroce_comp_arm_retry(qp, true);
	sroce_req_schedule(qp);
unlock:
	fatal = qp->req.err && !qp->req.err_raised;
	spin_unlock_bh(&qp->req.lock);
	if (fatal)
		sroce_req_raise_error(qp);
}

/*
 * locked: a local ODP buffer lacks a page, now being faulted in.  Look
 * again a tick later: the requester sends on, or (@rerequest: a response
 * could not be placed and was dropped) goes back to the oldest
 * unacknowledged PSN and asks again; atomics are replayed, not redone.
 */
void sroce_comp_odp_wait(struct sroce_qp *qp, bool rerequest)
{
	qp->comp.odp_rerequest |= rerequest;
	if (!timer_pending(&qp->comp.odp_timer) && !qp->req.stopped)
		mod_timer(&qp->comp.odp_timer, jiffies + 1);
}

void sroce_comp_odp_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.odp_timer);

	spin_lock_bh(&qp->req.lock);
	if (qp->req.stopped || qp->req.err) {
		qp->comp.odp_rerequest = false;
	} else if (atomic_read(&qp->dev->odp_faults)) {
		/* a fault is still on its way: asking now would only miss */
		mod_timer(&qp->comp.odp_timer, jiffies + 1);
	} else {
		if (qp->comp.odp_rerequest && comp_outstanding(qp)) {
			/* the last re-request here may have met the fault */
			qp->comp.rd_rerequest_valid = false;
			comp_rerequest(qp, SROCE_RETX_IMPLIED);
		}
		qp->comp.odp_rerequest = false;
		sroce_req_schedule(qp);
	}
	spin_unlock_bh(&qp->req.lock);
}

void sroce_comp_rnr_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rnr_timer);

	spin_lock_bh(&qp->req.lock);
	if (qp->req.rnr_wait) {
		qp->req.rnr_wait = false;
		sroce_qp_count(qp, SROCE_CNT_RETRANSMITS);
		trace_sroce_retransmit(qp, qp->comp.psn, SROCE_RETX_RNR);
		sroce_comp_arm_retry(qp, true);
		sroce_req_schedule(qp);
	}
	spin_unlock_bh(&qp->req.lock);
}
