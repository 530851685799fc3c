// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Raw packet QPs and their flows.  ib_core lets only CAP_NET_RAW create
 * either, as it does for AF_PACKET sockets, so a raw QP may send any
 * frame; it only receives what its flows select.
 *
 * Transmit: a frame goes out on the netdev as the WQE holds it.  One to
 * the netdev's own MAC, or to a group, is also offered to the local flows,
 * since a NIC loops those back; one to our own MAC goes no further.
 *
 * Receive: while a device has flows, a packet tap on its netdev offers
 * every frame that arrives to them, and each QP whose flow matches gets a
 * copy.  A tap cannot take a frame from the stack, so flows here behave
 * as IB_FLOW_ATTR_FLAGS_DONT_TRAP asks whether asked or not: the stack
 * sees every frame too.  A frame arriving with an 802.1Q tag matches on
 * the tag but is delivered without it (the stack has taken it out).
 *
 * Lifetime: ib_core keeps a QP from being destroyed while a flow points at
 * it; a flow leaves dev->flows and waits out an RCU grace period before it
 * is freed, so the tap and the loop never see a flow whose QP is gone.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>

#include "sroce.h"
#include "sroce_obj.h"
#include "sroce_engine.h"
#include "sroce_flow.h"

#define SROCE_MAX_FLOWS		1024	/* per device */

struct sroce_flow {
	struct ib_flow ibflow;
	struct sroce_qp *qp;
	struct list_head link;		/* dev->flows, RCU */
	struct sroce_flow_rule rule;
};

/* Largest frame a raw QP sends: the netdev's MTU, Ethernet header, tag. */
u32 sroce_raw_max_frame(const struct sroce_dev *dev)
{
	return READ_ONCE(dev->ndev->mtu) + ETH_HLEN + VLAN_HLEN;
}

/* Offer @skb, whose data is a whole frame, to every matching flow. */
static void sroce_raw_offer(struct sroce_dev *dev, struct sk_buff *skb,
			    const struct sroce_flow_key *k)
{
	struct sroce_flow *flow;

	list_for_each_entry_rcu(flow, &dev->flows, link) {
		if (sroce_flow_match(&flow->rule, k))
			sroce_resp_raw_rcv(flow->qp, skb);
	}
}

static void sroce_raw_loop(struct sroce_dev *dev, struct sk_buff *skb)
{
	struct sroce_flow_key k;

	if (list_empty(&dev->flows))
		return;
	sroce_flow_parse(skb->data, skb_headlen(skb), -1, &k);
	local_bh_disable();	/* receive completions are made in softirq */
	rcu_read_lock();
	sroce_raw_offer(dev, skb, &k);
	rcu_read_unlock();
	local_bh_enable();
}

struct sk_buff *sroce_raw_alloc_skb(struct sroce_qp *qp, u32 len)
{
	struct net_device *ndev = qp->dev->ndev;
	struct sk_buff *skb;

	skb = __netdev_alloc_skb(ndev, LL_RESERVED_SPACE(ndev) + len +
				 ndev->needed_tailroom, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev));
	skb_set_owner_w(skb, qp->dev->txsk->sk);
	return skb;
}

/* Consumes @skb, a whole frame of at least ETH_HLEN bytes. */
void sroce_raw_xmit(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *dev = qp->dev;
	const struct ethhdr *eth;
	bool own;
	int err;

	skb_reset_mac_header(skb);
	eth = eth_hdr(skb);
	own = ether_addr_equal(eth->h_dest, dev->ndev->dev_addr);
	if (own || is_multicast_ether_addr(eth->h_dest))
		sroce_raw_loop(dev, skb);
	sroce_qp_count(qp, SROCE_CNT_SENT_PKTS);
	if (own) {
		consume_skb(skb);
		return;
	}
	skb->dev = dev->ndev;
	skb->protocol = eth->h_proto;
	skb_reset_network_header(skb);
	skb->network_header += ETH_HLEN;
	err = dev_queue_xmit(skb);
	if (err != NET_XMIT_SUCCESS && err != NET_XMIT_CN)
		sroce_qp_count(qp, SROCE_CNT_TX_DROPS);
}

static int sroce_raw_tap(struct sk_buff *skb, struct net_device *ndev,
			 struct packet_type *pt, struct net_device *orig)
{
	struct sroce_dev *dev = container_of(pt, struct sroce_dev, flow_pt);
	u8 hdr[SROCE_FLOW_HDR_MAX];
	struct sroce_flow_key k;
	struct sk_buff *frame;
	u32 mac_len, n;

	/* Our own sends were offered at transmit; others' are not ours. */
	if (skb->pkt_type == PACKET_OUTGOING || !skb_mac_header_was_set(skb))
		goto out;
	mac_len = skb->data - skb_mac_header(skb);
	if (mac_len != ETH_HLEN)
		goto out;
	memcpy(hdr, skb_mac_header(skb), ETH_HLEN);
	n = min_t(u32, skb->len, sizeof(hdr) - ETH_HLEN);
	if (skb_copy_bits(skb, 0, hdr + ETH_HLEN, n))
		goto out;
	sroce_flow_parse(hdr, ETH_HLEN + n,
			 skb_vlan_tag_present(skb) ? skb_vlan_tag_get(skb) : -1,
			 &k);
	/* The skb is shared with the stack: give the QPs a frame of their own. */
	frame = skb_clone(skb, GFP_ATOMIC);
	if (!frame)
		goto out;
	skb_push(frame, ETH_HLEN);
	rcu_read_lock();
	sroce_raw_offer(dev, frame, &k);
	rcu_read_unlock();
	consume_skb(frame);
out:
	kfree_skb(skb);
	return NET_RX_SUCCESS;
}

/* One ib_core spec into @r; IB_FLOW_SPEC_INNER and actions are refused. */
static int sroce_flow_spec(struct sroce_flow_rule *r,
			   const union ib_flow_spec *s)
{
	struct sroce_flow_key *v = &r->val, *m = &r->mask;

	switch (s->type) {
	case IB_FLOW_SPEC_ETH:
		if (s->size < sizeof(s->eth))
			return -EINVAL;
		memcpy(v->dmac, s->eth.val.dst_mac, ETH_ALEN);
		memcpy(m->dmac, s->eth.mask.dst_mac, ETH_ALEN);
		memcpy(v->smac, s->eth.val.src_mac, ETH_ALEN);
		memcpy(m->smac, s->eth.mask.src_mac, ETH_ALEN);
		v->ether_type = s->eth.val.ether_type;
		m->ether_type = s->eth.mask.ether_type;
		v->vlan_tag = s->eth.val.vlan_tag;
		m->vlan_tag = s->eth.mask.vlan_tag;
		v->layers |= SROCE_FLOW_ETH;
		return 0;
	case IB_FLOW_SPEC_IPV4:
		if (s->size < sizeof(s->ipv4))
			return -EINVAL;
		v->v4_src = s->ipv4.val.src_ip;
		m->v4_src = s->ipv4.mask.src_ip;
		v->v4_dst = s->ipv4.val.dst_ip;
		m->v4_dst = s->ipv4.mask.dst_ip;
		v->v4_proto = s->ipv4.val.proto;
		m->v4_proto = s->ipv4.mask.proto;
		v->v4_tos = s->ipv4.val.tos;
		m->v4_tos = s->ipv4.mask.tos;
		v->v4_ttl = s->ipv4.val.ttl;
		m->v4_ttl = s->ipv4.mask.ttl;
		v->v4_flags = s->ipv4.val.flags;
		m->v4_flags = s->ipv4.mask.flags;
		v->layers |= SROCE_FLOW_IPV4;
		return 0;
	case IB_FLOW_SPEC_IPV6:
		if (s->size < sizeof(s->ipv6))
			return -EINVAL;
		memcpy(v->v6_src, s->ipv6.val.src_ip, 16);
		memcpy(m->v6_src, s->ipv6.mask.src_ip, 16);
		memcpy(v->v6_dst, s->ipv6.val.dst_ip, 16);
		memcpy(m->v6_dst, s->ipv6.mask.dst_ip, 16);
		v->v6_flow_label = s->ipv6.val.flow_label;
		m->v6_flow_label = s->ipv6.mask.flow_label;
		v->v6_next_hdr = s->ipv6.val.next_hdr;
		m->v6_next_hdr = s->ipv6.mask.next_hdr;
		v->v6_tclass = s->ipv6.val.traffic_class;
		m->v6_tclass = s->ipv6.mask.traffic_class;
		v->v6_hop_limit = s->ipv6.val.hop_limit;
		m->v6_hop_limit = s->ipv6.mask.hop_limit;
		v->layers |= SROCE_FLOW_IPV6;
		return 0;
	case IB_FLOW_SPEC_TCP:
	case IB_FLOW_SPEC_UDP:
		if (s->size < sizeof(s->tcp_udp))
			return -EINVAL;
		v->l4_dport = s->tcp_udp.val.dst_port;
		m->l4_dport = s->tcp_udp.mask.dst_port;
		v->l4_sport = s->tcp_udp.val.src_port;
		m->l4_sport = s->tcp_udp.mask.src_port;
		v->layers |= s->type == IB_FLOW_SPEC_TCP ? SROCE_FLOW_TCP :
							   SROCE_FLOW_UDP;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int sroce_flow_rule(struct sroce_flow_rule *r,
			   const struct ib_flow_attr *attr)
{
	const u8 *p = (const u8 *)(attr + 1);
	const u8 *end = (const u8 *)attr + attr->size;
	const size_t hdr = offsetofend(union ib_flow_spec, size);
	const union ib_flow_spec *s;
	unsigned int i;
	int err;

	if (attr->size < sizeof(*attr))
		return -EINVAL;
	for (i = 0; i < attr->num_of_specs; i++) {
		s = (const union ib_flow_spec *)p;
		if (end - p < (long)hdr || s->size < hdr || s->size > end - p)
			return -EINVAL;
		err = sroce_flow_spec(r, s);
		if (err)
			return err;
		p += s->size;
	}
	/* both L3 kinds, or both L4 kinds, can never match one frame */
	if ((r->val.layers & SROCE_FLOW_IPV4 && r->val.layers & SROCE_FLOW_IPV6) ||
	    (r->val.layers & SROCE_FLOW_TCP && r->val.layers & SROCE_FLOW_UDP))
		return -EINVAL;
	return 0;
}

static struct ib_flow *sroce_create_flow(struct ib_qp *ibqp,
					 struct ib_flow_attr *attr,
					 struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *dev = qp->dev;
	struct sroce_flow *flow;
	int err;

	if (ibqp->qp_type != IB_QPT_RAW_PACKET ||
	    (attr->type != IB_FLOW_ATTR_NORMAL &&
	     attr->type != IB_FLOW_ATTR_SNIFFER) ||
	    (attr->flags & ~IB_FLOW_ATTR_FLAGS_DONT_TRAP))
		return ERR_PTR(-EOPNOTSUPP);
	if (attr->port != SROCE_PORT || !sroce_udata_in_ok(udata))
		return ERR_PTR(-EINVAL);
	flow = kzalloc(sizeof(*flow), GFP_KERNEL);
	if (!flow)
		return ERR_PTR(-ENOMEM);
	err = sroce_flow_rule(&flow->rule, attr);
	if (err)
		goto err_free;
	flow->qp = qp;

	mutex_lock(&dev->flow_mutex);
	if (dev->nflows >= SROCE_MAX_FLOWS) {
		mutex_unlock(&dev->flow_mutex);
		err = -ENOSPC;
		goto err_free;
	}
	if (!dev->nflows++) {
		dev->flow_pt.type = htons(ETH_P_ALL);
		dev->flow_pt.dev = dev->ndev;
		dev->flow_pt.func = sroce_raw_tap;
		dev_add_pack(&dev->flow_pt);
	}
	list_add_tail_rcu(&flow->link, &dev->flows);
	mutex_unlock(&dev->flow_mutex);
	return &flow->ibflow;

err_free:
	kfree(flow);
	return ERR_PTR(err);
}

static int sroce_destroy_flow(struct ib_flow *ibflow)
{
	struct sroce_flow *flow = container_of(ibflow, struct sroce_flow,
					       ibflow);
	struct sroce_dev *dev = flow->qp->dev;
	bool last;

	mutex_lock(&dev->flow_mutex);
	list_del_rcu(&flow->link);
	last = !--dev->nflows;
	if (last)
		dev_remove_pack(&dev->flow_pt);	/* waits for the taps */
	mutex_unlock(&dev->flow_mutex);
	if (!last)
		synchronize_rcu();
	kfree(flow);
	return 0;
}

void sroce_raw_dev_init(struct sroce_dev *dev)
{
	INIT_LIST_HEAD(&dev->flows);
	mutex_init(&dev->flow_mutex);
}

const struct ib_device_ops sroce_raw_ops = {
	.create_flow = sroce_create_flow,
	.destroy_flow = sroce_destroy_flow,
};
