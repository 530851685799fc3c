// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * XRC through libibverbs on one device, in loopback: an initiator QP
 * (XRC_SEND) sends through one target QP (XRC_RECV) into whichever XRC
 * SRQ of the target's domain each work request names.  Every payload is
 * checked byte for byte and every completion for its SRQ, WQE and status.
 *
 * The refusals: an SRQ of another domain, one that never existed and one
 * destroyed are remote access errors; the PD an RDMA access is checked
 * against is the named SRQ's; a target QP takes no work requests, an
 * initiator no receives, and neither ATOMIC WRITE nor FLUSH is offered
 * on XRC; a domain in use cannot be closed.  A target QP opened by
 * number from a second handle outlives the handle that created it.
 *
 * -r: only an SRQ destroyed while messages stream into it (the counters
 * it moves depend on where the destroy lands).
 *
 * Usage: sroce_xrc [-d DEV] [-r] -g GID_INDEX
 * Prints one "ok"/"not ok" line per check; exit 0 only if all passed.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define PMTU		IBV_MTU_1024
#define BUF_SIZE	(1u << 20)
#define SLOT		8192u		/* receive buffer per WQE */
#define NRECV		16
#define WAIT_MS		60000

#include "tap.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static struct ibv_xrcd *xrcd, *xrcd2;
static struct ibv_cq *scq, *xcq;
static struct ibv_mr *smr, *rmr, *tmr, *tmr2;
static unsigned char *sbuf, *rbuf, *tbuf, *tbuf2;
static int gid_index = -1;
static union ibv_gid gid;

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
	} while (elapsed_ms(&t0) < WAIT_MS);
	return 0;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 31 + seed * 7 + (i >> 8));
}

static struct ibv_srq *create_xsrq(struct ibv_xrcd *x, struct ibv_pd *p)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = NRECV, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = p,
		.xrcd = x,
		.cq = xcq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t n = 0;

	return ibv_get_srq_num(srq, &n) ? 0 : n;
}

/* Receive slot @slot of rbuf, wr_id @id. */
static int post_srq_recv(struct ibv_srq *srq, unsigned int slot, uint64_t id)
{
	struct ibv_sge sge = {
		(uintptr_t)(rbuf + slot * SLOT), SLOT, rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

struct pair {
	struct ibv_qp *ini, *tgt;
};

static int to_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void set_av(struct ibv_qp_attr *a, uint32_t dqpn)
{
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = PMTU;
	a->dest_qp_num = dqpn;
	a->rq_psn = 0x2000;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = gid;
	a->ah_attr.grh.sgid_index = gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

/* The target to RTR and RTS, the initiator to RTS, each other's peer. */
static int connect_pair(struct pair *p)
{
	struct ibv_qp_attr a;
	int m = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN;

	if (to_init(p->tgt, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC) || to_init(p->ini, 0))
		return -1;
	memset(&a, 0, sizeof(a));
	set_av(&a, p->ini->qp_num);
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	if (ibv_modify_qp(p->tgt, &a, m | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 20;
	a.sq_psn = 0x2000;
	if (ibv_modify_qp(p->tgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_SQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	set_av(&a, p->tgt->qp_num);
	if (ibv_modify_qp(p->ini, &a, m))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x2000;
	a.timeout = 20;		/* ~4 s: no retries on a slow TCG host */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(p->ini, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct ibv_qp *create_ini(void)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = scq,
		.cap = { .max_send_wr = 64, .max_send_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *create_tgt(void)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static int pair_up(struct pair *p)
{
	p->ini = create_ini();
	p->tgt = create_tgt();
	return p->ini && p->tgt ? connect_pair(p) : -1;
}

static int pair_down(struct pair *p)
{
	int err = 0;

	if (p->ini)
		err |= ibv_destroy_qp(p->ini);
	if (p->tgt)
		err |= ibv_destroy_qp(p->tgt);
	p->ini = p->tgt = NULL;
	return err;
}

/* One WR on the initiator: @op of sbuf[0..len) naming XRC SRQ @srqn. */
static int xpost(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t srqn,
		 size_t len, uint64_t id, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)sbuf, (uint32_t)len, smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htobe32(0xfeed0000u | (uint32_t)id);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* The initiator's completion for @id has status @st. */
static int send_done(uint64_t id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	if (!poll_one(scq, &wc)) {
		printf("# no send completion for %#llx\n",
		       (unsigned long long)id);
		return 0;
	}
	if (wc.wr_id != id || wc.status != st)
		printf("# send wc: id %#llx status %s, wanted %#llx %s\n",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status), (unsigned long long)id,
		       ibv_wc_status_str(st));
	return wc.wr_id == id && wc.status == st;
}

/*
 * A SEND of @len bytes (@imm: with immediate) to @srq, which had receive
 * @slot (wr_id @rid) at its head: the target's completion comes to the
 * SRQ's CQ, for that WQE, from the target QP, with the bytes in place.
 */
static int send_to(struct pair *p, struct ibv_srq *srq, size_t len,
		   bool imm, unsigned int slot, uint64_t rid, uint64_t sid)
{
	struct ibv_wc wc;
	int ok;

	fill(sbuf, len, (unsigned int)sid);
	memset(rbuf + slot * SLOT, 0, SLOT);
	if (xpost(p->ini, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		  srq_num(srq), len, sid, 0, 0))
		return 0;
	if (!poll_one(xcq, &wc))
		return 0;
	ok = wc.status == IBV_WC_SUCCESS && wc.wr_id == rid &&
	     wc.opcode == IBV_WC_RECV && wc.byte_len == len &&
	     wc.qp_num == p->tgt->qp_num &&
	     !!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
	     (!imm || wc.imm_data == htobe32(0xfeed0000u | (uint32_t)sid)) &&
	     !memcmp(rbuf + slot * SLOT, sbuf, len);
	if (!ok)
		printf("# recv wc: id %#llx status %s len %u qp %u flags %#x\n",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status), wc.byte_len, wc.qp_num,
		       wc.wc_flags);
	return send_done(sid, IBV_WC_SUCCESS) && ok;
}

static void test_traffic(void)
{
	struct ibv_srq *s0, *s1;
	struct pair p = {};
	uint64_t *cnt = (uint64_t *)(tbuf + 4096);
	unsigned int i;

	s0 = create_xsrq(xrcd, pd);
	s1 = create_xsrq(xrcd, pd);
	CHECK(s0 && s1 && srq_num(s0) && srq_num(s1) &&
	      srq_num(s0) != srq_num(s1),
	      "two XRC SRQs in one domain, numbers %u and %u",
	      s0 ? srq_num(s0) : 0, s1 ? srq_num(s1) : 0);
	CHECK(!pair_up(&p), "XRC_SEND and XRC_RECV QPs %u -> %u connected",
	      p.ini ? p.ini->qp_num : 0, p.tgt ? p.tgt->qp_num : 0);
	if (!s0 || !s1 || !p.ini || !p.tgt)
		return;
	for (i = 0; i < 4; i++) {
		post_srq_recv(s0, i, 0x100 + i);
		post_srq_recv(s1, 4 + i, 0x200 + i);
	}
	CHECK(send_to(&p, s0, 3000, false, 0, 0x100, 1),
	      "3000-byte SEND (3 packets) lands in SRQ A's first WQE");
	CHECK(send_to(&p, s1, 100, true, 4, 0x200, 2),
	      "SEND with immediate lands in SRQ B's first WQE");
	CHECK(send_to(&p, s1, 8000, false, 5, 0x201, 3),
	      "8000-byte SEND lands in SRQ B's second WQE");
	CHECK(send_to(&p, s0, 1, false, 1, 0x101, 4),
	      "1-byte SEND lands in SRQ A's second WQE");
	CHECK(send_to(&p, s0, 0, false, 2, 0x102, 5),
	      "empty SEND completes SRQ A's third WQE");

	/* RDMA through the target, checked in the PD of the named SRQ */
	fill(sbuf, 6000, 9);
	memset(tbuf, 0, 8192);
	CHECK(!xpost(p.ini, IBV_WR_RDMA_WRITE, srq_num(s0), 6000, 6,
		     (uintptr_t)tbuf + 7, tmr->rkey) &&
	      send_done(6, IBV_WC_SUCCESS) && !memcmp(tbuf + 7, sbuf, 6000) &&
	      tbuf[6] == 0 && tbuf[6007] == 0,
	      "6000-byte RDMA WRITE through the target, byte for byte");
	fill(tbuf, 5000, 10);
	memset(sbuf, 0, 5000);
	CHECK(!xpost(p.ini, IBV_WR_RDMA_READ, srq_num(s1), 5000, 7,
		     (uintptr_t)tbuf, tmr->rkey) &&
	      send_done(7, IBV_WC_SUCCESS) && !memcmp(sbuf, tbuf, 5000),
	      "5000-byte RDMA READ through the target, byte for byte");
	*cnt = 40;
	CHECK(!xpost(p.ini, IBV_WR_ATOMIC_FETCH_AND_ADD, srq_num(s0), 8, 8,
		     (uintptr_t)cnt, tmr->rkey) &&
	      send_done(8, IBV_WC_SUCCESS) && *(uint64_t *)sbuf == 40 &&
	      *cnt == 45, "FETCH_ADD through the target: 40 + 5");
	CHECK(send_to(&p, s0, 64, false, 3, 0x103, 9),
	      "... and none of them took a receive WQE");

	CHECK(!pair_down(&p), "QPs destroyed");
	CHECK(!ibv_destroy_srq(s0) && !ibv_destroy_srq(s1), "SRQs destroyed");
}

/* The initiator's WR @id fails with @st, and its QP is then in error. */
static int fails_with(struct pair *p, enum ibv_wr_opcode op, uint32_t srqn,
		      uint64_t raddr, uint32_t rkey, uint64_t id,
		      enum ibv_wc_status st)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	struct timespec t0;

	fill(sbuf, 100, 1);
	if (xpost(p->ini, op, srqn, 100, id, raddr, rkey) ||
	    !send_done(id, st))
		return 0;
	/* the completion is posted just before the QP is moved to ERR */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (ibv_query_qp(p->ini, &a, IBV_QP_STATE, &ia))
			return 0;
		if (a.qp_state == IBV_QPS_ERR)
			return 1;
	} while (elapsed_ms(&t0) < WAIT_MS);
	return 0;
}

static void test_refusals(void)
{
	struct ibv_srq *s0, *s2, *sp2, *sdead;
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qx;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_wc wc;
	struct pair p = {};
	uint32_t dead;

	s0 = create_xsrq(xrcd, pd);
	s2 = create_xsrq(xrcd2, pd);
	sp2 = create_xsrq(xrcd, pd2);
	sdead = create_xsrq(xrcd, pd);
	CHECK(s0 && s2 && sp2 && sdead, "XRC SRQs: two PDs, two domains");
	if (!s0 || !s2 || !sp2 || !sdead)
		return;
	dead = srq_num(sdead);
	CHECK(!ibv_destroy_srq(sdead), "one of them destroyed (number %u)",
	      dead);
	post_srq_recv(s0, 0, 0x300);
	post_srq_recv(sp2, 1, 0x301);

	CHECK(!pair_up(&p) &&
	      fails_with(&p, IBV_WR_SEND, srq_num(s2), 0, 0, 20,
			 IBV_WC_REM_ACCESS_ERR),
	      "SEND naming another domain's SRQ: REM_ACCESS_ERR");
	pair_down(&p);
	CHECK(!pair_up(&p) &&
	      fails_with(&p, IBV_WR_SEND, 0xfffff0, 0, 0, 21,
			 IBV_WC_REM_ACCESS_ERR),
	      "SEND naming an SRQ that never was: REM_ACCESS_ERR");
	pair_down(&p);
	CHECK(!pair_up(&p) &&
	      fails_with(&p, IBV_WR_SEND, dead, 0, 0, 22,
			 IBV_WC_REM_ACCESS_ERR),
	      "SEND naming a destroyed SRQ: REM_ACCESS_ERR");
	pair_down(&p);
	CHECK(!pair_up(&p) &&
	      fails_with(&p, IBV_WR_RDMA_WRITE, srq_num(s0),
			 (uintptr_t)tbuf2, tmr2->rkey, 23,
			 IBV_WC_REM_ACCESS_ERR) && tbuf2[0] == 0,
	      "WRITE to another PD's region, naming an SRQ of ours: REM_ACCESS_ERR, nothing written");
	pair_down(&p);
	fill(sbuf, 100, 2);
	CHECK(!pair_up(&p) &&
	      !xpost(p.ini, IBV_WR_RDMA_WRITE, srq_num(sp2), 100, 24,
		     (uintptr_t)tbuf2, tmr2->rkey) &&
	      send_done(24, IBV_WC_SUCCESS) && !memcmp(tbuf2, sbuf, 100),
	      "... the same WRITE naming an SRQ of that PD lands");
	CHECK(!ibv_poll_cq(xcq, 1, &wc),
	      "no receive completed by any of these");
	pair_down(&p);
	CHECK(!pair_up(&p) &&
	      fails_with(&p, IBV_WR_SEND, 0x1000000, 0, 0, 25,
			 IBV_WC_LOC_QP_OP_ERR),
	      "an SRQ number wider than 24 bits: refused locally (LOC_QP_OP_ERR)");

	CHECK(ibv_post_recv(p.ini, &rwr, &rbad),
	      "an XRC_SEND QP takes no receive WR");
	CHECK(ibv_post_send(p.tgt, &swr, &sbad),
	      "an XRC_RECV QP takes no send WR");
	memset(&ax, 0, sizeof(ax));
	ax.qp_type = IBV_QPT_XRC_SEND;
	ax.send_cq = scq;
	ax.cap.max_send_wr = 4;
	ax.cap.max_send_sge = 1;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.pd = pd;
	ax.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &ax) && errno == EOPNOTSUPP,
	      "ATOMIC WRITE is not offered on XRC_SEND (EOPNOTSUPP)");
	ax.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	qx = ibv_create_qp_ex(ctx, &ax);
	CHECK(qx && !ibv_destroy_qp(qx),
	      "... SEND and READ are (extended XRC_SEND QP)");
	CHECK(ibv_close_xrcd(xrcd) != 0, "a domain in use cannot close");

	CHECK(!pair_down(&p), "QPs destroyed");
	CHECK(!ibv_destroy_srq(s0) && !ibv_destroy_srq(s2) &&
	      !ibv_destroy_srq(sp2), "SRQs destroyed");
}

/*
 * An SRQ destroyed while 8-packet messages stream into it: the destroy
 * returns at once, the messages before it land, those after it fail, and
 * nothing completes successfully after a failure.
 */
static void test_destroy_race(void)
{
	struct timespec t0;
	struct ibv_srq *s0;
	struct pair p = {};
	struct ibv_wc wc;
	int i, ok = 0, bad = 0, order = 1, recvs = 0, posted = 0;
	long ms;

	s0 = create_xsrq(xrcd, pd);
	CHECK(s0 && !pair_up(&p), "XRC SRQ and a connected pair");
	if (!s0 || !p.tgt)
		return;
	for (i = 0; i < NRECV; i++)
		post_srq_recv(s0, i, 0x500 + i);
	fill(sbuf, 8000, 11);
	for (i = 0; i < NRECV; i++)
		posted += !xpost(p.ini, IBV_WR_SEND, srq_num(s0), 8000,
				 0x600 + i, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(!ibv_destroy_srq(s0), "SRQ destroyed under %d SENDs", posted);
	ms = elapsed_ms(&t0);
	CHECK(ms < 5000, "... in %ld ms", ms);
	for (i = 0; i < posted; i++) {
		if (!poll_one(scq, &wc))
			break;
		if (wc.status == IBV_WC_SUCCESS) {
			ok++;
			order &= !bad;
		} else {
			bad++;
		}
	}
	CHECK(i == posted, "every SEND completed: %d landed, %d failed",
	      ok, bad);
	CHECK(order, "no SEND succeeded after one failed");
	while (ibv_poll_cq(xcq, 1, &wc) == 1)
		recvs += wc.status == IBV_WC_SUCCESS;
	CHECK(recvs >= ok && recvs <= NRECV,
	      "%d receives completed for %d acknowledged SENDs", recvs, ok);
	CHECK(!pair_down(&p), "QPs destroyed");
}

/* ibv_open_qp: a second handle on the target keeps it alive. */
static void test_open_qp(void)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
		.xrcd = xrcd,
	};
	struct ibv_qp *opened;
	struct ibv_srq *s0;
	struct pair p = {};

	s0 = create_xsrq(xrcd, pd);
	CHECK(s0 && !pair_up(&p), "XRC SRQ and a connected pair");
	if (!s0 || !p.tgt)
		return;
	oa.qp_num = p.tgt->qp_num;
	opened = ibv_open_qp(ctx, &oa);
	CHECK(opened && opened->qp_num == p.tgt->qp_num,
	      "ibv_open_qp finds target QP %u", p.tgt->qp_num);
	CHECK(!ibv_destroy_qp(p.tgt), "the creating handle destroyed");
	p.tgt = opened;
	post_srq_recv(s0, 0, 0x400);
	CHECK(opened && send_to(&p, s0, 2000, false, 0, 0x400, 30),
	      "... the target still delivers through the opened handle");
	oa.qp_num = 0xfffff1;
	CHECK(!ibv_open_qp(ctx, &oa), "no QP 0xfffff1 to open");
	CHECK(!pair_down(&p) && !ibv_destroy_srq(s0),
	      "opened handle, initiator and SRQ destroyed");
}

int main(int argc, char **argv)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	const char *devname = NULL;
	struct ibv_device **list;
	struct ibv_device_attr da;
	int i, o, acc, race = 0;

	while ((o = getopt(argc, argv, "d:g:r")) != -1) {
		if (o == 'd')
			devname = optarg;
		else if (o == 'g')
			gid_index = atoi(optarg);
		else if (o == 'r')
			race = 1;
	}
	if (gid_index < 0) {
		fprintf(stderr, "usage: %s [-d DEV] [-r] -g GID_INDEX\n",
			argv[0]);
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
	ibv_free_device_list(list);
	CHECK(ctx && !ibv_query_gid(ctx, 1, gid_index, &gid),
	      "device open, GID %d", gid_index);
	if (!ctx)
		return 1;
	CHECK(!ibv_query_device(ctx, &da) &&
	      (da.device_cap_flags & IBV_DEVICE_XRC),
	      "the device advertises XRC");
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	xrcd = ibv_open_xrcd(ctx, &xa);
	xrcd2 = ibv_open_xrcd(ctx, &xa);
	CHECK(pd && pd2 && xrcd && xrcd2, "two PDs, two XRC domains");
	scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	xcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	sbuf = aligned_alloc(4096, BUF_SIZE);
	rbuf = aligned_alloc(4096, BUF_SIZE);
	tbuf = aligned_alloc(4096, BUF_SIZE);
	tbuf2 = calloc(1, BUF_SIZE);
	if (!pd || !pd2 || !xrcd || !xrcd2 || !scq || !xcq || !sbuf ||
	    !rbuf || !tbuf || !tbuf2)
		return 1;
	acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	smr = ibv_reg_mr(pd, sbuf, BUF_SIZE, acc);
	rmr = ibv_reg_mr(pd, rbuf, BUF_SIZE, acc);
	tmr = ibv_reg_mr(pd, tbuf, BUF_SIZE, acc);
	tmr2 = ibv_reg_mr(pd2, tbuf2, BUF_SIZE, acc);
	CHECK(smr && rmr && tmr && tmr2, "MRs registered");
	if (!smr || !rmr || !tmr || !tmr2)
		return 1;

	if (race) {
		test_destroy_race();
	} else {
		test_traffic();
		test_refusals();
		test_open_qp();
	}

	CHECK(!ibv_close_xrcd(xrcd) && !ibv_close_xrcd(xrcd2),
	      "XRC domains closed");
	CHECK(!ibv_dereg_mr(smr) && !ibv_dereg_mr(rmr) && !ibv_dereg_mr(tmr) &&
	      !ibv_dereg_mr(tmr2) && !ibv_destroy_cq(scq) &&
	      !ibv_destroy_cq(xcq) && !ibv_dealloc_pd(pd) &&
	      !ibv_dealloc_pd(pd2) && !ibv_close_device(ctx),
	      "everything else released");
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
