// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Verbs data-path checks through libibverbs on one RDMA device: two RC QPs
 * talk to each other (loopback), every payload is verified byte for byte and
 * every error completion must carry the status the IB spec asks for.
 *
 * SQD: the drain finishes what was begun, raises SQ_DRAINED and starts
 * nothing more until RTS.
 *
 * Usage: sroce_verbs [-d DEV] [-s] -g GID_INDEX   (-s: the SQD checks alone;
 * they cause RNR NAKs, which the other checks' counters do not expect)
 * Prints one "ok"/"not ok" line per check; exit 0 only if all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "rc_connect.h"

#define PMTU		IBV_MTU_1024
#define PMTU_BYTES	1024u
#define BUF_SIZE	(9u << 20)	/* room for the 8 MiB case plus offsets */
#define QKEY		0x11223344u
#define WAIT_MS		120000		/* TCG on a loaded host is slow */

#include "tap.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gid_index = -1;
static union ibv_gid my_gid;

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Busy-poll: the provider's poll is a ring read, no syscall to block in. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (elapsed_ms(&t0) > ms)
			return 0;
	}
}

struct pair {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;	/* a is the requester in every test */
};

static int modify_rc(struct ibv_qp *qp, uint32_t dqpn, uint8_t rnr_retry)
{
	const struct rc_conn c = {
		.dgid = my_gid, .sgid_index = gid_index, .dqpn = dqpn,
		.rq_psn = 0x1000, .sq_psn = 0x1000, .mtu = PMTU,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4, .min_rnr_timer = 1,
		/* ~4 s: a loaded TCG host must not cause retries */
		.timeout = 20, .retry_cnt = 7, .rnr_retry = rnr_retry,
	};

	return rc_connect(qp, &c);
}

static struct ibv_qp *create_qp(struct ibv_cq *scq, struct ibv_cq *rcq,
				enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &ia);
}

/* rnr_retry applies to a's sends (7 = retry forever). */
static int pair_up(struct pair *p, uint8_t rnr_retry)
{
	memset(p, 0, sizeof(*p));
	p->scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	p->rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!p->scq || !p->rcq)
		return -1;
	p->a = create_qp(p->scq, p->rcq, IBV_QPT_RC, NULL);
	p->b = create_qp(p->scq, p->rcq, IBV_QPT_RC, NULL);
	if (!p->a || !p->b)
		return -1;
	if (modify_rc(p->a, p->b->qp_num, rnr_retry) ||
	    modify_rc(p->b, p->a->qp_num, 7))
		return -1;
	return 0;
}

static int pair_down(struct pair *p)
{
	int err = 0;

	if (p->a)
		err |= ibv_destroy_qp(p->a);
	if (p->b)
		err |= ibv_destroy_qp(p->b);
	if (p->scq)
		err |= ibv_destroy_cq(p->scq);
	if (p->rcq)
		err |= ibv_destroy_cq(p->rcq);
	return err;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf,
		     uint32_t len, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
		     struct ibv_mr *mr, void *buf, uint32_t len, uint64_t id,
		     uint64_t raddr, uint32_t rkey, int flags)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr ? mr->lkey : 0 };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED | flags,
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op,
		       struct ibv_mr *mr, uint64_t *result, uint64_t id,
		       uint64_t *target, uint32_t rkey, uint64_t cmp_add,
		       uint64_t swap)
{
	struct ibv_sge sge = { (uintptr_t)result, 8, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp, &wr, &bad);
}

/* Waits for one completion and checks its id, status and opcode. */
static int expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st,
		     int opcode, struct ibv_wc *out, const char *what)
{
	struct ibv_wc wc;
	int n, ok;

	memset(&wc, 0, sizeof(wc));
	n = poll_one(cq, &wc, WAIT_MS);
	ok = n == 1 && wc.wr_id == id && wc.status == st &&
	     (opcode < 0 || st != IBV_WC_SUCCESS || (int)wc.opcode == opcode);
	report(ok, "%s: wc n=%d id=%" PRIu64 "/%" PRIu64 " status=%s/%s op=%d/%d",
	       what, n, wc.wr_id, id, ibv_wc_status_str(wc.status),
	       ibv_wc_status_str(st), n ? (int)wc.opcode : -1, opcode);
	if (out)
		*out = wc;
	return ok ? 0 : -1;
}

static uint32_t seed = 12345;

static void fill(unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = seed >> 16;
	}
}

static unsigned char *abuf, *bbuf, *cbuf;
static struct ibv_mr *amr, *bmr, *cmr;

static void test_sizes(void)
{
	static const uint32_t sizes[] = {
		0, 1, PMTU_BYTES - 1, PMTU_BYTES, PMTU_BYTES + 1,
		5 * PMTU_BYTES + 17, 1u << 20, 8u << 20,
	};
	struct pair p;
	struct ibv_wc wc;
	size_t i;

	int err = pair_up(&p, 7);

	CHECK(!err, "rc pair to RTS (qpn %u <-> %u)",
	      p.a ? p.a->qp_num : 0, p.b ? p.b->qp_num : 0);
	if (err)
		return;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		uint64_t id = 100 + i * 4;

		/* SEND into a posted receive */
		fill(abuf, len);
		memset(bbuf, 0xee, len + 16);
		CHECK(!post_recv(p.b, bmr, bbuf, BUF_SIZE, id), "post_recv %u", len);
		CHECK(!post_send(p.a, IBV_WR_SEND, amr, abuf, len, id + 1, 0, 0, 0),
		      "post SEND %u", len);
		expect_wc(p.scq, id + 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND");
		if (!expect_wc(p.rcq, id, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "RECV"))
			CHECK(wc.byte_len == len && wc.qp_num == p.b->qp_num,
			      "RECV %u: byte_len %u qp %u", len, wc.byte_len, wc.qp_num);
		CHECK(!memcmp(abuf, bbuf, len) && bbuf[len] == 0xee,
		      "SEND %u bytes: data identical, nothing beyond", len);

		/* RDMA WRITE at an unaligned offset */
		fill(abuf, len);
		memset(bbuf, 0xee, len + 16);
		CHECK(!post_send(p.a, IBV_WR_RDMA_WRITE, amr, abuf, len, id + 2,
				 (uintptr_t)bbuf + 3, bmr->rkey, 0), "post WRITE %u", len);
		expect_wc(p.scq, id + 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "WRITE");
		CHECK(bbuf[0] == 0xee && bbuf[1] == 0xee && bbuf[2] == 0xee &&
		      !memcmp(abuf, bbuf + 3, len) && bbuf[len + 3] == 0xee,
		      "WRITE %u bytes: data identical, neighbours untouched", len);

		/* RDMA READ back what was written */
		memset(cbuf, 0x55, len + 16);
		CHECK(!post_send(p.a, IBV_WR_RDMA_READ, cmr, cbuf, len, id + 3,
				 (uintptr_t)bbuf + 3, bmr->rkey, 0), "post READ %u", len);
		expect_wc(p.scq, id + 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL, "READ");
		CHECK(!memcmp(abuf, cbuf, len) && cbuf[len] == 0x55,
		      "READ %u bytes: data identical, nothing beyond", len);
	}

	/* inline SEND: the payload is copied at post time */
	memcpy(abuf, "inline payload!", 16);
	CHECK(!post_recv(p.b, bmr, bbuf, 64, 900), "post_recv inline");
	CHECK(!post_send(p.a, IBV_WR_SEND, amr, abuf, 16, 901, 0, 0,
			 IBV_SEND_INLINE), "post inline SEND");
	memset(abuf, 0, 16);
	expect_wc(p.scq, 901, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "inline SEND");
	expect_wc(p.rcq, 900, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "inline RECV");
	CHECK(!memcmp(bbuf, "inline payload!", 16), "inline data");

	/* atomics on an 8-byte aligned target */
	{
		uint64_t *target = (uint64_t *)(bbuf + 4096);
		uint64_t *res = (uint64_t *)(abuf + 64);

		*target = 0x100000000ull + 10;
		*res = 0;
		CHECK(!post_atomic(p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, amr, res, 910,
				   target, bmr->rkey, 5, 0), "post FETCH_ADD");
		expect_wc(p.scq, 910, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL, "FETCH_ADD");
		CHECK(*res == 0x100000000ull + 10 && *target == 0x100000000ull + 15,
		      "FETCH_ADD: old %#" PRIx64 " new %#" PRIx64, *res, *target);

		CHECK(!post_atomic(p.a, IBV_WR_ATOMIC_CMP_AND_SWP, amr, res, 911,
				   target, bmr->rkey, 3, 77), "post CMP_SWAP (mismatch)");
		expect_wc(p.scq, 911, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, NULL, "CMP_SWAP");
		CHECK(*res == 0x100000000ull + 15 && *target == 0x100000000ull + 15,
		      "CMP_SWAP mismatch leaves target: old %#" PRIx64 " now %#" PRIx64,
		      *res, *target);

		CHECK(!post_atomic(p.a, IBV_WR_ATOMIC_CMP_AND_SWP, amr, res, 912,
				   target, bmr->rkey, 0x100000000ull + 15, 77),
		      "post CMP_SWAP (match)");
		expect_wc(p.scq, 912, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, NULL, "CMP_SWAP");
		CHECK(*res == 0x100000000ull + 15 && *target == 77,
		      "CMP_SWAP match swaps: old %#" PRIx64 " now %#" PRIx64, *res, *target);
	}
	CHECK(!pair_down(&p), "destroy rc pair");
}

static void check_err_state(struct ibv_qp *qp, const char *what)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	int err;

	memset(&qa, 0, sizeof(qa));
	err = ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi);
	CHECK(!err && qa.qp_state == IBV_QPS_ERR,
	      "%s: requester QP in ERR (state %d)", what, qa.qp_state);
}

/*
 * One bad RDMA WRITE followed by @more SENDs in the same post: the WRITE must
 * complete with REM_ACCESS_ERR, every SEND behind it with WR_FLUSH_ERR, and
 * a WR posted afterwards flushes too.
 */
static void access_error(const char *what, uint64_t raddr, uint32_t rkey,
			 uint32_t len, int more)
{
	struct ibv_send_wr wr[8], *bad;
	struct ibv_sge sge[8];
	struct pair p;
	int i;

	if (pair_up(&p, 7)) {
		report(0, "%s: pair to RTS", what);
		return;
	}
	for (i = 0; i < more; i++)
		post_recv(p.b, bmr, bbuf + 65536 * (i + 1), 65536, 300 + i);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i <= more; i++) {
		sge[i].addr = (uintptr_t)abuf;
		sge[i].length = i ? 100 : len;
		sge[i].lkey = amr->lkey;
		wr[i].wr_id = 200 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = i ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < more ? &wr[i + 1] : NULL;
	}
	wr[0].wr.rdma.remote_addr = raddr;
	wr[0].wr.rdma.rkey = rkey;
	CHECK(!ibv_post_send(p.a, wr, &bad), "%s: post WRITE + %d SENDs", what, more);
	expect_wc(p.scq, 200, IBV_WC_REM_ACCESS_ERR, -1, NULL, what);
	for (i = 1; i <= more; i++)
		expect_wc(p.scq, 200 + i, IBV_WC_WR_FLUSH_ERR, -1, NULL,
			  "outstanding SEND flushed");
	check_err_state(p.a, what);
	CHECK(!post_send(p.a, IBV_WR_SEND, amr, abuf, 10, 250, 0, 0, 0),
	      "%s: post on ERR QP accepted", what);
	expect_wc(p.scq, 250, IBV_WC_WR_FLUSH_ERR, -1, NULL, "WR posted in ERR flushed");
	CHECK(!pair_down(&p), "%s: destroy pair", what);
}

static void test_errors(void)
{
	unsigned char *dbuf = calloc(1, 65536);
	struct ibv_mr *ro;
	struct ibv_wc wc;
	struct pair p;
	int n;

	access_error("bad rkey", (uintptr_t)bbuf, bmr->rkey ^ 0x5a, 100, 4);
	access_error("out of bounds", (uintptr_t)bbuf + BUF_SIZE - 50, bmr->rkey,
		     100, 2);
	/* an MR the peer may read but not write */
	ro = ibv_reg_mr(pd, dbuf, 65536, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	CHECK(ro, "reg read-only remote MR");
	if (ro) {
		access_error("write without REMOTE_WRITE", (uintptr_t)dbuf,
			     ro->rkey, 100, 1);
		CHECK(!ibv_dereg_mr(ro), "dereg read-only MR");
	}
	free(dbuf);

	/* RNR: no receive posted and rnr_retry 0 */
	if (pair_up(&p, 0)) {
		report(0, "rnr: pair to RTS (rnr_retry 0)");
		return;
	}
	CHECK(!post_send(p.a, IBV_WR_SEND, amr, abuf, 100, 400, 0, 0, 0),
	      "rnr: post SEND with no receive posted");
	expect_wc(p.scq, 400, IBV_WC_RNR_RETRY_EXC_ERR, -1, NULL, "rnr");
	check_err_state(p.a, "rnr");
	n = poll_one(p.rcq, &wc, 200);
	CHECK(n == 0, "rnr: responder produced no receive completion (%d)", n);
	CHECK(!pair_down(&p), "rnr: destroy pair");
}

/*
 * SRQ resize (`ibv_modify_srq` with IBV_SRQ_MAX_WR) on @q2's SRQ: WQEs
 * posted before a resize are consumed after it, in order, into the right
 * buffers; the ring really grew (50 WQEs in a 16-entry SRQ) and shrank; a
 * size below what is posted is refused and changes nothing.
 */
#define RS_N	50
static void srq_resize_check(struct ibv_srq *srq, struct ibv_cq *cq,
			     struct ibv_qp *q1, struct ibv_qp *q2,
			     struct ibv_ah *ah)
{
	struct ibv_srq_attr sa = { .max_wr = 64 };
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr swr, *sbad;
	struct ibv_sge rsge, ssge;
	int i, k, n, ok = 1, posted = 0;
	struct ibv_wc wc;

	fill(abuf, RS_N + 200);
	memset(bbuf, 0xee, RS_N * 256);
	for (i = 0; i < RS_N; i++) {
		if (i == 10)
			CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR),
			      "srq resize: 16 -> 64 entries with 10 WQEs posted");
		rsge = (struct ibv_sge){ (uintptr_t)bbuf + i * 256, 256, bmr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = 100 + i, .sg_list = &rsge,
					    .num_sge = 1 };
		posted += !ibv_post_srq_recv(srq, &rwr, &rbad);
	}
	CHECK(posted == RS_N, "srq resize: %d of %d WQEs posted (the old ring had 16)",
	      posted, RS_N);
	memset(&sa, 0, sizeof(sa));
	CHECK(!ibv_query_srq(srq, &sa) && sa.max_wr >= 64,
	      "srq resize: query max_wr %u", sa.max_wr);
	sa.max_wr = 32;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == EINVAL,
	      "srq resize: 32 entries with %d posted refused", RS_N);
	for (i = 0; i < RS_N; i++) {
		ssge = (struct ibv_sge){ (uintptr_t)abuf + i, 100 + i, amr->lkey };
		swr = (struct ibv_send_wr){ .wr_id = 200 + i, .sg_list = &ssge,
					    .num_sge = 1, .opcode = IBV_WR_SEND,
					    .send_flags = IBV_SEND_SIGNALED };
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = q2->qp_num;
		swr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(q1, &swr, &sbad)) {
			ok = 0;
			break;
		}
		for (k = 0; k < 2; k++) {
			n = poll_one(cq, &wc, WAIT_MS);
			if (n != 1 || wc.status != IBV_WC_SUCCESS ||
			    (wc.wr_id != 200u + i &&
			     (wc.wr_id != 100u + i || wc.byte_len != 140u + i ||
			      memcmp(bbuf + i * 256 + 40, abuf + i, 100 + i))))
				ok = 0;
		}
	}
	CHECK(ok, "srq resize: %d datagrams, each in its WQE, in order, byte for byte",
	      RS_N);
	sa.srq_limit = 30;
	CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "srq: limit 30 armed");
	sa.max_wr = 8;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == EINVAL,
	      "srq resize: 8 entries below the armed limit 30 refused");
	sa.srq_limit = 2;
	CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) &&
	      !ibv_query_srq(srq, &sa) && sa.max_wr == 8 && sa.srq_limit == 2,
	      "srq resize: empty SRQ shrunk to %u with limit %u in one call",
	      sa.max_wr, sa.srq_limit);
	rsge = (struct ibv_sge){ (uintptr_t)bbuf, 256, bmr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	for (posted = 0; posted < 9; posted++)
		if (ibv_post_srq_recv(srq, &rwr, &rbad))
			break;
	CHECK(posted == 8, "srq resize: the shrunk SRQ takes 8 WQEs, not 9 (%d)",
	      posted);
}

static void test_ud_srq(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 2 } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct ibv_qp_attr at;
	struct ibv_ah_attr aa;
	struct ibv_qp *q1, *q2;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int i, n;

	CHECK(cq && srq, "ud: cq and srq");
	if (!cq || !srq)
		return;
	q1 = create_qp(cq, cq, IBV_QPT_UD, NULL);
	q2 = create_qp(cq, cq, IBV_QPT_UD, srq);
	CHECK(q1 && q2, "ud: create qps");
	if (!q1 || !q2)
		return;
	for (i = 0; i < 2; i++) {
		struct ibv_qp *q = i ? q2 : q1;
		int err;

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_INIT;
		at.port_num = 1;
		at.qkey = QKEY;
		err = ibv_modify_qp(q, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY);
		at.qp_state = IBV_QPS_RTR;
		err = err ?: ibv_modify_qp(q, &at, IBV_QP_STATE);
		at.qp_state = IBV_QPS_RTS;
		at.sq_psn = 7;
		err = err ?: ibv_modify_qp(q, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
		CHECK(!err, "ud: qp %u to RTS", q->qp_num);
	}
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.grh.dgid = my_gid;
	aa.grh.sgid_index = gid_index;
	aa.grh.hop_limit = 64;
	aa.port_num = 1;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "ud: create_ah");
	if (!ah)
		return;
	{
		struct ibv_sge sge = { (uintptr_t)bbuf, 2048, bmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 31, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "ud: post srq recv");
	}
	fill(abuf, 1000);
	{
		struct ibv_sge sge = { (uintptr_t)abuf, 1000, amr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 32, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr *bad;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = q2->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		CHECK(!ibv_post_send(q1, &wr, &bad), "ud: post send");
	}
	/* send and receive share the CQ: order between them is not defined */
	for (i = 0; i < 2; i++) {
		memset(&wc, 0, sizeof(wc));
		n = poll_one(cq, &wc, WAIT_MS);
		CHECK(n == 1 && wc.status == IBV_WC_SUCCESS &&
		      (wc.wr_id == 32 ||
		       (wc.wr_id == 31 && wc.byte_len == 1040 &&
			wc.src_qp == q1->qp_num && (wc.wc_flags & IBV_WC_GRH))),
		      "ud: wc id %" PRIu64 " status %s len %u src %u flags %#x",
		      wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len,
		      wc.src_qp, wc.wc_flags);
	}
	CHECK(!memcmp(abuf, bbuf + 40, 1000), "ud: payload after the 40-byte GRH");
	{
		struct ibv_srq_attr sa = { .srq_limit = 4 };

		CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "srq: arm limit");
		memset(&sa, 0, sizeof(sa));
		n = ibv_query_srq(srq, &sa);
		CHECK(!n && sa.srq_limit == 4 && sa.max_wr >= 16,
		      "srq: query limit %u max_wr %u", sa.srq_limit, sa.max_wr);
	}
	n = ibv_resize_cq(cq, 200);
	CHECK(!n && cq->cqe >= 200, "cq: resize to %d", cq->cqe);
	srq_resize_check(srq, cq, q1, q2, ah);
	CHECK(!ibv_destroy_qp(q1) && !ibv_destroy_qp(q2), "ud: destroy qps");
	CHECK(!ibv_destroy_ah(ah), "ud: destroy ah");
	CHECK(!ibv_destroy_srq(srq), "srq: destroy");
	CHECK(!ibv_destroy_cq(cq), "cq: destroy");
}

/* Waits for async event @type on @qp; other events are printed and skipped. */
static int wait_async(enum ibv_event_type type, struct ibv_qp *qp, long ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct timespec t0;
	long left;
	int match;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((left = ms - elapsed_ms(&t0)) > 0) {
		if (poll(&pfd, 1, left) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			return -1;
		match = ev.event_type == type && ev.element.qp == qp;
		if (!match)
			printf("# async event %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (match)
			return 0;
	}
	return -1;
}

static int to_sqd(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
}

static int qp_state(struct ibv_qp *qp, int *draining)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;

	memset(&qa, 0, sizeof(qa));
	*draining = -1;
	if (ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi))
		return -1;
	*draining = qa.sq_draining;
	return qa.qp_state;
}

/* Completions already queued, all successful and in order from @next. */
static int take_done(struct ibv_cq *cq, uint64_t next)
{
	struct ibv_wc wc;
	uint64_t n = next;

	while (ibv_poll_cq(cq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != n) {
			printf("# wc id %" PRIu64 " status %s, expected id %" PRIu64 "\n",
			       wc.wr_id, ibv_wc_status_str(wc.status), n);
			return -1;
		}
		n++;
	}
	return (int)(n - next);
}

/*
 * SENDs held by RNR (no receive posted yet) when the QP goes RTS -> SQD:
 * the drain waits for what has begun, and SQ_DRAINED comes once receives
 * let it finish.  A SEND posted in SQD stays unstarted until RTS; every
 * byte lands in order.
 */
static void test_sqd(void)
{
	const uint32_t n = 8, chunk = 128u << 10;
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	struct ibv_wc wc;
	struct pair p;
	int k, late, draining, st;
	uint32_t i;

	CHECK(!pair_up(&p, 7), "sqd: pair up");
	fill(abuf, (n + 1) * chunk);
	memset(bbuf, 0, (n + 1) * chunk);
	for (i = 0; i < n; i++)
		if (post_send(p.a, IBV_WR_SEND, amr, abuf + i * chunk, chunk,
			      i, 0, 0, 0))
			break;
	CHECK(i == n, "sqd: %u SENDs of %u KiB posted, no receive yet", i,
	      chunk >> 10);
	CHECK(!to_sqd(p.a), "sqd: RTS -> SQD with the notify bit");
	st = qp_state(p.a, &draining);
	CHECK(st == IBV_QPS_SQD && draining == 1,
	      "sqd: SQD (%d), draining (%d) while the first SEND waits", st,
	      draining);
	for (i = 0; i <= n; i++)
		if (post_recv(p.b, bmr, bbuf + i * chunk, chunk, i))
			break;
	CHECK(i == n + 1, "sqd: %u receives posted", i);
	CHECK(!wait_async(IBV_EVENT_SQ_DRAINED, p.a, WAIT_MS),
	      "sqd: IBV_EVENT_SQ_DRAINED");
	st = qp_state(p.a, &draining);
	CHECK(st == IBV_QPS_SQD && !draining, "sqd: SQD (%d), drained (%d)",
	      st, draining);
	k = take_done(p.scq, 0);
	CHECK(k >= 1 && k <= (int)n,
	      "sqd: %d of %u SENDs had begun and completed at the drain", k, n);
	if (k < 0)
		k = 0;
	CHECK(!post_send(p.a, IBV_WR_SEND, amr, abuf + n * chunk, chunk, n, 0,
			 0, 0), "sqd: a SEND posted in SQD");
	/*
	 * Absence cannot be waited for: a loopback SEND that started would
	 * complete in well under 500 ms, so none may arrive in that time.
	 */
	late = poll_one(p.scq, &wc, 500);
	CHECK(!late, "sqd: nothing more completes while drained (%d; wr_id %" PRIu64 ")",
	      late, late ? wc.wr_id : 0);
	k += late;
	CHECK(!ibv_modify_qp(p.a, &rts, IBV_QP_STATE), "sqd: SQD -> RTS");
	for (i = k; i <= n; i++)
		if (expect_wc(p.scq, i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL,
			      "sqd: the rest"))
			break;
	for (i = 0; i <= n; i++)
		if (expect_wc(p.rcq, i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL,
			      "sqd: received"))
			break;
	CHECK(!memcmp(abuf, bbuf, (n + 1) * chunk), "sqd: all %u SENDs landed",
	      n + 1);
	/* Nothing outstanding: the drain ends as soon as it begins. */
	CHECK(!to_sqd(p.a) && !wait_async(IBV_EVENT_SQ_DRAINED, p.a, WAIT_MS),
	      "sqd: an idle QP drains at once");
	CHECK(!ibv_modify_qp(p.a, &rts, IBV_QP_STATE) &&
	      !post_send(p.a, IBV_WR_RDMA_WRITE, amr, abuf, 64, 99,
			 (uintptr_t)bbuf, bmr->rkey, 0) &&
	      !expect_wc(p.scq, 99, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL,
			 "sqd: back in RTS"), "sqd: RTS again, a WRITE completes");
	CHECK(!pair_down(&p), "sqd: pair down");
}

static void test_objects(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint32_t old;
	void *c;
	int err;

	cq = ibv_create_cq(ctx, 0x20000, NULL, NULL, 0);
	CHECK(!cq, "cq with 128Ki entries refused");
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(cq, "small cq");
	if (!cq)
		return;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 33;
	qp = ibv_create_qp(pd, &ia);
	CHECK(!qp, "qp with 33 send sges refused");
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_send_sge = 1;
	ia.cap.max_inline_data = 1000;
	qp = ibv_create_qp(pd, &ia);
	CHECK(!qp, "qp with 1000 bytes inline refused");
	if (qp)
		ibv_destroy_qp(qp);
	CHECK(!ibv_destroy_cq(cq), "destroy small cq");

	c = calloc(1, 16384);
	mr = ibv_reg_mr(pd, c, 8192, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr, "reg mr for rereg");
	if (!mr)
		return;
	old = mr->rkey;
	err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, pd,
			   (char *)c + 4096, 8192, 0);
	CHECK(!err && mr->rkey != old && (mr->rkey >> 8) == (old >> 8),
	      "rereg translation: rkey %#x -> %#x (same index, new key)", old, mr->rkey);
	CHECK(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, pd, NULL, 0,
			    IBV_ACCESS_LOCAL_WRITE), "rereg access");
	CHECK(!ibv_dereg_mr(mr), "dereg rereg'd mr");
	free(c);
}

/*
 * ibv_import_device/pd/mr: a second context on a dup of the fd reaches
 * the first one's PD and MR by handle, and its own QP writes through
 * them; handles that name nothing, or an object of another type, are
 * refused.  The owner's objects outlive the importer (the checks after
 * this one use them).
 */
static void test_import(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_parent_domain_init_attr pattr = {};
	struct ibv_cq *icq = NULL, *cq = NULL;
	struct ibv_qp *iqp = NULL, *qp = NULL;
	struct ibv_context *ic;
	struct ibv_pd *ipd, *par;
	struct ibv_mr *imr;
	const uint32_t len = 65536;
	int fd;

	fd = dup(ctx->cmd_fd);
	ic = fd >= 0 ? ibv_import_device(fd) : NULL;
	CHECK(ic && !strcmp(ibv_get_device_name(ic->device),
			    ibv_get_device_name(ctx->device)),
	      "ibv_import_device on a dup of the fd: same device");
	if (!ic) {
		if (fd >= 0)
			close(fd);
		return;
	}
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq, "owner's cq");
	if (!cq)
		goto out;
	errno = 0;
	ipd = ibv_import_pd(ic, pd->handle + 1000);
	CHECK(!ipd && errno == ENOENT,
	      "import_pd: a handle naming nothing is refused (%s)",
	      strerror(errno));
	errno = 0;
	ipd = ibv_import_pd(ic, cq->handle);
	CHECK(!ipd && errno == EINVAL, "import_pd: a CQ's handle is refused (%s)",
	      strerror(errno));
	ipd = ibv_import_pd(ic, pd->handle);
	CHECK(ipd && ipd->handle == pd->handle, "import_pd of the owner's PD (%s)",
	      ipd ? "ok" : strerror(errno));
	if (!ipd)
		goto out;
	errno = 0;
	imr = ibv_import_mr(ipd, cq->handle);
	CHECK(!imr && errno == EINVAL,
	      "import_mr: a CQ's handle is refused (%s)", strerror(errno));
	imr = ibv_import_mr(ipd, bmr->handle);
	CHECK(imr && imr->lkey == bmr->lkey && imr->rkey == bmr->rkey &&
	      imr->length == bmr->length,
	      "import_mr: the owner's keys and length");
	if (!imr)
		goto out_pd;

	/* The importer's QP writes its imported MR into the owner's. */
	icq = ibv_create_cq(ic, 16, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = icq;
	iqp = icq ? ibv_create_qp(ipd, &ia) : NULL;
	ia.send_cq = ia.recv_cq = cq;
	qp = ibv_create_qp(pd, &ia);
	CHECK(iqp && qp && !modify_rc(iqp, qp->qp_num, 7) &&
	      !modify_rc(qp, iqp->qp_num, 7),
	      "RC QP on the imported context, connected to one of the owner's");
	if (iqp && qp) {
		int err;

		fill(bbuf, len);
		memset(abuf, 0, len);
		err = post_send(iqp, IBV_WR_RDMA_WRITE, imr, bbuf, len, 0x1d,
				(uintptr_t)abuf, amr->rkey, 0);
		CHECK(!err, "post a write on the imported context's QP (%d)", err);
		if (!err &&
		    !expect_wc(icq, 0x1d, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			       NULL, "write through the imported PD and MR"))
			CHECK(!memcmp(abuf, bbuf, len),
			      "%u bytes arrived intact", len);
	}
	if (qp)
		ibv_destroy_qp(qp);
	if (iqp)
		ibv_destroy_qp(iqp);
	if (icq)
		ibv_destroy_cq(icq);
	ibv_unimport_mr(imr);
	/* a parent domain over the imported PD outlives its unimport */
	pattr.pd = ipd;
	par = ibv_alloc_parent_domain(ic, &pattr);
	CHECK(par, "parent domain over the imported PD");
	ibv_unimport_pd(ipd);
	if (par)
		CHECK(!ibv_dealloc_pd(par), "... freed after the PD's unimport");
	goto out;
out_pd:
	ibv_unimport_pd(ipd);
out:
	if (cq)
		ibv_destroy_cq(cq);
	CHECK(!ibv_close_device(ic), "close the imported context");
}

/*
 * QP access flags: the FLUSH bits (uverbs 1 << 8 and 1 << 9, which
 * rdma-core 56's tests set on every RC QP) are taken; a bit no kernel
 * defines is refused and the QP stays in RESET.
 */
static void test_qp_access(void)
{
	const unsigned int base = IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_attr qa;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int draining;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qp = cq ? create_qp(cq, cq, IBV_QPT_RC, NULL) : NULL;
	CHECK(qp, "access: RC QP");
	if (!qp)
		goto out;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qp_access_flags = base | 1u << 15;
	CHECK(ibv_modify_qp(qp, &qa, mask) == EINVAL,
	      "access: an undefined bit (1 << 15) is refused");
	CHECK(qp_state(qp, &draining) == IBV_QPS_RESET,
	      "access: ... the QP stays in RESET");
	qa.qp_access_flags = base | 1u << 8 | 1u << 9;
	CHECK(!ibv_modify_qp(qp, &qa, mask),
	      "access: FLUSH_GLOBAL and FLUSH_PERSISTENT are taken");
	CHECK(qp_state(qp, &draining) == IBV_QPS_INIT,
	      "access: ... the QP is in INIT");
	CHECK(!ibv_destroy_qp(qp), "access: destroy QP");
out:
	if (cq)
		ibv_destroy_cq(cq);
}

/* An RC pair whose requester is an ibv_qp_ex allowed @ops. */
static int pair_up_ex(struct pair *p, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};

	memset(p, 0, sizeof(*p));
	p->scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	p->rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!p->scq || !p->rcq)
		return -1;
	ia.pd = pd;
	ia.send_cq = p->scq;
	ia.recv_cq = p->rcq;
	p->a = ibv_create_qp_ex(ctx, &ia);
	p->b = create_qp(p->scq, p->rcq, IBV_QPT_RC, NULL);
	if (!p->a || !p->b)
		return -1;
	if (modify_rc(p->a, p->b->qp_num, 7) ||
	    modify_rc(p->b, p->a->qp_num, 7))
		return -1;
	return 0;
}

static int wr_atomic_write(struct ibv_qp *qp, uint64_t id, void *target,
			   uint32_t rkey, const void *val)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(qx);
	qx->wr_id = id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, rkey, (uintptr_t)target, val);
	return ibv_wr_complete(qx);
}

/*
 * ATOMIC WRITE (rxe has it from 6.2 only): 8 bytes land at once, in the
 * order they were given, and nothing beside them; a run of them against
 * one word ends with the last; an unaligned target is refused at post; a
 * region the peer may not write gives REM_ACCESS_ERR with nothing written.
 */
static void test_atomic_write(void)
{
	unsigned char *t = bbuf + 4096, *dbuf = calloc(1, 4096);
	unsigned char before[24], val[8];
	struct ibv_mr *ro = NULL;
	struct ibv_wc wc;
	struct pair p;
	int i, ok = 1;

	if (pair_up_ex(&p, IBV_QP_EX_WITH_ATOMIC_WRITE)) {
		report(0, "atomic write: pair to RTS");
		goto out;
	}
	fill(t - 8, 24);
	memcpy(before, t - 8, 24);
	memcpy(val, "sroce-AW", 8);
	CHECK(!wr_atomic_write(p.a, 600, t, bmr->rkey, val),
	      "atomic write: posted");
	if (!expect_wc(p.scq, 600, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, &wc,
		       "atomic write"))
		CHECK(wc.byte_len == 8, "atomic write: byte_len %u == 8",
		      wc.byte_len);
	CHECK(!memcmp(t, val, 8) && !memcmp(t - 8, before, 8) &&
	      !memcmp(t + 8, before + 16, 8),
	      "atomic write: the 8 bytes in order, neighbours untouched");
	/* posted together: more than max_rd_atomic (4) wait their turn */
	for (i = 0; i < 32 && ok; i++) {
		val[0] = (unsigned char)i;
		ok = !wr_atomic_write(p.a, 700 + i, t, bmr->rkey, val);
	}
	for (i = 0; i < 32 && ok; i++)
		ok = !expect_wc(p.scq, 700 + i, IBV_WC_SUCCESS,
				IBV_WC_ATOMIC_WRITE, NULL, "atomic write run");
	CHECK(ok && t[0] == 31 && !memcmp(t + 1, "roce-AW", 7),
	      "atomic write: 32 posted at once, in order, the last one stays");
	CHECK(wr_atomic_write(p.a, 800, t + 4, bmr->rkey, val) == EINVAL,
	      "atomic write: unaligned target refused at post");
	CHECK(poll_one(p.scq, &wc, 200) == 0, "atomic write: ... no completion");
	CHECK(!pair_down(&p), "atomic write: destroy pair");

	ro = ibv_reg_mr(pd, dbuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	if (!ro || pair_up_ex(&p, IBV_QP_EX_WITH_ATOMIC_WRITE)) {
		report(0, "atomic write: read-only MR and pair");
		goto out;
	}
	CHECK(!wr_atomic_write(p.a, 900, dbuf + 64, ro->rkey, val),
	      "atomic write to a read-only region: posted");
	expect_wc(p.scq, 900, IBV_WC_REM_ACCESS_ERR, -1, NULL,
		  "atomic write to a read-only region");
	CHECK(!memcmp(dbuf + 64, (unsigned char[8]){ 0 }, 8),
	      "atomic write to a read-only region: nothing written");
	check_err_state(p.a, "atomic write to a read-only region");
	CHECK(!pair_down(&p), "atomic write: destroy pair");
out:
	if (ro)
		ibv_dereg_mr(ro);
	free(dbuf);
}

int main(int argc, char **argv)
{
	const char *devname = NULL;
	struct ibv_device **list;
	int i, o, access, sqd = 0;

	while ((o = getopt(argc, argv, "d:g:s")) != -1) {
		switch (o) {
		case 'd':
			devname = optarg;
			break;
		case 's':
			sqd = 1;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-s] -g GID_INDEX\n", argv[0]);
			return 2;
		}
	}
	if (gid_index < 0) {
		fprintf(stderr, "usage: %s [-d DEV] [-s] -g GID_INDEX\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!devname || !strcmp(devname, ibv_get_device_name(list[i])))
			break;
	if (!list || !list[i]) {
		printf("not ok - device %s not found\n", devname ?: "(any)");
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	CHECK(ctx, "open %s", ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
	if (!ctx)
		return 1;
	CHECK(!ibv_query_gid(ctx, 1, gid_index, &my_gid), "query gid %d", gid_index);
	pd = ibv_alloc_pd(ctx);
	abuf = aligned_alloc(4096, BUF_SIZE);
	bbuf = aligned_alloc(4096, BUF_SIZE);
	cbuf = aligned_alloc(4096, BUF_SIZE);
	CHECK(pd && abuf && bbuf && cbuf, "pd and buffers");
	if (!pd || !abuf || !bbuf || !cbuf)
		return 1;
	access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	amr = ibv_reg_mr(pd, abuf, BUF_SIZE, access);
	bmr = ibv_reg_mr(pd, bbuf, BUF_SIZE, access);
	cmr = ibv_reg_mr(pd, cbuf, BUF_SIZE, access);
	CHECK(amr && bmr && cmr, "reg 3 x %u byte MRs", BUF_SIZE);
	if (!amr || !bmr || !cmr)
		return 1;

	if (sqd) {
		test_sqd();
	} else {
		test_objects();
		test_import();
		test_qp_access();
		test_sizes();
		test_errors();
		test_atomic_write();
		test_ud_srq();
	}

	CHECK(!ibv_dereg_mr(amr) && !ibv_dereg_mr(bmr) && !ibv_dereg_mr(cmr),
	      "dereg MRs");
	CHECK(!ibv_dealloc_pd(pd), "dealloc pd");
	CHECK(!ibv_close_device(ctx), "close device");
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
