// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Revoke a key in the middle of an inbound RDMA WRITE (loopback RC pair):
 *
 *   sroce_revoke -d DEV -g GID_INDEX -m mw|rereg|dereg [-s MIB]
 *
 * QP a writes MIB (64) MiB of 0xab into b's zeroed buffer through
 *   mw     a type 2 window bound on b; b posts LOCAL_INV of its rkey,
 *   rereg  b's MR itself; b rereg's it without remote write,
 *   dereg  b's MR itself; b deregisters it,
 * as soon as the first byte has landed. Once that call (or the LOCAL_INV's
 * completion) returns, not one more byte may land: the program counts the
 * written bytes then and again after a's WRITE completed (it must fail with
 * a remote access error) and prints one line
 *
 *   ok|not ok MODE revoked after N of M bytes in T ms; K bytes landed
 *   after; write status S
 *
 * Exit 0 only if K is 0, the revoke came mid-message (N < M), the WRITE
 * failed with IBV_WC_REM_ACCESS_ERR and the revoke took under a second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "rc_connect.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index = -1;

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long t0 = now_ms();
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc)))
		if (now_ms() - t0 > ms)
			return 0;
	return n;
}

static int to_rts(struct ibv_qp *qp, uint32_t dqpn)
{
	const struct rc_conn c = {
		.dgid = gid, .sgid_index = gid_index, .dqpn = dqpn,
		.rq_psn = 1, .sq_psn = 1, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE, .rd_atomic = 1,
		.min_rnr_timer = 1, .timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
	};

	return rc_connect(qp, &c);
}

static size_t landed(const unsigned char *p, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += p[i] == 0xab;
	return n;
}

/* A send WR on @qp, waited for on @cq; 0 if it completed successfully. */
static int post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		return -1;
	if (!poll_one(cq, &wc, 10000))
		return -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

static struct ibv_qp *new_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *mode = NULL;
	struct ibv_device **list;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
	struct ibv_mr *amr, *bmr;
	struct ibv_mw *mw = NULL;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	unsigned char *src, *dst;
	size_t len = 64u << 20, before, after;
	long t0, revoke_ms;
	uint32_t rkey;
	int i, o, rc = 0, ok;

	while ((o = getopt(argc, argv, "d:g:m:s:")) != -1) {
		switch (o) {
		case 'd': devname = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 's': len = (size_t)atoi(optarg) << 20; break;
		default: return 2;
		}
	}
	if (gid_index < 0 || !mode || !len ||
	    (strcmp(mode, "mw") && strcmp(mode, "rereg") && strcmp(mode, "dereg"))) {
		fprintf(stderr, "usage: %s -d DEV -g GID -m mw|rereg|dereg [-s MIB]\n",
			argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!devname || !strcmp(devname, ibv_get_device_name(list[i])))
			break;
	if (!list || !list[i]) {
		printf("not ok - no device\n");
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid))
		return 1;
	pd = ibv_alloc_pd(ctx);
	src = aligned_alloc(4096, len);
	dst = aligned_alloc(4096, len);
	acq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	bcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !src || !dst || !acq || !bcq)
		return 1;
	memset(src, 0xab, len);
	memset(dst, 0, len);
	amr = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	bmr = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	a = new_qp(acq);
	b = new_qp(bcq);
	if (!amr || !bmr || !a || !b || to_rts(a, b->qp_num) ||
	    to_rts(b, a->qp_num)) {
		printf("not ok - setup\n");
		return 1;
	}
	rkey = bmr->rkey;
	if (!strcmp(mode, "mw")) {
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!mw)
			return 1;
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_BIND_MW;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info.mr = bmr;
		wr.bind_mw.bind_info.addr = (uintptr_t)dst;
		wr.bind_mw.bind_info.length = len;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (post_wait(b, bcq, &wr)) {
			printf("not ok - bind type 2 window\n");
			return 1;
		}
		rkey = wr.bind_mw.rkey;
	}

	sge.addr = (uintptr_t)src;
	sge.length = len;
	sge.lkey = amr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(a, &wr, &bad))
		return 1;

	t0 = now_ms();
	while (!*(volatile unsigned char *)dst)
		if (now_ms() - t0 > 20000) {
			printf("not ok - nothing landed in 20 s\n");
			return 1;
		}

	t0 = now_ms();
	if (!strcmp(mode, "mw")) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = rkey;
		rc = post_wait(b, bcq, &wr);
	} else if (!strcmp(mode, "rereg")) {
		rc = ibv_rereg_mr(bmr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE);
	} else {
		rc = ibv_dereg_mr(bmr);
	}
	revoke_ms = now_ms() - t0;
	before = landed(dst, len);
	if (rc) {
		printf("not ok %s - the revoke itself failed\n", mode);
		return 1;
	}

	if (!poll_one(acq, &wc, 60000)) {
		printf("not ok %s - no completion for the WRITE\n", mode);
		return 1;
	}
	after = landed(dst, len);
	ok = after == before && before < len && revoke_ms < 1000 &&
	     wc.status == IBV_WC_REM_ACCESS_ERR;
	printf("%s %s revoked after %zu of %zu bytes in %ld ms; %zu bytes landed after; write status %s\n",
	       ok ? "ok" : "not ok", mode, before, len, revoke_ms,
	       after - before, ibv_wc_status_str(wc.status));
	return ok ? 0 : 1;
}
