// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * LD_PRELOAD form of the fake kernel, so that unmodified rdma-core tools
 * (ibv_devices, ibv_devinfo) can be pointed at libsroce without a device.
 * SROCE_PROVIDER names the plugin to load, SROCE_TEST_TMP where to build
 * the fake sysfs tree.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_kernel.h"

static __attribute__((constructor)) void fk_preload_init(void)
{
	const char *tmp = getenv("SROCE_TEST_TMP");
	const char *prov = getenv("SROCE_PROVIDER");
	static char sysfs[512];

	fk_reset();
	snprintf(sysfs, sizeof(sysfs), "%s/sysfs-preload.%d",
		 tmp ? tmp : "/tmp", (int)getpid());
	if (fk_make_sysfs(sysfs)) {
		fprintf(stderr, "fake kernel: cannot build %s\n", sysfs);
		return;
	}
	setenv("SYSFS_PATH", sysfs, 1);
	if (prov && !dlopen(prov, RTLD_NOW | RTLD_GLOBAL))
		fprintf(stderr, "fake kernel: %s\n", dlerror());
}
