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
 * sees every frame too.  A frame that arrived with an 802.1Q tag matches
 * on the tag and is delivered with it put back (the stack took it out).
 *
 * RSS: a raw packet QP made over an indirection table of receive WQs
 * has no queues of its own and needs no modify; a frame its flow selects
 * goes to the WQ its Toeplitz hash picks, and completes on that WQ's CQ
 * with the WQ's number.  A WQ is an SRQ's ring that only RSS consumes.
 * Frames read a WQ's state under RCU, so a move out of RDY waits a grace
 * period before it empties the ring: no frame takes a WQE after that.
 *
 * Lifetime: ib_core keeps a QP from being destroyed while a flow points at
 * it; a flow leaves dev->flows and waits out an RCU grace period before it
 * is freed, so the tap and the loop never see a flow whose QP is gone.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/mutex.h>
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

struct sroce_rwq_ind_table {
	struct ib_rwq_ind_table ibtbl;
};

struct sroce_wq {
	struct ib_wq ibwq;
	struct sroce_srq rq;		/* rq.cq: the WQ's CQ */
	struct mutex state_mutex;	/* modify_wq: uverbs only reads-locks */
	enum ib_wq_state state;		/* written under state_mutex */
};

static struct sroce_wq *to_swq(struct ib_wq *ibwq)
{
	return container_of(ibwq, struct sroce_wq, ibwq);
}

static void sroce_rss_rcv(struct sroce_qp *qp, struct sk_buff *skb,
			  const struct sroce_flow_key *k)
{
	struct ib_rwq_ind_table *t = qp->ibqp.rwq_ind_tbl;
	u32 h = sroce_flow_hash(k, qp->rss_fields, qp->rss_key);
	struct sroce_wq *wq;

	wq = to_swq(t->ind_tbl[h & ((1U << t->log_ind_tbl_size) - 1)]);
	if (READ_ONCE(wq->state) != IB_WQS_RDY) {
		sroce_qp_count(qp, SROCE_CNT_LOCAL_ERRORS);
		return;
	}
	sroce_resp_wq_rcv(qp, &wq->rq, wq->ibwq.wq_num, skb);
}

/* Offer @skb, whose data is a whole frame, to every matching flow. */
static void sroce_raw_offer(struct sroce_dev *dev, struct sk_buff *skb,
			    const struct sroce_flow_key *k)
{
	struct sroce_flow *flow;

	list_for_each_entry_rcu(flow, &dev->flows, link) {
		if (!sroce_flow_match(&flow->rule, k))
			continue;
		if (flow->qp->ibqp.rwq_ind_tbl)
			sroce_rss_rcv(flow->qp, skb, k);
		else
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
	/* QPs get the frame as it was on the wire, its tag back inside */
	if (skb_vlan_tag_present(frame)) {
		frame = __vlan_hwaccel_push_inside(frame);
		if (!frame)
			goto out;
	}
	/* a WQ's receive copies from one linear frame */
	if (skb_linearize(frame)) {
		consume_skb(frame);
		goto out;
	}
	rcu_read_lock();
	sroce_raw_offer(dev, frame, &k);
	rcu_read_unlock();
	consume_skb(frame);
out:
	kfree_skb(skb);
	return NET_RX_SUCCESS;
}

/* One filter of a spec into @k; called for its value and for its mask. */
static void flow_eth(struct sroce_flow_key *k,
		     const struct ib_flow_eth_filter *f)
{
	memcpy(k->dmac, f->dst_mac, ETH_ALEN);
	memcpy(k->smac, f->src_mac, ETH_ALEN);
	k->ether_type = f->ether_type;
	k->vlan_tag = f->vlan_tag;
}

static void flow_ipv4(struct sroce_flow_key *k,
		      const struct ib_flow_ipv4_filter *f)
{
	k->v4_src = f->src_ip;
	k->v4_dst = f->dst_ip;
	k->v4_proto = f->proto;
	k->v4_tos = f->tos;
	k->v4_ttl = f->ttl;
	k->v4_flags = f->flags;
}

static void flow_ipv6(struct sroce_flow_key *k,
		      const struct ib_flow_ipv6_filter *f)
{
	memcpy(k->v6_src, f->src_ip, 16);
	memcpy(k->v6_dst, f->dst_ip, 16);
	k->v6_flow_label = f->flow_label;
	k->v6_next_hdr = f->next_hdr;
	k->v6_tclass = f->traffic_class;
	k->v6_hop_limit = f->hop_limit;
}

static void flow_l4(struct sroce_flow_key *k,
		    const struct ib_flow_tcp_udp_filter *f)
{
	k->l4_dport = f->dst_port;
	k->l4_sport = f->src_port;
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
		flow_eth(v, &s->eth.val);
		flow_eth(m, &s->eth.mask);
		v->layers |= SROCE_FLOW_ETH;
		return 0;
	case IB_FLOW_SPEC_IPV4:
		if (s->size < sizeof(s->ipv4))
			return -EINVAL;
		flow_ipv4(v, &s->ipv4.val);
		flow_ipv4(m, &s->ipv4.mask);
		v->layers |= SROCE_FLOW_IPV4;
		return 0;
	case IB_FLOW_SPEC_IPV6:
		if (s->size < sizeof(s->ipv6))
			return -EINVAL;
		flow_ipv6(v, &s->ipv6.val);
		flow_ipv6(m, &s->ipv6.mask);
		v->layers |= SROCE_FLOW_IPV6;
		return 0;
	case IB_FLOW_SPEC_TCP:
	case IB_FLOW_SPEC_UDP:
		if (s->size < sizeof(s->tcp_udp))
			return -EINVAL;
		flow_l4(v, &s->tcp_udp.val);
		flow_l4(m, &s->tcp_udp.mask);
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

/* ib_core has checked the table and that no CQ, SRQ or caps were asked. */
int sroce_rss_qp_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	struct sroce_create_qp_rss_cmd cmd;

	if (!udata || udata->inlen != sizeof(cmd))
		return -EINVAL;
	if (ib_copy_from_udata(&cmd, udata, sizeof(cmd)))
		return -EFAULT;
	if (cmd.rx_hash_function != SROCE_RX_HASH_FUNC_TOEPLITZ ||
	    cmd.rx_key_len != SROCE_RX_HASH_KEY_LEN ||
	    (cmd.rx_hash_fields_mask & ~SROCE_RX_HASH_FIELDS) ||
	    memchr_inv(cmd.rsvd, 0, sizeof(cmd.rsvd)))
		return -EOPNOTSUPP;
	qp->rss_fields = cmd.rx_hash_fields_mask;
	memcpy(qp->rss_key, cmd.rx_hash_key, sizeof(qp->rss_key));
	return 0;
}

static struct ib_wq *sroce_create_wq(struct ib_pd *pd,
				     struct ib_wq_init_attr *init,
				     struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(pd->device);
	struct sroce_create_srq_resp resp = {};
	struct sroce_wq *wq;
	int err;

	/* only user RSS QPs consume WQs */
	if (init->wq_type != IB_WQT_RQ || init->create_flags || !udata)
		return ERR_PTR(-EOPNOTSUPP);
	if (!init->max_wr || init->max_wr > SROCE_MAX_SRQ_WR ||
	    init->max_sge > SROCE_MAX_SGE || !init->cq ||
	    !sroce_udata_in_ok(udata) || udata->outlen < sizeof(resp))
		return ERR_PTR(-EINVAL);
	if (atomic_inc_return(&dev->num_srq) > SROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}
	wq = kzalloc(sizeof(*wq), GFP_KERNEL);
	if (!wq) {
		err = -ENOMEM;
		goto err_count;
	}
	err = sroce_srq_ring_init(&wq->rq, to_spd(pd), init->max_wr,
				  init->max_sge, true);
	if (err)
		goto err_free;
	wq->rq.cq = to_scq(init->cq);
	mutex_init(&wq->state_mutex);
	wq->state = IB_WQS_RESET;
	/* numbered among the SRQs, never published there */
	err = xa_alloc_cyclic(&dev->srqs, &wq->rq.srq_num, NULL,
			      XA_LIMIT(1, (1U << 24) - 1), &dev->next_srq,
			      GFP_KERNEL);
	if (err < 0)
		goto err_queue;
	wq->ibwq.wq_num = wq->rq.srq_num;
	err = sroce_queue_map(&wq->rq.rq, sroce_udata_uctx(udata), &resp.mi);
	if (err)
		goto err_xa;
	resp.srq_num = wq->ibwq.wq_num;
	err = sroce_udata_out(udata, &resp, sizeof(resp));
	if (err)
		goto err_xa;
	init->max_wr = wq->rq.rq.num;
	init->max_sge = wq->rq.max_sge;
	return &wq->ibwq;

err_xa:
	xa_erase(&dev->srqs, wq->rq.srq_num);
err_queue:
	sroce_queue_cleanup(&wq->rq.rq);
err_free:
	kfree(wq);
err_count:
	atomic_dec(&dev->num_srq);
	return ERR_PTR(err);
}

/* ib_core refuses while an indirection table holds the WQ. */
static int sroce_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibwq->device);
	struct sroce_wq *wq = to_swq(ibwq);

	xa_erase(&dev->srqs, wq->rq.srq_num);
	sroce_queue_cleanup(&wq->rq.rq);
	mutex_destroy(&wq->state_mutex);
	kfree(wq);
	atomic_dec(&dev->num_srq);
	return 0;
}

/*
 * Empties the ring: ERR completes each posted WQE with a flush error,
 * RESET drops them. Either way the kernel index moves up to the
 * producer's, so the provider never rewinds. rq.lock orders this against
 * a frame taking a WQE (sroce_srq_take()).
 */
static void sroce_wq_drain(struct sroce_wq *wq, bool complete)
{
	unsigned long flags;
	bool notify = false;

	spin_lock_irqsave(&wq->rq.lock, flags);
	if (sroce_recv_drain_locked(&wq->rq.rq, wq->rq.cq, wq->ibwq.wq_num,
				    complete, &notify))
		sroce_queue_set_state(&wq->rq.rq, SROCE_RING_ERROR);
	spin_unlock_irqrestore(&wq->rq.lock, flags);
	if (notify)
		sroce_cq_notify(wq->rq.cq);
}

/*
 * RESET -> RDY -> ERR -> RESET, and any state to RESET or ERR. A WQ in ERR
 * flushes what is posted on every move to ERR: the provider makes one
 * after posting to a WQ in ERR, as no doorbell exists to catch it.
 */
static int sroce_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr,
			   u32 mask, struct ib_udata *udata)
{
	struct sroce_wq *wq = to_swq(ibwq);
	enum ib_wq_state cur, next;
	int err = 0;

	if (!sroce_udata_in_ok(udata) || (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE)))
		return -EOPNOTSUPP;
	mutex_lock(&wq->state_mutex);
	cur = wq->state;
	next = (mask & IB_WQ_STATE) ? attr->wq_state : cur;
	if (((mask & IB_WQ_CUR_STATE) && attr->curr_wq_state != cur) ||
	    (next != IB_WQS_RESET && next != IB_WQS_RDY && next != IB_WQS_ERR) ||
	    (next == IB_WQS_RDY && cur == IB_WQS_ERR)) {
		err = -EINVAL;
		goto out;
	}
	if (!(mask & IB_WQ_STATE))
		goto out;
	WRITE_ONCE(wq->state, next);
	if (cur == IB_WQS_RDY && next != IB_WQS_RDY)
		synchronize_net();	/* frames that saw RDY are done */
	if (next != IB_WQS_RDY)
		sroce_wq_drain(wq, next == IB_WQS_ERR);
out:
	mutex_unlock(&wq->state_mutex);
	return err;
}

static DEFINE_IDA(sroce_ind_tbl_ida);

static int sroce_create_rwq_ind_table(struct ib_rwq_ind_table *t,
				      struct ib_rwq_ind_table_init_attr *init,
				      struct ib_udata *udata)
{
	int id;

	if (init->log_ind_tbl_size > SROCE_MAX_IND_TBL_LOG ||
	    !sroce_udata_in_ok(udata))
		return -EINVAL;
	id = ida_alloc_max(&sroce_ind_tbl_ida, SROCE_MAX_IND_TBL - 1,
			   GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	t->ind_tbl_num = id;
	return 0;
}

static int sroce_destroy_rwq_ind_table(struct ib_rwq_ind_table *t)
{
	ida_free(&sroce_ind_tbl_ida, t->ind_tbl_num);
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
	.create_wq = sroce_create_wq,
	.destroy_wq = sroce_destroy_wq,
	.modify_wq = sroce_modify_wq,
	.create_rwq_ind_table = sroce_create_rwq_ind_table,
	.destroy_rwq_ind_table = sroce_destroy_rwq_ind_table,

	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, sroce_rwq_ind_table, ibtbl),
};
