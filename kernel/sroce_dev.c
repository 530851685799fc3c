// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Device life cycle: `rdma link add` creates one sroce device on top of an
 * Ethernet netdev, netdev events drive its port, and the device goes away
 * on `rdma link delete`, when its netdev is unregistered, or at module
 * unload.
 *
 * Lifetime rules (see DESIGN.md):
 *  - sroce_dev_list holds every device from just before ib_register_device()
 *    until dealloc_driver; writers take sroce_dev_mutex, readers use RCU.
 *  - A reader only uses a device it found after ib_device_try_get()
 *    succeeded; that registration reference makes unregistration wait for
 *    sroce_dev_put(), so the receive path never sees a half torn down
 *    device.  ib_core frees the memory with kfree_rcu(), so a reader that
 *    lost the race still walks valid memory.
 *  - dealloc_driver releases everything the driver allocated.
 */
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>

#include "sroce.h"

static LIST_HEAD(sroce_dev_list);
static DEFINE_MUTEX(sroce_dev_mutex);	/* writers of sroce_dev_list */
static DEFINE_IDA(sroce_parent_ida);

struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct sroce_dev *dev, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(dev, &sroce_dev_list, list) {
		if (dev->ndev != ndev)
			continue;
		if (ib_device_try_get(&dev->ibdev))
			found = dev;
		break;
	}
	rcu_read_unlock();
	return found;
}

void sroce_dev_put(struct sroce_dev *dev)
{
	ib_device_put(&dev->ibdev);
}

/*
 * Queue the unregistration of every registered device that sends in
 * @net, for a namespace going away with devices its netdev events missed
 * (a netdev moved while ib_core had the device disabled).
 */
void sroce_dev_unregister_net(struct net *net)
{
	struct sroce_dev *dev;

	rcu_read_lock();
	list_for_each_entry_rcu(dev, &sroce_dev_list, list) {
		if (!net_eq(sroce_dev_net(dev), net) ||
		    !ib_device_try_get(&dev->ibdev))
			continue;
		ib_unregister_device_queued(&dev->ibdev);
		sroce_dev_put(dev);
	}
	rcu_read_unlock();
}

/* Largest IB MTU whose packets, with every RoCEv2 header, fit the netdev. */
static enum ib_mtu sroce_mtu_for(unsigned int ndev_mtu)
{
	enum ib_mtu mtu = iboe_get_mtu(ndev_mtu);

	return mtu ? mtu : IB_MTU_256;
}

static enum ib_port_state sroce_port_state_for(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static void sroce_port_event(struct sroce_dev *dev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = SROCE_PORT,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * Tools find an RDMA device's netdev as a NIC shows it, in
 * /sys/class/infiniband/DEV/device/net/ (pyverbs' rdma_cm tests do).  The
 * netdev's own parent, often a PCI function, would make udev's rdma_rename
 * give us a PCI-based name, so our parent is a bare root device: with no
 * bus it is not renamed and sends no uevent.  Its net/ holds one link to
 * the netdev, named as the netdev is now.
 */
static int sroce_parent_init(struct sroce_dev *dev)
{
	char name[24];
	int id;

	id = ida_alloc(&sroce_parent_ida, GFP_KERNEL);
	if (id < 0)
		return id;
	snprintf(name, sizeof(name), "sroce.%d", id);
	dev->parent = root_device_register(name);
	if (IS_ERR(dev->parent)) {
		int err = PTR_ERR(dev->parent);

		ida_free(&sroce_parent_ida, id);
		dev->parent = NULL;
		return err;
	}
	dev->parent_id = id;
	dev->parent_net = kobject_create_and_add("net", &dev->parent->kobj);
	if (!dev->parent_net)
		return -ENOMEM;	/* dealloc_driver undoes the rest */
	dev->ibdev.dev.parent = dev->parent;
	return 0;
}

/* Under RTNL, registered: netdev renames are ordered with this. */
static void sroce_parent_link(struct sroce_dev *dev)
{
	struct net_device *ndev = dev->ndev;

	if (dev->parent_link[0])
		sysfs_remove_link(dev->parent_net, dev->parent_link);
	dev->parent_link[0] = 0;
	/*
	 * Not sysfs_rename_link_ns(): it looks the old link up in the
	 * netdev's namespace, and our directory has none.
	 */
	if (sysfs_create_link(dev->parent_net, &ndev->dev.kobj, ndev->name))
		pr_warn("sroce: %s: no sysfs link to %s\n",
			dev_name(&dev->ibdev.dev), netdev_name(ndev));
	else
		strscpy(dev->parent_link, ndev->name, sizeof(dev->parent_link));
}

/* dealloc_driver: no netdev event can find the device any more. */
static void sroce_parent_fini(struct sroce_dev *dev)
{
	if (!dev->parent)
		return;
	if (dev->parent_link[0])
		sysfs_remove_link(dev->parent_net, dev->parent_link);
	kobject_put(dev->parent_net);
	root_device_unregister(dev->parent);
	ida_free(&sroce_parent_ida, dev->parent_id);
}

/* Called under RTNL, which orders it against every other netdev event. */
static void sroce_port_update(struct sroce_dev *dev)
{
	enum ib_port_state state = sroce_port_state_for(dev->ndev);

	WRITE_ONCE(dev->active_mtu, sroce_mtu_for(READ_ONCE(dev->ndev->mtu)));
	if (state == READ_ONCE(dev->port_state))
		return;
	WRITE_ONCE(dev->port_state, state);
	sroce_port_event(dev, state == IB_PORT_ACTIVE ?
			 IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *dev;

	/*
	 * A device still registering is not found here; newlink re-reads the
	 * netdev under RTNL once registration is done, and NETDEV_UNREGISTER
	 * is re-sent while the netdev waits for our reference.
	 */
	dev = sroce_dev_get_by_netdev(ndev);
	if (!dev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* ib_unregister_device() may take RTNL: do it from a work. */
		ib_unregister_device_queued(&dev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_port_update(dev);
		break;
	case NETDEV_CHANGENAME:
		sroce_parent_link(dev);
		break;
	default:
		break;
	}
	sroce_dev_put(dev);
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_nb = {
	.notifier_call = sroce_netdev_event,
};

static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *dev = to_sdev(ibdev);

	mutex_lock(&sroce_dev_mutex);
	list_del_rcu(&dev->list);
	mutex_unlock(&sroce_dev_mutex);

	/* Every object is gone by now; a leftover is a bug worth a line. */
	if (!xa_empty(&dev->qps) || !xa_empty(&dev->mrs) ||
	    !xa_empty(&dev->ahs) || !xa_empty(&dev->srqs))
		pr_err("sroce: %s freed with objects still in its tables\n",
		       dev_name(&ibdev->dev));
	xa_destroy(&dev->qps);
	xa_destroy(&dev->mrs);
	xa_destroy(&dev->ahs);
	xa_destroy(&dev->srqs);
	sroce_mcast_dev_fini(dev);
	sroce_stats_dev_fini(dev);
	free_percpu(dev->counters);
	sroce_parent_fini(dev);
	netdev_put(dev->ndev, &dev->ndev_tracker);
	sroce_net_dev_fini(dev);
}

/* What libsroce checks before it claims a device (see the uapi header). */
static ssize_t sroce_abi_version_show(struct device *device,
				      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SROCE_UVERBS_ABI_VERSION);
}
static struct device_attribute dev_attr_sroce_abi = {
	.attr = { .name = SROCE_SYSFS_ABI_ATTR, .mode = 0444 },
	.show = sroce_abi_version_show,
};

static struct sroce_dev *sroce_dev_of(struct device *device)
{
	return rdma_device_to_drv_device(device, struct sroce_dev, ibdev);
}

/* The netdev below, under the attribute name rxe and siw use. */
static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sroce_dev *dev = sroce_dev_of(device);

	return sysfs_emit(buf, "%s\n", netdev_name(dev->ndev));
}
static DEVICE_ATTR_RO(parent);

/* Zero-copy transmit: 0 off (default), 1 where the netdev gathers, 2 always. */
static ssize_t zero_copy_show(struct device *device,
			      struct device_attribute *attr, char *buf)
{
	struct sroce_dev *dev = sroce_dev_of(device);

	return sysfs_emit(buf, "%u\n", READ_ONCE(dev->zero_copy));
}

static ssize_t zero_copy_store(struct device *device,
			       struct device_attribute *attr, const char *buf,
			       size_t count)
{
	struct sroce_dev *dev = sroce_dev_of(device);
	u8 mode;
	int err;

	err = kstrtou8(buf, 0, &mode);
	if (err)
		return err;
	if (mode > SROCE_ZC_ALWAYS)
		return -EINVAL;
	WRITE_ONCE(dev->zero_copy, mode);
	return count;
}
static DEVICE_ATTR_RW(zero_copy);

static struct attribute *sroce_dev_attrs[] = {
	&dev_attr_sroce_abi.attr,
	&dev_attr_parent.attr,
	&dev_attr_zero_copy.attr,
	NULL,
};

static const struct attribute_group sroce_dev_attr_group = {
	.attrs = sroce_dev_attrs,
};

static const struct ib_device_ops sroce_life_ops = {
	.dealloc_driver = sroce_dealloc_driver,
	.device_group = &sroce_dev_attr_group,
};

static void sroce_dev_setup(struct sroce_dev *dev, struct net_device *ndev)
{
	struct ib_device *ibdev = &dev->ibdev;

	dev->ndev = ndev;
	netdev_hold(ndev, &dev->ndev_tracker, GFP_KERNEL);
	/* opt-in until completions wait for the fragments (sroce_net.c) */
	dev->zero_copy = SROCE_ZC_OFF;
	INIT_LIST_HEAD(&dev->list);

	/*
	 * QPN 0 and 1 are special and index 0 of the key and AH spaces is
	 * kept invalid, so a zeroed field never names a live object.  AHs may
	 * be created and destroyed in atomic context, hence the IRQ lock.
	 */
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&dev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&dev->qpcs, XA_FLAGS_ALLOC1);
	sroce_mcast_dev_init(dev);
	sroce_raw_dev_init(dev);

	dev->port_state = sroce_port_state_for(ndev);
	dev->active_mtu = sroce_mtu_for(READ_ONCE(ndev->mtu));

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	snprintf(ibdev->node_desc, sizeof(ibdev->node_desc), "sroce %s",
		 netdev_name(ndev));
	sroce_dev_attr_init(dev);

	ib_set_device_ops(ibdev, &sroce_life_ops);
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	ib_set_device_ops(ibdev, &sroce_mr_ops);
	ib_set_device_ops(ibdev, &sroce_cq_ops);
	ib_set_device_ops(ibdev, &sroce_srq_ops);
	ib_set_device_ops(ibdev, &sroce_qp_ops);
	ib_set_device_ops(ibdev, &sroce_stats_ops);
	ib_set_device_ops(ibdev, &sroce_mcast_ops);
	ib_set_device_ops(ibdev, &sroce_raw_ops);
	sroce_import_setup(ibdev);

	/*
	 * ib_core leaves these two write() commands off unless the driver
	 * asks: the user SQ doorbell is a post_send with no WRs, and
	 * ibv_req_notify_cq needs the kernel to arm the CQ.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
}

/*
 * Any name ib_core registers as given is fine: libsroce recognises its
 * devices by driver id and a sysfs attribute, never by name.  Refused are
 * names ib_core would change or sysfs and the tools cannot show as they
 * are: a '/' (the driver core turns it into '!'), "." and "..", and blanks
 * or control characters.  ib_core itself refuses empty names and '%'
 * templates in `rdma link add` before we are called.
 */
static int sroce_check_name(const char *name)
{
	struct ib_device *other;
	const char *c;

	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")) {
		pr_err("sroce: \"%s\" is not a valid device name\n", name);
		return -EINVAL;
	}
	for (c = name; *c; c++) {
		if (*c == '/' || (u8)*c <= ' ' || *c == 0x7f) {
			pr_err("sroce: device name %s: no '/', blanks or control characters allowed\n",
			       name);
			return -EINVAL;
		}
	}
	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		pr_err("sroce: an RDMA device named %s already exists\n", name);
		return -EEXIST;
	}
	return 0;
}

static int sroce_check_netdev(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		pr_err("sroce: %s is not an Ethernet device\n",
		       netdev_name(ndev));
		return -EINVAL;
	}
	/* GIDs of a VLAN are reported on the device below it. */
	if (is_vlan_dev(ndev)) {
		pr_err("sroce: %s is a VLAN; use the device below it\n",
		       netdev_name(ndev));
		return -EPERM;
	}
	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED)
		return -ENODEV;
	return 0;
}

int sroce_dev_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *dev, *it;
	int err;

	err = sroce_check_netdev(ndev);
	if (err)
		return err;
	err = sroce_check_name(ibdev_name);
	if (err)
		return err;

	dev = ib_alloc_device(sroce_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->counters = alloc_percpu(struct sroce_counters);
	if (!dev->counters) {
		ib_dealloc_device(&dev->ibdev);
		return -ENOMEM;
	}
	sroce_dev_setup(dev, ndev);

	err = sroce_net_dev_init(dev);
	if (err)
		goto err_dealloc;
	err = sroce_parent_init(dev);
	if (err)
		goto err_dealloc;
	err = ib_device_set_netdev(&dev->ibdev, ndev, SROCE_PORT);
	if (err)
		goto err_dealloc;

	/* The duplicate check and the insertion must be one step. */
	mutex_lock(&sroce_dev_mutex);
	list_for_each_entry(it, &sroce_dev_list, list) {
		if (it->ndev == ndev) {
			mutex_unlock(&sroce_dev_mutex);
			pr_err("sroce: %s already has device %s\n",
			       netdev_name(ndev), dev_name(&it->ibdev.dev));
			err = -EEXIST;
			goto err_dealloc;
		}
	}
	list_add_tail_rcu(&dev->list, &sroce_dev_list);
	mutex_unlock(&sroce_dev_mutex);

	/*
	 * Once registered, `rdma link delete` or a netdev removal may free
	 * the device at any moment: keep its memory until we are done here.
	 */
	get_device(&dev->ibdev.dev);
	err = ib_register_device(&dev->ibdev, ibdev_name, NULL);
	if (err) {
		/* ib_core reports a name taken in the meantime as -ENFILE. */
		if (err == -ENFILE) {
			pr_err("sroce: an RDMA device named %s already exists\n",
			       ibdev_name);
			err = -EEXIST;
		}
		ib_dealloc_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
		return err;
	}

	/*
	 * Events that came while registering found no device: catch up now,
	 * with RTNL holding further events back.  A netdev moved to another
	 * namespace meanwhile took the device with it, as it would have
	 * after registration.
	 */
	rtnl_lock();
	if (ib_device_try_get(&dev->ibdev)) {
		if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED ||
		    !net_eq(dev_net(ndev), sroce_dev_net(dev))) {
			ib_unregister_device_queued(&dev->ibdev);
		} else {
			sroce_port_update(dev);
			sroce_parent_link(dev);
		}
		sroce_dev_put(dev);
	}
	rtnl_unlock();
	put_device(&dev->ibdev.dev);
	return 0;

err_dealloc:
	/* Not listed: dealloc_driver's list_del_rcu() sees a lone node. */
	ib_dealloc_device(&dev->ibdev);
	return err;
}

int sroce_dev_init(void)
{
	return register_netdevice_notifier(&sroce_netdev_nb);
}

void sroce_dev_exit(void)
{
	struct sroce_dev *dev, *prev = NULL;

	/*
	 * ib_unregister_device() disassociates open user contexts instead of
	 * waiting for them, and fences a queued unregistration that already
	 * started; dealloc_driver takes the device off the list.
	 */
	for (;;) {
		mutex_lock(&sroce_dev_mutex);
		dev = list_first_entry_or_null(&sroce_dev_list,
					       struct sroce_dev, list);
		if (dev)
			get_device(&dev->ibdev.dev);
		mutex_unlock(&sroce_dev_mutex);
		if (!dev)
			break;
		if (dev == prev) {
			put_device(&dev->ibdev.dev);
			pr_err("sroce: %s would not unregister\n",
			       dev_name(&dev->ibdev.dev));
			break;
		}
		ib_unregister_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
		prev = dev;
	}
	unregister_netdevice_notifier(&sroce_netdev_nb);
}
