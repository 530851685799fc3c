// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sroce_provider [-d DEV]: for every RDMA device libibverbs lists (or DEV
 * alone), open it and print "NAME FILE", FILE being the shared object whose
 * code the context's poll_cq points into: the provider libibverbs picked
 * for that device.  A device no provider could open prints "NAME -" and
 * the reason.  Exit 0 if every device printed was opened, 1 if not, 2 if
 * DEV is not listed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static int show(struct ibv_device *dev)
{
	const char *name = ibv_get_device_name(dev);
	struct ibv_context *ctx;
	Dl_info info;
	int ok;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		printf("%s - (open: %s)\n", name, strerror(errno));
		return 1;
	}
	ok = dladdr((void *)ctx->ops.poll_cq, &info) && info.dli_fname;
	printf("%s %s\n", name,
	       ok ? basename((char *)info.dli_fname) : "- (no symbol)");
	ibv_close_device(ctx);
	return !ok;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *want = NULL;
	int n, i, bad = 0, found = 0, o;

	while ((o = getopt(argc, argv, "d:")) != -1) {
		if (o != 'd') {
			fprintf(stderr, "usage: %s [-d DEV]\n", argv[0]);
			return 2;
		}
		want = optarg;
	}
	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (want && strcmp(want, ibv_get_device_name(list[i])))
			continue;
		found++;
		bad |= show(list[i]);
	}
	ibv_free_device_list(list);
	if (want && !found) {
		printf("%s not listed\n", want);
		return 2;
	}
	return bad;
}
