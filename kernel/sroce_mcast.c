// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UD multicast.  A UD QP attached to a multicast GID receives every
 * datagram sent to that group's IP address with destination QPN 0xFFFFFF,
 * each attached QP its own copy.  The first QP on a group joins the IP
 * group on the netdev and the last one to leave drops it: the IP layer
 * accepts only packets for groups the interface belongs to, and the
 * IGMP/MLD report it sends is what makes a snooping switch forward them.
 *
 * Groups live in a per-device hash.  Attach and detach (process context)
 * serialise on dev->mcast_mutex; the receive path walks groups and their
 * members under RCU and takes a QP reference per delivery.  A member is
 * unlisted before its QP's destroy_qp waits for an RCU grace period, so
 * the QP pointer a reader found is still valid for refcount_inc_not_zero.
 */
#include <linux/hash.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "sroce.h"

struct sroce_mcg {
	struct hlist_node node;		/* in dev->mcgs, RCU */
	union ib_gid gid;
	struct list_head members;	/* struct sroce_mcm, RCU */
	u32 nmembers;
	struct rcu_head rcu;
};

struct sroce_mcm {
	struct list_head node;		/* in mcg->members, RCU */
	struct sroce_qp *qp;
	struct rcu_head rcu;
};

static u32 sroce_mcg_hash(const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), 0);
}

/* The group's IP address; false if @gid is not a multicast group. */
static bool sroce_mcg_addr(const union ib_gid *gid, bool *v4, __be32 *a4)
{
	const struct in6_addr *a6 = (const struct in6_addr *)gid->raw;

	*v4 = ipv6_addr_v4mapped(a6);
	if (*v4) {
		*a4 = a6->s6_addr32[3];
		return ipv4_is_multicast(*a4);
	}
	return ipv6_addr_is_multicast(a6);
}

/* Caller holds RCU or dev->mcast_mutex. */
static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *dev,
					const union ib_gid *gid)
{
	struct sroce_mcg *mcg;

	hash_for_each_possible_rcu(dev->mcgs, mcg, node, sroce_mcg_hash(gid),
				   lockdep_is_held(&dev->mcast_mutex)) {
		if (!memcmp(mcg->gid.raw, gid->raw, sizeof(gid->raw)))
			return mcg;
	}
	return NULL;
}

/* Join (@join) or leave the IP group on our netdev. */
static int sroce_mcg_ip(struct sroce_dev *dev, const union ib_gid *gid,
			bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)gid->raw;
	struct in_device *in_dev;
	int err = 0;
	__be32 a4;
	bool v4;

	sroce_mcg_addr(gid, &v4, &a4);
	rtnl_lock();
	if (v4) {
		in_dev = __in_dev_get_rtnl(dev->ndev);
		if (!in_dev)
			err = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, a4);
		else
			ip_mc_dec_group(in_dev, a4);
	} else if (!IS_ENABLED(CONFIG_IPV6)) {
		err = -EAFNOSUPPORT;
	} else if (join) {
		err = ipv6_dev_mc_inc(dev->ndev, a6);
	} else {
		err = ipv6_dev_mc_dec(dev->ndev, a6);
	}
	rtnl_unlock();
	return err;
}

static int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *dev = qp->dev;
	struct sroce_mcg *mcg;
	struct sroce_mcm *m;
	int err = 0;
	__be32 a4;
	bool v4;

	if (ibqp->qp_type != IB_QPT_UD || !sroce_mcg_addr(gid, &v4, &a4))
		return -EINVAL;

	mutex_lock(&dev->mcast_mutex);
	mcg = sroce_mcg_find(dev, gid);
	if (mcg) {
		list_for_each_entry(m, &mcg->members, node)
			if (m->qp == qp)
				goto out;	/* attached already */
	}
	if (dev->nmcast_attach >= SROCE_MAX_MCAST_ATTACH ||
	    (mcg && mcg->nmembers >= SROCE_MAX_MCAST_QP_ATTACH) ||
	    (!mcg && dev->nmcg >= SROCE_MAX_MCAST_GRP)) {
		err = -ENOMEM;
		goto out;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	if (!mcg) {
		mcg = kzalloc(sizeof(*mcg), GFP_KERNEL_ACCOUNT);
		err = mcg ? sroce_mcg_ip(dev, gid, true) : -ENOMEM;
		if (err) {
			kfree(mcg);
			kfree(m);
			goto out;
		}
		mcg->gid = *gid;
		INIT_LIST_HEAD(&mcg->members);
		hash_add_rcu(dev->mcgs, &mcg->node, sroce_mcg_hash(gid));
		dev->nmcg++;
	}
	m->qp = qp;
	list_add_tail_rcu(&m->node, &mcg->members);
	mcg->nmembers++;
	qp->nmcast++;
	dev->nmcast_attach++;
out:
	mutex_unlock(&dev->mcast_mutex);
	return err;
}

/* Under dev->mcast_mutex: unlist @m; the group too if it was the last. */
static void sroce_mcm_del(struct sroce_dev *dev, struct sroce_mcg *mcg,
			  struct sroce_mcm *m)
{
	m->qp->nmcast--;
	dev->nmcast_attach--;
	list_del_rcu(&m->node);
	kfree_rcu(m, rcu);
	if (--mcg->nmembers)
		return;
	hash_del_rcu(&mcg->node);
	dev->nmcg--;
	/* the interface may be on its way out and have left already */
	sroce_mcg_ip(dev, &mcg->gid, false);
	kfree_rcu(mcg, rcu);
}

static int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *dev = qp->dev;
	struct sroce_mcg *mcg;
	struct sroce_mcm *m;
	int err = -EINVAL;

	mutex_lock(&dev->mcast_mutex);
	mcg = sroce_mcg_find(dev, gid);
	if (mcg) {
		list_for_each_entry(m, &mcg->members, node) {
			if (m->qp == qp) {
				sroce_mcm_del(dev, mcg, m);
				err = 0;
				break;
			}
		}
	}
	mutex_unlock(&dev->mcast_mutex);
	return err;
}

/*
 * destroy_qp, before its RCU grace period: a kernel consumer may destroy
 * a QP it left attached (uverbs detaches a process's QPs itself).
 */
void sroce_mcast_qp_destroy(struct sroce_qp *qp)
{
	struct sroce_dev *dev = qp->dev;
	struct sroce_mcg *mcg;
	struct hlist_node *tmp;
	struct sroce_mcm *m, *n;
	int bkt;

	mutex_lock(&dev->mcast_mutex);
	hash_for_each_safe(dev->mcgs, bkt, tmp, mcg, node) {
		if (!qp->nmcast)
			break;
		list_for_each_entry_safe(m, n, &mcg->members, node)
			if (m->qp == qp)
				sroce_mcm_del(dev, mcg, m);
	}
	mutex_unlock(&dev->mcast_mutex);
}

/*
 * Receive path, under RCU: a datagram for QPN 0xFFFFFF.  Each attached
 * QP gets it through its own UD receive (Q_Key, RQ, GRH); a group nobody
 * here is attached to counts as a packet for no QP.
 */
bool sroce_mcast_rcv(struct sroce_dev *dev, struct sroce_rx *rx)
{
	struct sroce_mcg *mcg;
	struct sroce_mcm *m;
	union ib_gid gid;
	bool found = false;

	if (rx->network_type == RDMA_NETWORK_IPV4)
		ipv6_addr_set_v4mapped(rx->daddr.v4,
				       (struct in6_addr *)gid.raw);
	else
		memcpy(gid.raw, &rx->daddr.v6, sizeof(gid.raw));
	mcg = sroce_mcg_find(dev, &gid);
	if (!mcg)
		return false;
	list_for_each_entry_rcu(m, &mcg->members, node) {
		struct sroce_qp *qp = m->qp;

		if (!refcount_inc_not_zero(&qp->ref))
			continue;
		sroce_resp_rcv(qp, rx);
		sroce_qp_put(qp);
		found = true;
	}
	return found;
}

void sroce_mcast_dev_init(struct sroce_dev *dev)
{
	mutex_init(&dev->mcast_mutex);
	hash_init(dev->mcgs);
}

/* dealloc_driver: every QP is gone, and with them every attachment. */
void sroce_mcast_dev_fini(struct sroce_dev *dev)
{
	if (!hash_empty(dev->mcgs))
		pr_err("sroce: %s freed with multicast groups attached\n",
		       dev_name(&dev->ibdev.dev));
	mutex_destroy(&dev->mcast_mutex);
}

const struct ib_device_ops sroce_mcast_ops = {
	.attach_mcast = sroce_attach_mcast,
	.detach_mcast = sroce_detach_mcast,
};
