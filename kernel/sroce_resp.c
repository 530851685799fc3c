// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Responder: RC/UC/UD requests -> registered memory, receive WQEs and the
 * receive CQ; ACKs and NAKs back to the requester (READ and atomic
 * requests: sroce_resp_read.c).  Runs in softirq under the QP's responder
 * lock; anything that must not run under that lock (moving the QP to the
 * error state) is recorded in struct resp_out and done after the unlock.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <net/ip.h>
#include <rdma/ib_pack.h>

#include "sroce_resp.h"
#include "sroce_psn.h"
#include "sroce_trace.h"

/*
 * QPs with deferred responder work, per CPU; each entry holds a QP ref.
 * The lock is for CPU hotplug: a pending tasklet of a CPU going offline
 * runs on another CPU, still serving the offlined CPU's list, while that
 * CPU may come back and schedule onto its list again.
 */
struct sroce_svc_list {
	spinlock_t lock;
	struct sroce_qp *head;
	struct tasklet_struct tasklet;
};

static DEFINE_PER_CPU(struct sroce_svc_list, sroce_svc_lists);

u32 sroce_resp_mtu(struct sroce_qp *qp)
{
	int mtu = qp->mtu;

	if (mtu < 256)
		mtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	return mtu < 256 ? 256 : mtu;
}

/* ------------------------------------------------------------------ */
/* Transmit                                                            */

/*
 * Build and send one packet to the requester, or queue it on @b (READ
 * responses; the caller flushes).  @mr/@va/@len is READ response payload
 * (len may be 0, mr may then be NULL).  -EKEYREVOKED: the region can no
 * longer be read through @mr.
 */
int sroce_resp_xmit(struct sroce_qp *qp, struct sroce_pkt_hdrs *h,
		    const struct sroce_mref *mr, u64 va, u32 len,
		    struct sroce_txb *b)
{
	const struct sroce_opcode_info *info;
	struct sk_buff *skb;
	int err;
	u32 tlen;
	u8 *p;
	int hl;

	/* responses are built as RC's; an XRC TGT QP sends XRC's */
	h->opcode |= sroce_qp_opc(qp);
	info = sroce_opcode_info(h->opcode);
	h->pad = sroce_pad_for(len);
	h->pkey = SROCE_DEFAULT_PKEY;
	h->qpn = qp->attr.dest_qp_num & SROCE_24BIT_MASK;
	tlen = info->hdr_len + len + h->pad;

	skb = sroce_net_alloc_skb(qp, &qp->av, tlen);
	if (!skb)
		return -ENOMEM;
	p = skb_put(skb, tlen);
	hl = sroce_pkt_build(p, tlen, h);
	if (hl < 0) {
		kfree_skb(skb);
		return hl;
	}
	err = len ? sroce_mr_copy(mr, va, p + hl, len, SROCE_FROM_MR) : 0;
	if (err) {
		kfree_skb(skb);
		/* -EAGAIN: an ODP page is being faulted in; try again */
		return err == -EAGAIN ? err : -EKEYREVOKED;
	}
	memset(p + hl + len, 0, h->pad);
	if (!b)
		return sroce_net_xmit(qp, &qp->av, skb);
	return sroce_net_queue(qp, b, &qp->av, skb);
}

static void resp_send_aeth(struct sroce_qp *qp, u8 syn, u32 psn)
{
	struct sroce_pkt_hdrs h = {
		.opcode = SROCE_RC_ACK,
		.psn = psn & SROCE_PSN_MASK,
		.aeth_syn = syn,
		.aeth_msn = qp->resp.msn & SROCE_24BIT_MASK,
	};

	sroce_resp_xmit(qp, &h, NULL, 0, 0, NULL);
}

static void resp_send_ack_now(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	resp->ack_pending = false;
	resp->ack_count = 0;
	resp_send_aeth(qp, SROCE_AETH_ACK_UNLIMITED,
		       sroce_psn_sub(resp->ack_psn, 1));
	sroce_qp_count(qp, SROCE_CNT_ACKS_SENT);
}

/* Anything else sent to the requester goes after a deferred ACK. */
void sroce_resp_flush_ack(struct sroce_qp *qp)
{
	if (qp->resp.ack_pending)
		resp_send_ack_now(qp);
}

static void resp_send_nak(struct sroce_qp *qp, enum sroce_nak_code code,
			  u32 psn)
{
	sroce_resp_flush_ack(qp);
	resp_send_aeth(qp, sroce_aeth_syn_nak(code), psn);
	sroce_qp_count(qp, SROCE_CNT_NAKS_SENT);
	trace_sroce_nak_sent(qp, psn, sroce_aeth_syn_nak(code));
}

static void resp_send_rnr_nak(struct sroce_qp *qp, u32 psn)
{
	sroce_resp_flush_ack(qp);
	resp_send_aeth(qp, sroce_aeth_syn_rnr(qp->attr.min_rnr_timer), psn);
	sroce_qp_count(qp, SROCE_CNT_RNR_NAKS_SENT);
	trace_sroce_nak_sent(qp, psn, sroce_aeth_syn_rnr(qp->attr.min_rnr_timer));
}

static void resp_service(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct resp_out out = {};

	spin_lock(&resp->lock);
	resp->sched = false;
	if (!resp->stopped)
		sroce_resp_run(qp, &out);
	spin_unlock(&resp->lock);

	if (out.qp_error)
		sroce_qp_error(qp, out.event);
}

/* Serves the list it belongs to, whichever CPU it runs on. */
static void resp_svc_tasklet(struct tasklet_struct *t)
{
	struct sroce_svc_list *l = from_tasklet(l, t, tasklet);
	struct sroce_qp *qp, *next;

	/* QPs rescheduled while we run wait for the next pass */
	spin_lock(&l->lock);
	next = l->head;
	l->head = NULL;
	spin_unlock(&l->lock);
	while ((qp = next)) {
		next = qp->resp.sched_next;
		qp->resp.sched_next = NULL;
		resp_service(qp);
		sroce_qp_put(qp);
	}
}

/*
 * Locked, BHs off: have resp_service() run for this QP after the current
 * softirq batch.  The QP goes on this CPU's list holding a reference.
 */
void sroce_resp_schedule(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_svc_list *l;

	if (resp->sched)
		return;
	refcount_inc(&qp->ref);
	resp->sched = true;
	l = this_cpu_ptr(&sroce_svc_lists);
	spin_lock(&l->lock);
	resp->sched_next = l->head;
	l->head = qp;
	spin_unlock(&l->lock);
	tasklet_schedule(&l->tasklet);
}

/*
 * Ask for an ACK of everything executed so far, for duplicate requests: a
 * go-back-N burst handled in one softirq run shares one ACK carrying the
 * newest PSN and MSN, sent when the batch is over (resp_service) or once
 * SROCE_RESP_ACK_BATCH were merged.
 */
void sroce_resp_defer_ack(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->ack_pending)
		sroce_qp_count(qp, SROCE_CNT_ACKS_COALESCED);
	resp->ack_pending = true;
	if (++resp->ack_count >= SROCE_RESP_ACK_BATCH) {
		resp_send_ack_now(qp);
		return;
	}
	sroce_resp_schedule(qp);
}

/* ------------------------------------------------------------------ */
/* Payload placement                                                   */

enum resp_sink {
	RESP_TO_SGE,
	RESP_TO_MR,
};

static int resp_place(struct sroce_qp *qp, enum resp_sink sink, u64 dst,
		      const void *data, u32 len)
{
	struct sroce_resp *resp = &qp->resp;

	if (sink == RESP_TO_MR)
		return sroce_mr_copy(&resp->mr, dst, (void *)data, len,
				     SROCE_TO_MR);
	return sroce_sge_copy(qp->dev, resp->pd, resp->wqe->sge,
			      resp->wqe->num_sge, (u32)dst, (void *)data, len,
			      IB_ACCESS_LOCAL_WRITE, SROCE_TO_MR);
}

/*
 * Copy the packet payload to a receive WQE (@dst = offset into its SGEs)
 * or the write MR (@dst = iova), walking page fragments in place.
 */
static int resp_copy_payload(struct sroce_qp *qp, struct sroce_rx *rx,
			     enum resp_sink sink, u64 dst)
{
	struct sk_buff *skb = rx->skb;
	u32 off = rx->payload_off, len = rx->pkt.payload_len;
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0, n;
	int err = 0;

	if (!len)
		return 0;
	if (off + len <= skb_headlen(skb))
		return resp_place(qp, sink, dst, skb->data + off, len);

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		n = skb_seq_read(done, &data, &st);
		if (!n) {
			err = -EFAULT;
			break;
		}
		n = min(n, len - done);
		err = resp_place(qp, sink, dst + done, data, n);
		if (err)
			break;
		done += n;
	}
	skb_abort_seq_read(&st);
	return err;
}

/* ------------------------------------------------------------------ */
/* Receive completions                                                 */

static int resp_post_cqe(struct sroce_qp *qp, struct sroce_cqe *cqe,
			 bool solicited)
{
	struct sroce_srq *srq = qp->resp.wqe_srq;
	struct sroce_cq *cq = srq ? srq->cq : qp->rcq;
	int err;

	cqe->wr_id = qp->resp.wqe->wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->port_num = SROCE_PORT;
	if (!cq->is_user) {
		/* kernel consumers read enum ib_wc_flags (see sroce-abi.h) */
		if (cqe->wc_flags & SROCE_WC_WITH_INV)
			cqe->wc_flags = (cqe->wc_flags & ~SROCE_WC_WITH_INV) |
					IB_WC_WITH_INVALIDATE;
		if (cqe->wc_flags & SROCE_WC_GRH)
			cqe->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		if ((cqe->wc_flags & SROCE_WC_GRH) && cqe->vlan_id != 0xffff)
			cqe->wc_flags |= IB_WC_WITH_VLAN;
	}
	qp->resp.wqe_valid = false;
	qp->resp.wqe_srq = NULL;
	qp->resp.recv_off = 0;
	err = sroce_cq_post(cq, cqe, solicited);
	if (err) {
		sroce_qp_count(qp, SROCE_CNT_CQ_OVERFLOW);
		return err;
	}
	return 0;
}

/* Complete the WQE the responder holds, if any, with an error status. */
static int resp_complete_err(struct sroce_qp *qp, enum ib_wc_status status)
{
	struct sroce_cqe cqe = {
		.status = status,
		.opcode = IB_WC_RECV,
	};

	if (!qp->resp.wqe_valid)
		return 0;
	return resp_post_cqe(qp, &cqe, true);
}

/* States in which requests are executed. */
static bool resp_state_ok(enum ib_qp_state s)
{
	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD ||
	       s == IB_QPS_SQE;
}

static enum resp_rc resp_take_wqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	int err;

	/* (XRC) a WQE is kept only for a message into the same SRQ */
	if (resp->wqe_valid)
		return resp->wqe_srq == resp->xsrq ? RESP_OK : RESP_INV_REQ;
	err = sroce_rq_take(qp, resp->xsrq ?: qp->srq, resp->wqe);
	if (err == -EAGAIN)
		return RESP_RNR;
	/* the QP is going to ERR under us: its flush owns the RQ now */
	if (err && !resp_state_ok(READ_ONCE(qp->state)))
		return RESP_DROP;
	if (err)
		return RESP_LOC_OP;
	resp->wqe_valid = true;
	resp->wqe_srq = resp->xsrq;
	resp->recv_off = 0;
	return RESP_OK;
}

static void resp_put_mr(struct sroce_resp *resp)
{
	sroce_mref_put(&resp->mr);
}

/* Forget a partially received message; a taken WQE is kept for reuse. */
static void resp_abandon_msg(struct sroce_resp *resp)
{
	resp_put_mr(resp);
	resp->msg = SROCE_MSG_NONE;
	resp->recv_off = 0;
}

/* ------------------------------------------------------------------ */
/* SEND and RDMA WRITE (RC and UC)                                     */

static enum resp_rc resp_send(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	u32 fl = pkt->info->flags;
	enum resp_rc rc;

	if (fl & SROCE_OPF_FIRST) {
		rc = resp_take_wqe(qp);
		if (rc != RESP_OK)
			return rc;
		resp->recv_off = 0;
	} else if (resp->wqe_srq != resp->xsrq) {
		/* XRC: the rest of a message names another SRQ */
		return RESP_INV_REQ;
	}
	if (pkt->payload_len > resp->wqe->total_len - resp->recv_off)
		return RESP_LEN;
	rc = resp_copy_rc(resp_copy_payload(qp, rx, RESP_TO_SGE,
					    resp->recv_off), RESP_LOC_PROT);
	if (rc != RESP_OK)
		return rc;
	resp->recv_off += pkt->payload_len;
	resp->msg = (fl & SROCE_OPF_LAST) ? SROCE_MSG_NONE : SROCE_MSG_SEND;
	return RESP_OK;
}

static int resp_send_done(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = qp->resp.recv_off,
	};

	if (pkt->info->flags & SROCE_OPF_IMM) {
		cqe.wc_flags |= SROCE_WC_WITH_IMM;
		cqe.ex.imm_data = pkt->h.imm;
	} else if (pkt->info->flags & SROCE_OPF_INV) {
		cqe.wc_flags |= SROCE_WC_WITH_INV;
		cqe.ex.invalidate_rkey = pkt->h.ieth_rkey;
	}
	return resp_post_cqe(qp, &cqe, pkt->h.se);
}

static enum resp_rc resp_write(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	u32 fl = pkt->info->flags;
	u32 len = pkt->payload_len;
	enum resp_rc rc;

	/* Make sure of the WQE before changing anything: RNR retries. */
	if ((fl & SROCE_OPF_IMM) && (fl & SROCE_OPF_LAST)) {
		rc = resp_take_wqe(qp);
		if (rc != RESP_OK)
			return rc;
	}

	if (fl & SROCE_OPF_FIRST) {
		resp_put_mr(resp);
		/* longer than any message may be (IBA 9.4.4: max 2^31) */
		if (pkt->h.reth_len > SROCE_MAX_MSG_SIZE)
			return RESP_INV_REQ;
		resp->va = pkt->h.reth_va;
		resp->dma_len = pkt->h.reth_len;
		resp->resid = pkt->h.reth_len;
		/* a zero-length write needs no valid key (IBA 9.4.4) */
		if (resp->dma_len &&
		    sroce_mref_get(&resp->mr, qp, pkt->h.reth_rkey,
				   IB_ACCESS_REMOTE_WRITE, resp->va,
				   resp->dma_len))
			return RESP_ACCESS;
	}

	if (fl & SROCE_OPF_LAST) {
		if (len != resp->resid)
			return RESP_INV_REQ;
	} else if (len != sroce_resp_mtu(qp) || len >= resp->resid) {
		return RESP_INV_REQ;
	}

	if (len) {
		if (!resp->mr.mr)
			return RESP_INV_REQ;
		rc = resp_copy_rc(resp_copy_payload(qp, rx, RESP_TO_MR,
						    resp->va), RESP_ACCESS);
		if (rc != RESP_OK)
			return rc;
	}
	resp->va += len;
	resp->resid -= len;

	if (fl & SROCE_OPF_LAST) {
		resp_put_mr(resp);
		resp->msg = SROCE_MSG_NONE;
	} else {
		resp->msg = SROCE_MSG_WRITE;
	}
	return RESP_OK;
}

static int resp_write_imm_done(struct sroce_qp *qp, struct sroce_rx *rx)
{
	struct sroce_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.byte_len = qp->resp.dma_len,
		.wc_flags = SROCE_WC_WITH_IMM,
		.ex.imm_data = rx->pkt.h.imm,
	};

	return resp_post_cqe(qp, &cqe, rx->pkt.h.se);
}

/*
 * Execute one in-sequence SEND or WRITE packet and, at the end of the
 * message, its invalidation and receive completion.
 */
static enum resp_rc resp_send_write(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	u32 fl = pkt->info->flags;
	enum resp_rc rc;

	rc = (fl & SROCE_OPF_SEND) ? resp_send(qp, rx) : resp_write(qp, rx);
	if (rc != RESP_OK)
		return rc;
	if (!(fl & SROCE_OPF_LAST))
		return RESP_OK;

	if (fl & SROCE_OPF_INV) {
		if (sroce_mr_invalidate(qp->dev, qp->resp.pd, pkt->h.ieth_rkey,
					qp, true))
			return RESP_INV_RKEY;
	}
	if (fl & SROCE_OPF_SEND) {
		if (resp_send_done(qp, rx))
			return RESP_CQ;
	} else if (fl & SROCE_OPF_IMM) {
		if (resp_write_imm_done(qp, rx))
			return RESP_CQ;
	}
	return RESP_OK;
}

/* ------------------------------------------------------------------ */
/* Per-transport receive                                               */

static bool resp_seq_ok(struct sroce_resp *resp, u32 fl)
{
	switch (resp->msg) {
	case SROCE_MSG_SEND:
		return (fl & SROCE_OPF_SEND) && !(fl & SROCE_OPF_FIRST);
	case SROCE_MSG_WRITE:
		return (fl & SROCE_OPF_WRITE) && !(fl & SROCE_OPF_FIRST);
	default:
		return fl & SROCE_OPF_FIRST;
	}
}

static bool resp_qp_allows(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	int acc = qp->attr.qp_access_flags;
	u32 fl = pkt->info->flags;

	if (fl & SROCE_OPF_FLUSH)
		return (!(pkt->h.feth_plt & SROCE_FLUSH_GLOBAL) ||
			(acc & SROCE_ACCESS_FLUSH_GLOBAL)) &&
		       (!(pkt->h.feth_plt & SROCE_FLUSH_PERSISTENT) ||
			(acc & SROCE_ACCESS_FLUSH_PERSISTENT));
	if (fl & (SROCE_OPF_WRITE | SROCE_OPF_ATOMIC_WRITE))
		return acc & IB_ACCESS_REMOTE_WRITE;
	if (fl & SROCE_OPF_READ)
		return acc & IB_ACCESS_REMOTE_READ;
	if (fl & SROCE_OPF_ATOMIC)
		return acc & IB_ACCESS_REMOTE_ATOMIC;
	return true;
}

/* RC class B/C errors: answer @psn, complete the held WQE, fail the QP. */
void sroce_resp_fail(struct sroce_qp *qp, enum resp_rc rc, u32 psn,
		     struct resp_out *out)
{
	enum ib_wc_status status;
	enum sroce_nak_code code;

	switch (rc) {
	case RESP_DROP:
		return;
	case RESP_RNR:
		resp_send_rnr_nak(qp, psn);
		return;
	case RESP_CQ:
		resp_abandon_msg(&qp->resp);
		qp->resp.stopped = true;
		out->qp_error = true;
		out->event = IB_EVENT_QP_FATAL;
		return;
	case RESP_LEN:
		code = SROCE_NAK_INVALID_REQ;
		status = IB_WC_LOC_LEN_ERR;
		out->event = IB_EVENT_QP_REQ_ERR;
		break;
	case RESP_ACCESS:
		sroce_qp_count(qp, SROCE_CNT_BAD_RKEY);
		code = SROCE_NAK_REMOTE_ACCESS;
		status = IB_WC_REM_ACCESS_ERR;
		out->event = IB_EVENT_QP_ACCESS_ERR;
		break;
	case RESP_LOC_PROT:
	case RESP_LOC_OP:
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		code = SROCE_NAK_REMOTE_OP;
		status = rc == RESP_LOC_PROT ? IB_WC_LOC_PROT_ERR :
					       IB_WC_LOC_QP_OP_ERR;
		out->event = IB_EVENT_QP_FATAL;
		break;
	default:	/* RESP_INV_REQ, RESP_INV_RKEY */
		code = SROCE_NAK_INVALID_REQ;
		status = IB_WC_REM_INV_REQ_ERR;
		out->event = IB_EVENT_QP_REQ_ERR;
		break;
	}
	resp_send_nak(qp, code, psn);
	resp_complete_err(qp, status);
	resp_abandon_msg(&qp->resp);
	qp->resp.stopped = true;
	out->qp_error = true;
}

static void rc_error(struct sroce_qp *qp, struct sroce_rx *rx,
		     enum resp_rc rc, struct resp_out *out)
{
	sroce_resp_fail(qp, rc, rx->pkt.h.psn, out);
}

static void resp_rc_handle(struct sroce_qp *qp, struct sroce_rx *rx,
			   struct resp_out *out)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	u32 fl = pkt->info->flags;
	enum resp_rc rc;
	s32 diff;

	diff = sroce_psn_diff(pkt->h.psn, resp->psn);
	if (diff > 0) {
		/* one NAK per gap; the requester restarts from resp->psn */
		sroce_qp_count(qp, SROCE_CNT_OUT_OF_SEQ);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			resp_send_nak(qp, SROCE_NAK_PSN_SEQ_ERR, resp->psn);
		}
		return;
	}
	if (diff < 0) {
		rc = sroce_resp_duplicate(qp, rx);
		if (rc != RESP_OK)
			rc_error(qp, rx, rc, out);
		return;
	}
	resp->nak_sent = false;

	if (rx->len_err || !resp_seq_ok(resp, fl) ||
	    !resp_qp_allows(qp, pkt)) {
		rc_error(qp, rx, RESP_INV_REQ, out);
		return;
	}

	if (fl & SROCE_OPF_READ)
		rc = sroce_resp_read(qp, rx);
	else if (fl & SROCE_OPF_ATOMIC)
		rc = sroce_resp_atomic(qp, rx);
	else if (fl & (SROCE_OPF_FLUSH | SROCE_OPF_ATOMIC_WRITE))
		rc = sroce_resp_placement(qp, rx);
	else
		rc = resp_send_write(qp, rx);
	if (rc != RESP_OK) {
		rc_error(qp, rx, rc, out);
		return;
	}
	if (fl & (SROCE_OPF_READ | SROCE_OPF_ATOMIC | SROCE_OPF_FLUSH |
		  SROCE_OPF_ATOMIC_WRITE))
		return;

	resp->psn = sroce_psn_next(pkt->h.psn);
	resp->ack_psn = resp->psn;
	if (fl & SROCE_OPF_LAST)
		resp->msn++;
	/*
	 * Not deferred: a tasklet raised here from the receive softirq often
	 * ends up in ksoftirqd (the pass ran long, or it woke the
	 * completion's waiter), and while ksoftirqd is runnable the 6.1
	 * kernel hands it every later receive softirq too, so on a guest
	 * with a busy-polling process the ACK, and the packets behind it,
	 * waited for a scheduler slice: ~9 ms per round trip. The requester
	 * asks for an ACK at the end of each run, every 128 PSNs and at a
	 * full window only, so this costs at most one ACK per message.
	 */
	if (pkt->h.ackreq)
		resp_send_ack_now(qp);
}

/*
 * An XRC request: the SRQ its XRCETH names, of the TGT QP's domain,
 * gives the PD it is checked against and the receive WQE and CQ of a
 * SEND.  None such is a remote access error; the SRQ is held only while
 * the request is handled.
 */
static void resp_xrc_handle(struct sroce_qp *qp, struct sroce_rx *rx,
			    struct resp_out *out)
{
	struct sroce_resp *resp = &qp->resp;
	s32 diff;

	resp->xsrq = sroce_xsrq_get(qp->dev, rx->pkt.h.xrc_srqn, qp->xrcd);
	if (!resp->xsrq) {
		/*
		 * A sequence NAK, or a duplicate answered from what was kept
		 * (no PD needed), is as RC's; what would execute, or READ
		 * again through a key, is a remote access error.
		 */
		diff = sroce_psn_diff(rx->pkt.h.psn, resp->psn);
		if (diff && !(diff < 0 && (rx->pkt.info->flags & SROCE_OPF_READ)))
			resp_rc_handle(qp, rx, out);
		else
			rc_error(qp, rx, RESP_ACCESS, out);
		return;
	}
	resp->pd = resp->xsrq->pd;
	resp_rc_handle(qp, rx, out);
	resp->pd = NULL;
	sroce_srq_put(resp->xsrq);
	resp->xsrq = NULL;
}

void sroce_resp_rc_rcv(struct sroce_qp *qp, struct sroce_rx *rx,
		       struct resp_out *out, bool from_backlog)
{
	struct sroce_resp *resp = &qp->resp;

	if (!from_backlog) {
		rx->resp_seq = resp->tx_seq;
		if (resp->read_busy || !skb_queue_empty(&resp->backlog)) {
			sroce_resp_backlog(qp, rx);
			return;
		}
	}
	if (qp->xrcd)
		resp_xrc_handle(qp, rx, out);
	else
		resp_rc_handle(qp, rx, out);
}

static void uc_rcv(struct sroce_qp *qp, struct sroce_rx *rx,
		   struct resp_out *out)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	u32 fl = pkt->info->flags;
	enum resp_rc rc;

	/*
	 * A lost packet loses the rest of its message; the next FIRST/ONLY
	 * starts over, reusing a receive WQE already taken (IBA 9.8.3).
	 */
	if (resp->drop_msg || pkt->h.psn != resp->psn) {
		if (pkt->h.psn != resp->psn)
			sroce_qp_count(qp, SROCE_CNT_OUT_OF_SEQ);
		resp_abandon_msg(resp);
		if (!(fl & SROCE_OPF_FIRST)) {
			resp->drop_msg = true;
			return;
		}
		resp->drop_msg = false;
	}
	resp->psn = sroce_psn_next(pkt->h.psn);

	if (!resp_seq_ok(resp, fl)) {
		resp_abandon_msg(resp);
		if (!(fl & SROCE_OPF_FIRST)) {
			resp->drop_msg = true;
			return;
		}
	}
	if (rx->len_err || !resp_qp_allows(qp, pkt)) {
		resp_abandon_msg(resp);
		resp->drop_msg = !(fl & SROCE_OPF_LAST);
		return;
	}

	rc = resp_send_write(qp, rx);
	switch (rc) {
	case RESP_OK:
		if (fl & SROCE_OPF_LAST)
			resp->msn++;
		return;
	case RESP_LEN:
		if (resp_complete_err(qp, IB_WC_LOC_LEN_ERR))
			break;
		fallthrough;
	case RESP_DROP:
	case RESP_RNR:
	case RESP_ACCESS:
	case RESP_INV_REQ:
		if (rc == RESP_ACCESS) {
			sroce_qp_count(qp, SROCE_CNT_BAD_RKEY);
			trace_sroce_drop(qp->dev, qp->ibqp.qp_num,
					 SROCE_CNT_BAD_RKEY);
		}
		resp_abandon_msg(resp);
		resp->drop_msg = !(fl & SROCE_OPF_LAST);
		return;
	case RESP_INV_RKEY:
		resp_complete_err(qp, IB_WC_REM_INV_REQ_ERR);
		break;
	case RESP_LOC_PROT:
	case RESP_LOC_OP:
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		resp_complete_err(qp, rc == RESP_LOC_PROT ? IB_WC_LOC_PROT_ERR :
							    IB_WC_LOC_QP_OP_ERR);
		break;
	default:
		break;
	}
	resp_abandon_msg(resp);
	resp->stopped = true;
	out->qp_error = true;
	out->event = IB_EVENT_QP_FATAL;
}

/*
 * The 40 bytes a UD receive buffer starts with.  IPv6: the IPv6 header.
 * IPv4: 20 zero bytes, then the IPv4 header (the RoCEv2 convention that
 * ib_get_rdma_header_version() and rxe follow).
 */
static void ud_build_grh(struct sroce_rx *rx, u8 *grh)
{
	struct sk_buff *skb = rx->skb;
	u32 udp_len = SROCE_UDP_HDR_LEN + rx->pkt.len;
	bool nh_ok;

	memset(grh, 0, SROCE_GRH_LEN);
	nh_ok = skb->network_header != (typeof(skb->network_header))~0U &&
		skb_network_header(skb) >= skb->head;

	if (rx->network_type == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = (struct iphdr *)(grh + SROCE_GRH_LEN -
						    SROCE_IPV4_HDR_LEN);
		const struct iphdr *rip = (const void *)skb_network_header(skb);

		if (nh_ok && (u8 *)rip + SROCE_IPV4_HDR_LEN <=
			     skb_tail_pointer(skb) &&
		    rip->version == 4 && rip->ihl == 5) {
			memcpy(ip, rip, SROCE_IPV4_HDR_LEN);
			return;
		}
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(SROCE_IPV4_HDR_LEN + udp_len);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->saddr = rx->saddr.v4;
		ip->daddr = rx->daddr.v4;
		ip->check = ip_fast_csum(ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)grh;
		const struct ipv6hdr *rip6 =
			(const void *)skb_network_header(skb);

		if (nh_ok && (u8 *)rip6 + SROCE_IPV6_HDR_LEN <=
			     skb_tail_pointer(skb) && rip6->version == 6) {
			memcpy(ip6, rip6, SROCE_IPV6_HDR_LEN);
			return;
		}
		ip6->version = 6;
		ip6->payload_len = htons(udp_len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr = rx->saddr.v6;
		ip6->daddr = rx->daddr.v6;
	}
}

static void ud_rcv(struct sroce_qp *qp, struct sroce_rx *rx,
		   struct resp_out *out)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	struct sroce_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.wc_flags = SROCE_WC_GRH,
		.src_qp = pkt->h.deth_sqp,
		.network_hdr_type = rx->network_type,
		.vlan_id = rx->vlan_id,
	};
	u8 grh[SROCE_GRH_LEN];
	u32 qkey;
	int err;

	qkey = qp->ibqp.qp_type == IB_QPT_GSI ? SROCE_GSI_QKEY :
						qp->attr.qkey;
	/* A length error was counted on arrival. */
	if (rx->len_err)
		return;
	if (pkt->h.deth_qkey != qkey) {
		sroce_count_malformed(qp->dev, SROCE_CNT_BAD_QKEY);
		trace_sroce_drop(qp->dev, qp->ibqp.qp_num, SROCE_CNT_BAD_QKEY);
		return;
	}

	/* a WQE kept from a datagram lost to an ODP fault is used first */
	err = resp->wqe_valid ? 0 : sroce_rq_take(qp, qp->srq, resp->wqe);
	if (err == -EAGAIN) {
		/* UD has no RNR: the datagram is lost */
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		return;
	}
	if (err && !resp_state_ok(READ_ONCE(qp->state)))
		return;
	if (err)
		goto fatal;
	resp->wqe_valid = true;

	if (SROCE_GRH_LEN + pkt->payload_len > resp->wqe->total_len) {
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		if (resp_complete_err(qp, IB_WC_LOC_LEN_ERR))
			goto fatal;
		return;
	}

	ud_build_grh(rx, grh);
	err = resp_place(qp, RESP_TO_SGE, 0, grh, SROCE_GRH_LEN) ?:
	      resp_copy_payload(qp, rx, RESP_TO_SGE, SROCE_GRH_LEN);
	if (err == -EAGAIN) {
		/* an ODP page of the buffer is being faulted in: lost */
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		return;
	}
	if (err) {
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		resp_complete_err(qp, IB_WC_LOC_PROT_ERR);
		goto fatal;
	}

	cqe.byte_len = SROCE_GRH_LEN + pkt->payload_len;
	if (pkt->info->flags & SROCE_OPF_IMM) {
		cqe.wc_flags |= SROCE_WC_WITH_IMM;
		cqe.ex.imm_data = pkt->h.imm;
	}
	memcpy(cqe.smac, rx->smac, ETH_ALEN);
	if (!resp_post_cqe(qp, &cqe, pkt->h.se))
		return;
fatal:
	resp->wqe_valid = false;
	resp->stopped = true;
	out->qp_error = true;
	out->event = IB_EVENT_QP_FATAL;
}

/*
 * A frame one of this raw packet QP's flows selected (sroce_raw.c): the
 * whole of @skb's data, Ethernet header first, as a receive completion.
 * Softirq or BH off; the QP outlives the call (its flow holds it).
 */
void sroce_resp_raw_rcv(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rx rx = { .skb = skb };
	struct resp_out out = {};
	struct sroce_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = skb->len,
	};
	int err;

	if (!resp_state_ok(READ_ONCE(qp->state)))
		return;
	rx.pkt.payload_len = skb->len;
	sroce_qp_count(qp, SROCE_CNT_RCVD_PKTS);
	spin_lock(&resp->lock);
	if (resp->stopped)
		goto unlock;
	err = resp->wqe_valid ? 0 : sroce_rq_take(qp, qp->srq, resp->wqe);
	if (err == -EAGAIN || (err && !resp_state_ok(READ_ONCE(qp->state)))) {
		/* no receive posted: the frame is lost, as on a NIC */
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		goto unlock;
	}
	if (err)
		goto fatal;
	resp->wqe_valid = true;
	if (skb->len > resp->wqe->total_len) {
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		if (resp_complete_err(qp, IB_WC_LOC_LEN_ERR))
			goto fatal;
		goto unlock;
	}
	err = resp_copy_payload(qp, &rx, RESP_TO_SGE, 0);
	if (err == -EAGAIN) {
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		goto unlock;
	}
	if (err) {
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		resp_complete_err(qp, IB_WC_LOC_PROT_ERR);
		goto fatal;
	}
	if (!resp_post_cqe(qp, &cqe, false))
		goto unlock;
fatal:
	resp->wqe_valid = false;
	resp->stopped = true;
	out.qp_error = true;
unlock:
	spin_unlock(&resp->lock);
	if (out.qp_error)
		sroce_qp_error(qp, IB_EVENT_QP_FATAL);
}

/*
 * An RSS QP's frame into receive WQ @rq (sroce_raw.c): its own linear
 * copy, completed on the WQ's CQ under the WQ's number.  Softirq or BH
 * off; the QP's responder lock orders its use of resp->wqe.
 */
void sroce_resp_wq_rcv(struct sroce_qp *qp, struct sroce_srq *rq, u32 wqn,
		       struct sk_buff *skb)
{
	struct sroce_rwqe *wqe = qp->resp.wqe;
	struct sroce_cqe cqe = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = skb->len,
		.qp_num = wqn,
		.port_num = SROCE_PORT,
	};
	int err;

	sroce_qp_count(qp, SROCE_CNT_RCVD_PKTS);
	spin_lock(&qp->resp.lock);
	err = sroce_srq_take(rq, wqe);
	if (err == -EAGAIN || err == -EIO) {
		/* nothing posted (or a corrupt ring): the frame is lost */
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		goto unlock;
	}
	cqe.wr_id = wqe->wr_id;
	if (err) {
		cqe.status = IB_WC_LOC_QP_OP_ERR;
	} else if (skb->len > wqe->total_len) {
		cqe.status = IB_WC_LOC_LEN_ERR;
	} else {
		err = sroce_sge_copy(qp->dev, rq->pd, wqe->sge, wqe->num_sge,
				     0, skb->data, skb->len,
				     IB_ACCESS_LOCAL_WRITE, SROCE_TO_MR);
		if (err)
			cqe.status = IB_WC_LOC_PROT_ERR;
	}
	if (cqe.status != IB_WC_SUCCESS)
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
	if (sroce_cq_post(rq->cq, &cqe, false))
		sroce_qp_count(qp, SROCE_CNT_CQ_OVERFLOW);
unlock:
	spin_unlock(&qp->resp.lock);
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */

void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_rx *rx)
{
	const struct sroce_pkt *pkt = &rx->pkt;
	struct sroce_resp *resp = &qp->resp;
	struct resp_out out = {};
	u8 want;

	if (!pkt->info || !(pkt->info->flags & SROCE_OPF_REQ))
		return;
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		want = SROCE_QPT_RC;
		break;
	case IB_QPT_UC:
		want = SROCE_QPT_UC;
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		want = SROCE_QPT_UD;
		break;
	case IB_QPT_XRC_TGT:
		want = SROCE_QPT_XRC;
		break;
	default:
		return;
	}
	if (pkt->info->qpt != want ||
	    (pkt->h.pkey & 0x7fff) != (SROCE_DEFAULT_PKEY & 0x7fff) ||
	    !resp_state_ok(READ_ONCE(qp->state)))
		return;

	spin_lock(&resp->lock);
	if (!resp->stopped) {
		if (want == SROCE_QPT_RC || want == SROCE_QPT_XRC)
			sroce_resp_rc_rcv(qp, rx, &out, false);
		else if (want == SROCE_QPT_UC)
			uc_rcv(qp, rx, &out);
		else
			ud_rcv(qp, rx, &out);
	}
	spin_unlock(&resp->lock);

	if (out.qp_error)
		sroce_qp_error(qp, out.event);
}

int sroce_resp_init(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	spin_lock_init(&resp->lock);
	skb_queue_head_init(&resp->backlog);
	timer_setup(&resp->tx_timer, sroce_resp_tx_timer, 0);
	resp->stopped = true;
	resp->pd = qp->pd;
	resp->wqe = kzalloc(sizeof(*resp->wqe), GFP_KERNEL);
	return resp->wqe ? 0 : -ENOMEM;
}

int sroce_resp_reset(struct sroce_qp *qp, u32 rq_psn)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res = NULL, *old;
	u32 n = 0;

	if (sroce_qp_reliable(qp)) {
		n = min_t(u32, qp->attr.max_dest_rd_atomic,
			  SROCE_MAX_RD_ATOMIC);
		if (n) {
			res = kcalloc(n, sizeof(*res), GFP_KERNEL);
			if (!res)
				return -ENOMEM;
		}
	}

	spin_lock_bh(&resp->lock);
	resp_abandon_msg(resp);
	sroce_resp_read_end(resp);
	__skb_queue_purge(&resp->backlog);
	old = resp->res;
	resp->res = res;
	resp->nres = n;
	resp->res_head = 0;
	resp->psn = rq_psn & SROCE_PSN_MASK;
	resp->ack_psn = resp->psn;
	resp->msn = 0;
	resp->nak_sent = false;
	resp->drop_msg = false;
	resp->wqe_valid = false;
	resp->wqe_srq = NULL;
	resp->ack_pending = false;
	resp->ack_count = 0;
	resp->stopped = false;
	spin_unlock_bh(&resp->lock);

	kfree(old);
	return 0;
}

void sroce_resp_stop(struct sroce_qp *qp, bool flush)
{
	struct sroce_resp *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	/*
	 * The receive completions of the requests this ACK covers may
	 * already be with the application, which can then move the QP to
	 * ERR (rdma_disconnect) before the deferred ACK went out: without
	 * it the requester would flush messages that were delivered.
	 */
	if (!resp->stopped)
		sroce_resp_flush_ack(qp);
	resp->stopped = true;
	resp->ack_pending = false;
	resp->tx_paused = false;
	resp->tx_woken = false;
	resp_abandon_msg(resp);
	sroce_resp_read_end(resp);
	__skb_queue_purge(&resp->backlog);
	if (flush && resp->wqe)
		resp_complete_err(qp, IB_WC_WR_FLUSH_ERR);
	resp->wqe_valid = false;
	resp->wqe_srq = NULL;
	spin_unlock_bh(&resp->lock);
}

void sroce_resp_forget_srq(struct sroce_qp *qp, struct sroce_srq *srq)
{
	struct sroce_resp *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	if (resp->wqe_valid && resp->wqe_srq == srq) {
		/* its next packet starts no message: the QP fails then */
		resp_abandon_msg(resp);
		resp->wqe_valid = false;
		resp->wqe_srq = NULL;
	}
	spin_unlock_bh(&resp->lock);
}

void sroce_resp_cleanup(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	resp_put_mr(resp);
	sroce_resp_read_end(resp);
	__skb_queue_purge(&resp->backlog);
	kfree(resp->res);
	resp->res = NULL;
	resp->nres = 0;
	kfree(resp->wqe);
	resp->wqe = NULL;
}

void sroce_resp_module_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_svc_list *l = per_cpu_ptr(&sroce_svc_lists, cpu);

		spin_lock_init(&l->lock);
		tasklet_setup(&l->tasklet, resp_svc_tasklet);
	}
}

void sroce_resp_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		tasklet_kill(&per_cpu_ptr(&sroce_svc_lists, cpu)->tasklet);
}
