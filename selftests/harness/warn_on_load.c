// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Harness self-test only: loading this module must make the guest kernel
 * warn (and, with panic_on_warn=1, panic), so the harness can prove that it
 * notices kernel splats. Never load it outside a test VM.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init warn_on_load_init(void)
{
	WARN(1, "warn_on_load: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit warn_on_load_exit(void)
{
}

module_init(warn_on_load_init);
module_exit(warn_on_load_exit);
MODULE_DESCRIPTION("Harness self-test: warns when loaded");
MODULE_LICENSE("Dual BSD/GPL");
