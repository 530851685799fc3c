// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Network I/O: the RoCEv2 UDP sockets, receive validation and demux,
 * transmit (UDP/IP headers, ICRC, route) and local loopback.
 *
 * Receive runs in softirq from the UDP tunnel's encap_rcv hook (or from
 * the loopback tasklet) and hands each packet to the requester's
 * completer or the responder with a QP reference that it drops itself.
 *
 * Packets for one of our own addresses never touch the IP stack: they are
 * queued on one host-wide list drained by a tasklet.  Delivering them inline
 * would recurse (responder -> ACK -> completer -> requester -> ...) and
 * could take a QP lock its caller already holds.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/interrupt.h>
#include <linux/hash.h>
#include <linux/delay.h>
#include <linux/wait_bit.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/addrconf.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include "sroce.h"
#include "sroce_icrc.h"
#include "sroce_trace.h"

/*
 * The RoCEv2 sockets of one network namespace, open while a device on a
 * netdev in it exists (@users counts them; init_net's are open as long
 * as the module is loaded, so a taken port fails modprobe as before).
 * They live in the namespace's net_generic storage, which is freed after
 * sroce_netns_exit(): that waits until the last device has let go.
 * @users and the sockets change under sroce_netns_mutex.
 */
struct sroce_netns {
	struct socket *sock4;
	struct socket *sock6;
	int users;
};

static unsigned int sroce_net_id __read_mostly;
static DEFINE_MUTEX(sroce_netns_mutex);

/*
 * The loopback queue, one for the host: a QP's packets must arrive in the
 * order it sent them, and a per-CPU queue would reorder them whenever the
 * sender moved between CPUs (each reordering a resend).  One tasklet runs
 * on one CPU at a time.  A bounded backlog keeps a runaway QP in check.
 */
#define SROCE_LOOP_BUDGET	64
#define SROCE_LOOP_MAX_QLEN	8192

struct sroce_loop {
	struct sk_buff_head queue;
	struct tasklet_struct tasklet;
};

static struct sroce_loop sroce_loop;

u16 sroce_net_src_port(u32 qpn)
{
	/* RoCEv2 uses 0xC000..0xFFFF for entropy; keep each QP on one flow. */
	return 0xc000 | hash_32(qpn, 14);
}

static bool sroce_opcode_fits_qp(const struct sroce_qp *qp,
				 const struct sroce_opcode_info *info)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return info->qpt == SROCE_QPT_RC;
	case IB_QPT_UC:
		return info->qpt == SROCE_QPT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return info->qpt == SROCE_QPT_UD;
	/* an XRC initiator only sends requests, a target only answers */
	case IB_QPT_XRC_INI:
		return info->qpt == SROCE_QPT_XRC &&
		       (info->flags & SROCE_OPF_RESP);
	case IB_QPT_XRC_TGT:
		return info->qpt == SROCE_QPT_XRC &&
		       (info->flags & SROCE_OPF_REQ);
	default:
		return false;
	}
}

/*
 * A connected QP only accepts packets from its peer: anything else is
 * either misrouted or spoofed.  An av without an IP type (not yet set
 * up) matches nothing, so the packet is dropped.
 */
static bool sroce_rx_from_peer(const struct sroce_qp *qp,
			       const struct sroce_rx *rx)
{
	const struct sroce_av *av = &qp->av;

	if (!sroce_qp_reliable(qp) && qp->ibqp.qp_type != IB_QPT_UC)
		return true;
	if (av->network_type != rx->network_type)
		return false;
	if (rx->network_type == RDMA_NETWORK_IPV4)
		return av->daddr.v4.sin_addr.s_addr == rx->saddr.v4;
	return ipv6_addr_equal(&av->daddr.v6.sin6_addr, &rx->saddr.v6);
}

/*
 * The ICRC of a possibly non-linear skb: IP, UDP and BTH, linear at its
 * network header, then the bytes at [@from, @to) from skb->data.
 */
static int sroce_icrc_skb(struct sk_buff *skb, unsigned int ver, u32 from,
			  u32 to, u32 *icrc)
{
	u32 hlen = sroce_icrc_hdrs_len(ver);
	struct skb_seq_state seq;
	struct sroce_icrc st;
	const u8 *data;
	u32 consumed = 0;
	u32 n;

	if (skb_network_offset(skb) + hlen > skb_headlen(skb) ||
	    sroce_icrc_init(&st, skb_network_header(skb), hlen, ver))
		return -EINVAL;
	/* skb_seq_read() may hand out more than asked for: clamp */
	skb_prepare_seq_read(skb, from, to, &seq);
	while (consumed < to - from &&
	       (n = skb_seq_read(consumed, &data, &seq)) != 0) {
		n = min(n, to - from - consumed);
		sroce_icrc_update(&st, data, n);
		consumed += n;
	}
	skb_abort_seq_read(&seq);
	if (consumed != to - from)
		return -EINVAL;
	*icrc = sroce_icrc_final(&st);
	return 0;
}

/* Verify the ICRC of a received packet; skb->data is at the UDP header. */
static int sroce_rx_icrc(struct sk_buff *skb, unsigned int ver, u32 plen)
{
	u32 from = sizeof(struct udphdr) + SROCE_BTH_LEN;
	u32 to = sizeof(struct udphdr) + plen - SROCE_ICRC_LEN;
	__le32 wire, *wp;
	u32 icrc;

	if (sroce_icrc_hdrs_len(ver) != skb_network_header_len(skb) +
	    sizeof(struct udphdr) + SROCE_BTH_LEN)
		return -EINVAL;
	if (sroce_icrc_skb(skb, ver, from, to, &icrc))
		return -EINVAL;
	wp = skb_header_pointer(skb, to, sizeof(wire), &wire);
	if (!wp)
		return -EINVAL;
	return get_unaligned_le32(wp) == icrc ? 0 : -EBADMSG;
}

static void sroce_rx_addrs(struct sk_buff *skb, unsigned int ver,
			   struct sroce_rx *rx)
{
	if (ver == 4) {
		const struct iphdr *iph = ip_hdr(skb);

		rx->network_type = RDMA_NETWORK_IPV4;
		rx->saddr.v4 = iph->saddr;
		rx->daddr.v4 = iph->daddr;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		rx->network_type = RDMA_NETWORK_IPV6;
		rx->saddr.v6 = ip6h->saddr;
		rx->daddr.v6 = ip6h->daddr;
	}
	rx->sport = ntohs(udp_hdr(skb)->source);
	/* ib_core finds a UD sender's GID (e.g. a CM peer's) by VLAN. */
	rx->vlan_id = is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) :
					      0xffff;
	if (skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN)
		ether_addr_copy(rx->smac, eth_hdr(skb)->h_source);
	else
		eth_zero_addr(rx->smac);
}

static bool sroce_rx_to_group(const struct sroce_rx *rx)
{
	if (rx->network_type == RDMA_NETWORK_IPV4)
		return ipv4_is_multicast(rx->daddr.v4);
	return ipv6_addr_is_multicast(&rx->daddr.v6);
}

/*
 * The receive softirq fell behind and runs in its thread (ksoftirqd, or a
 * threaded NAPI poller), not on interrupt exit: it now shares the CPU
 * with whatever else is runnable, busy pollers included.  A workqueue
 * worker that runs pending softirqs as it re-enables bottom halves is
 * left out: that is a moment's work, not a backlog.
 */
static bool sroce_rx_in_task(void)
{
	return (current->flags & PF_KTHREAD) &&
	       !(current->flags & PF_WQ_WORKER) && !is_idle_task(current);
}

/* skb->data at the UDP header, network/transport headers set. */
static void sroce_net_rcv(struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;
	struct sroce_dev *dev;
	struct sroce_qp *qp;
	struct sroce_rx rx;
	enum sroce_counter cause = SROCE_CNT_BAD_HDR;
	unsigned int ver;
	bool is_req;
	u32 ulen, plen, hlen;
	int err;

	memset(&rx, 0, sizeof(rx));	/* the drop tracepoint reads its QPN */
	dev = sroce_dev_get_by_netdev(skb->dev);
	if (!dev && is_vlan_dev(skb->dev))
		dev = sroce_dev_get_by_netdev(vlan_dev_real_dev(skb->dev));
	if (!dev)
		goto drop;
	/*
	 * Arrived in another namespace than the device sends in (a VLAN
	 * moved away, a netdev whose move is removing the device): not ours.
	 */
	if (!net_eq(dev_net(skb->dev), sroce_dev_net(dev)))
		goto drop_dev;

	if (!pskb_may_pull(skb, sizeof(struct udphdr) + SROCE_BTH_LEN))
		goto malformed;
	ulen = ntohs(udp_hdr(skb)->len);
	if (ulen < sizeof(struct udphdr) + SROCE_BTH_LEN + SROCE_ICRC_LEN ||
	    ulen > skb->len)
		goto malformed;
	if (ulen < skb->len && pskb_trim(skb, ulen))
		goto malformed;
	plen = ulen - sizeof(struct udphdr);

	ver = ip_hdr(skb)->version;
	if (ver != 4 && ver != 6)
		goto malformed;
	switch (sroce_rx_icrc(skb, ver, plen)) {
	case 0:
		break;
	case -EBADMSG:
		sroce_count(dev, SROCE_CNT_ICRC_ERRORS);
		trace_sroce_drop(dev, 0, SROCE_CNT_ICRC_ERRORS);
		goto drop_dev;
	default:
		goto malformed;
	}

	/* Only the transport headers need to be linear from here on. */
	info = sroce_opcode_info(skb->data[sizeof(struct udphdr)]);
	hlen = (info->flags & SROCE_OPF_VALID) ? info->hdr_len : SROCE_BTH_LEN;
	if (!pskb_may_pull(skb, sizeof(struct udphdr) + min(hlen, plen)))
		goto malformed;

	sroce_rx_addrs(skb, ver, &rx);
	__skb_pull(skb, sizeof(struct udphdr));
	err = sroce_pkt_parse(skb->data, plen, &rx.pkt);
	if (err == -EBADMSG && (rx.pkt.info->flags & SROCE_OPF_REQ)) {
		/* The RC responder NAKs it; the others drop it. */
		sroce_count_malformed(dev, SROCE_CNT_BAD_LEN);
		trace_sroce_drop(dev, rx.pkt.h.qpn, SROCE_CNT_BAD_LEN);
		rx.len_err = true;
	} else if (err) {
		if (err == -EBADMSG)
			cause = SROCE_CNT_BAD_LEN;
		else if (err == -EOPNOTSUPP)
			cause = SROCE_CNT_BAD_OPCODE;
		goto malformed;
	}
	rx.skb = skb;
	rx.payload_off = rx.pkt.payload_off;

	/* One partition: the default, full or limited membership. */
	if ((rx.pkt.h.pkey & 0x7fff) != (SROCE_DEFAULT_PKEY & 0x7fff)) {
		cause = SROCE_CNT_BAD_PKEY;
		goto malformed;
	}

	/* No QP0 on RoCE. */
	if (rx.pkt.h.qpn == 0)
		goto no_qp;
	if (rx.pkt.h.qpn == SROCE_MAX_QPN) {
		/* only UD datagrams, only to a group address */
		cause = SROCE_CNT_WRONG_QP;
		if (rx.pkt.info->qpt != SROCE_QPT_UD ||
		    !sroce_rx_to_group(&rx))
			goto malformed;
		if (!sroce_mcast_rcv(dev, &rx))
			goto no_qp;
		sroce_count(dev, SROCE_CNT_RCVD_PKTS);
		goto done;
	}
	qp = sroce_qp_get(dev, rx.pkt.h.qpn);
	if (!qp)
		goto no_qp;
	if (!sroce_opcode_fits_qp(qp, rx.pkt.info) ||
	    !sroce_rx_from_peer(qp, &rx)) {
		sroce_qp_put(qp);
		cause = SROCE_CNT_WRONG_QP;
		goto malformed;
	}

	sroce_qp_count(qp, SROCE_CNT_RCVD_PKTS);
	is_req = rx.pkt.info->flags & SROCE_OPF_REQ;
	/* Requests complete on the receive CQ, responses on the send CQ. */
	if (sroce_rx_in_task())
		sroce_cq_rx_task(is_req ? qp->rcq : qp->scq);
	if (is_req)
		sroce_resp_rcv(qp, &rx);
	else
		sroce_comp_rcv(qp, &rx);
	sroce_qp_put(qp);
done:
	sroce_dev_put(dev);
	consume_skb(skb);
	return;

no_qp:
	sroce_count(dev, SROCE_CNT_NO_QP);
	trace_sroce_drop(dev, rx.pkt.h.qpn, SROCE_CNT_NO_QP);
	goto drop_dev;
malformed:
	sroce_count_malformed(dev, cause);
	trace_sroce_drop(dev, rx.pkt.h.qpn, cause);	/* 0: not parsed yet */
drop_dev:
	sroce_dev_put(dev);
drop:
	kfree_skb(skb);
}

static int sroce_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	sroce_net_rcv(skb);
	return 0;
}

static void sroce_loop_run(struct tasklet_struct *t)
{
	struct sroce_loop *lp = from_tasklet(lp, t, tasklet);
	struct net_device *ndev;
	struct sk_buff *skb;
	int n;

	rcu_read_lock();
	for (n = 0; n < SROCE_LOOP_BUDGET; n++) {
		skb = skb_dequeue(&lp->queue);
		if (!skb)
			break;
		ndev = skb->dev;
		sroce_net_rcv(skb);
		dev_put(ndev);
	}
	rcu_read_unlock();
	if (n == SROCE_LOOP_BUDGET)
		tasklet_schedule(t);
}

/* The netdev in @net owning the packet's destination address, held. */
static struct net_device *sroce_local_dev(struct net *net,
					  struct sk_buff *skb)
{
	struct net_device *ndev;

	rcu_read_lock();
	if (skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	else
		ndev = ipv6_stub->ipv6_dev_find(net, &ipv6_hdr(skb)->daddr,
						NULL);
	if (ndev)
		dev_hold(ndev);
	rcu_read_unlock();
	return ndev;
}

/*
 * Deliver a fully built packet (skb->data at the IP header) to a local
 * device through the loopback queue.
 */
static int sroce_loop_xmit(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct net_device *src = qp->dev->ndev;
	struct net_device *ndev;
	struct sroce_loop *lp;
	struct ethhdr *eth;
	int ret = 0;

	if (!READ_ONCE(qp->loop_peer))
		WRITE_ONCE(qp->loop_peer, true);
	skb_dst_drop(skb);
	ndev = sroce_local_dev(sroce_dev_net(qp->dev), skb);
	if (!ndev) {
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}

	/* A plausible Ethernet header lets the receiver learn our MAC. */
	if (skb_headroom(skb) >= ETH_HLEN) {
		eth = skb_push(skb, ETH_HLEN);
		skb_reset_mac_header(skb);
		ether_addr_copy(eth->h_dest, ndev->dev_addr);
		ether_addr_copy(eth->h_source, src->dev_addr);
		eth->h_proto = skb->protocol;
		__skb_pull(skb, ETH_HLEN);
	}
	__skb_pull(skb, skb_network_header_len(skb));
	skb->dev = ndev;
	skb->pkt_type = PACKET_HOST;
	skb->ip_summed = CHECKSUM_UNNECESSARY;

	local_bh_disable();
	lp = &sroce_loop;
	if (skb_queue_len(&lp->queue) < SROCE_LOOP_MAX_QLEN) {
		skb_queue_tail(&lp->queue, skb);
		tasklet_schedule(&lp->tasklet);
	} else {
		dev_put(ndev);
		kfree_skb(skb);
		ret = -ENOBUFS;
	}
	local_bh_enable();
	return ret;
}

/*
 * Transmit budget of one device, in skb truesize bytes charged to its
 * dev->txsk: what may sit in the netdev's qdisc and TX ring at once.  A
 * deeper queue only adds delay, and long enough it makes an AQM drop: with
 * 256 QPs writing at once, fq_codel (Debian's default qdisc) dropped
 * hundreds of packets per 10 s, each one a NAK and a go-back-N.  About 200
 * MTU-1024 packets, which fit the ring of a virtio NIC.  Only requesters
 * wait for budget; ACKs and responses are charged but never held back,
 * since they are what frees the peer's window.
 *
 * First come, first served: while QPs wait, no other QP may send until
 * it has waited its turn.  Waiters are woken oldest first, a batch per
 * freed skb once half the budget is free (so a thousand waiters are not
 * all queued, IRQs off, only to find the budget spent again), and all of
 * them when the last charged skb goes, since no further call will come.
 */
#define SROCE_TX_BUDGET		(384 * 1024)
#define SROCE_TX_WAKE		(SROCE_TX_BUDGET / 2)
#define SROCE_TX_WAKE_BATCH	32
/* How long dealloc_driver waits for the netdev to free our skbs. */
#define SROCE_TX_DRAIN_MS	5000

static void sroce_tx_wake(struct sroce_dev *dev, int n)
{
	struct sroce_qp *qp, *next;
	unsigned long flags;

	spin_lock_irqsave(&dev->tx_wait_lock, flags);
	list_for_each_entry_safe(qp, next, &dev->tx_waiters, req.tx_wait) {
		if (!n--)
			break;
		list_del_init(&qp->req.tx_wait);
		WRITE_ONCE(qp->req.tx_woken, true);
		sroce_req_schedule(qp);
	}
	spin_unlock_irqrestore(&dev->tx_wait_lock, flags);
}

/*
 * sk_write_space of dev->txsk: sock_wfree() calls it for every freed skb,
 * after uncharging all of it but one byte, which it drops on return.
 */
static void sroce_tx_write_space(struct sock *sk)
{
	struct sroce_dev *dev;
	int left;

	/* All of it under RCU: see sroce_net_dev_fini(). */
	rcu_read_lock();
	/* Pairs with the barrier in sroce_net_tx_busy(). */
	smp_mb();
	dev = rcu_dereference_sk_user_data(sk);
	if (dev) {
		atomic_inc(&dev->tx_freed);
		left = sk_wmem_alloc_get(sk);
		if (!list_empty(&dev->tx_waiters) && left <= SROCE_TX_WAKE)
			sroce_tx_wake(dev, left <= 1 ? INT_MAX :
					   SROCE_TX_WAKE_BATCH);
	}
	rcu_read_unlock();
}

/*
 * True if @qp must wait for budget: the device's is spent, or other QPs
 * wait for theirs and @qp was not just woken (@woken).  The QP is then
 * listed and its work is queued at its turn.
 */
bool sroce_net_tx_busy(struct sroce_qp *qp, bool woken)
{
	struct sroce_dev *dev = qp->dev;
	struct sock *sk = dev->txsk->sk;
	unsigned long flags;

	if (likely(sk_wmem_alloc_get(sk) < SROCE_TX_BUDGET &&
		   (woken || list_empty(&dev->tx_waiters))))
		return false;
	spin_lock_irqsave(&dev->tx_wait_lock, flags);
	if (unlikely(qp->req.tx_dead)) {
		/* Being destroyed: send nothing more, and stay unlisted. */
		spin_unlock_irqrestore(&dev->tx_wait_lock, flags);
		return true;
	}
	if (list_empty(&qp->req.tx_wait))
		list_add_tail(&qp->req.tx_wait, &dev->tx_waiters);
	spin_unlock_irqrestore(&dev->tx_wait_lock, flags);
	/* The queue may have drained before we were listed: look again. */
	smp_mb();
	if (sk_wmem_alloc_get(sk) <= SROCE_TX_WAKE)
		sroce_tx_wake(dev, SROCE_TX_WAKE_BATCH);
	sroce_qp_count(qp, SROCE_CNT_TX_WAITS);
	return true;
}

/*
 * For @qp's ACK timer while it waits for budget: has the netdev freed any
 * skb since the last look?  Also wakes the oldest waiters if the budget
 * has room, in case a wake-up was missed.
 */
bool sroce_net_tx_moved(struct sroce_qp *qp)
{
	struct sroce_dev *dev = qp->dev;
	int freed = atomic_read(&dev->tx_freed);
	bool moved = freed != qp->comp.tx_freed_seen;

	qp->comp.tx_freed_seen = freed;
	if (sk_wmem_alloc_get(dev->txsk->sk) < SROCE_TX_BUDGET)
		sroce_tx_wake(dev, SROCE_TX_WAKE_BATCH);
	return moved;
}

/*
 * For @qp's ACK timer, with a peer on this host: are packets still on
 * their way inside the host (charged to our socket: in a qdisc or the
 * loopback queue), or has any been delivered since the last look?
 */
bool sroce_net_loop_busy(struct sroce_qp *qp)
{
	bool moved = sroce_net_tx_moved(qp);

	return moved || sk_wmem_alloc_get(qp->dev->txsk->sk) > 0;
}

/*
 * Take a QP being destroyed off the wait list before it can be freed, for
 * good: its responder tasklet, ACK timer or requester work may still run
 * until they are stopped, and a QP they listed again would be walked by
 * sroce_tx_wake() (from any later sock_wfree()) after its memory is gone.
 */
void sroce_net_tx_unwait(struct sroce_qp *qp)
{
	struct sroce_dev *dev = qp->dev;
	unsigned long flags;

	spin_lock_irqsave(&dev->tx_wait_lock, flags);
	qp->req.tx_dead = true;
	list_del_init(&qp->req.tx_wait);
	spin_unlock_irqrestore(&dev->tx_wait_lock, flags);
}

/*
 * What a fresh socket's sk_write_space is: core kernel text, the same for
 * every socket, and harmless on a released one.  Stored back when the
 * netdev holds our skbs past dealloc_driver (sroce_net_dev_fini()).
 */
static void (*sroce_sk_write_space_orig)(struct sock *sk);

static struct socket *sroce_udp_open(struct net *net, bool v6);

/* @net's RoCEv2 sockets, opened for its first user. */
static struct sroce_netns *sroce_netns_get(struct net *net)
{
	struct sroce_netns *sn = net_generic(net, sroce_net_id);
	struct socket *sock;
	int err = 0;

	mutex_lock(&sroce_netns_mutex);
	if (sn->users)
		goto out;
	sock = sroce_udp_open(net, false);
	if (IS_ERR(sock)) {
		err = PTR_ERR(sock);
		if (net_eq(net, &init_net))
			pr_err("sroce: cannot bind UDP port %u (IPv4): %d\n",
			       SROCE_UDP_PORT, err);
		else
			pr_err("sroce: cannot bind UDP port %u (IPv4) in the netdev's network namespace: %d\n",
			       SROCE_UDP_PORT, err);
		goto out;
	}
	sn->sock4 = sock;
	if (IS_ENABLED(CONFIG_IPV6)) {
		sock = sroce_udp_open(net, true);
		/* IPv4-only hosts still get a working device. */
		if (IS_ERR(sock))
			pr_warn("sroce: no IPv6 socket: %ld\n", PTR_ERR(sock));
		else
			sn->sock6 = sock;
	}
out:
	if (!err)
		WRITE_ONCE(sn->users, sn->users + 1);
	mutex_unlock(&sroce_netns_mutex);
	return err ? ERR_PTR(err) : sn;
}

/*
 * The last user closes the sockets.  @users drops to zero only after
 * that, and sroce_netns_exit() may free @sn as soon as it has: the wake
 * only hashes the address.
 */
static void sroce_netns_put(struct sroce_netns *sn)
{
	mutex_lock(&sroce_netns_mutex);
	if (sn->users == 1) {
		if (sn->sock6)
			udp_tunnel_sock_release(sn->sock6);
		udp_tunnel_sock_release(sn->sock4);
		sn->sock6 = NULL;
		sn->sock4 = NULL;
		/* Let encap_rcv callers that raced with the release finish. */
		synchronize_net();
	}
	WRITE_ONCE(sn->users, sn->users - 1);
	mutex_unlock(&sroce_netns_mutex);
	/* The waiter must see @users before we look for it (wake_up_var). */
	smp_mb();
	wake_up_var(&sn->users);
}

/*
 * A dying namespace has unregistered its netdevs before subsystems exit,
 * and each of our devices on one is being unregistered from ib_core's
 * workqueue: wait for their last transmit to drain and the sockets to
 * close before the namespace's storage goes.  A device whose netdev
 * event went unseen is unregistered from here; one ib_core had disabled
 * then is caught on a later round, once it is enabled again.
 */
static void __net_exit sroce_netns_exit(struct net *net)
{
	struct sroce_netns *sn = net_generic(net, sroce_net_id);
	int rounds = 0;

	while (!wait_var_event_timeout(&sn->users, !READ_ONCE(sn->users),
				       HZ)) {
		sroce_dev_unregister_net(net);
		if (++rounds == 30)
			pr_warn("sroce: a device of a dying network namespace is not going away\n");
	}
}

static struct pernet_operations sroce_net_ops = {
	.exit = sroce_netns_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_netns),
};

/*
 * The device sends and receives in its netdev's namespace, through that
 * namespace's sockets.  The budget's socket is a plain kernel UDP socket
 * in init_net, never bound, used only for its write-memory accounting
 * (sock_wfree is the skb destructor).
 */
int sroce_net_dev_init(struct sroce_dev *dev)
{
	struct sroce_netns *sn;
	struct socket *sock;
	struct net *net;
	int err;

	spin_lock_init(&dev->tx_wait_lock);
	INIT_LIST_HEAD(&dev->tx_waiters);
	/*
	 * RTNL keeps the netdev where it is while we take a reference on
	 * its namespace: one whose exit already ran must not be given
	 * sockets.  Once @sn is held, the exit waits for us.
	 */
	rtnl_lock();
	net = maybe_get_net(dev_net(dev->ndev));
	rtnl_unlock();
	if (!net)
		return -ENODEV;
	sn = sroce_netns_get(net);
	if (!IS_ERR(sn)) {
		write_pnet(&dev->net, net);
		dev->sn = sn;
	}
	put_net(net);
	if (IS_ERR(sn))
		return PTR_ERR(sn);
	err = sock_create_kern(&init_net, AF_INET, SOCK_DGRAM, IPPROTO_UDP,
			       &sock);
	if (err)
		return err;	/* dealloc_driver drops @sn */
	write_lock_bh(&sock->sk->sk_callback_lock);
	WRITE_ONCE(sroce_sk_write_space_orig, sock->sk->sk_write_space);
	sock->sk->sk_write_space = sroce_tx_write_space;
	rcu_assign_sk_user_data(sock->sk, dev);
	write_unlock_bh(&sock->sk->sk_callback_lock);
	dev->txsk = sock;
	return 0;
}

/*
 * Every QP is gone, so nothing new is charged, and the caller has already
 * dropped its netdev reference: a netdev being unregistered may free what
 * its TX ring holds only after that.  sock_wfree() may call
 * sroce_tx_write_space() until the netdev has freed every charged skb;
 * the skb's last byte is uncharged only after the call returned, so a
 * zero count means no call is running.
 *
 * A netdev may hold our skbs for longer (a netem delay, a stalled ring).
 * Pinning the module then does not help: on the rmmod path its exit is
 * already running and a reference taken now does not stop the unload, so
 * a later free would jump into freed text.  The socket gets its own
 * callback back instead.  A call of ours already under way runs its body
 * under RCU, mostly from softirq; the grace period waits it out.
 */
static void sroce_txsk_fini(struct sroce_dev *dev)
{
	unsigned long until = jiffies + msecs_to_jiffies(SROCE_TX_DRAIN_MS);
	struct sock *sk;

	if (!dev->txsk)
		return;
	sk = dev->txsk->sk;
	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, NULL);
	write_unlock_bh(&sk->sk_callback_lock);
	while (sk_wmem_alloc_get(sk) && time_before(jiffies, until))
		msleep(20);
	if (sk_wmem_alloc_get(sk)) {
		pr_warn("sroce: %s: the netdev still holds %d bytes of our packets; released without us\n",
			dev_name(&dev->ibdev.dev), sk_wmem_alloc_get(sk));
		write_lock_bh(&sk->sk_callback_lock);
		WRITE_ONCE(sk->sk_write_space,
			   READ_ONCE(sroce_sk_write_space_orig));
		write_unlock_bh(&sk->sk_callback_lock);
		synchronize_rcu();
	}
	sock_release(dev->txsk);
	dev->txsk = NULL;
}

void sroce_net_dev_fini(struct sroce_dev *dev)
{
	sroce_txsk_fini(dev);
	if (dev->sn) {
		sroce_netns_put(dev->sn);
		dev->sn = NULL;
	}
}

struct sk_buff *sroce_net_alloc_skb(struct sroce_qp *qp,
				    const struct sroce_av *av, u32 tlen)
{
	struct net_device *ndev = qp->dev->ndev;
	bool v6 = av->network_type == RDMA_NETWORK_IPV6;
	unsigned int head;
	struct sk_buff *skb;

	/* VLAN_HLEN: a VLAN on @ndev may carry it (sroce_av_oif()). */
	head = LL_RESERVED_SPACE(ndev) + VLAN_HLEN + sizeof(struct udphdr) +
	       (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	/* Page fragments: less to zero than a kmalloc head rounded up to 2 KiB. */
	skb = __netdev_alloc_skb(ndev, head + tlen + SROCE_ICRC_LEN +
				 ndev->needed_tailroom, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, head);
	skb_set_owner_w(skb, qp->dev->txsk->sk);
	skb->protocol = v6 ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	return skb;
}

static void sroce_push_udp(struct sk_buff *skb, const struct sroce_qp *qp)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(qp->src_port);
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(skb->len);
	/* RoCEv2 relies on the ICRC; rxe and NICs send zero here. */
	uh->check = 0;
}

/* skb->data is at the IP header; the ICRC goes in the last four bytes. */
static int sroce_put_icrc(struct sk_buff *skb, unsigned int ver)
{
	__le32 wire;
	u32 icrc;
	int err;

	if (skb_is_nonlinear(skb)) {
		err = sroce_icrc_skb(skb, ver, sroce_icrc_hdrs_len(ver),
				     skb->len - SROCE_ICRC_LEN, &icrc);
		if (err)
			return err;
		wire = cpu_to_le32(icrc);
		return skb_store_bits(skb, skb->len - SROCE_ICRC_LEN, &wire,
				      sizeof(wire));
	}
	err = sroce_icrc_compute(skb_network_header(skb), skb->len, ver, &icrc);
	if (err)
		return err;
	put_unaligned_le32(icrc, skb_tail_pointer(skb) - SROCE_ICRC_LEN);
	return 0;
}

/*
 * Zero-copy transmit.  An RC packet's payload may go as page fragments
 * of the user MR's pinned pages instead of a copy: the ICRC is then
 * computed over those pages as the packet leaves sroce_net.c, and the
 * pages live on, by the fragments' own references, until the netdev frees
 * the skb.  Only RC: its WQE completes when the peer has ACKed the data,
 * which it placed before, so the packets that carried it were read while
 * the buffer was still ours; a UC or UD WQE completes as it is sent.  Not
 * covered, hence off by default (@zero_copy 0): a copy of such an skb
 * that outlives the completion (a packet tap, a qdisc that duplicates, a
 * veth peer's socket, a WQE completed in error while its packets wait)
 * reads the buffer later.  Resends are copied.  Making it safe by default
 * needs the completion to wait for the last fragment (a ubuf_info), which
 * would also make the stack copy where an skb loops back to a receiver.
 * 1 uses fragments where the netdev gathers (NETIF_F_SG); 2 also where it
 * cannot, and the stack linearizes the packet again: for tests.
 */
bool sroce_net_zc_ok(const struct sroce_dev *dev)
{
	u8 mode = READ_ONCE(dev->zero_copy);

	return mode == SROCE_ZC_ALWAYS ||
	       (mode == SROCE_ZC_AUTO &&
		(READ_ONCE(dev->ndev->features) & NETIF_F_SG));
}

int sroce_net_zc_seal(struct sk_buff *skb, u32 paylen, u32 pad)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	u32 n = pad + SROCE_ICRC_LEN, charge;
	struct page *page;
	u8 *p;

	if (sh->nr_frags >= MAX_SKB_FRAGS)
		return -EOPNOTSUPP;
	p = netdev_alloc_frag(n);
	if (!p)
		return -ENOMEM;
	memset(p, 0, n);
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, sh->nr_frags, page,
			   p - (u8 *)page_address(page), n);
	/* The process can write the payload pages: never modify in place. */
	sh->flags |= SKBFL_SHARED_FRAG;
	charge = paylen + n;
	skb->len += charge;
	skb->data_len += charge;
	skb->truesize += charge;
	refcount_add(charge, &skb->sk->sk_wmem_alloc);
	return 0;
}

/* The source GID's netdev: a VLAN on ours tags what it sends. */
static int sroce_av_oif(const struct sroce_qp *qp, const struct sroce_av *av)
{
	return av->ifindex ?: qp->dev->ndev->ifindex;
}

static struct rtable *sroce_route4(const struct sroce_qp *qp,
				   const struct sroce_av *av, __be32 *saddr)
{
	struct flowi4 fl4 = {};
	struct rtable *rt;

	fl4.flowi4_oif = sroce_av_oif(qp, av);
	fl4.flowi4_proto = IPPROTO_UDP;
	fl4.flowi4_tos = RT_TOS(av->traffic_class);
	fl4.saddr = av->saddr.v4.sin_addr.s_addr;
	fl4.daddr = av->daddr.v4.sin_addr.s_addr;
	fl4.fl4_sport = htons(qp->src_port);
	fl4.fl4_dport = htons(SROCE_UDP_PORT);
	rt = ip_route_output_key(sroce_dev_net(qp->dev), &fl4);
	if (!IS_ERR(rt))
		*saddr = fl4.saddr;
	return rt;
}

static void sroce_push_ip4(struct sk_buff *skb, const struct sroce_qp *qp,
			   const struct sroce_av *av, struct rtable *rt,
			   __be32 saddr)
{
	struct iphdr *iph;

	sroce_push_udp(skb, qp);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	/* RoCE never fragments: the path MTU already bounds every packet. */
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = av->daddr.v4.sin_addr.s_addr;
	__ip_select_ident(sroce_dev_net(qp->dev), iph, 1);
	ip_send_check(iph);
}

static int sroce_out4(const struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *dev = qp->dev;
	int err;

	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	/* net_xmit_eval() evaluates its argument twice: call first */
	err = ip_local_out(sroce_dev_net(dev), dev->sn->sock4->sk, skb);
	err = net_xmit_eval(err);
	return err > 0 ? -ENOBUFS : err;
}

/* Send @skb alone along @rt, whose reference it takes over. */
static int sroce_xmit4_via(struct sroce_qp *qp, const struct sroce_av *av,
			   struct sk_buff *skb, struct rtable *rt,
			   __be32 saddr)
{
	bool local = rt->rt_type == RTN_LOCAL;

	sroce_push_ip4(skb, qp, av, rt, saddr);
	skb_dst_set(skb, &rt->dst);
	if (sroce_put_icrc(skb, 4)) {
		kfree_skb(skb);
		return -EINVAL;
	}
	if (local)
		return sroce_loop_xmit(qp, skb);
	return sroce_out4(qp, skb);
}

static int sroce_xmit4(struct sroce_qp *qp, const struct sroce_av *av,
		       struct sk_buff *skb)
{
	struct rtable *rt;
	__be32 saddr;

	rt = sroce_route4(qp, av, &saddr);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}
	return sroce_xmit4_via(qp, av, skb, rt, saddr);
}

static int sroce_xmit6(struct sroce_qp *qp, const struct sroce_av *av,
		       struct sk_buff *skb)
{
	struct net *net = sroce_dev_net(qp->dev);
	struct socket *sock6 = qp->dev->sn->sock6;
	struct flowi6 fl6 = {};
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;
	bool local;
	int err;

	if (!IS_ENABLED(CONFIG_IPV6) || !sock6) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	fl6.flowi6_oif = sroce_av_oif(qp, av);
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.saddr = av->saddr.v6.sin6_addr;
	fl6.daddr = av->daddr.v6.sin6_addr;
	fl6.flowlabel = ip6_make_flowinfo(av->traffic_class,
					  cpu_to_be32(av->flow_label) &
					  IPV6_FLOWLABEL_MASK);
	fl6.fl6_sport = htons(qp->src_port);
	fl6.fl6_dport = htons(SROCE_UDP_PORT);
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sock6->sk, &fl6, NULL);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	if (dst->error) {
		dst_release(dst);
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	local = dst->dev->flags & IFF_LOOPBACK;

	sroce_push_udp(skb, qp);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, av->traffic_class,
		     cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: ip6_dst_hoplimit(dst);
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;

	skb_dst_set(skb, dst);
	if (sroce_put_icrc(skb, 6)) {
		kfree_skb(skb);
		return -EINVAL;
	}
	if (local)
		return sroce_loop_xmit(qp, skb);

	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	err = ip6_local_out(net, sock6->sk, skb);
	err = net_xmit_eval(err);
	return err > 0 ? -ENOBUFS : err;
}

/*
 * Room for the ICRC, which the IP layer's caller fills in; a zero-copy
 * packet has it in its last fragment already.  Frees on error.
 */
static int sroce_tx_prep(struct sk_buff *skb, const struct sroce_av *av)
{
	if (!skb_is_nonlinear(skb)) {
		if (unlikely(skb_tailroom(skb) < SROCE_ICRC_LEN)) {
			kfree_skb(skb);
			return -EINVAL;
		}
		skb_put(skb, SROCE_ICRC_LEN);
	}
	skb->priority = rt_tos2priority(av->traffic_class);
	return 0;
}

static void sroce_tx_count(struct sroce_qp *qp, int err)
{
	if (likely(!err))
		sroce_qp_count(qp, SROCE_CNT_SENT_PKTS);
	else
		sroce_qp_count(qp, SROCE_CNT_TX_DROPS);
}

int sroce_net_xmit(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sk_buff *skb)
{
	int err;

	err = sroce_tx_prep(skb, av);
	if (err)
		goto out;
	if (av->network_type == RDMA_NETWORK_IPV4) {
		err = sroce_xmit4(qp, av, skb);
	} else if (av->network_type == RDMA_NETWORK_IPV6) {
		err = sroce_xmit6(qp, av, skb);
	} else {
		kfree_skb(skb);
		err = -EINVAL;
	}
out:
	sroce_tx_count(qp, err);
	return err;
}

/*
 * Transmit batching.  A virtio NIC without offloads, the usual one under
 * QEMU, rings its doorbell (an exit to the hypervisor) for every skb the
 * stack does not flag with xmit_more, and every skb pays for a route
 * lookup, the IP output path and the qdisc.  TCP spreads all of that over
 * 64 KiB with GSO.  RoCE cannot use GSO's segmentation, since every packet
 * needs its own BTH and ICRC, but it can use the fraglist flavour of UDP
 * GSO: the packets of one QP are built complete (headers, ICRC) and
 * chained on the first one's frag_list; IP and the qdisc see one skb, and
 * at the device skb_segment_list() splits it back, copying nothing but
 * the Ethernet header, and the driver gets the list with xmit_more set.
 * Every packet keeps its own IP and UDP headers: SKB_GSO_TCP_FIXEDID
 * (valid with DF) keeps the IP IDs the ICRCs were computed over, and the
 * segmenter rewrites only lengths (each packet's own) and IP checksums.
 * A device that accepts fraglist GSO as is (a bridge, veth) could deliver
 * the chain as one packet, so batching is used only where the netdev
 * lacks NETIF_F_GSO_FRAGLIST, and only for IPv4 unicast off-host
 * destinations.  The head is the batch's largest packet (a larger one
 * starts a new batch), because the IP MTU check and tbf look at the head
 * only.  The head carries the whole batch's transmit-budget charge: that
 * is right only where skb_segment_list() leaves the head's truesize alone,
 * i.e. since "net: fix memory leak in skb_segment_list for GRO packets"
 * (6.1.161; also in 6.12.95); before it, every batch would leak its
 * members' charge, so Kbuild enables batching only for the kernels in
 * which the fix was read.
 */
#define SROCE_TXB_MAX_PKTS	32
#define SROCE_TXB_MAX_BYTES	(60 * 1024)
/* Set by Kbuild where skb_segment_list() has the fix (see above). */
#ifndef SROCE_TXB_KERNEL_OK
#define SROCE_TXB_KERNEL_OK	0
#endif

static bool sroce_txb_ok(const struct sroce_qp *qp, const struct sroce_av *av)
{
	return SROCE_TXB_KERNEL_OK && av->network_type == RDMA_NETWORK_IPV4 &&
	       !(qp->dev->ndev->features & NETIF_F_GSO_FRAGLIST);
}

/* Chain @skb behind the head; the head's charge takes over @skb's. */
static void sroce_txb_add(struct sroce_txb *b, struct sk_buff *skb)
{
	struct sk_buff *head = b->head;

	b->n++;
	if (!head) {
		b->head = skb;
		return;
	}
	if (b->tail)
		b->tail->next = skb;
	else
		skb_shinfo(head)->frag_list = skb;
	b->tail = skb;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
	skb->destructor = NULL;
	skb->sk = NULL;
}

/* UDP payload of the batch's head: the largest packet in it. */
static u32 sroce_txb_head_len(const struct sroce_txb *b)
{
	return skb_pagelen(b->head) - sizeof(struct iphdr) -
	       sizeof(struct udphdr);
}

int sroce_net_queue(struct sroce_qp *qp, struct sroce_txb *b,
		    const struct sroce_av *av, struct sk_buff *skb)
{
	struct rtable *rt;
	__be32 saddr;
	int err;

	if (!sroce_txb_ok(qp, av))
		return sroce_net_xmit(qp, av, skb);
	err = sroce_tx_prep(skb, av);
	if (err)
		goto drop;
	if (b->head && (skb->len > sroce_txb_head_len(b) ||
			b->head->len + skb->len + sizeof(struct iphdr) +
			sizeof(struct udphdr) > SROCE_TXB_MAX_BYTES))
		sroce_net_flush(qp, b);
	if (!b->head) {
		rt = sroce_route4(qp, av, &saddr);
		if (IS_ERR(rt)) {
			kfree_skb(skb);
			err = PTR_ERR(rt);
			goto drop;
		}
		/* Local (loopback queue), broadcast, multicast: one by one. */
		if (rt->rt_type != RTN_UNICAST) {
			err = sroce_xmit4_via(qp, av, skb, rt, saddr);
			sroce_tx_count(qp, err);
			return err;
		}
		b->rt = rt;
		b->saddr = saddr;
	}
	sroce_push_ip4(skb, qp, av, b->rt, b->saddr);
	err = sroce_put_icrc(skb, 4);
	if (err) {
		kfree_skb(skb);
		if (!b->head) {
			ip_rt_put(b->rt);
			b->rt = NULL;
		}
		goto drop;
	}
	sroce_txb_add(b, skb);
	if (b->n >= SROCE_TXB_MAX_PKTS)
		sroce_net_flush(qp, b);
	return 0;
drop:
	sroce_qp_count(qp, SROCE_CNT_TX_DROPS);
	return err;
}

void sroce_net_flush(struct sroce_qp *qp, struct sroce_txb *b)
{
	struct sk_buff *head = b->head;
	struct skb_shared_info *sh;
	u32 n = b->n;
	int err;

	if (!head)
		return;
	if (n > 1) {
		sh = skb_shinfo(head);
		sh->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST |
			       SKB_GSO_TCP_FIXEDID;
		/*
		 * The first packet's UDP payload: __udp_gso_segment() splits
		 * the list as it is only if gso_size says exactly that.
		 */
		sh->gso_size = sroce_txb_head_len(b);
		sh->gso_segs = n;
	}
	skb_dst_set(head, &b->rt->dst);
	b->head = NULL;
	b->tail = NULL;
	b->rt = NULL;
	b->n = 0;
	err = sroce_out4(qp, head);
	sroce_qp_count_add(qp, err ? SROCE_CNT_TX_DROPS : SROCE_CNT_SENT_PKTS,
			n);
	if (!err && n > 1)
		sroce_qp_count(qp, SROCE_CNT_TX_BATCHES);
}

static struct socket *sroce_udp_open(struct net *net, bool v6)
{
	struct udp_tunnel_sock_cfg tcfg = {};
	struct udp_port_cfg ucfg = {};
	struct socket *sock;
	int err;

	ucfg.family = v6 ? AF_INET6 : AF_INET;
	ucfg.ipv6_v6only = v6;
	ucfg.local_udp_port = htons(SROCE_UDP_PORT);
	/* Peers send a zero UDP checksum over IPv6 too. */
	ucfg.use_udp6_rx_checksums = 0;
	err = udp_sock_create(net, &ucfg, &sock);
	if (err)
		return ERR_PTR(err);

	/* No gro_receive: each RoCE packet is its own transport unit. */
	tcfg.encap_type = 1;
	tcfg.encap_rcv = sroce_udp_encap_rcv;
	setup_udp_tunnel_sock(net, sock, &tcfg);
	/*
	 * That turned multicast loopback off (IPv4 only).  A datagram to a
	 * group must reach the group's QPs on this host too, as it does
	 * over IPv6.
	 */
	if (!v6)
		sroce_inet_set_mc_loop(sock->sk);
	return sock;
}

static void sroce_loop_exit(void)
{
	struct sroce_loop *lp = &sroce_loop;
	struct sk_buff *skb;

	tasklet_kill(&lp->tasklet);
	while ((skb = skb_dequeue(&lp->queue))) {
		dev_put(skb->dev);
		kfree_skb(skb);
	}
}

int sroce_net_init(void)
{
	struct sroce_netns *sn;
	int err;

	skb_queue_head_init(&sroce_loop.queue);
	tasklet_setup(&sroce_loop.tasklet, sroce_loop_run);

	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		goto err_loop;
	sn = sroce_netns_get(&init_net);
	if (IS_ERR(sn)) {
		err = PTR_ERR(sn);
		goto err_pernet;
	}
	err = sroce_engine_init();
	if (err)
		goto err_put;
	return 0;

err_put:
	sroce_netns_put(sn);
err_pernet:
	unregister_pernet_subsys(&sroce_net_ops);
err_loop:
	sroce_loop_exit();
	return err;
}

/* Every device is gone: only the module's own init_net user is left. */
void sroce_net_exit(void)
{
	sroce_netns_put(net_generic(&init_net, sroce_net_id));
	unregister_pernet_subsys(&sroce_net_ops);
	sroce_loop_exit();
	sroce_engine_exit();
}
