// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * On-demand paging through libibverbs on one device, in loopback: two RC
 * QPs, every buffer an ODP region over anonymous memory mapped just
 * before, so no page of it is there when the first packet comes.
 *
 * WRITE, READ, SEND and FETCH_ADD into and out of such pages, checked
 * byte for byte; pages the process drops (MADV_DONTNEED) read back as
 * zeros and fill again; ibv_advise_mr prefetches, and refuses a region
 * that is not ODP. The teardown side: pages dropped again and again
 * under a streaming WRITE, a region deregistered while a WRITE faults
 * into it (the dereg returns at once), and a range the process unmapped,
 * which fails the access instead of waiting for ever. Then an implicit
 * region (the whole address space): WRITE, READ and FETCH_ADD through its
 * key into untouched memory across a 16 MiB boundary, dropped pages,
 * an unmapped range.
 *
 * Usage: sroce_odp [-d DEV] -g GID_INDEX
 * Prints one "ok"/"not ok" line per check; exit 0 only if all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "rc_connect.h"

#define LEN		(4u << 20)
#define WAIT_MS		60000

#include "tap.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static int gid_index = -1;
static union ibv_gid gid;

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Statuses of completions polled, by wr_id (all below 64); -1: none. */
static int seen[64];

/* The completion of @id; its status, or -1 if none came. */
static int wait_wc(uint64_t id)
{
	struct timespec t0;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (seen[id % 64] >= 0)
			return seen[id % 64];
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			seen[wc.wr_id % 64] = wc.status;
	} while (elapsed_ms(&t0) < WAIT_MS);
	return -1;
}

static unsigned char *fresh(void)
{
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct ibv_mr *odp_mr(void *p)
{
	return ibv_reg_mr(pd, p, LEN, IBV_ACCESS_ON_DEMAND |
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 17 + seed * 5 + (i >> 12));
}

static int all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id,
		void *laddr, uint32_t len, uint32_t lkey, void *raddr,
		uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 9;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int pair_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	const struct rc_conn c = {
		.dgid = gid, .sgid_index = gid_index, .dqpn = dqpn,
		.rq_psn = 0x77, .sq_psn = 0x77, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		/* RNR NAKs stand for page faults: wait 30 us, for ever */
		.rd_atomic = 4, .min_rnr_timer = 3,
		.timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
	};

	return rc_connect(qp, &c);
}

/*
 * ib_core's page tables for an ODP range (16 bytes per 4 KiB page) are
 * nobody's memory cgroup's, so the device grants them at most 1/16 of
 * RAM: a region of twice what that covers is refused with ENOMEM, one
 * of 1 GiB is not. Both over address space reserved PROT_NONE.
 */
static void table_limit(void)
{
	unsigned long long kib = 0, len;
	char line[128];
	struct ibv_mr *mr;
	FILE *f = fopen("/proc/meminfo", "r");
	void *p;
	int err;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	len = kib * 1024 * 16 * 2;
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE, -1, 0);
	CHECK(kib && p != MAP_FAILED, "%llu GiB of address space reserved",
	      len >> 30);
	if (!kib || p == MAP_FAILED)
		return;
	mr = ibv_reg_mr(pd, p, len, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE);
	err = errno;
	CHECK(!mr && err == ENOMEM,
	      "an ODP region of all of it is refused: ENOMEM (%s)",
	      mr ? "registered" : strerror(err));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, p, 1ull << 30, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && !ibv_dereg_mr(mr), "one of 1 GiB is not");
	munmap(p, len);
}

/*
 * Implicit ODP: one region over the whole address space, used at the
 * process's own addresses.  Its pages come in 16 MiB children made on
 * demand, so a transfer across a 16 MiB boundary of untouched memory
 * needs two; an address the process does not map fails the access.
 */
#define BIG	(40u << 20)
#define CHILD	(16ul << 20)
static void implicit(struct ibv_qp_init_attr *ia, unsigned char *a,
		     struct ibv_mr *ma)
{
	struct ibv_device_attr_ex dx;
	unsigned char *big, *t;
	struct ibv_mr *mi;
	int st;

	CHECK(!ibv_query_device_ex(ctx, NULL, &dx) &&
	      (dx.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT),
	      "the device offers implicit ODP");
	mi = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	qa = ibv_create_qp(pd, ia);
	qb = ibv_create_qp(pd, ia);
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mi && qa && qb && big != MAP_FAILED &&
	      !pair_connect(qa, qb->qp_num) && !pair_connect(qb, qa->qp_num),
	      "an implicit region, a fresh pair, 40 MiB not yet touched");
	if (!mi || !qa || !qb || big == MAP_FAILED)
		return;
	/* 4 MiB whose middle is a 16 MiB boundary */
	t = (unsigned char *)((((uintptr_t)big + 3 * CHILD / 8 + CHILD - 1) &
			       ~(CHILD - 1)) - CHILD / 8);
	fill(a, LEN, 6);
	CHECK(!post(qa, IBV_WR_RDMA_WRITE, 10, a, LEN, ma->lkey, t, mi->rkey) &&
	      wait_wc(10) == IBV_WC_SUCCESS && !memcmp(a, t, LEN),
	      "4 MiB WRITE across a 16 MiB boundary through the implicit key");
	memset(a, 0, LEN);
	CHECK(!post(qa, IBV_WR_RDMA_READ, 11, a, LEN, ma->lkey, t, mi->rkey) &&
	      wait_wc(11) == IBV_WC_SUCCESS && !memcmp(a, t, LEN),
	      "... READ back the same way");
	CHECK(!madvise(t, LEN, MADV_DONTNEED), "its pages dropped");
	CHECK(!post(qa, IBV_WR_RDMA_READ, 12, a, LEN, ma->lkey, t, mi->rkey) &&
	      wait_wc(12) == IBV_WC_SUCCESS && all_zero(a, LEN),
	      "... READ: zeros, as the process sees them");
	fill(t, LEN, 7);
	CHECK(!post(qa, IBV_WR_RDMA_WRITE, 13, t, LEN, mi->lkey,
		    big, mi->rkey) &&
	      wait_wc(13) == IBV_WC_SUCCESS && !memcmp(big, t, LEN),
	      "a WRITE from implicit to implicit memory (lkey and rkey)");
	*(uint64_t *)(big + BIG - 8) = 1;
	CHECK(!post(qa, IBV_WR_ATOMIC_FETCH_AND_ADD, 14, a, 8, ma->lkey,
		    big + BIG - 8, mi->rkey) &&
	      wait_wc(14) == IBV_WC_SUCCESS && *(uint64_t *)a == 1 &&
	      *(uint64_t *)(big + BIG - 8) == 10,
	      "FETCH_ADD through the implicit key: 1 + 9");
	CHECK(!munmap(big, CHILD / 4), "4 MiB of it unmapped");
	st = post(qa, IBV_WR_RDMA_WRITE, 15, a, 4096, ma->lkey, big,
		  mi->rkey) ? -2 : wait_wc(15);
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "a WRITE there fails (REM_ACCESS_ERR), it does not hang: %d", st);
	CHECK(!ibv_dereg_mr(mi), "the implicit region deregistered");
	munmap(big + CHILD / 4, BIG - CHILD / 4);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_recv_wr rwr = { .wr_id = 50 }, *rbad;
	struct ibv_device_attr_ex dx;
	const char *devname = NULL;
	struct ibv_device **list;
	unsigned char *a, *b, *c;
	struct ibv_mr *ma, *mb, *pinned;
	struct ibv_sge sge;
	struct timespec t0;
	int i, o, st;
	long ms;

	while ((o = getopt(argc, argv, "d:g:")) != -1) {
		if (o == 'd')
			devname = optarg;
		else if (o == 'g')
			gid_index = atoi(optarg);
	}
	if (gid_index < 0) {
		fprintf(stderr, "usage: %s [-d DEV] -g GID_INDEX\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(seen, 0xff, sizeof(seen));
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!devname || !strcmp(devname, ibv_get_device_name(list[i])))
			break;
	if (!list || !list[i])
		return 1;
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid))
		return 1;
	CHECK(!ibv_query_device_ex(ctx, NULL, &dx) &&
	      (dx.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	      (dx.odp_caps.per_transport_caps.rc_odp_caps &
	       (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC)) == (IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC),
	      "the device offers explicit ODP for every RC operation");
	pd = ibv_alloc_pd(ctx);
	if (pd)
		table_limit();
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = cq;
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	CHECK(qa && qb && !pair_connect(qa, qb->qp_num) &&
	      !pair_connect(qb, qa->qp_num),
	      "an RC pair in loopback");
	a = fresh();
	b = fresh();
	c = fresh();
	ma = a ? odp_mr(a) : NULL;
	mb = b ? odp_mr(b) : NULL;
	CHECK(ma && mb, "two 4 MiB ODP regions over untouched memory");
	if (!qa || !qb || !ma || !mb || !c)
		return 1;

	fill(a, LEN, 1);
	CHECK(!post(qa, IBV_WR_RDMA_WRITE, 1, a, LEN, ma->lkey, b, mb->rkey) &&
	      wait_wc(1) == IBV_WC_SUCCESS && !memcmp(a, b, LEN),
	      "4 MiB WRITE into pages not yet there: byte for byte");
	CHECK(!madvise(b, LEN, MADV_DONTNEED), "the target's pages dropped");
	memset(a, 0xee, LEN);
	CHECK(!post(qa, IBV_WR_RDMA_READ, 2, a, LEN, ma->lkey, b, mb->rkey) &&
	      wait_wc(2) == IBV_WC_SUCCESS && all_zero(a, LEN),
	      "... READ back: zeros, as the process sees them");
	fill(a, LEN, 2);
	CHECK(!post(qa, IBV_WR_RDMA_WRITE, 3, a, LEN, ma->lkey, b, mb->rkey) &&
	      wait_wc(3) == IBV_WC_SUCCESS && !memcmp(a, b, LEN),
	      "... and WRITE fills them again");
	CHECK(!madvise(a, LEN, MADV_DONTNEED) && !madvise(b, LEN, MADV_DONTNEED),
	      "both sides' pages dropped");
	sge = (struct ibv_sge){ (uintptr_t)b + 8192, 100000, mb->lkey };
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK(!ibv_post_recv(qb, &rwr, &rbad), "a receive into them");
	memcpy(c, "odp!", 4);
	fill(a + 4096, 100000, 3);
	CHECK(!post(qa, IBV_WR_SEND, 4, a + 4096, 100000, ma->lkey, NULL, 0) &&
	      wait_wc(4) == IBV_WC_SUCCESS && wait_wc(50) == IBV_WC_SUCCESS &&
	      !memcmp(a + 4096, b + 8192, 100000),
	      "100000-byte SEND between dropped pages: byte for byte");
	CHECK(!madvise(b, LEN, MADV_DONTNEED), "the target's pages dropped");
	memset(a, 0xff, 8);
	CHECK(!post(qa, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, a, 8, ma->lkey,
		    b + 65536, mb->rkey) &&
	      wait_wc(5) == IBV_WC_SUCCESS && *(uint64_t *)a == 0 &&
	      *(uint64_t *)(b + 65536) == 9,
	      "FETCH_ADD on a dropped page: 0 + 9");

	sge = (struct ibv_sge){ (uintptr_t)b, LEN, mb->lkey };
	CHECK(!madvise(b, LEN, MADV_DONTNEED) &&
	      !ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
	      "ibv_advise_mr prefetches a region's pages");
	pinned = ibv_reg_mr(pd, c, 4096, IBV_ACCESS_LOCAL_WRITE);
	sge = (struct ibv_sge){ (uintptr_t)c, 4096, pinned ? pinned->lkey : 0 };
	st = pinned ? ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) : 0;
	CHECK(pinned && st == EINVAL, "... and refuses one that is not ODP (%d)",
	      st);

	/* pages taken away while a WRITE streams into them */
	fill(a, LEN, 4);
	st = post(qa, IBV_WR_RDMA_WRITE, 7, a, LEN, ma->lkey, b, mb->rkey);
	for (i = 0; !st && i < 20; i++)
		st = madvise(b, LEN, MADV_DONTNEED);
	CHECK(!st && wait_wc(7) == IBV_WC_SUCCESS,
	      "a WRITE whose target is dropped 20 times meanwhile completes");
	CHECK(!post(qa, IBV_WR_RDMA_WRITE, 8, a, LEN, ma->lkey, b, mb->rkey) &&
	      wait_wc(8) == IBV_WC_SUCCESS && !memcmp(a, b, LEN),
	      "... and the next one lands byte for byte");

	/* the last: they fail the QPs */
	CHECK(!madvise(b, LEN, MADV_DONTNEED), "the target's pages dropped");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = post(qa, IBV_WR_RDMA_WRITE, 9, a, LEN, ma->lkey, b, mb->rkey) ?:
	     ibv_dereg_mr(mb);
	ms = elapsed_ms(&t0);
	CHECK(!st && ms < 5000,
	      "the target region deregistered under a WRITE faulting into it, in %ld ms",
	      ms);
	st = wait_wc(9);
	CHECK(st == IBV_WC_SUCCESS || st == IBV_WC_REM_ACCESS_ERR,
	      "... the WRITE ends (%s)", st < 0 ? "no completion" :
	      ibv_wc_status_str(st));
	mb = odp_mr(b);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	CHECK(mb && qa && qb && !pair_connect(qa, qb->qp_num) &&
	      !pair_connect(qb, qa->qp_num),
	      "the same memory registered again, a fresh pair");
	if (!mb || !qa || !qb)
		return 1;
	CHECK(!munmap(b + LEN / 2, LEN / 2), "half the target unmapped");
	st = post(qa, IBV_WR_RDMA_WRITE, 6, a, LEN, ma->lkey, b, mb->rkey) ?
	     -2 : wait_wc(6);
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "a WRITE into it fails (REM_ACCESS_ERR), it does not hang: %d",
	      st);

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	implicit(&ia, a, ma);

	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
