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

/* Requester/completer progress through one send WQE. */
struct sroce_swqe_state {
	u32 first_psn;
	u32 last_psn;
	u32 sent;			/* bytes handed to the wire */
	u32 acked;			/* bytes acknowledged/read back */
	u8 status;			/* enum ib_wc_status once known */
	bool done;
};

/* Owned by sroce_req.c. */
struct sroce_req {
	spinlock_t lock;
	u32 psn;			/* next PSN to send */
	struct timer_list retry_timer;
	struct work_struct work;	/* deferred sending */
};

/* Owned by sroce_comp.c. */
struct sroce_comp {
	spinlock_t lock;
	u32 psn;			/* oldest unacknowledged PSN */
	u32 retry_cnt;
	u32 rnr_retry;
};

/*
 * Owned by sroce_resp.c.  Responder resources remember READ and atomic
 * requests so duplicates are answered from here, not re-executed.
 */
struct sroce_resp {
	spinlock_t lock;
	u32 psn;			/* next expected PSN */
	u32 msn;
};

/*
 * A received transport packet: the ICRC has been checked and the headers
 * parsed and validated statelessly.  The payload may sit in page
 * fragments: use skb_copy_bits()/skb_copy_datagram helpers from
 * @payload_off for @pkt.payload_len bytes.
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
	u8 smac[6];
};

/* Engine entry points used by the objects role (sroce_qp.c). */
int sroce_engine_qp_init(struct sroce_qp *qp);
/* Called by modify_qp after a state change (e.g. start on RTS, stop on ERR). */
void sroce_engine_qp_modified(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			      int mask);
/* Stop timers and wait for in-flight work before the QP is freed. */
void sroce_engine_qp_stop(struct sroce_qp *qp);
/* New send work was posted (kernel post_send or user doorbell). */
void sroce_req_kick(struct sroce_qp *qp);

/* Receive dispatch from sroce_net.c; called in softirq with a QP reference. */
void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_rx *rx);
void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_rx *rx);

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
int sroce_net_xmit(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sk_buff *skb);
/* UDP source port for a QP: stable per QP, spread across QPNs. */
u16 sroce_net_src_port(u32 qpn);

int sroce_net_init(void);
void sroce_net_exit(void);

#endif /* SROCE_ENGINE_H */
