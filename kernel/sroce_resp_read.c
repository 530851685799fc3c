// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Responder, RC READ, atomic, FLUSH and ATOMIC WRITE requests: responder
 * resources (a ring of
 * max_dest_rd_atomic entries that lets duplicates be answered without
 * executing twice), READ responses sent a budget of packets per softirq
 * pass, and the backlog of requests that wait behind such a response.
 */
#include <linux/skbuff.h>

#include "sroce_resp.h"
#include "sroce_psn.h"

/* How often a paused READ response looks again should a wake-up be missed. */
#define SROCE_RESP_TX_RETRY_MS	10

void sroce_resp_tx_resume(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	if (resp->tx_paused) {
		resp->tx_paused = false;
		resp->tx_woken = true;
		if (!resp->stopped && resp->read_busy)
			sroce_resp_schedule(qp);
	}
	spin_unlock_bh(&resp->lock);
}

void sroce_resp_tx_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, resp.tx_timer);
	struct sroce_resp *resp = &qp->resp;

	spin_lock(&resp->lock);
	if (!resp->stopped && resp->read_busy)
		sroce_resp_schedule(qp);
	spin_unlock(&resp->lock);
}

void sroce_resp_read_end(struct sroce_resp *resp)
{
	sroce_mref_put(&resp->read_mr);
	resp->read_busy = false;
}

/*
 * Locked: send READ response packets while the budget lasts.  A response
 * to a request's first PSN starts with FIRST/ONLY; a replay from inside an
 * earlier response continues with MIDDLE/LAST, which is what a requester
 * (and rxe) expects after a partial response.  -EKEYREVOKED: the region
 * was invalidated or deregistered meanwhile; resp->read_psn is the packet
 * that was not sent.
 */
static int resp_read_pump(struct sroce_qp *qp, u32 *budget)
{
	struct sroce_resp *resp = &qp->resp;
	u32 mtu = sroce_resp_mtu(qp);
	bool last, woken = resp->tx_woken;
	struct sroce_txb txb = {};
	struct sroce_pkt_hdrs h;
	int err;
	u32 n;

	/* Woken by the budget's FIFO: this pass may go ahead of waiters. */
	resp->tx_woken = false;
	while (*budget) {
		/*
		 * A long READ response must not flood the qdisc either:
		 * fq_codel drops what waits there too long, and each drop
		 * costs the requester an ACK timeout.  It waits its turn in
		 * the same FIFO as requesters (sroce_net_tx_busy()).
		 */
		if (sroce_net_tx_busy(qp, woken)) {
			sroce_net_flush(qp, &txb);
			resp->tx_paused = true;
			mod_timer(&resp->tx_timer, jiffies +
				  msecs_to_jiffies(SROCE_RESP_TX_RETRY_MS));
			return 0;
		}
		n = min(resp->read_len, mtu);
		last = n == resp->read_len;
		memset(&h, 0, sizeof(h));
		if (resp->read_first)
			h.opcode = last ? SROCE_RC_READ_RESP_ONLY :
					  SROCE_RC_READ_RESP_FIRST;
		else
			h.opcode = last ? SROCE_RC_READ_RESP_LAST :
					  SROCE_RC_READ_RESP_MIDDLE;
		h.psn = resp->read_psn;
		h.aeth_syn = SROCE_AETH_ACK_UNLIMITED;
		h.aeth_msn = resp->msn & SROCE_24BIT_MASK;
		(*budget)--;
		resp->tx_seq++;
		err = sroce_resp_xmit(qp, &h, &resp->read_mr, resp->read_va,
				      n, &txb);
		if (err == -EAGAIN) {
			/* an ODP page is being faulted in: its timer looks again */
			resp->tx_seq--;
			sroce_net_flush(qp, &txb);
			mod_timer(&resp->tx_timer, jiffies + 1);
			return 0;
		}
		/* a lost response is recovered by the requester's retry */
		if (err || last) {
			sroce_net_flush(qp, &txb);
			sroce_resp_read_end(resp);
			return err == -EKEYREVOKED ? err : 0;
		}
		resp->read_va += n;
		resp->read_len -= n;
		resp->read_psn = sroce_psn_next(resp->read_psn);
		resp->read_first = false;
	}
	sroce_net_flush(qp, &txb);
	sroce_resp_schedule(qp);
	return 0;
}

/*
 * Locked: start answering a READ; takes over the caller's MR reference.
 * RESP_ACCESS if the region went away before the response was sent.
 */
static enum resp_rc resp_read_start(struct sroce_qp *qp,
				    const struct sroce_mref *mr, u64 va,
				    u32 len, u32 psn, bool first)
{
	struct sroce_resp *resp = &qp->resp;
	u32 budget = SROCE_RESP_BUDGET;

	sroce_resp_flush_ack(qp);
	resp->read_busy = true;
	resp->read_mr = *mr;
	resp->read_va = va;
	resp->read_len = len;
	resp->read_psn = psn;
	resp->read_first = first;
	return resp_read_pump(qp, &budget) ? RESP_ACCESS : RESP_OK;
}

/*
 * Locked: keep a request that arrived while a READ response is still being
 * sent; it must not be answered (nor overtake it) before that is done.
 */
void sroce_resp_backlog(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_resp *resp = &qp->resp;
	struct sk_buff *skb = rx->skb;

	if (skb_queue_len(&resp->backlog) >= SROCE_RESP_BACKLOG_MAX) {
		/* the requester retransmits what we could not keep */
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		return;
	}
	skb_get(skb);
	/* the receive path's dst may be valid only under its RCU section */
	skb_dst_drop(skb);
	/*
	 * A request looped back on this host still holds its sender's
	 * transmit-budget charge; kept behind a READ that waits for that
	 * budget it would hold it for good.
	 */
	skb_orphan(skb);
	/* Ours now: the receive path only frees its reference. */
	SROCE_RESP_CB(skb)->seq = rx->resp_seq;
	__skb_queue_tail(&resp->backlog, skb);
	sroce_resp_schedule(qp);
}

/* Locked: continue a READ response, then work through the backlog. */
void sroce_resp_run(struct sroce_qp *qp, struct resp_out *out)
{
	struct sroce_resp *resp = &qp->resp;
	u32 budget = SROCE_RESP_BUDGET;
	struct sroce_rx rx;
	struct sk_buff *skb;
	int err;

	if (resp->read_busy && resp_read_pump(qp, &budget)) {
		/* the rest of the response would come from freed memory */
		sroce_resp_fail(qp, RESP_ACCESS, resp->read_psn, out);
		return;
	}
	while (!resp->read_busy && !resp->stopped && budget) {
		skb = __skb_dequeue(&resp->backlog);
		if (!skb)
			break;
		budget--;
		memset(&rx, 0, sizeof(rx));
		/* stateless and already passed once: same verdict as then */
		err = sroce_pkt_parse(skb->data, skb->len, &rx.pkt);
		rx.len_err = err == -EBADMSG;
		if (!err || rx.len_err) {
			rx.skb = skb;
			rx.resp_seq = SROCE_RESP_CB(skb)->seq;
			rx.payload_off = rx.pkt.payload_off;
			sroce_resp_rc_rcv(qp, &rx, out, true);
		}
		consume_skb(skb);
	}
	if (resp->stopped)
		return;
	/* A busy READ schedules its own next pass, or its timer does. */
	if (!resp->read_busy && !skb_queue_empty(&resp->backlog))
		sroce_resp_schedule(qp);
	/* the batch is over: the coalesced ACK goes now */
	if (!resp->read_busy)
		sroce_resp_flush_ack(qp);
}

static struct sroce_resp_res *resp_res_new(struct sroce_resp *resp)
{
	struct sroce_resp_res *res = &resp->res[resp->res_head];

	/*
	 * The requester keeps at most max_rd_atomic (<= our
	 * max_dest_rd_atomic) of these outstanding, so the oldest slot is
	 * one it can no longer retransmit.
	 */
	if (++resp->res_head == resp->nres)
		resp->res_head = 0;
	memset(res, 0, sizeof(*res));
	return res;
}

static struct sroce_resp_res *resp_res_find(struct sroce_resp *resp, u32 psn)
{
	u32 i;

	for (i = 0; i < resp->nres; i++) {
		struct sroce_resp_res *res = &resp->res[i];
		u32 n;

		if (res->type == SROCE_RES_FREE)
			continue;
		n = sroce_psn_sub(res->last_psn, res->first_psn) + 1;
		if (sroce_psn_in_window(psn, res->first_psn, n))
			return res;
	}
	return NULL;
}

enum resp_rc sroce_resp_read(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	struct sroce_mref mr = {};
	u32 len = pkt->h.reth_len, npkts;
	u32 mtu = sroce_resp_mtu(qp);

	if (!resp->nres || len > SROCE_MAX_MSG_SIZE)
		return RESP_INV_REQ;
	if (len && sroce_mref_get(&mr, qp, pkt->h.reth_rkey,
				  IB_ACCESS_REMOTE_READ, pkt->h.reth_va, len))
		return RESP_ACCESS;

	npkts = len ? DIV_ROUND_UP(len, mtu) : 1;
	res = resp_res_new(resp);
	res->type = SROCE_RES_READ;
	res->first_psn = pkt->h.psn;
	res->last_psn = sroce_psn_add(pkt->h.psn, npkts - 1);
	res->va = pkt->h.reth_va;
	res->rkey = pkt->h.reth_rkey;
	res->len = len;
	res->replay_left = npkts * SROCE_RESP_REPLAY_MAX;
	res->replay_psn = res->first_psn;
	res->seq0 = resp->tx_seq;

	/* the MSN counts the READ now, before its responses (C9-148) */
	resp->msn++;
	resp->psn = sroce_psn_next(res->last_psn);

	return resp_read_start(qp, &mr, res->va, len, res->first_psn, true);
}

/*
 * An atomic's ATOMIC ACK (@orig), or the empty READ response ONLY that
 * answers FLUSH and ATOMIC WRITE, after any ACK still deferred.
 */
static void resp_send_reply(struct sroce_qp *qp, u8 opcode, u32 psn, u64 orig)
{
	struct sroce_pkt_hdrs h = {
		.opcode = opcode,
		.psn = psn,
		.aeth_syn = SROCE_AETH_ACK_UNLIMITED,
		.aeth_msn = qp->resp.msn & SROCE_24BIT_MASK,
		.atmack_orig = orig,
	};

	sroce_resp_flush_ack(qp);
	sroce_resp_xmit(qp, &h, NULL, 0, 0, NULL);
}

enum resp_rc sroce_resp_atomic(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	bool cmp = (pkt->h.opcode & SROCE_OPC_OP_MASK) == SROCE_OP_CMP_SWAP;
	struct sroce_resp_res *res;
	struct sroce_mref mr;
	u64 orig;
	int err;

	if (!resp->nres || !sroce_atomic_va_ok(pkt->h.atm_va))
		return RESP_INV_REQ;
	if (sroce_mref_get(&mr, qp, pkt->h.atm_rkey, IB_ACCESS_REMOTE_ATOMIC,
			   pkt->h.atm_va, sizeof(u64)))
		return RESP_ACCESS;
	if (cmp)
		err = sroce_mr_atomic(&mr, pkt->h.atm_va, SROCE_ATOMIC_CMP_SWAP,
				      pkt->h.atm_compare, pkt->h.atm_swap_add,
				      &orig);
	else
		err = sroce_mr_atomic(&mr, pkt->h.atm_va,
				      SROCE_ATOMIC_FETCH_ADD,
				      pkt->h.atm_swap_add, 0, &orig);
	sroce_mref_put(&mr);
	if (err)
		return err == -EINVAL ? RESP_INV_REQ :
		       resp_copy_rc(err, RESP_ACCESS);

	res = resp_res_new(resp);
	res->type = SROCE_RES_ATOMIC;
	res->first_psn = pkt->h.psn;
	res->last_psn = pkt->h.psn;
	res->va = pkt->h.atm_va;
	res->rkey = pkt->h.atm_rkey;
	res->orig = orig;

	/* an ACK still deferred reports the PSN and MSN before this one */
	sroce_resp_flush_ack(qp);
	resp->msn++;
	resp->psn = sroce_psn_next(pkt->h.psn);
	resp->ack_psn = resp->psn;
	resp_send_reply(qp, SROCE_RC_ATOMIC_ACK, pkt->h.psn, orig);
	return RESP_OK;
}

/*
 * FLUSH: every earlier request of this QP has been executed, in PSN
 * order, with CPU stores, so global visibility needs only a barrier; no
 * MR grants FLUSH_PERSISTENT (sroce_mr.c), so that type meets a remote
 * access error.  The key is checked like any other; for the whole region
 * (selectivity level MR) the range is not.
 */
static enum resp_rc resp_flush(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			       struct sroce_mref *mr)
{
	u8 plt = pkt->h.feth_plt;
	u32 len = pkt->h.reth_len;
	int access = 0;

	if ((plt & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) ||
	    pkt->h.feth_sel > SROCE_FLUSH_SEL_MR || len > SROCE_MAX_MSG_SIZE)
		return RESP_INV_REQ;
	if (plt & SROCE_FLUSH_GLOBAL)
		access |= SROCE_ACCESS_FLUSH_GLOBAL;
	if (plt & SROCE_FLUSH_PERSISTENT)
		access |= SROCE_ACCESS_FLUSH_PERSISTENT;
	if (pkt->h.feth_sel == SROCE_FLUSH_SEL_MR)
		len = 0;
	if (sroce_mref_get(mr, qp, pkt->h.reth_rkey, access, pkt->h.reth_va,
			   len))
		return RESP_ACCESS;
	/* the placed data is visible before the response that says so */
	smp_wmb();
	return RESP_OK;
}

/* ATOMIC WRITE: 8 bytes stored at once, as they came (memory order). */
static enum resp_rc resp_atomic_write(struct sroce_qp *qp,
				      const struct sroce_rx *rx,
				      struct sroce_mref *mr)
{
	u64 va = rx->pkt.h.reth_va, val, old;
	int err;

	/* the parser made sure of 8 bytes of payload and a RETH length of 8 */
	if (!sroce_atomic_va_ok(va))
		return RESP_INV_REQ;
	if (sroce_mref_get(mr, qp, rx->pkt.h.reth_rkey, IB_ACCESS_REMOTE_WRITE,
			   va, sizeof(u64)))
		return RESP_ACCESS;
	if (skb_copy_bits(rx->skb, rx->payload_off, &val, sizeof(val)))
		return RESP_INV_REQ;
	err = sroce_mr_atomic(mr, va, SROCE_ATOMIC_WRITE, val, 0, &old);
	if (err)
		return err == -EINVAL ? RESP_INV_REQ :
		       resp_copy_rc(err, RESP_ACCESS);
	return RESP_OK;
}

/*
 * FLUSH and ATOMIC WRITE (IBA annex A19), answered as rxe does with an
 * empty READ response ONLY.  Like atomics they need responder resources
 * (max_dest_rd_atomic > 0), but keep none: a duplicate is answered again
 * without executing (sroce_resp_duplicate()).
 */
enum resp_rc sroce_resp_placement(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	struct sroce_mref mr = {};
	enum resp_rc rc;

	if (!resp->nres)
		return RESP_INV_REQ;
	if (pkt->info->flags & SROCE_OPF_FLUSH)
		rc = resp_flush(qp, pkt, &mr);
	else
		rc = resp_atomic_write(qp, rx, &mr);
	sroce_mref_put(&mr);
	if (rc != RESP_OK)
		return rc;

	sroce_resp_flush_ack(qp);
	resp->msn++;
	resp->psn = sroce_psn_next(pkt->h.psn);
	resp->ack_psn = resp->psn;
	resp_send_reply(qp, SROCE_RC_READ_RESP_ONLY, pkt->h.psn, 0);
	return RESP_OK;
}

/*
 * A READ's response may be sent again while its resource lasts.  Copies
 * asking from one PSN get what they ask for SROCE_RESP_REPLAY_MAX times
 * over and the rest refused (and counted), so a peer that floods
 * duplicates never gets an unbounded amount of data.  A copy asking from
 * a later PSN than any before says the requester has everything up to
 * there (go-back-N after a loss) and starts a new allowance for the tail:
 * a long READ over a lossy link re-requests once per loss, each time
 * from further on, and must not run out.  That keeps a READ's resends
 * below SROCE_RESP_REPLAY_MAX times the sum of its tails.
 */
static bool resp_replay_ok(struct sroce_qp *qp, struct sroce_resp_res *res,
			   u32 psn, u32 len)
{
	u32 mtu = sroce_resp_mtu(qp);
	u32 npkts = len ? DIV_ROUND_UP(len, mtu) : 1;

	if (sroce_psn_after(psn, res->replay_psn)) {
		res->replay_psn = psn;
		res->replay_left = npkts * SROCE_RESP_REPLAY_MAX;
	}
	if (npkts > res->replay_left) {
		sroce_qp_count(qp, SROCE_CNT_DUP_READ_REFUSED);
		return false;
	}
	res->replay_left -= npkts;
	return true;
}

/*
 * A request behind the expected PSN: the requester retransmitted because
 * our answer was lost.  Answer again without executing twice.
 */
enum resp_rc sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	u32 fl = pkt->info->flags;
	struct sroce_resp_res *res;
	struct sroce_mref mr = {};
	u64 va, end, res_end;
	u32 len, off;

	sroce_qp_count(qp, SROCE_CNT_DUP_REQUESTS);

	if (fl & (SROCE_OPF_SEND | SROCE_OPF_WRITE)) {
		sroce_resp_defer_ack(qp);
		return RESP_OK;
	}
	if (fl & (SROCE_OPF_FLUSH | SROCE_OPF_ATOMIC_WRITE)) {
		resp_send_reply(qp, SROCE_RC_READ_RESP_ONLY, pkt->h.psn, 0);
		return RESP_OK;
	}

	/* READ or atomic: unknown to the resources -> drop (class D) */
	res = resp_res_find(resp, pkt->h.psn);
	if (!res)
		return RESP_OK;

	if (fl & SROCE_OPF_ATOMIC) {
		if (res->type == SROCE_RES_ATOMIC &&
		    res->first_psn == pkt->h.psn)
			resp_send_reply(qp, SROCE_RC_ATOMIC_ACK, pkt->h.psn,
					res->orig);
		return RESP_OK;
	}

	/* the retry may ask for the tail of the original range only */
	va = pkt->h.reth_va;
	len = pkt->h.reth_len;
	if (res->type != SROCE_RES_READ || pkt->h.reth_rkey != res->rkey)
		return RESP_OK;
	res_end = res->va + res->len;
	end = va + len;
	if (va < res->va || end < va || end > res_end)
		return RESP_OK;
	/*
	 * The answer for this PSN left after this copy of the request came
	 * in: the requester gave up on a response that was late, not lost,
	 * and it is on its way.  Sending it again would only add to the
	 * load that made it late.  Were it lost after all, the next copy
	 * comes in after it left and is answered.
	 */
	off = sroce_psn_diff(pkt->h.psn, res->first_psn);
	if (res->seq0 + off >= (s64)rx->resp_seq) {
		sroce_qp_count(qp, SROCE_CNT_DUP_READ_LATE);
		return RESP_OK;
	}
	if (!resp_replay_ok(qp, res, pkt->h.psn, len))
		return RESP_OK;
	res->seq0 = (s64)resp->tx_seq - off;
	/* the key is checked again: it may have been invalidated since */
	if (len && sroce_mref_get(&mr, qp, res->rkey, IB_ACCESS_REMOTE_READ,
				  va, len))
		return RESP_ACCESS;
	return resp_read_start(qp, &mr, va, len, pkt->h.psn,
			       pkt->h.psn == res->first_psn);
}
