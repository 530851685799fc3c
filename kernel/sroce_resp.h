/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Responder internals shared by sroce_resp.c (receive, SEND/WRITE, UC,
 * UD, ACKs, deferred work) and sroce_resp_read.c (READ and atomic
 * requests, responder resources, paced READ responses).  "Locked" means
 * the caller holds qp->resp.lock with bottom halves disabled.
 */
#ifndef SROCE_RESP_H
#define SROCE_RESP_H

#include "sroce.h"

enum {
	SROCE_MSG_NONE,
	SROCE_MSG_SEND,
	SROCE_MSG_WRITE,
};

/* Deferred ACKs are sent at the latest after this many were merged. */
#define SROCE_RESP_ACK_BATCH	16
/* Packets a QP may send or consume per softirq pass once it is busy. */
#define SROCE_RESP_BUDGET	64
/* Requests that may wait behind a READ response still being sent. */
#define SROCE_RESP_BACKLOG_MAX	1024
/*
 * Duplicates may make us resend a READ's response this many times over
 * (in packets): above the 7 retries IBA allows a requester, far below
 * what a backlog full of duplicates would ask.
 */
#define SROCE_RESP_REPLAY_MAX	8

/* What a request waiting in the backlog keeps in skb->cb. */
struct sroce_resp_cb {
	u64 seq;			/* sroce_rx.resp_seq */
};
#define SROCE_RESP_CB(skb)	((struct sroce_resp_cb *)(skb)->cb)

/* Outcome of handling one request packet. */
enum resp_rc {
	RESP_OK,
	RESP_DROP,		/* silently discard */
	RESP_RNR,		/* no receive WQE */
	RESP_INV_REQ,		/* invalid request: opcode, sequence, length */
	RESP_LEN,		/* message longer than the receive buffer */
	RESP_ACCESS,		/* R_Key, bounds or rights */
	RESP_INV_RKEY,		/* SEND with Invalidate of a bad key */
	RESP_LOC_PROT,		/* receive WQE's lkey/SGE unusable */
	RESP_LOC_OP,		/* malformed receive WQE */
	RESP_CQ,		/* receive CQ overflow */
};

/*
 * What a failed copy into or out of memory means: a page of an ODP
 * region still being faulted in (-EAGAIN) is an RNR NAK, so that the
 * requester sends again; anything else is @fail.
 */
static inline enum resp_rc resp_copy_rc(int err, enum resp_rc fail)
{
	if (!err)
		return RESP_OK;
	return err == -EAGAIN ? RESP_RNR : fail;
}

/* Work left for after the responder lock is dropped. */
struct resp_out {
	bool qp_error;
	enum ib_event_type event;
};

/* sroce_resp.c */
u32 sroce_resp_mtu(struct sroce_qp *qp);
/* Locked: build and send (or queue on @b) one packet to the requester. */
int sroce_resp_xmit(struct sroce_qp *qp, struct sroce_pkt_hdrs *h,
		    const struct sroce_mref *mr, u64 va, u32 len,
		    struct sroce_txb *b);
/* Locked: send a deferred ACK now, ahead of another response. */
void sroce_resp_flush_ack(struct sroce_qp *qp);
/* Locked: run sroce_resp_run() for this QP after this softirq batch. */
void sroce_resp_schedule(struct sroce_qp *qp);
/* Locked: ACK what was executed, coalesced with the rest of the batch. */
void sroce_resp_defer_ack(struct sroce_qp *qp);
/* Locked: one RC request packet, in arrival order. */
void sroce_resp_rc_rcv(struct sroce_qp *qp, struct sroce_rx *rx,
		       struct resp_out *out, bool from_backlog);
/* Locked: NAK @psn for @rc (class B/C), fail the held WQE and the QP. */
void sroce_resp_fail(struct sroce_qp *qp, enum resp_rc rc, u32 psn,
		     struct resp_out *out);

/* sroce_resp_read.c, all locked */
enum resp_rc sroce_resp_read(struct sroce_qp *qp, struct sroce_rx *rx);
enum resp_rc sroce_resp_atomic(struct sroce_qp *qp, struct sroce_rx *rx);
enum resp_rc sroce_resp_placement(struct sroce_qp *qp, struct sroce_rx *rx);
enum resp_rc sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_resp_backlog(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_resp_run(struct sroce_qp *qp, struct resp_out *out);
void sroce_resp_read_end(struct sroce_resp *resp);
/* resp.tx_timer's function; takes resp.lock itself */
void sroce_resp_tx_timer(struct timer_list *t);

#endif /* SROCE_RESP_H */
