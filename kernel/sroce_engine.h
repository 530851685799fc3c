/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transport engine: per-QP requester, completer and responder state,
 * and the packet interface between them and the network I/O role.
 *
 *   sroce_net.c   UDP socket, receive demux, transmit, loopback
 *   sroce_req.c   requester: SQ -> packets, retransmission, timers
 *   sroce_comp.c  completer: ACKs, NAKs, read/atomic responses -> CQ
 *   sroce_resp.c  responder: requests -> memory/RQ -> ACKs, responses
 *
 * Each of these owns its struct below; sroce_qp embeds all three.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/skbuff.h>
#include "sroce_pkt.h"

struct sroce_qp;
struct sroce_av;
struct sroce_dev;
struct ib_qp_attr;

/*
 * Requester/completer progress through one send WQE.  Every field is
 * protected by the QP's req.lock.
 */
struct sroce_swqe_state {
	u32 first_psn;
	u32 last_psn;
	u32 sent;			/* bytes handed to the wire */
	u32 acked;			/* bytes acknowledged/read back */
	u8 status;			/* enum ib_wc_status once known */
	bool done;
	bool started;			/* PSNs assigned, length checked */
	bool rd_atomic;			/* READ or atomic: needs a response */
	bool local;			/* LOCAL_INV/REG_MR/BIND_MW: no packets */
	/* FLUSH/ATOMIC WRITE: one packet; an ACK or empty response ends it */
	bool one_pkt;
	/*
	 * Takes one of the responder's max_dest_rd_atomic resources (READ,
	 * atomics, and FLUSH/ATOMIC WRITE, which rxe keeps one for): counted
	 * in req.rd_out against max_rd_atomic, and waited for by a fence.
	 */
	bool rd_res;
	bool no_zc;			/* a zero-copy attempt failed: copy */
	u8 wc_opcode;			/* enum ib_uverbs_wc_opcode */
	u32 len;			/* message length in bytes */
	u32 npkts;			/* PSNs the message consumes */
};

/*
 * Packets for one destination not yet handed to IP: sroce_net_queue()
 * chains them on @head's frag_list and sroce_net_flush() sends them as one
 * skb (sroce_net.c, "Transmit batching").
 */
struct sroce_txb {
	struct sk_buff *head;
	struct sk_buff *tail;		/* last on head's frag_list */
	struct rtable *rt;		/* the route all of them take */
	__be32 saddr;			/* ... and the source it chose */
	u32 n;
};

/*
 * Owned by sroce_req.c.  @lock protects this struct, struct sroce_comp
 * and the swqe states: requester and completer share it because both
 * walk and rewrite the same window of fetched WQEs.
 */
struct sroce_req {
	spinlock_t lock;
	u32 psn;			/* next PSN to send */
	struct timer_list retry_timer;	/* local ACK timeout */
	struct work_struct work;	/* deferred sending */
	u32 oldest;			/* SQ slot of the oldest unretired WQE */
	u32 nfetched;			/* fetched and not yet retired */
	u32 cur;			/* WQEs (from @oldest) fully sent */
	u32 high_psn;			/* one past the highest PSN assigned */
	u32 sent_psn;			/* one past the highest PSN sent */
	u32 ackreq_psn;			/* last PSN sent with AckReq */
	u32 rd_out;			/* READ/atomic WQEs awaiting responses */
	bool rnr_wait;			/* sending paused by an RNR NAK */
	bool blocked;			/* window, READ/atomic limit or fence */
	bool tx_budget;			/* waiting for the device's tx budget */
	bool tx_woken;			/* ... and it is our turn (sroce_net.c) */
	bool err;			/* a send-side error: QP must go to ERR */
	bool err_raised;		/* ... and sroce_qp_error() was called */
	bool no_db;			/* SROCE_RING_F_NO_DOORBELL is set */
	bool draining;			/* SQD: begun WQEs not all complete */
	bool drain_notify;		/* ... raise SQ_DRAINED when they are */
	struct list_head tx_wait;	/* on dev->tx_waiters, under its lock */
	bool tx_dead;			/* teardown began: never listed again */
	struct sroce_txb txb;		/* flushed before @lock is dropped */
	/* RC: the newest packet, sent when the next is built or run ends */
	struct sk_buff *held;
	u32 held_psn;
	bool held_ackreq;
	/*
	 * @sched_lock (irq-safe, nests inside @lock) guards @stopped, so
	 * work can be queued from any context without @lock and none is
	 * queued once sroce_engine_qp_stop() has set it.
	 */
	spinlock_t sched_lock;
	bool stopped;
};

/* Owned by sroce_comp.c; protected by req.lock. */
struct sroce_comp {
	u32 psn;			/* oldest unacknowledged PSN */
	u32 retry_cnt;			/* retries left */
	u32 rnr_retry;			/* RNR retries left; 7 = infinite */
	struct timer_list rnr_timer;
	u32 rd_rerequested;		/* PSN a READ was last re-requested at */
	int tx_freed_seen;		/* dev->tx_freed at the last timeout */
	u32 late_psn;			/* @psn when late_waits began */
	u8 late_waits;			/* timeouts waited out at late_psn */
	bool rd_rerequest_valid;
	/* a local ODP buffer is being faulted in (sroce_comp_odp_wait()) */
	struct timer_list odp_timer;
	bool odp_rerequest;
};

/*
 * Owned by sroce_resp.c.  Responder resources remember READ and atomic
 * requests so duplicates are answered from here, not re-executed.
 */
enum sroce_resp_res_type {
	SROCE_RES_FREE,
	SROCE_RES_READ,
	SROCE_RES_ATOMIC,
};

struct sroce_resp_res {
	u8 type;			/* enum sroce_resp_res_type */
	u32 first_psn;
	u32 last_psn;			/* last READ response PSN */
	u32 rkey;
	u32 len;			/* READ: bytes requested */
	u64 va;
	u64 orig;			/* atomic: value before the operation */
	u32 replay_left;		/* READ: packets duplicates may resend */
	u32 replay_psn;			/* READ: latest PSN a duplicate asked from */
	s64 seq0;			/* READ: resp.tx_seq of first_psn's packet */
};

struct sroce_mr;
struct sroce_rwqe;
struct sroce_pd;
struct sroce_srq;

/*
 * A region as one rkey resolved it: holds the structure, and lets copies
 * go on only while that key stays valid (sroce_mref_get(), DESIGN.md
 * "Keys").  @mr is NULL when nothing is held.
 */
struct sroce_mref {
	struct sroce_mr *mr;
	u32 gen;
	u32 mw_gen;
	bool via_mw;
};

struct sroce_resp {
	spinlock_t lock;		/* taken in softirq; _bh elsewhere */
	u32 psn;			/* next expected PSN */
	u32 msn;
	u32 ack_psn;			/* an ACK acknowledges ack_psn - 1 */
	u8 msg;				/* message in progress: SEND/WRITE */
	bool stopped;			/* not RTR..SQE: drop everything */
	bool nak_sent;			/* PSN sequence NAK sent for this gap */
	bool drop_msg;			/* UC: drop until the next FIRST/ONLY */
	bool wqe_valid;			/* *wqe holds a taken receive WQE */
	bool ack_pending;		/* an ACK is deferred */
	bool sched;			/* on a CPU's service list (+QP ref) */
	u8 ack_count;			/* ACKs merged into the deferred one */
	u32 recv_off;			/* bytes placed in *wqe so far */

	/* RDMA WRITE in progress */
	struct sroce_mref mr;		/* held from FIRST to LAST */
	u64 va;
	u32 resid;
	u32 dma_len;

	/*
	 * READ response being sent, a budget of packets per softirq pass;
	 * requests arriving meanwhile wait in @backlog, in order.
	 */
	bool read_busy;
	bool read_first;		/* next packet is FIRST/ONLY */
	struct sroce_mref read_mr;
	u64 read_va;
	u32 read_len;
	u32 read_psn;
	u64 tx_seq;			/* READ response packets sent so far */
	struct sk_buff_head backlog;
	/*
	 * A READ response waiting for transmit budget: in the device's FIFO
	 * of waiters (through req.tx_wait, whose wake-up runs the QP's work
	 * item and so sroce_resp_tx_resume()); @tx_timer only backs that up.
	 */
	bool tx_paused;
	bool tx_woken;			/* resumed by that wake-up: our turn */
	struct timer_list tx_timer;

	/*
	 * The PD requests are checked against: the QP's, or for an XRC TGT
	 * QP the PD of the SRQ the request names, @xsrq, referenced while
	 * the request is handled.  @wqe_srq is the SRQ *wqe was taken from
	 * (XRC only; sroce_resp_forget_srq() clears it), whose CQ gets its
	 * completion.
	 */
	struct sroce_pd *pd;
	struct sroce_srq *xsrq;
	struct sroce_srq *wqe_srq;
	struct sroce_rwqe *wqe;		/* private copy, allocated at init */
	struct sroce_resp_res *res;	/* ring of max_dest_rd_atomic */
	u32 nres;
	u32 res_head;
	struct sroce_qp *sched_next;	/* service list link */
};

/*
 * A received transport packet: the ICRC has been checked and the headers
 * parsed and validated statelessly.  skb->data points at the BTH.  The
 * payload may sit in page fragments: use skb_copy_bits()/skb_copy_datagram
 * helpers from @payload_off for @pkt.payload_len bytes.  The receiver
 * (sroce_resp_rcv/sroce_comp_rcv) does not own the skb nor the QP
 * reference: sroce_net.c frees both when the call returns, so a callee
 * that wants to keep data must copy it (or skb_get() the skb).
 */
struct sroce_rx {
	struct sk_buff *skb;
	struct sroce_pkt pkt;
	u32 payload_off;		/* from skb->data */
	u8 network_type;		/* RDMA_NETWORK_IPV4/IPV6 */
	union {
		__be32 v4;
		struct in6_addr v6;
	} saddr, daddr;
	u16 sport;			/* UDP source port of the sender */
	u64 resp_seq;			/* responder's tx_seq when it arrived */
	u16 vlan_id;			/* of the VLAN it came in on, or 0xffff */
	u8 smac[6];
	/*
	 * sroce_pkt_parse() returned -EBADMSG: headers decoded, payload
	 * length invalid.  An RC responder answers with an Invalid Request
	 * NAK; everything else drops it.
	 */
	bool len_err;
};

/*
 * Engine entry points used by the objects role (sroce_qp.c).
 *
 * sroce_engine_qp_init() at QP creation (may sleep).
 *
 * sroce_engine_qp_modified() after every successful modify_qp, once
 * qp->state and qp->attr hold the new values, with IRQs enabled.  May
 * sleep on the transition to RTR (responder resources; returns -ENOMEM
 * if they cannot be had - modify_qp should then fail/move to ERR).  Once
 * the state is ERR it may be called from any non-IRQ context with @attr
 * NULL and @mask 0 - sroce_qp_error() should, before it flushes - even
 * inside requester or responder code: it then takes no requester lock,
 * stops the responder (which completes the receive WQE it holds, so call
 * it before flushing the RQ) and lets the requester forget its WQEs.
 * The objects role flushes both queues; the engine completes send WQEs
 * only through sroce_sq_complete(), which is atomic with that flush.
 *
 * sroce_engine_qp_stop() when the QP is destroyed, before waiting for the
 * last reference: timers and work are cancelled synchronously and none is
 * queued afterwards.  sroce_engine_qp_cleanup() after the last reference
 * is gone, to free engine memory.
 */
int sroce_engine_qp_init(struct sroce_qp *qp);
int sroce_engine_qp_modified(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			     int mask);
void sroce_engine_qp_stop(struct sroce_qp *qp);
void sroce_engine_qp_cleanup(struct sroce_qp *qp);
/*
 * New send work was posted (kernel post_send or user doorbell).  Call it
 * with no QP lock held (not sq_lock): from a plain task it sends at once
 * and may complete WQEs, i.e. run CQ callbacks that post again; from any
 * atomic context it only queues the requester's work.
 */
void sroce_req_kick(struct sroce_qp *qp);

/* Module-wide engine setup (workqueue); called from sroce_net_init(). */
int sroce_engine_init(void);
void sroce_engine_exit(void);

/*
 * Requester/completer internals shared by sroce_req.c, sroce_comp.c and
 * sroce_engine.c.  "locked" means the caller holds qp->req.lock with
 * bottom halves disabled.
 */
void sroce_req_schedule(struct sroce_qp *qp);
void sroce_req_work(struct work_struct *work);
/*
 * locked: set or clear SROCE_RING_F_NO_DOORBELL on a user QP's SQ after
 * anything that changes whether an ACK is awaited.
 */
void sroce_req_doorbell(struct sroce_qp *qp);
/* locked: resend everything from @psn on (go-back-N). */
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
/* locked: (re)arm the local ACK timer if anything is unacknowledged. */
void sroce_comp_arm_retry(struct sroce_qp *qp, bool restart);
/* locked: post CQEs for and retire the finished WQEs at the SQ head. */
void sroce_comp_complete(struct sroce_qp *qp);
/* locked: with the QP in ERR, complete every remaining send WQE. */
void sroce_comp_flush(struct sroce_qp *qp);
/* Unlocked, after a locked section: raise a pending send-side error. */
void sroce_req_raise_error(struct sroce_qp *qp);
/* locked: true once per SQD drain, when the event is owed (SQ_DRAINED). */
bool sroce_req_drained(struct sroce_qp *qp);
void sroce_comp_retry_timer(struct timer_list *t);
void sroce_comp_rnr_timer(struct timer_list *t);
void sroce_comp_odp_wait(struct sroce_qp *qp, bool rerequest);
void sroce_comp_odp_timer(struct timer_list *t);
u32 sroce_req_mtu(const struct sroce_qp *qp);

/*
 * Responder life cycle (sroce_resp.c).  init at QP creation (may sleep);
 * reset on the transition to RTR, after qp->attr has the new values
 * (may sleep: sizes the responder resources from max_dest_rd_atomic);
 * stop whenever the QP leaves RTR..SQE (ERR, RESET, destroy) - with
 * @flush a receive WQE the responder has taken but not completed is
 * completed with IB_WC_WR_FLUSH_ERR (call it before flushing the RQ so
 * the completions keep their order); cleanup frees memory after the last
 * QP reference is gone.  sroce_resp_module_init()/sroce_resp_exit() at
 * module load and unload.
 */
int sroce_resp_init(struct sroce_qp *qp);
int sroce_resp_reset(struct sroce_qp *qp, u32 rq_psn);
void sroce_resp_stop(struct sroce_qp *qp, bool flush);
void sroce_resp_cleanup(struct sroce_qp *qp);
/* An XRC SRQ of @qp's domain is gone: drop a message received into it. */
void sroce_resp_forget_srq(struct sroce_qp *qp, struct sroce_srq *srq);
void sroce_resp_module_init(void);
void sroce_resp_exit(void);

/* Receive dispatch from sroce_net.c; called in softirq with a QP reference. */
void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_rx *rx);
/* Raw packet QPs (sroce_raw.c; the receive into the QP in sroce_resp.c) */
void sroce_resp_raw_rcv(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_resp_wq_rcv(struct sroce_qp *qp, struct sroce_srq *rq, u32 wqn,
		       struct sk_buff *skb);
struct sk_buff *sroce_raw_alloc_skb(struct sroce_qp *qp, u32 len);
void sroce_raw_xmit(struct sroce_qp *qp, struct sk_buff *skb);

/*
 * Transmit.  sroce_net_alloc_skb() returns an skb with room reserved for
 * Ethernet/IP/UDP and @tlen bytes of transport headers + payload + pad
 * (skb_put() by the caller), the ICRC excluded; sroce_net_xmit() adds
 * UDP/IP/Ethernet for @av, computes the ICRC and sends (or loops back
 * when @av is a local address).  The QP's UDP source port is
 * qp->src_port.  Consumes the skb in every case.
 */
struct sk_buff *sroce_net_alloc_skb(struct sroce_qp *qp,
				    const struct sroce_av *av, u32 tlen);
/*
 * Zero-copy transmit (sroce_net.c): whether an RC packet's payload may go
 * as page fragments, and, once sroce_sge_frags() has added them (an skb
 * from sroce_net_alloc_skb() holding only the transport headers), the
 * fragment with the pad and the room for the ICRC, and their charge.
 */
bool sroce_net_zc_ok(const struct sroce_dev *dev);
int sroce_net_zc_seal(struct sk_buff *skb, u32 paylen, u32 pad);
bool sroce_net_tx_busy(struct sroce_qp *qp, bool woken);
/* Not locked: resume a READ response that waited for transmit budget. */
void sroce_resp_tx_resume(struct sroce_qp *qp);
bool sroce_net_tx_moved(struct sroce_qp *qp);
bool sroce_net_loop_busy(struct sroce_qp *qp);
void sroce_net_tx_unwait(struct sroce_qp *qp);
int sroce_net_dev_init(struct sroce_dev *dev);
void sroce_net_dev_fini(struct sroce_dev *dev);
int sroce_net_xmit(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sk_buff *skb);
/*
 * As sroce_net_xmit(), but the packet may wait in @b, to go out with the
 * next ones of the same QP when sroce_net_flush() is called (or @b is
 * full).  @av must be the same for every packet of a batch: RC/UC only.
 * An error means the packet was dropped at once; a queued one can still
 * be lost at the flush, like any packet.
 */
int sroce_net_queue(struct sroce_qp *qp, struct sroce_txb *b,
		    const struct sroce_av *av, struct sk_buff *skb);
void sroce_net_flush(struct sroce_qp *qp, struct sroce_txb *b);
/* UDP source port for a QP: stable per QP, spread across QPNs. */
u16 sroce_net_src_port(u32 qpn);

int sroce_net_init(void);
void sroce_net_exit(void);

#endif /* SROCE_ENGINE_H */
