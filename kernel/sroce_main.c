// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Placeholder until the control-plane role lands. */
#include <linux/module.h>
#include "sroce.h"

static int __init sroce_init(void)
{
	return sroce_net_init();
}

static void __exit sroce_exit(void)
{
	sroce_net_exit();
}

module_init(sroce_init);
module_exit(sroce_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("sroce: software RoCEv2 RDMA device");
