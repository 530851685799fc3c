// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sroce_hog -d DEV [-n MAX_QPS] [-w WRS]: a process that asks for as much
 * kernel memory as verbs let it: one PD, one CQ, then RC QPs with WRS send
 * and receive WRs each until MAX_QPS exist or creation fails.  Prints
 *   qps N errno E (NAME) charged_kib K
 * where K is how much its own memory cgroup's memory.current grew while
 * the objects existed.  Exit 0 if MAX_QPS were created, 3 if creation
 * failed first, 1 on any other error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static long long cg_current(void)
{
	char line[512], path[600];
	long long v = -1;
	FILE *f;

	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -1;
	/* cgroup v2: one line "0::/path" */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			break;
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current",
		 line + 3);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	const char *want = NULL;
	int max = 16, wrs = 16384, o, n, i, err = 0;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_qp **qps;
	long long before, after;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	while ((o = getopt(argc, argv, "d:n:w:")) != -1) {
		switch (o) {
		case 'd': want = optarg; break;
		case 'n': max = atoi(optarg); break;
		case 'w': wrs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-n MAX_QPS] [-w WRS]\n",
				argv[0]);
			return 1;
		}
	}
	if (!want || max < 1 || wrs < 1)
		return 1;
	qps = calloc(max, sizeof(*qps));
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), want))
			ctx = ibv_open_device(list[i]);
	if (!qps || !ctx) {
		fprintf(stderr, "cannot open %s\n", want);
		return 1;
	}
	before = cg_current();
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (!cq) {
		perror("pd/cq");
		return 1;
	}
	for (i = 0; i < max; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = wrs, .max_recv_wr = wrs,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		qps[i] = ibv_create_qp(pd, &a);
		if (!qps[i]) {
			err = errno;
			break;
		}
	}
	after = cg_current();
	printf("qps %d errno %d (%s) charged_kib %lld\n", i, err,
	       err ? strerror(err) : "none",
	       before >= 0 && after >= 0 ? (after - before) / 1024 : -1);
	fflush(stdout);
	while (i--)
		ibv_destroy_qp(qps[i]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(qps);
	return err ? 3 : 0;
}
