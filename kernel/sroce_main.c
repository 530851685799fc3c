// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Module entry points.  Bring-up order is socket, device layer, then the
 * `rdma link` type, so a newlink never runs before the things it needs
 * exist; tear-down is the exact reverse.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_dev_newlink,
};

static int __init sroce_init(void)
{
	int err;

	err = sroce_net_init();
	if (err)
		return err;

	err = sroce_dev_init();
	if (err) {
		sroce_net_exit();
		return err;
	}

	rdma_link_register(&sroce_link_ops);
	return 0;
}

static void __exit sroce_exit(void)
{
	/*
	 * Unregistering the link type waits for any newlink in flight, so
	 * after this no device can appear and sroce_dev_exit() sees them all.
	 */
	rdma_link_unregister(&sroce_link_ops);
	sroce_dev_exit();
	sroce_net_exit();
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_ALIAS_RDMA_LINK("sroce");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("sroce: software RoCEv2 RDMA device");
