// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Device, port, PD, AH and user context verbs, plus the mmap plumbing the
 * object verbs use to share rings with userspace.
 */
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <linux/vmalloc.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/* Room for the link-local GID and a generous number of IP addresses. */
#define SROCE_GID_TBL_LEN	128

/* Our CA ACK delay exponent: 4.096 us * 2^15, what software can promise. */
#define SROCE_LOCAL_ACK_DELAY	15

/*
 * Input a newer library may send that we do not understand must be zero:
 * accepting it silently would let the two sides disagree on its meaning.
 */
static bool sroce_udata_in_ok(struct ib_udata *udata)
{
	return !udata || !udata->inlen ||
	       ib_is_udata_cleared(udata, 0, udata->inlen);
}

/* Send what fits; an older library asks for less than we have. */
static int sroce_udata_out(struct ib_udata *udata, void *resp,
			   size_t len)
{
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

void sroce_dev_attr_init(struct sroce_dev *dev)
{
	struct ib_device_attr *a = &dev->attr;

	memset(a, 0, sizeof(*a));
	a->sys_image_guid = dev->ibdev.node_guid;
	a->max_mr_size = SROCE_MAX_MR_SIZE;
	/* Fast registration maps CPU pages; nothing larger is promised. */
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = SROCE_VENDOR_ID;
	a->max_qp = SROCE_MAX_QP;
	a->max_qp_wr = SROCE_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_XRC |
			      SROCE_DEVICE_ATOMIC_WRITE |
			      SROCE_DEVICE_FLUSH_GLOBAL;
	/* `rdma link delete` refuses devices without this. */
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	/*
	 * ODP regions, explicit and implicit (the whole address space),
	 * sroce_odp.c: a missing page is an RNR NAK to the requester.
	 */
	a->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps = SROCE_ODP_CAPS_RC;
	a->odp_caps.per_transport_caps.xrc_odp_caps = SROCE_ODP_CAPS_RC;
	/*
	 * UC and UD cannot ask for a resend: a receive there that meets a
	 * missing page loses the message, so only UD sends are offered.
	 */
	a->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
	a->max_send_sge = SROCE_MAX_SGE;
	a->max_recv_sge = SROCE_MAX_SGE;
	a->max_sge_rd = SROCE_MAX_SGE;
	a->max_cq = SROCE_MAX_CQ;
	a->max_cqe = SROCE_MAX_CQE;
	a->max_mr = SROCE_MAX_MR;
	a->max_mw = SROCE_MAX_MW;
	a->max_pd = SROCE_MAX_PD;
	a->max_ah = SROCE_MAX_AH;
	a->max_srq = SROCE_MAX_SRQ;
	a->max_srq_wr = SROCE_MAX_SRQ_WR;
	a->max_srq_sge = SROCE_MAX_SGE;
	/* receive WQs behind RSS raw packet QPs (sroce_raw.c) */
	a->max_wq_type_rq = SROCE_MAX_SRQ;
	a->rss_caps.supported_qpts = BIT(IB_QPT_RAW_PACKET);
	a->rss_caps.max_rwq_indirection_tables = SROCE_MAX_IND_TBL;
	a->rss_caps.max_rwq_indirection_table_size = 1U << SROCE_MAX_IND_TBL_LOG;
	a->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = SROCE_MAX_QP * SROCE_MAX_RD_ATOMIC;
	/* Atomics are atomic against each other on this device only. */
	a->atomic_cap = IB_ATOMIC_HCA;
	a->masked_atomic_cap = IB_ATOMIC_NONE;
	a->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	a->max_pkeys = SROCE_MAX_PKEYS;
	a->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = SROCE_MAX_MCAST_ATTACH;
	a->local_ca_ack_delay = SROCE_LOCAL_ACK_DELAY;
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* No driver-specific output exists; input must be empty. */
	if (!sroce_udata_in_ok(udata))
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

static int sroce_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *mod)
{
	struct sroce_dev *dev = to_sdev(ibdev);

	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID)
		dev->attr.sys_image_guid = cpu_to_be64(mod->sys_image_guid);
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, mod->node_desc, IB_DEVICE_NODE_DESC_MAX);
	return 0;
}

/* Map an Ethernet speed to the IB rate whose data rate is closest below. */
static void sroce_eth_to_ib_speed(u32 mbps, u16 *speed, u8 *width)
{
	static const struct {
		u32 mbps;
		u16 speed;
		u8 width;
	} map[] = {
		{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
		{ 10000, IB_SPEED_QDR, IB_WIDTH_1X },
		{ 14000, IB_SPEED_FDR, IB_WIDTH_1X },
		{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
		{ 40000, IB_SPEED_QDR, IB_WIDTH_4X },
		{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
		{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
		{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map) - 1; i++)
		if (mbps < map[i + 1].mbps)
			break;
	*speed = map[i].speed;
	*width = map[i].width;
}

static u32 sroce_netdev_mbps(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;
	u32 mbps = SPEED_UNKNOWN;

	rtnl_lock();
	if (ndev->reg_state == NETREG_REGISTERED &&
	    !__ethtool_get_link_ksettings(ndev, &ks))
		mbps = ks.base.speed;
	rtnl_unlock();
	/* Virtual NICs rarely know; report the slowest rate, not a guess. */
	return mbps == (u32)SPEED_UNKNOWN ? 0 : mbps;
}

static int sroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *dev = to_sdev(ibdev);
	struct net_device *ndev = dev->ndev;
	bool running = netif_running(ndev);
	bool carrier = netif_carrier_ok(ndev);

	if (port != SROCE_PORT)
		return -EINVAL;

	attr->state = running && carrier ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	if (!running)
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	else if (!carrier)
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = READ_ONCE(dev->active_mtu);
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->ip_gids = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = SROCE_MAX_PKEYS;
	attr->max_vl_num = 1;
	sroce_eth_to_ib_speed(sroce_netdev_mbps(ndev), &attr->active_speed,
			      &attr->active_width);
	return 0;
}

static int sroce_modify_port(struct ib_device *ibdev, u32 port, int mask,
			     struct ib_port_modify *mod)
{
	/* Only the CM bit may be touched, and we always support CM. */
	if (mask & ~IB_PORT_RESET_QKEY_CNTR)
		return -EOPNOTSUPP;
	if ((mod->set_port_cap_mask | mod->clr_port_cap_mask) & ~IB_PORT_CM_SUP)
		return -EOPNOTSUPP;
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *imm)
{
	if (port != SROCE_PORT)
		return -EINVAL;
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->gid_tbl_len = SROCE_GID_TBL_LEN;
	imm->pkey_tbl_len = SROCE_MAX_PKEYS;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static struct net_device *sroce_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;

	/* ib_core drops it again once the netdev leaves NETREG_REGISTERED. */
	dev_hold(ndev);
	return ndev;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	*pkey = SROCE_DEFAULT_PKEY;
	return 0;
}

/* What a context's creator learns, and an importer asks again. */
void sroce_ucontext_resp(struct sroce_alloc_ucontext_resp *resp)
{
	*resp = (struct sroce_alloc_ucontext_resp) {
		.abi_version = SROCE_UVERBS_ABI_VERSION,
		.max_inline_data = SROCE_MAX_INLINE,
		.max_sge = SROCE_MAX_SGE,
		.flags = (SROCE_DEVICE_FLUSH_GLOBAL ? SROCE_UCTX_F_FLUSH : 0) |
			 SROCE_UCTX_F_CQ_ARM,
	};
}

static int sroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	struct sroce_alloc_ucontext_resp resp;

	if (!sroce_udata_in_ok(udata))
		return -EINVAL;
	sroce_ucontext_resp(&resp);
	return sroce_udata_out(udata, &resp, sizeof(resp));
}

static void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Having this op lets device removal tear down a process's objects and
 * return at once instead of waiting for the process to close its fd: rings
 * are vmalloc-area pages, which stay alive for as long as they are
 * mapped, so nothing the process can still touch is freed under it.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct mutex lock;	/* orders mmap() against removal */
	bool removed;
};

static struct sroce_mmap_entry *to_smmap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct sroce_mmap_entry, rdma);
}

int sroce_mmap_insert(struct ib_ucontext *uctx, void *buf, size_t size,
		      struct rdma_user_mmap_entry **entry,
		      struct sroce_mmap_info *mi)
{
	struct sroce_mmap_entry *e;
	int err;

	if (!size || size > U32_MAX)
		return -EINVAL;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->buf = buf;
	mutex_init(&e->lock);
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, PAGE_ALIGN(size));
	if (err) {
		kfree(e);
		return err;
	}
	mi->offset = rdma_user_mmap_get_offset(&e->rdma);
	mi->size = size;
	*entry = &e->rdma;
	return 0;
}

void sroce_mmap_remove(struct rdma_user_mmap_entry *entry)
{
	struct sroce_mmap_entry *e;

	if (!entry)
		return;
	e = to_smmap(entry);
	/* Wait out an mmap() that found the entry before it was removed. */
	mutex_lock(&e->lock);
	e->removed = true;
	mutex_unlock(&e->lock);
	rdma_user_mmap_entry_remove(entry);
}

static int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct sroce_mmap_entry *e;
	int err;

	/* Checks the offset, VM_SHARED and that the length is the whole entry. */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	e = to_smmap(entry);

	mutex_lock(&e->lock);
	err = e->removed ? -EINVAL : remap_vmalloc_range(vma, e->buf, 0);
	mutex_unlock(&e->lock);

	rdma_user_mmap_entry_put(entry);
	return err;
}

static void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	kfree(to_smmap(entry));
}

static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibpd->device);

	if (!sroce_udata_in_ok(udata))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_pd) > SROCE_MAX_PD) {
		atomic_dec(&dev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}

static int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibxrcd->device);
	struct sroce_xrcd *xrcd = to_sxrcd(ibxrcd);

	if (!sroce_udata_in_ok(udata))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_xrcd) > SROCE_MAX_XRCD) {
		atomic_dec(&dev->num_xrcd);
		return -ENOMEM;
	}
	mutex_init(&xrcd->lock);
	INIT_LIST_HEAD(&xrcd->tgts);
	return 0;
}

/* ib_core counts the domain's QPs and SRQs: none is left by now. */
static int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibxrcd->device)->num_xrcd);
	return 0;
}

int sroce_av_from_attr(struct sroce_dev *dev, const struct rdma_ah_attr *attr,
		       struct sroce_av *av)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	struct net_device *gid_ndev;
	bool ours;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(attr) != SROCE_PORT)
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	/*
	 * Sources are addresses of our netdev or of a VLAN directly on it
	 * (ib_core gives us those GIDs too): the VLAN device adds the tag.
	 * Other upper devices (macvlan, bonds, VLAN on VLAN) are not ours,
	 * nor a VLAN moved to another namespace: we send in the netdev's.
	 */
	memset(av, 0, sizeof(*av));
	rcu_read_lock();
	gid_ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	ours = !IS_ERR(gid_ndev) &&
	       (gid_ndev == dev->ndev ||
		(is_vlan_dev(gid_ndev) &&
		 vlan_dev_real_dev(gid_ndev) == dev->ndev &&
		 net_eq(dev_net(gid_ndev), sroce_dev_net(dev))));
	if (ours)
		av->ifindex = gid_ndev->ifindex;
	rcu_read_unlock();
	if (!ours)
		return -EINVAL;

	av->network_type = rdma_gid_attr_network_type(sgid_attr);
	rdma_gid2ip((struct sockaddr *)&av->saddr, &sgid_attr->gid);
	rdma_gid2ip((struct sockaddr *)&av->daddr, &grh->dgid);
	/* An IPv4 source cannot reach an IPv6 destination, or vice versa. */
	if (av->saddr.v4.sin_family != av->daddr.v4.sin_family)
		return -EINVAL;
	if (av->network_type != (av->saddr.v4.sin_family == AF_INET ?
				 RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6))
		return -EINVAL;

	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	av->sgid_index = grh->sgid_index;
	av->dgid = grh->dgid;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

struct sroce_ah *sroce_ah_get(struct sroce_dev *dev, u32 ah_num,
			      struct sroce_pd *pd)
{
	struct sroce_ah *ah;

	rcu_read_lock();
	ah = xa_load(&dev->ahs, ah_num);
	if (ah && (ah->pd != pd || !refcount_inc_not_zero(&ah->ref)))
		ah = NULL;
	rcu_read_unlock();
	return ah;
}

void sroce_ah_put(struct sroce_ah *ah)
{
	if (refcount_dec_and_test(&ah->ref))
		kfree_rcu(ah, rcu);
}

static int sroce_create_ah(struct ib_ah *ibah,
			   struct rdma_ah_init_attr *init,
			   struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct sroce_create_ah_resp resp = {};
	struct sroce_ah *snap;
	unsigned long flags;
	int err;

	if (!sroce_udata_in_ok(udata))
		return -EINVAL;
	if (atomic_inc_return(&dev->num_ah) > SROCE_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}
	err = sroce_av_from_attr(dev, init->ah_attr, &ah->av);
	if (err)
		goto err_count;

	snap = kzalloc(sizeof(*snap), gfp);
	if (!snap) {
		err = -ENOMEM;
		goto err_count;
	}
	snap->av = ah->av;
	snap->pd = to_spd(ibah->pd);
	refcount_set(&snap->ref, 1);

	/* Callers may hold an IRQ-disabling lock: save, do not re-enable. */
	xa_lock_irqsave(&dev->ahs, flags);
	err = __xa_alloc_cyclic(&dev->ahs, &snap->ah_num, snap, xa_limit_32b,
				&dev->next_ah, gfp);
	xa_unlock_irqrestore(&dev->ahs, flags);
	if (err < 0)
		goto err_free;

	ah->ah_num = snap->ah_num;
	ah->pd = snap->pd;
	ah->snap = snap;

	if (udata) {
		resp.ah_num = ah->ah_num;
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_lock_irqsave(&dev->ahs, flags);
	__xa_erase(&dev->ahs, snap->ah_num);
	xa_unlock_irqrestore(&dev->ahs, flags);
	sroce_ah_put(snap);
	goto err_count;
err_free:
	kfree(snap);
err_count:
	atomic_dec(&dev->num_ah);
	return err;
}

static int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *dev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	/* New lookups fail from here; senders holding a reference finish. */
	xa_lock_irqsave(&dev->ahs, irqflags);
	__xa_erase(&dev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&dev->ahs, irqflags);
	sroce_ah_put(ah->snap);
	atomic_dec(&dev->num_ah);
	return 0;
}

static int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sroce_av *av = &to_sah(ibah)->av;

	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_grh(attr, &av->dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	rdma_ah_set_port_num(attr, SROCE_PORT);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
	return 0;
}

const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = (enum rdma_driver_id)SROCE_DRIVER_ID,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.query_device = sroce_query_device,
	.modify_device = sroce_modify_device,
	.query_port = sroce_query_port,
	.modify_port = sroce_modify_port,
	.get_port_immutable = sroce_get_port_immutable,
	.get_link_layer = sroce_get_link_layer,
	.get_netdev = sroce_get_netdev,
	.query_pkey = sroce_query_pkey,
	.alloc_ucontext = sroce_alloc_ucontext,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
	.alloc_xrcd = sroce_alloc_xrcd,
	.dealloc_xrcd = sroce_dealloc_xrcd,
	.create_ah = sroce_create_ah,
	.create_user_ah = sroce_create_ah,
	.destroy_ah = sroce_destroy_ah,
	.query_ah = sroce_query_ah,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
};
