// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sroce_hostile -d DEV -g GID_INDEX: a process that lies to the kernel
 * through everything it shares with it.  It writes its own rings behind
 * libsroce's back (producer indices far ahead or backwards, WQEs with
 * out-of-range sge counts, inline lengths, opcodes, keys and addresses, a
 * CQ consumer index ahead of the producer), rings the doorbell with a raw
 * uverbs write, scribbles over its send ring from a second thread while
 * the first posts, frees objects still in use, resizes an SRQ with a bad
 * command or ring, and kills a child in the middle of a transfer.  Each case expects an error back (an error
 * completion, a QP in ERR, a refused call), never a kernel splat; one TAP
 * line per case.  Every QP is a loopback RC QP connected to itself.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sroce.h"	/* libsroce's own layout of its QP and CQ */
#include "rc_connect.h"

#define BUF_SIZE	(1 << 20)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static char *buf;
static union ibv_gid gid;
static int gid_index;
static int t_num, t_fail;

static void report(int ok, const char *what)
{
	t_num++;
	if (!ok)
		t_fail++;
	printf("%sok %d - %s\n", ok ? "" : "not ", t_num, what);
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ibv_qp *self_qp(struct ibv_cq *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct rc_conn rc = {
		.dgid = gid, .sgid_index = gid_index, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 1, .min_rnr_timer = 12,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	if (!qp)
		return NULL;
	rc.dqpn = qp->qp_num;
	if (rc_connect(qp, &rc))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

/* The SQ doorbell as libsroce rings it: post_send with no WRs. */
static int raw_doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c;
	struct ib_uverbs_post_send_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : -errno;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

/*
 * Poll @c for up to @secs; returns the first completion's status, -1 if
 * none came, -2 if poll_cq itself failed (a CQ the kernel gave up on).
 */
static int first_status(struct ibv_cq *c, double secs, struct ibv_wc *out)
{
	double end = now() + secs;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(c, 1, &wc);
		if (n < 0)
			return -2;
		if (n == 1) {
			if (out)
				*out = wc;
			return wc.status;
		}
		usleep(1000);
	} while (now() < end);
	return -1;
}

static bool wait_err(struct ibv_qp *qp, double secs)
{
	double end = now() + secs;

	do {
		if (qp_state(qp) == IBV_QPS_ERR)
			return true;
		usleep(2000);
	} while (now() < end);
	return false;
}

static void drain(struct ibv_cq *c)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(c, 16, wc) > 0)
		;
}

/* A signalled RDMA WRITE into the second half of our own buffer. */
static struct sroce_send_wqe write_wqe(void)
{
	struct sroce_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = 0x77;
	w.opcode = IB_UVERBS_WR_RDMA_WRITE;
	w.send_flags = SROCE_SEND_SIGNALED;
	w.num_sge = 1;
	w.wr.rdma.remote_addr = (uintptr_t)buf + BUF_SIZE / 2;
	w.wr.rdma.rkey = mr->rkey;
	return w;
}

/* A WQE with one SGE: the header, then the SGE in the same slot. */
static void raw_post_sge(struct ibv_qp *qp, struct sroce_send_wqe w,
			 uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct sroce_ring *sq = &to_sqp(qp)->sq;
	char *slot = sroce_ring_slot(sq, sq->idx);
	struct sroce_sge sge = { .addr = addr, .length = len, .lkey = lkey };

	memcpy(slot, &w, SROCE_SEND_WQE_HDR);
	memcpy(slot + SROCE_SEND_WQE_HDR, &sge, sizeof(sge));
	sq->idx++;
	sroce_store_release(&sq->ctl->prod, sq->idx);
}

static int post_write(struct ibv_qp *qp, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)buf + BUF_SIZE / 2,
			     .rkey = mr->rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* Run one case on a fresh QP (and CQ); @fn reports. */
static void with_qp(const char *name, bool (*fn)(struct ibv_qp *, struct ibv_cq *))
{
	struct ibv_cq *c = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = c ? self_qp(c) : NULL;
	bool ok;

	if (!qp) {
		report(0, name);
		fprintf(stderr, "%s: cannot set up a loopback QP: %s\n", name,
			strerror(errno));
		if (c)
			ibv_destroy_cq(c);
		return;
	}
	ok = fn(qp, c);
	drain(c);
	/* Teardown must work whatever the process did to its rings. */
	ok &= !ibv_destroy_qp(qp);
	ok &= !ibv_destroy_cq(c);
	report(ok, name);
}

static bool good_write(struct ibv_qp *qp, struct ibv_cq *c)
{
	return !post_write(qp, 4096) && first_status(c, 10, NULL) == IBV_WC_SUCCESS;
}

static bool sq_prod_ahead(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_ring *sq = &to_sqp(qp)->sq;

	(void)c;
	sroce_store_release(&sq->ctl->prod, sq->idx + sq->num + 7);
	raw_doorbell(qp);
	return wait_err(qp, 10);
}

static bool sq_prod_back(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_ring *sq = &to_sqp(qp)->sq;

	if (!good_write(qp, c) || !good_write(qp, c))
		return false;
	sroce_store_release(&sq->ctl->prod, sq->idx - 2);
	raw_doorbell(qp);
	return wait_err(qp, 10);
}

/* A malformed WQE completes in error and takes the QP to ERR. */
static bool bad_wqe(struct ibv_qp *qp, struct ibv_cq *c, struct sroce_send_wqe w,
		    uint64_t addr, uint32_t len, uint32_t lkey)
{
	int st;

	raw_post_sge(qp, w, addr, len, lkey);
	raw_doorbell(qp);
	st = first_status(c, 10, NULL);
	if (st == IBV_WC_SUCCESS || st == -1) {
		fprintf(stderr, "  status %d\n", st);
		return false;
	}
	return wait_err(qp, 10);
}

static bool many_sges(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_send_wqe w = write_wqe();

	w.num_sge = 0xffff;
	return bad_wqe(qp, c, w, (uintptr_t)buf, 64, mr->lkey);
}

static bool huge_inline(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_send_wqe w = write_wqe();

	w.send_flags |= SROCE_SEND_INLINE;
	w.inline_len = 0x7fffffff;
	return bad_wqe(qp, c, w, (uintptr_t)buf, 64, mr->lkey);
}

static bool bad_opcode(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_send_wqe w = write_wqe();

	w.opcode = 0x7f;
	return bad_wqe(qp, c, w, (uintptr_t)buf, 64, mr->lkey);
}

static bool bad_lkey(struct ibv_qp *qp, struct ibv_cq *c)
{
	return bad_wqe(qp, c, write_wqe(), (uintptr_t)buf, 64,
		       mr->lkey ^ 0x5500);
}

static bool addr_outside(struct ibv_qp *qp, struct ibv_cq *c)
{
	return bad_wqe(qp, c, write_wqe(), (uintptr_t)buf + BUF_SIZE - 16,
		       4096, mr->lkey);
}

static bool len_overflow(struct ibv_qp *qp, struct ibv_cq *c)
{
	return bad_wqe(qp, c, write_wqe(), ~0ULL - 8, 0xffffffff, mr->lkey);
}

/* A CQ consumer index ahead of the producer: the CQ is lost, not the host. */
static bool cq_cons_ahead(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_ring *r = &to_scq(c)->ring;
	int st;

	sroce_store_release(&r->ctl->cons, sroce_load_acquire(&r->ctl->prod) + 1000);
	post_write(qp, 64);
	st = first_status(c, 3, NULL);
	/* Nothing may complete as if all were well, and the QP must fail. */
	return st != IBV_WC_SUCCESS && wait_err(qp, 10);
}

static bool rq_prod_ahead(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_ring *rq = &to_sqp(qp)->rq;
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	(void)c;
	sroce_store_release(&rq->ctl->prod, rq->idx + 0x10000);
	ibv_post_send(qp, &wr, &bad);
	return wait_err(qp, 15);
}

struct scribble {
	struct ibv_qp *qp;
	volatile bool stop;
	unsigned int seed;
};

static void *scribbler(void *arg)
{
	struct scribble *s = arg;
	struct sroce_ring *sq = &to_sqp(s->qp)->sq;
	size_t bytes = (size_t)sq->num * sq->stride;

	while (!s->stop) {
		size_t off = rand_r(&s->seed) % bytes;

		sq->data[off] = rand_r(&s->seed);
		if (!(rand_r(&s->seed) % 64))
			sq->ctl->prod = rand_r(&s->seed) % 4 ?
				sq->ctl->prod + rand_r(&s->seed) % 8 :
				(uint32_t)rand_r(&s->seed);
	}
	return NULL;
}

/* Valid posts from here, random bytes in the ring from a second thread. */
static bool racing_scribbler(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct scribble s = { .qp = qp, .seed = 12345 };
	double end = now() + 3;
	pthread_t t;
	long posts = 0;

	if (pthread_create(&t, NULL, scribbler, &s))
		return false;
	while (now() < end) {
		if (!post_write(qp, 256))
			posts++;
		drain(c);
		raw_doorbell(qp);
	}
	s.stop = true;
	pthread_join(t, NULL);
	fprintf(stderr, "  %ld posts accepted while scribbling; QP state %d\n",
		posts, qp_state(qp));
	return true;
}

/* Is an event waiting on @ch within @ms?  Takes and acks it if so. */
static bool got_event(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, ms) != 1 || ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return false;
	ibv_ack_cq_events(ev_cq, 1);
	return true;
}

static bool one_success(struct ibv_cq *c)
{
	return first_status(c, 10, NULL) == IBV_WC_SUCCESS;
}

/*
 * CQ arming through the ring (SROCE_UCTX_F_CQ_ARM): ibv_req_notify_cq
 * stores the arm, the kernel fires once and clears it; a solicited arm
 * ignores unsolicited successes; an arm survives a resize; a value the
 * ABI does not define counts as "next" and the kernel takes it in stride.
 */
static bool cq_arm_in_ring(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *c = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	struct ibv_qp *qp = c ? self_qp(c) : NULL;
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr swr = {
		.wr_id = 8, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
	}, *bad;
	struct ibv_recv_wr *rbad;
	uint32_t *arm;
	bool ok = true;

#define ARM_CHECK(cond, what) do { if (!(cond)) { \
		fprintf(stderr, "  cq_arm: %s\n", what); ok = false; goto out; } } while (0)
	ARM_CHECK(qp, "cannot set up a loopback QP with a channel");
	ARM_CHECK(to_sctx(ctx)->flags & SROCE_UCTX_F_CQ_ARM,
		  "the kernel does not offer ring arming");
	arm = &to_scq(c)->ring.ctl->arm;

	ARM_CHECK(!ibv_req_notify_cq(c, 0) && *arm == SROCE_CQ_ARM_NEXT,
		  "arm not stored in the ring");
	ARM_CHECK(!post_write(qp, 64) && got_event(ch, 5000),
		  "no event for a write after arming");
	ARM_CHECK(one_success(c) && *arm == 0, "arm not cleared by the event");
	ARM_CHECK(!post_write(qp, 64) && one_success(c) && !got_event(ch, 300),
		  "an event without an arm");

	ARM_CHECK(!ibv_req_notify_cq(c, 1) && *arm == SROCE_CQ_ARM_SOLICITED,
		  "solicited arm not stored");
	ARM_CHECK(!post_write(qp, 64) && one_success(c) && !got_event(ch, 300) &&
		  *arm == SROCE_CQ_ARM_SOLICITED,
		  "an unsolicited success fired a solicited arm");
	ARM_CHECK(!ibv_post_recv(qp, &rwr, &rbad) && !ibv_post_send(qp, &swr, &bad) &&
		  got_event(ch, 5000) && *arm == 0,
		  "no event for a solicited SEND");
	/* The SEND's own completion follows its ACK: it must not take the next arm. */
	ARM_CHECK(one_success(c) && one_success(c), "the solicited SEND did not complete");

	ARM_CHECK(!ibv_req_notify_cq(c, 0) && !ibv_resize_cq(c, 200) &&
		  to_scq(c)->ring.ctl->arm == SROCE_CQ_ARM_NEXT,
		  "arm lost by a resize");
	arm = &to_scq(c)->ring.ctl->arm;
	ARM_CHECK(!post_write(qp, 64) && got_event(ch, 5000) && *arm == 0,
		  "no event after a resize");
	drain(c);

	*arm = 0xdeadbeef;
	ARM_CHECK(!post_write(qp, 64) && got_event(ch, 5000) && *arm == 0,
		  "an undefined arm value did not count as next");
	ARM_CHECK(one_success(c), "the write after a junk arm failed");
out:
#undef ARM_CHECK
	drain(c);
	if (qp)
		ok &= !ibv_destroy_qp(qp);
	if (c)
		ok &= !ibv_destroy_cq(c);
	if (ch)
		ok &= !ibv_destroy_comp_channel(ch);
	return ok;
}

/*
 * Loopback packets are delivered by a tasklet, which ksoftirqd runs once
 * the softirq falls behind, as it does in a long transfer: the kernel
 * must report that in the CQ ring (rx_task_seq/cpu) for the provider's
 * empty polls to give way.  Junk we write there first is
 * only counted on from.
 */
static bool rx_task_hint(struct ibv_qp *qp, struct ibv_cq *c)
{
	struct sroce_ring_ctl *ctl = to_scq(c)->ring.ctl;
	uint32_t seq0;
	int i;

	ctl->rx_task_cpu = 0xdeadbeef;
	ctl->rx_task_seq = seq0 = 0xfffffff0;
	/*
	 * Bursts of 8 x 512 KiB outlast the softirq's restart limit, after
	 * which ksoftirqd delivers the rest; 64 bursts at most.
	 */
	for (i = 0; i < 64 && ctl->rx_task_seq == seq0; i++) {
		int j;

		for (j = 0; j < 8; j++)
			if (post_write(qp, BUF_SIZE / 2))
				return false;
		for (j = 0; j < 8; j++)
			if (!one_success(c))
				return false;
	}
	fprintf(stderr, "  rx_task_seq moved by %u after %d bursts, cpu %u\n",
		ctl->rx_task_seq - seq0, i, ctl->rx_task_cpu);
	return ctl->rx_task_seq != seq0 &&
	       ctl->rx_task_cpu < (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
}

/* A child killed while a 4 MiB transfer is in flight on its QP. */
static bool killed_mid_transfer(void)
{
	int p[2], st = 0;
	pid_t pid;
	char c;

	if (pipe(p))
		return false;
	pid = fork();
	if (pid == 0) {
		struct ibv_cq *cc = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		struct ibv_qp *qp = cc ? self_qp(cc) : NULL;
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf, .length = BUF_SIZE / 2,
			.lkey = mr->lkey,
		};
		struct ibv_send_wr wr = {
			.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.wr.rdma = { .remote_addr = (uintptr_t)buf + BUF_SIZE / 2,
				     .rkey = mr->rkey },
		}, *bad;

		if (!qp)
			_exit(1);
		for (;;) {
			for (int i = 0; i < 8; i++)
				ibv_post_send(qp, &wr, &bad);
			if (write(p[1], "x", 1) != 1)
				_exit(1);
			drain(cc);
		}
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		return false;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* MODIFY_SRQ as libsroce writes it, with @drv_len bytes of driver data. */
static int raw_modify_srq(struct ibv_srq *srq, uint32_t max_wr,
			  const uint64_t *drv, size_t drv_len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_srq cmd;
		uint64_t drv[2];
	} c;
	size_t len = sizeof(c.hdr) + sizeof(c.cmd) + drv_len;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_MODIFY_SRQ;
	c.hdr.in_words = len / 4;
	c.cmd.srq_handle = srq->handle;
	c.cmd.attr_mask = IBV_SRQ_MAX_WR;
	c.cmd.max_wr = max_wr;
	memcpy(c.drv, drv, drv_len);
	return write(srq->context->cmd_fd, &c, len) == (ssize_t)len ? 0 : -errno;
}

/*
 * SRQ resize with lies in the command or the ring: each refused, and the
 * SRQ keeps its ring (16 entries) until an honest resize grows it.
 */
static bool srq_resize_lies(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct sroce_mmap_info mi;
	struct ibv_srq_attr sa;
	struct sroce_ring *ring;
	uint64_t d[2];
	bool ok = srq != NULL;
	uint32_t prod;
	int i;

	if (!ok)
		return false;
	ring = &to_ssrq(srq)->ring;
	d[0] = 0;
	ok &= raw_modify_srq(srq, 64, d, 8) == -EINVAL;		/* no address */
	ok &= raw_modify_srq(srq, 64, d, 0) == -EINVAL;		/* no data */
	d[0] = 16;
	ok &= raw_modify_srq(srq, 64, d, 8) == -EFAULT;		/* unmapped */
	d[0] = 0xffff888000000000ull;
	ok &= raw_modify_srq(srq, 64, d, 8) == -EFAULT;		/* kernel's */
	d[0] = (uintptr_t)&mi;
	d[1] = 1;
	ok &= raw_modify_srq(srq, 64, d, 16) == -EOPNOTSUPP;	/* junk after */
	ok &= raw_modify_srq(srq, 0, d, 8) == -EINVAL;
	ok &= raw_modify_srq(srq, 1u << 30, d, 8) == -EINVAL;
	prod = ring->ctl->prod;
	ring->ctl->prod = prod + 1000;				/* ring lies */
	ok &= raw_modify_srq(srq, 64, d, 8) == -EIO;
	ring->ctl->prod = prod;
	memset(&sa, 0, sizeof(sa));
	ok &= !ibv_query_srq(srq, &sa) && sa.max_wr == 16;
	sa.max_wr = 64;
	ok &= !ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	for (i = 0; i < 40; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

		ok &= !ibv_post_srq_recv(srq, &wr, &bad);
	}
	ok &= !ibv_destroy_srq(srq);
	return ok;
}

/* Objects still in use cannot be freed from under their users. */
static bool busy_objects(void)
{
	struct ibv_cq *c = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = c ? self_qp(c) : NULL;
	struct ibv_mr *m2;
	bool ok = qp != NULL;

	if (!ok)
		return false;
	ok &= ibv_destroy_cq(c) != 0;
	ok &= ibv_dealloc_pd(pd) != 0;
	ok &= good_write(qp, c);
	/* A deregistered key is dead for the next WQE that names it. */
	m2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (m2) {
		uint32_t lkey = m2->lkey;
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
				       .lkey = lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)buf + BUF_SIZE / 2,
				     .rkey = mr->rkey },
		}, *bad;

		ok &= !ibv_dereg_mr(m2);
		ok &= !ibv_post_send(qp, &wr, &bad);
		ok &= first_status(c, 10, NULL) == IBV_WC_LOC_PROT_ERR;
	} else {
		ok = false;
	}
	ok &= !ibv_destroy_qp(qp);
	ok &= !ibv_destroy_cq(c);
	return ok;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct ibv_device **list;
	int n, i, o;

	while ((o = getopt(argc, argv, "d:g:")) != -1) {
		if (o == 'd')
			dev = optarg;
		else if (o == 'g')
			gid_index = atoi(optarg);
		else
			return 2;
	}
	if (!dev) {
		fprintf(stderr, "usage: %s -d DEV -g GID_INDEX\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!ctx || !buf || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		fprintf(stderr, "cannot open %s or its GID %d\n", dev, gid_index);
		return 1;
	}
	memset(buf, 0xab, BUF_SIZE);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	cq = mr ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (!cq) {
		perror("pd/mr/cq");
		return 1;
	}

	with_qp("a loopback QP works before any abuse", good_write);
	with_qp("SQ producer index beyond the ring: QP to ERR", sq_prod_ahead);
	with_qp("SQ producer index moved backwards: QP to ERR", sq_prod_back);
	with_qp("WQE with 65535 SGEs: error completion, QP to ERR", many_sges);
	with_qp("inline WQE of 2 GiB: error completion, QP to ERR", huge_inline);
	with_qp("opcode 0x7f: error completion, QP to ERR", bad_opcode);
	with_qp("SGE with a wrong lkey: error completion, QP to ERR", bad_lkey);
	with_qp("SGE past the end of its MR: error completion, QP to ERR", addr_outside);
	with_qp("SGE whose address + length wraps: error completion, QP to ERR", len_overflow);
	with_qp("CQ consumer index ahead of its producer: no success, QP to ERR", cq_cons_ahead);
	with_qp("RQ producer index far ahead, a SEND arrives: QP to ERR", rq_prod_ahead);
	with_qp("a second thread scribbles over the SQ while posting", racing_scribbler);
	with_qp("4 MiB loopback bursts: the kernel reports rx work in its softirq thread", rx_task_hint);
	report(cq_arm_in_ring(), "CQ armed through its ring: one event per arm, solicited, resize, junk");
	report(killed_mid_transfer(), "a child killed in the middle of 512 KiB writes");
	report(busy_objects(), "busy CQ and PD are refused; a deregistered lkey is dead");
	report(srq_resize_lies(), "SRQ resize with bad addresses, junk, sizes, a lying ring: refused, SRQ intact");
	with_qp("a loopback QP still works after all of it", good_write);

	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("1..%d\n", t_num);
	return t_fail ? 1 : 0;
}
