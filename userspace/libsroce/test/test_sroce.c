// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit test of libsroce without a device: the real libibverbs (44.0 or
 * 56.x, whichever the plugin was built against) loads the real plugin, enumerates a fake sysfs tree and talks to the fake
 * kernel in fake_kernel.c.  Every public verb is driven through
 * libibverbs' own entry points, so a test passing means the verb reached
 * the provider function meant for it and that function did the right
 * thing to the rings and to the command stream.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "fake_kernel.h"
#include "ibv_private.h"

static int t_num, t_pass, t_fail;

static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	t_num++;
	if (ok)
		t_pass++;
	else
		t_fail++;
	printf("%s %d - ", ok ? "ok" : "not ok", t_num);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return ok;
}

static const struct verbs_context_ops *(*p_ops)(void);
static bool (*p_path_ok)(const char *);
static bool (*p_match)(struct verbs_sysfs_dev *);

static struct sroce_send_wqe *log_wqe(uint32_t i)
{
	return (struct sroce_send_wqe *)fk.wqe_log[i];
}

static struct sroce_sge *log_sge(uint32_t i, uint32_t n)
{
	return (struct sroce_sge *)(fk.wqe_log[i] + SROCE_SEND_WQE_HDR) + n;
}

static struct sroce_ring_ctl *ctl_of(struct fk_ring *r)
{
	return r->map;
}

static void *slot_of(struct fk_ring *r, uint32_t idx)
{
	return (uint8_t *)r->map + SROCE_RING_DATA_OFFSET +
	       (size_t)(idx & (r->num - 1)) * r->stride;
}

#define LIBDIR_TEST "/usr/lib/x86_64-linux-gnu/"
#if SROCE_RDMA_CORE_MAJOR == 44
#define OTHER_POINT "44.1"
#define OTHER_MAJOR "56.1"
#else
#define OTHER_POINT "56.99"
#define OTHER_MAJOR "44.0"
#endif

static void test_pure(const char *sysfs)
{
	struct verbs_sysfs_dev sd;

	check(p_path_ok(LIBDIR_TEST SROCE_LIBIBVERBS_SONAME_TAIL),
	      "version check accepts %s", SROCE_LIBIBVERBS_SONAME_TAIL);
	check(!p_path_ok(LIBDIR_TEST "libibverbs.so.1.14.43.0"),
	      "version check refuses 43.0");
	check(!p_path_ok(LIBDIR_TEST SROCE_LIBIBVERBS_SONAME_PREFIX OTHER_POINT),
	      "version check refuses %s (layout not pinned)", OTHER_POINT);
	check(!p_path_ok(LIBDIR_TEST SROCE_LIBIBVERBS_SONAME_PREFIX OTHER_MAJOR),
	      "version check refuses %s (the other supported layout)",
	      OTHER_MAJOR);
	check(!p_path_ok("/opt/x" SROCE_LIBIBVERBS_SONAME_TAIL) &&
	      !p_path_ok(NULL),
	      "version check refuses look-alike names and NULL");

	/* The name never decides: sd's name stays "rxe0" throughout. */
	memset(&sd, 0, sizeof(sd));
	strcpy(sd.ibdev_name, "rxe0");
	snprintf(sd.ibdev_path, sizeof(sd.ibdev_path),
		 "%s/class/infiniband/sroce0", sysfs);
	check(p_match(&sd), "match: sroce's sysfs file, no driver id (sysfs mode)");
	sd.driver_id = SROCE_DRIVER_ID;
	check(p_match(&sd), "match: sroce's sysfs file and driver id");
	sd.driver_id = RDMA_DRIVER_RXE;
	check(!p_match(&sd), "match: refuses another driver's id");
	sd.driver_id = SROCE_DRIVER_ID;
	snprintf(sd.ibdev_path, sizeof(sd.ibdev_path),
		 "%s/class/infiniband/sroce1", sysfs);
	check(!p_match(&sd), "match: refuses a device without sroce's sysfs file");
	snprintf(sd.ibdev_path, sizeof(sd.ibdev_path),
		 "%s/class/infiniband/roce3", sysfs);
	check(!p_match(&sd), "match: refuses a device whose sysfs file names another ABI");
}

static struct ibv_context *open_sroce0(struct ibv_device ***listp)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i, found = -1;

	list = ibv_get_device_list(&n);
	check(list != NULL, "ibv_get_device_list works on the fake sysfs");
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "sroce0"))
			found = i;
	check(n == 1 && found == 0,
	      "exactly sroce0 listed (sroce1 lacks the sysfs file, sroce2 and roce3 wrong ABIs): n=%d",
	      n);
	if (found >= 0) {
		check(!strcmp(list[found]->dev_name, "uverbs0") &&
		      list[found]->transport_type == IBV_TRANSPORT_IB,
		      "sroce0 is uverbs0, IB transport");
		check(ibv_get_device_guid(list[found]) ==
		      htobe64(0x1122334455667788ull),
		      "node GUID read from sysfs");
		ctx = ibv_open_device(list[found]);
	}
	*listp = list;
	return ctx;
}

static void test_ops_routing(struct ibv_context *ctx)
{
	const struct verbs_context_ops *o = p_ops();
	struct verbs_context *vctx = verbs_get_ctx(ctx);
	unsigned int i, set = 0;
	void *const *slot = (void *const *)o;

	for (i = 0; i < SROCE_VERBS_OPS_SLOTS; i++)
		set += slot[i] != NULL;
	check(set == 52, "provider op table sets 52 of 76 slots (got %u)", set);
	check(ctx->ops.post_send == o->post_send &&
	      ctx->ops.post_recv == o->post_recv &&
	      ctx->ops.poll_cq == o->poll_cq &&
	      ctx->ops.req_notify_cq == o->req_notify_cq &&
	      ctx->ops.post_srq_recv == o->post_srq_recv,
	      "data-path inlines (ibv_post_send/recv/poll_cq/req_notify/srq_recv) reach the provider");
	check(vctx && vctx->create_qp_ex == o->create_qp_ex &&
	      ctx->ops.bind_mw == o->bind_mw && ctx->ops.alloc_mw == o->alloc_mw,
	      "ibv_create_qp_ex, ibv_bind_mw, ibv_alloc_mw reach the provider");
	check(vctx && vctx->create_cq_ex != NULL && vctx->query_port != NULL,
	      "create_cq_ex and query_port entry points installed");
}

static void test_device(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct ibv_device_attr_ex ax;
	struct ibv_port_attr pa;

	check(ibv_query_device(ctx, &attr) == 0 &&
	      !strcmp(attr.fw_ver, "1.2.3") && attr.max_qp == 1234 &&
	      attr.phys_port_cnt == 1,
	      "ibv_query_device: fw 1.2.3, max_qp 1234 (fw=%s)", attr.fw_ver);
	memset(&ax, 0, sizeof(ax));
	check(ibv_query_device_ex(ctx, NULL, &ax) == 0 &&
	      ax.orig_attr.max_cq == 99 && !strcmp(ax.orig_attr.fw_ver, "1.2.3"),
	      "ibv_query_device_ex falls back to the legacy command");
	check(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE &&
	      pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
	      pa.active_mtu == IBV_MTU_1024,
	      "ibv_query_port: active, Ethernet, MTU 1024");
	check(fk.ioctls > 0, "ioctl path was probed and declined (%u)",
	      fk.ioctls);
}

static void test_pd_mr(struct ibv_context *ctx, struct ibv_pd **pdp,
		       struct ibv_mr **mrp, char *buf, size_t len)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = NULL;

	check(pd != NULL && pd->handle > 0, "ibv_alloc_pd");
	if (pd)
		mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
	check(mr && mr->lkey == 0x1000 + mr->handle &&
	      mr->rkey == 0x2000 + mr->handle && mr->addr == buf &&
	      mr->length == len,
	      "ibv_reg_mr returns the kernel's keys");
	if (mr)
		check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, IBV_ACCESS_LOCAL_WRITE) == 0 &&
		      mr->lkey == 0x3000 && mr->rkey == 0x4000,
		      "ibv_rereg_mr updates keys");
	errno = 0;
	check(pd && ibv_alloc_null_mr(pd) == NULL && errno == EOPNOTSUPP,
	      "ibv_alloc_null_mr: NULL, EOPNOTSUPP");
	*pdp = pd;
	*mrp = mr;
}

static void *pd_alloc_stub(struct ibv_pd *pd, void *pd_context, size_t size,
			   size_t alignment, uint64_t resource_type)
{
	(void)pd; (void)pd_context; (void)size; (void)alignment;
	(void)resource_type;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void pd_free_stub(struct ibv_pd *pd, void *pd_context, void *ptr,
			 uint64_t resource_type)
{
	(void)pd; (void)pd_context; (void)ptr; (void)resource_type;
}

/* A parent domain is its protection domain to the kernel. */
static void test_parent_domain(struct ibv_context *ctx)
{
	struct ibv_parent_domain_init_attr pa;
	struct ibv_cq_init_attr_ex ca;
	struct ibv_pd *pd, *parent;
	struct ibv_cq_ex *cq;
	struct ibv_qp_init_attr qa;
	struct ibv_qp *qp;
	struct ibv_cq *scq;

	pd = ibv_alloc_pd(ctx);
	memset(&pa, 0, sizeof(pa));
	pa.pd = pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
		       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.alloc = pd_alloc_stub;
	pa.free = pd_free_stub;
	pa.pd_context = &pa;
	parent = pd ? ibv_alloc_parent_domain(ctx, &pa) : NULL;
	check(parent && parent->handle == pd->handle &&
	      parent->context == ctx,
	      "ibv_alloc_parent_domain: the protection domain's handle");
	if (!parent)
		return;
	pa.pd = parent;
	errno = 0;
	check(!ibv_alloc_parent_domain(ctx, &pa) && errno == EINVAL,
	      "a parent domain over a parent domain: EINVAL");
	pa.pd = pd;
	pa.td = (struct ibv_td *)&pa;
	errno = 0;
	check(!ibv_alloc_parent_domain(ctx, &pa) && errno == EINVAL,
	      "a parent domain with a thread domain: EINVAL");

	memset(&ca, 0, sizeof(ca));
	ca.cqe = 8;
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ca.parent_domain = pd;
	errno = 0;
	check(!ibv_create_cq_ex(ctx, &ca) && errno == EINVAL,
	      "create_cq_ex naming a plain PD as parent domain: EINVAL");
	ca.parent_domain = parent;
	cq = ibv_create_cq_ex(ctx, &ca);
	check(cq != NULL, "create_cq_ex with a parent domain");
	scq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = scq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(parent, &qa);
	check(qp && qp->pd == parent, "an RC QP in the parent domain");
	check(ibv_dealloc_pd(pd) == EBUSY,
	      "the protection domain under a parent: EBUSY");
	check(qp && !ibv_destroy_qp(qp) && !ibv_destroy_cq(scq) &&
	      cq && !ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) &&
	      !ibv_dealloc_pd(parent) && !ibv_dealloc_pd(pd),
	      "QP, CQs, parent domain, then its PD released");
}

static void test_unsupported(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1,
					 .oflags = O_CREAT };
	struct ibv_wq_init_attr wa;
	struct ibv_td_init_attr ta = { 0 };

	errno = 0;
	check(ibv_open_xrcd(ctx, &xa) == NULL && errno == EOPNOTSUPP,
	      "ibv_open_xrcd: the kernel's refusal (this fake's) comes back");
	memset(&wa, 0, sizeof(wa));
	errno = 0;
	check(ibv_create_wq(ctx, &wa) == NULL && errno == EINVAL,
	      "ibv_create_wq without a PD or CQ: EINVAL, not a crash");
	wa.wq_type = IBV_WQT_RQ + 1;
	errno = 0;
	check(ibv_create_wq(ctx, &wa) == NULL && errno == EOPNOTSUPP,
	      "ibv_create_wq of another type: EOPNOTSUPP");
	errno = 0;
	check(ibv_alloc_td(ctx, &ta) == NULL && errno == EOPNOTSUPP,
	      "ibv_alloc_td: EOPNOTSUPP");
}

static struct sroce_cqe mkcqe(uint64_t wr_id, uint32_t op, uint32_t len)
{
	struct sroce_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.status = IBV_WC_SUCCESS;
	c.opcode = op;
	c.byte_len = len;
	c.qp_num = 0x55;
	c.src_qp = 0x66;
	c.wc_flags = IBV_WC_WITH_IMM | 0x80000000u;
	c.ex.imm_data = htobe32(0xdeadbeef);
	c.slid = 7;
	c.sl = 3;
	c.pkey_index = 2;
	return c;
}

/* The provider's SROCE_CQ_GIVE_WAY_NS, which this test checks from outside. */
#define GIVE_WAY_US	20.0

static double poll_us(struct ibv_cq *cq)
{
	struct timespec a, b;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	ibv_poll_cq(cq, 1, &wc);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
}

/*
 * An empty poll sleeps only when the kernel says it is processing this
 * CQ's packets in a task on our CPU, and once per such report.
 */
static void test_cq_give_way(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 15, NULL, NULL, 0);
	struct fk_ring *r = cq ? fk_cq_ring(cq->handle) : NULL;
	struct sroce_ring_ctl *ctl;
	double t, fast = 1e9;
	cpu_set_t set, saved;
	int cpu, i;

	check(r != NULL, "give way: CQ");
	if (!r)
		return;
	ctl = ctl_of(r);
	cpu = sched_getcpu();
	sched_getaffinity(0, sizeof(saved), &saved);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);

	ctl->rx_task_cpu = cpu;
	for (i = 0; i < 5; i++) {
		ctl->rx_task_seq += 3;
		t = poll_us(cq);
		fast = t < fast ? t : fast;
	}
	check(fast < GIVE_WAY_US,
	      "3 packets processed in a task: not a backlog (fastest of 5 %.1f us)", fast);
	fast = 1e9;
	ctl->rx_task_seq += 4;
	t = poll_us(cq);
	check(t >= GIVE_WAY_US,
	      "receive work in a task on our CPU: the empty poll sleeps (%.0f us)", t);
	for (i = 0; i < 5; i++) {
		t = poll_us(cq);
		fast = t < fast ? t : fast;
	}
	check(fast < GIVE_WAY_US,
	      "the same report again: no sleep (fastest of 5 %.1f us)", fast);
	ctl->rx_task_cpu = cpu + 1;
	for (i = 0, fast = 1e9; i < 5; i++) {
		ctl->rx_task_seq += 100;
		t = poll_us(cq);
		fast = t < fast ? t : fast;
	}
	check(fast < GIVE_WAY_US,
	      "receive work on another CPU: no sleep (fastest of 5 %.1f us)", fast);
	sched_setaffinity(0, sizeof(saved), &saved);
	ibv_destroy_cq(cq);
}

static void test_cq(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 15, NULL, NULL, 0);
	const struct fk_cmd_rec *rec;
	struct fk_ring *r;
	struct ibv_wc wc[64];
	struct sroce_cqe c;
	uint32_t w0, i, cons0;
	int n, good;

	check(cq != NULL, "ibv_create_cq");
	if (!cq)
		return;
	rec = fk_last_cmd(IB_USER_VERBS_CMD_CREATE_CQ);
	check(rec && rec->in_bytes == 40 && rec->out_bytes == 32,
	      "create_cq: 40-byte command, 8+24-byte response");
	r = fk_cq_ring(cq->handle);
	check(r && r->num == 16 && cq->cqe == 16, "CQ ring of 16 mapped");
	if (!r)
		return;

	for (i = 0; i < 3; i++) {
		c = mkcqe(100 + i, IBV_WC_RECV, 10 * i);
		fk_cq_push(cq->handle, &c);
	}
	w0 = fk.writes;
	n = ibv_poll_cq(cq, 2, wc);
	check(n == 2 && wc[0].wr_id == 100 && wc[1].wr_id == 101 &&
	      wc[1].byte_len == 10 && wc[1].opcode == IBV_WC_RECV &&
	      wc[1].qp_num == 0x55 && wc[1].src_qp == 0x66 &&
	      wc[1].wc_flags == IBV_WC_WITH_IMM &&
	      wc[1].imm_data == htobe32(0xdeadbeef) && wc[1].slid == 7 &&
	      wc[1].sl == 3 && wc[1].pkey_index == 2,
	      "ibv_poll_cq returns 2 CQEs field for field, unknown flag bits dropped");
	check(ctl_of(r)->cons == 2, "poll published cons=2");
	n = ibv_poll_cq(cq, 10, wc);
	check(n == 1 && wc[0].wr_id == 102, "then the third");
	check(ibv_poll_cq(cq, 10, wc) == 0, "then empty");
	check(fk.writes == w0, "poll_cq made no system call");

	/* wrap around the ring several times */
	good = 1;
	for (i = 0; i < 40; i++) {
		c = mkcqe(1000 + i, IBV_WC_SEND, 0);
		if (fk_cq_push(cq->handle, &c))
			good = 0;
		if (i % 5 == 4) {
			n = ibv_poll_cq(cq, 20, wc);
			if (n != 5 || wc[0].wr_id != 1000 + i - 4 ||
			    wc[4].wr_id != 1000 + i)
				good = 0;
		}
	}
	check(good, "40 CQEs across ring wrap, in order");
	for (i = 0; i < 16; i++) {
		c = mkcqe(2000 + i, IBV_WC_SEND, 0);
		fk_cq_push(cq->handle, &c);
	}
	c = mkcqe(9999, IBV_WC_SEND, 0);
	check(fk_cq_push(cq->handle, &c) != 0,
	      "ring holds exactly 16: the 17th is an overflow");
	n = ibv_poll_cq(cq, 20, wc);
	check(n == 16 && wc[15].wr_id == 2015, "full ring drains 16");

	/*
	 * A producer index more than a ring ahead, or behind ours (the zeroed
	 * pages ib_core maps after a device removal read prod 0): no slot
	 * the kernel did not write is handed out, and polling says so.
	 */
	cons0 = ctl_of(r)->cons;
	ctl_of(r)->prod = r->kidx + 1000;
	n = ibv_poll_cq(cq, 20, wc);
	check(n < 0 && ctl_of(r)->cons == cons0,
	      "wild producer index: an error, no slot read (%d)", n);
	ctl_of(r)->prod = 0;
	n = ibv_poll_cq(cq, 20, wc);
	check(cons0 > 20 && n < 0 && ctl_of(r)->cons == cons0,
	      "producer index behind ours (zeroed mapping): an error (%d)", n);
	ctl_of(r)->prod = r->kidx;
	r->kidx = ctl_of(r)->cons;	/* resync the fake after the stunt */
	ctl_of(r)->prod = r->kidx;

	check(ibv_req_notify_cq(cq, 0) == 0 && ibv_req_notify_cq(cq, 1) == 0 &&
	      fk.notify_armed == 2 && fk.notify_solicited == 1,
	      "ibv_req_notify_cq reaches the kernel with solicited_only");
	{
		/* a kernel that takes the arm through the ring */
		struct ibv_context *c2;
		struct ibv_cq *cq2 = NULL;
		uint32_t *arm = NULL;

		fk.uctx_flags |= SROCE_UCTX_F_CQ_ARM;
		c2 = ibv_open_device(ctx->device);
		fk.uctx_flags &= ~SROCE_UCTX_F_CQ_ARM;
		if (c2)
			cq2 = ibv_create_cq(c2, 8, NULL, NULL, 0);
		if (cq2 && fk_cq_ring(cq2->handle))
			arm = &ctl_of(fk_cq_ring(cq2->handle))->arm;
		check(arm && *arm == 0 && ibv_req_notify_cq(cq2, 1) == 0 &&
		      *arm == SROCE_CQ_ARM_SOLICITED && fk.notify_armed == 2,
		      "solicited arm: stored in the ring, no system call");
		check(arm && ibv_req_notify_cq(cq2, 0) == 0 &&
		      *arm == SROCE_CQ_ARM_NEXT && ibv_req_notify_cq(cq2, 1) == 0 &&
		      *arm == SROCE_CQ_ARM_NEXT && fk.notify_armed == 2,
		      "next-completion arm is not narrowed to solicited");
		if (arm)
			*arm = 0;	/* the kernel fired */
		check(arm && ibv_req_notify_cq(cq2, 1) == 0 &&
		      *arm == SROCE_CQ_ARM_SOLICITED,
		      "rearmed after the kernel cleared the arm");
		if (cq2)
			ibv_destroy_cq(cq2);
		if (c2)
			ibv_close_device(c2);
	}

	/* resize keeps unpolled completions */
	for (i = 0; i < 3; i++) {
		c = mkcqe(300 + i, IBV_WC_SEND, 0);
		fk_cq_push(cq->handle, &c);
	}
	n = ibv_poll_cq(cq, 1, wc);
	check(n == 1 && wc[0].wr_id == 300, "poll one before resize");
	check(ibv_resize_cq(cq, 40) == 0 && cq->cqe == 64,
	      "ibv_resize_cq to 64 entries");
	rec = fk_last_cmd(IB_USER_VERBS_CMD_RESIZE_CQ);
	check(rec && rec->in_bytes == 24 && rec->out_bytes == 32,
	      "resize_cq: 24-byte command, 8+24-byte response");
	n = ibv_poll_cq(cq, 10, wc);
	check(n == 2 && wc[0].wr_id == 301 && wc[1].wr_id == 302,
	      "the two unpolled CQEs survive the resize");
	r = fk_cq_ring(cq->handle);
	for (i = 0; i < 50; i++) {
		c = mkcqe(400 + i, IBV_WC_SEND, 0);
		fk_cq_push(cq->handle, &c);
	}
	n = ibv_poll_cq(cq, 20, wc);
	check(n == 20 && wc[19].wr_id == 419 && ibv_poll_cq(cq, 40, wc) == 30,
	      "new ring holds 50 pending CQEs");
	check(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
}

static void test_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex ca;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cq;
	struct ibv_wc wc[4];
	struct sroce_cqe c;
	struct fk_ring *r;
	bool ok;

	memset(&ca, 0, sizeof(ca));
	ca.cqe = 8;
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	check(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EOPNOTSUPP,
	      "create_cq_ex with timestamps: EOPNOTSUPP");

	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
		      IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
		      IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL;
	cq = ibv_create_cq_ex(ctx, &ca);
	check(cq != NULL, "ibv_create_cq_ex");
	if (!cq)
		return;
	r = fk_cq_ring(ibv_cq_ex_to_cq(cq)->handle);
	check(ibv_start_poll(cq, &pa) == ENOENT, "start_poll on empty: ENOENT");
	c = mkcqe(7, IBV_WC_RECV_RDMA_WITH_IMM, 77);
	fk_cq_push(ibv_cq_ex_to_cq(cq)->handle, &c);
	c = mkcqe(8, IBV_WC_RECV, 88);
	c.status = IBV_WC_REM_ACCESS_ERR;
	fk_cq_push(ibv_cq_ex_to_cq(cq)->handle, &c);

	ok = ibv_start_poll(cq, &pa) == 0 && cq->wr_id == 7 &&
	     cq->status == IBV_WC_SUCCESS &&
	     ibv_wc_read_opcode(cq) == IBV_WC_RECV_RDMA_WITH_IMM &&
	     ibv_wc_read_byte_len(cq) == 77 &&
	     ibv_wc_read_imm_data(cq) == htobe32(0xdeadbeef) &&
	     ibv_wc_read_qp_num(cq) == 0x55 && ibv_wc_read_src_qp(cq) == 0x66 &&
	     ibv_wc_read_slid(cq) == 7 && ibv_wc_read_sl(cq) == 3 &&
	     ibv_wc_read_wc_flags(cq) == IBV_WC_WITH_IMM;
	check(ok, "start_poll + ibv_wc_read_* accessors");
	ok = ibv_next_poll(cq) == 0 && cq->wr_id == 8 &&
	     cq->status == IBV_WC_REM_ACCESS_ERR && ibv_wc_read_byte_len(cq) == 88;
	check(ok, "next_poll reads the second CQE with its error status");
	check(ibv_next_poll(cq) == ENOENT, "next_poll: ENOENT at the end");
	check(r && ctl_of(r)->cons == 0, "cons not published before end_poll");
	ibv_end_poll(cq);
	check(r && ctl_of(r)->cons == 2, "end_poll publishes cons=2");

	/* The kernel destroyed the CQ under us (device removal). */
	c = mkcqe(9, IBV_WC_SEND, 0);
	fk_cq_push(ibv_cq_ex_to_cq(cq)->handle, &c);
	if (r)
		ctl_of(r)->state = SROCE_RING_DEAD;
	ok = ibv_start_poll(cq, &pa) == 0 && cq->wr_id == 9 &&
	     ibv_next_poll(cq) == EIO;
	ibv_end_poll(cq);
	check(ok, "dead CQ: the pending CQE first, then EIO");
	check(ibv_start_poll(cq, &pa) == EIO &&
	      ibv_poll_cq(ibv_cq_ex_to_cq(cq), 4, wc) == -EIO,
	      "dead and drained: start_poll EIO, ibv_poll_cq -EIO");
	check(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "destroy CQ ex");
}

/* Walk @qp up to @state; the fake kernel takes any transition. */
static int qp_to(struct ibv_qp *qp, enum ibv_qp_state state)
{
	static const enum ibv_qp_state path[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS
	};
	struct ibv_qp_attr qa;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(path) / sizeof(path[0]) && !ret; i++) {
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = path[i];
		ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE);
		if (path[i] == state)
			break;
	}
	return ret;
}

/* A QP in RTS, where the provider lets both queues be posted to. */
static struct ibv_qp *mk_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.srq = srq;
	a.qp_type = type;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 2;
	a.cap.max_inline_data = 64;
	qp = ibv_create_qp(pd, &a);
	if (qp && qp_to(qp, IBV_QPS_RTS)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}


/*
 * While the kernel sets SROCE_RING_F_NO_DOORBELL a post only publishes
 * its WQE; with the bit clear, or the ring in error, it rings.
 */
static void post_send_no_doorbell(struct ibv_qp *qp, struct fk_qp *kq,
				  struct ibv_cq *cq, struct ibv_sge *sg)
{
	struct sroce_ring_ctl *ctl = kq->sq.map;
	struct ibv_send_wr wr = {
		.wr_id = 0x2222, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .sg_list = sg, .num_sge = 1,
	};
	struct ibv_send_wr *bad = NULL;
	uint32_t db0 = fk.doorbells, prod0 = ctl->prod;
	struct ibv_wc wc[4];
	int ret, i, rang_at;

	fk.sq_paused = true;
	ctl->flags = SROCE_RING_F_NO_DOORBELL;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == 0 && fk.doorbells == db0 && ctl->prod == prod0 + 1,
	      "NO_DOORBELL set: the WQE is published, no system call");
	/* 15 more, unsignaled, drained as the kernel would: the 16th rings */
	wr.send_flags = 0;
	for (i = 0, rang_at = 0; i < 15; i++) {
		fk_drain_sq(qp->handle);
		ret |= ibv_post_send(qp, &wr, &bad);
		if (fk.doorbells != db0 && !rang_at)
			rang_at = i + 2;
	}
	fk_drain_sq(qp->handle);
	check(ret == 0 && fk.doorbells == db0 + 1 && rang_at == 16,
	      "NO_DOORBELL set: still one doorbell every 16 posts (rang at post %d)",
	      rang_at);
	db0 = fk.doorbells;
	prod0 = ctl->prod - 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	ctl->state = SROCE_RING_ERROR;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == 0 && fk.doorbells == db0 + 1 && ctl->prod == prod0 + 2,
	      "NO_DOORBELL set but the ring in error: the doorbell rings");
	ctl->state = SROCE_RING_OK;
	ctl->flags = 0;
	fk.sq_paused = false;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == 0 && fk.doorbells == db0 + 2 && ctl->prod == prod0 + 3 &&
	      ibv_poll_cq(cq, 4, wc) == 3 && wc[2].wr_id == 0x2222,
	      "bit clear: the doorbell rings and all three WQEs complete");
}
static void test_qp(struct ibv_context *ctx, struct ibv_pd *pd,
		    struct ibv_mr *mr, char *buf)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 63, NULL, NULL, 0);
	struct ibv_send_wr wr[10], *bad;
	struct ibv_recv_wr rw[3], *rbad;
	struct ibv_sge sg[4];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	const struct fk_cmd_rec *rec;
	struct fk_qp *kq;
	struct ibv_qp *qp;
	struct ibv_wc wc[16];
	uint32_t db0, nw0, w0, i;
	int ret;
	bool ok;

	qp = cq ? mk_qp(pd, cq, IBV_QPT_RC, NULL) : NULL;
	check(qp != NULL, "ibv_create_qp RC");
	if (!qp)
		return;
	rec = fk_last_cmd(IB_USER_VERBS_CMD_CREATE_QP);
	check(rec && rec->in_bytes == 64 && rec->out_bytes == 80,
	      "create_qp: 64-byte command, 32+48-byte response");
	kq = fk_qp_by_handle(qp->handle);
	check(kq && kq->sq.num == 8 && kq->sq.stride == 128 &&
	      kq->rq.num == 8 && kq->rq.stride == 48,
	      "SQ 8x128 and RQ 8x48 mapped");
	if (!kq)
		return;

	for (i = 0; i < 4; i++) {
		sg[i].addr = (uintptr_t)buf + 16 * i;
		sg[i].length = 8 + i;
		sg[i].lkey = mr->lkey;
	}
	memcpy(buf, "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", 56);

	/* one signaled SEND with two SGEs */
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0x1111;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr[0].sg_list = sg;
	wr[0].num_sge = 2;
	db0 = fk.doorbells;
	nw0 = fk.nwqe;
	ret = ibv_post_send(qp, &wr[0], &bad);
	ok = ret == 0 && fk.doorbells == db0 + 1 && fk.nwqe == nw0 + 1 &&
	     log_wqe(nw0)->wr_id == 0x1111 &&
	     log_wqe(nw0)->opcode == IB_UVERBS_WR_SEND &&
	     log_wqe(nw0)->send_flags == (SROCE_SEND_SIGNALED |
					  SROCE_SEND_SOLICITED) &&
	     log_wqe(nw0)->num_sge == 2 && log_wqe(nw0)->inline_len == 0 &&
	     log_sge(nw0, 0)->addr == sg[0].addr &&
	     log_sge(nw0, 0)->length == 8 && log_sge(nw0, 1)->length == 9 &&
	     log_sge(nw0, 1)->lkey == mr->lkey;
	check(ok, "ibv_post_send SEND: one doorbell, WQE field for field");
	rec = fk_last_cmd(IB_USER_VERBS_CMD_POST_SEND);
	check(rec && rec->in_bytes == 8 + sizeof(struct ib_uverbs_post_send),
	      "doorbell is a post_send with zero WRs (%u bytes)",
	      rec ? rec->in_bytes : 0);
	ret = ibv_poll_cq(cq, 4, wc);
	check(ret == 1 && wc[0].wr_id == 0x1111 && wc[0].opcode == IBV_WC_SEND &&
	      wc[0].qp_num == qp->qp_num,
	      "its completion comes back through the CQ ring");

	/* a chain of three: WRITE_IMM, READ, CAS; still one doorbell */
	wr[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[0].wr_id = 1;
	wr[0].imm_data = htobe32(0x01020304);
	wr[0].wr.rdma.remote_addr = 0xfeed0000;
	wr[0].wr.rdma.rkey = 0x77;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].opcode = IBV_WR_RDMA_READ;
	wr[1].wr_id = 2;
	wr[1].send_flags = 0;
	wr[1].next = &wr[2];
	wr[2] = wr[1];
	wr[2].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr[2].wr_id = 3;
	wr[2].sg_list = &sg[3];
	sg[3].length = 8;
	wr[2].wr.atomic.remote_addr = 0xa000;
	wr[2].wr.atomic.compare_add = 5;
	wr[2].wr.atomic.swap = 6;
	wr[2].wr.atomic.rkey = 0x99;
	wr[2].next = NULL;
	db0 = fk.doorbells;
	nw0 = fk.nwqe;
	ret = ibv_post_send(qp, &wr[0], &bad);
	ok = ret == 0 && fk.doorbells == db0 + 1 && fk.nwqe == nw0 + 3 &&
	     log_wqe(nw0)->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
	     log_wqe(nw0)->ex.imm_data == htobe32(0x01020304) &&
	     log_wqe(nw0)->wr.rdma.remote_addr == 0xfeed0000 &&
	     log_wqe(nw0)->wr.rdma.rkey == 0x77 &&
	     log_wqe(nw0 + 1)->opcode == IB_UVERBS_WR_RDMA_READ &&
	     log_wqe(nw0 + 1)->send_flags == 0 &&
	     log_wqe(nw0 + 2)->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
	     log_wqe(nw0 + 2)->wr.atomic.compare_add == 5 &&
	     log_wqe(nw0 + 2)->wr.atomic.swap == 6 &&
	     log_wqe(nw0 + 2)->wr.atomic.rkey == 0x99 &&
	     log_wqe(nw0 + 2)->wr.atomic.remote_addr == 0xa000;
	check(ok, "3-WR chain (write_imm, read, cas): one doorbell, 3 WQEs exact");
	ibv_poll_cq(cq, 16, wc);
	post_send_no_doorbell(qp, kq, cq, sg);

	/* inline over two SGEs */
	memset(wr, 0, sizeof(wr));
	sg[0].length = 20;
	sg[1].length = 20;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_INLINE;
	wr[0].sg_list = sg;
	wr[0].num_sge = 2;
	nw0 = fk.nwqe;
	ret = ibv_post_send(qp, &wr[0], &bad);
	ok = ret == 0 && fk.nwqe == nw0 + 1 &&
	     log_wqe(nw0)->inline_len == 40 && log_wqe(nw0)->num_sge == 0 &&
	     (log_wqe(nw0)->send_flags & SROCE_SEND_INLINE) &&
	     !memcmp(fk.wqe_log[nw0] + 64, buf, 20) &&
	     !memcmp(fk.wqe_log[nw0] + 84, buf + 16, 20);
	check(ok, "inline SEND: 40 bytes gathered into the WQE byte for byte");

	/* validation */
	db0 = fk.doorbells;
	sg[0].length = 40;
	sg[1].length = 25;
	bad = NULL;
	ret = ibv_post_send(qp, &wr[0], &bad);
	check(ret == EINVAL && bad == &wr[0] && fk.doorbells == db0,
	      "inline 65 > max_inline 64: EINVAL, bad_wr, no doorbell");
	wr[0].send_flags = 0;
	wr[0].num_sge = 3;
	bad = NULL;
	ret = ibv_post_send(qp, &wr[0], &bad);
	check(ret == EINVAL && bad == &wr[0] && fk.doorbells == db0,
	      "num_sge 3 > max 2: EINVAL, bad_wr");
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_TSO;
	ret = ibv_post_send(qp, &wr[0], &bad);
	check(ret == EINVAL && bad == &wr[0], "TSO opcode on RC: EINVAL");
	wr[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sg[0].length = 4;
	ret = ibv_post_send(qp, &wr[0], &bad);
	check(ret == EINVAL && bad == &wr[0], "atomic with a 4-byte SGE: EINVAL");
	sg[0].length = 8;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].num_sge = 5;
	wr[1].next = NULL;
	nw0 = fk.nwqe;
	ret = ibv_post_send(qp, &wr[0], &bad);
	check(ret == EINVAL && bad == &wr[1] && fk.doorbells == db0 + 1 &&
	      fk.nwqe == nw0 + 1,
	      "good WR then bad: first posted and rung once, bad_wr is the second");

	/* ring full */
	fk.sq_paused = true;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 10; i++) {
		wr[i].wr_id = 500 + i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i < 9 ? &wr[i + 1] : NULL;
	}
	db0 = fk.doorbells;
	ret = ibv_post_send(qp, &wr[0], &bad);
	check(ret == ENOMEM && bad == &wr[8] && fk.doorbells == db0 + 1,
	      "10 WRs into an 8-slot SQ: ENOMEM at the 9th, one doorbell");
	ret = ibv_post_send(qp, &wr[9], &bad);
	check(ret == ENOMEM && bad == &wr[9] && fk.doorbells == db0 + 1,
	      "still full: ENOMEM, no doorbell");
	fk.sq_paused = false;
	nw0 = fk.nwqe;
	fk_drain_sq(qp->handle);
	check(fk.nwqe == nw0 + 8 && log_wqe(nw0)->wr_id == 500 &&
	      log_wqe(nw0 + 7)->wr_id == 507,
	      "kernel drains the 8 queued WQEs in order");
	ret = ibv_post_send(qp, &wr[8], &bad);
	check(ret == 0 && log_wqe(fk.nwqe - 1)->wr_id == 509,
	      "space again after the kernel consumed");

	/* receive queue: no system call */
	memset(rw, 0, sizeof(rw));
	rw[0].wr_id = 0xaa;
	rw[0].sg_list = sg;
	rw[0].num_sge = 2;
	rw[0].next = &rw[1];
	rw[1].wr_id = 0xbb;
	rw[1].sg_list = &sg[2];
	rw[1].num_sge = 1;
	w0 = fk.writes;
	ret = ibv_post_recv(qp, &rw[0], &rbad);
	{
		struct sroce_recv_wqe *r0 = slot_of(&kq->rq, 0);
		struct sroce_recv_wqe *r1 = slot_of(&kq->rq, 1);
		struct sroce_sge *s0 = (struct sroce_sge *)(r0 + 1);
		struct sroce_sge *s1 = (struct sroce_sge *)(r1 + 1);

		ok = ret == 0 && fk.writes == w0 && ctl_of(&kq->rq)->prod == 2 &&
		     r0->wr_id == 0xaa && r0->num_sge == 2 &&
		     s0[0].addr == sg[0].addr && s0[1].length == sg[1].length &&
		     s0[1].lkey == sg[1].lkey && r1->wr_id == 0xbb &&
		     r1->num_sge == 1 && s1[0].addr == sg[2].addr;
	}
	check(ok, "ibv_post_recv: 2 WQEs in the RQ, prod=2, no system call");
	rw[2].num_sge = 3;
	rw[2].sg_list = sg;
	ret = ibv_post_recv(qp, &rw[2], &rbad);
	check(ret == EINVAL && rbad == &rw[2] && ctl_of(&kq->rq)->prod == 2,
	      "post_recv num_sge 3 > 2: EINVAL, nothing published");

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	check(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT |
			    IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS) == 0 &&
	      kq->state == IBV_QPS_INIT,
	      "ibv_modify_qp to INIT reaches the kernel");
	memset(&qa, 0, sizeof(qa));
	check(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia) == 0 &&
	      qa.qp_state == IBV_QPS_INIT,
	      "ibv_query_qp reads INIT back");
	db0 = fk.doorbells;
	nw0 = ctl_of(&kq->sq)->prod;
	memset(&wr[0], 0, sizeof(wr[0]));
	wr[0].opcode = IBV_WR_SEND;
	check(ibv_post_send(qp, &wr[0], &bad) == EINVAL && bad == &wr[0] &&
	      fk.doorbells == db0 && ctl_of(&kq->sq)->prod == nw0,
	      "post_send in INIT: EINVAL, nothing published, no doorbell");
	rw[0].next = NULL;
	rw[0].num_sge = 0;
	w0 = ctl_of(&kq->rq)->prod;
	check(ibv_post_recv(qp, &rw[0], &rbad) == 0 &&
	      ctl_of(&kq->rq)->prod == w0 + 1,
	      "post_recv in INIT is accepted");
	{
		/* Two of this QP's completions around another QP's one. */
		struct sroce_cqe c[3];

		c[0] = mkcqe(0x101, IBV_WC_RECV, 1);
		c[1] = mkcqe(0x202, IBV_WC_RECV, 2);
		c[2] = mkcqe(0x303, IBV_WC_SEND, 3);
		c[0].qp_num = qp->qp_num;
		c[1].qp_num = qp->qp_num + 1;
		c[2].qp_num = qp->qp_num;
		for (i = 0; i < 3; i++)
			fk_cq_push(cq->handle, &c[i]);
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RESET;
	check(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == 0 &&
	      kq->state == IBV_QPS_RESET, "ibv_modify_qp to RESET");
	check(ibv_poll_cq(cq, 16, wc) == 1 && wc[0].wr_id == 0x202,
	      "RESET drops the QP's unpolled CQEs, keeps another QP's");
	check(ibv_post_recv(qp, &rw[0], &rbad) == EINVAL && rbad == &rw[0] &&
	      ctl_of(&kq->rq)->prod == w0 + 1,
	      "post_recv in RESET: EINVAL, nothing published");
	check(ibv_destroy_qp(qp) == 0 && !fk_qp_by_handle(kq - fk.qp),
	      "ibv_destroy_qp");
	check(ibv_destroy_cq(cq) == 0, "destroy its CQ");
}

static void test_ud_ah(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_ah_attr aa;
	struct ibv_send_wr wr, *bad;
	struct ibv_ah *ah;
	struct ibv_qp *qp;
	const struct fk_cmd_rec *rec;
	uint32_t nw0;
	int ret;

	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.grh.hop_limit = 64;
	aa.port_num = 1;
	fk.ah_num_next = 4242;
	ah = ibv_create_ah(pd, &aa);
	check(ah != NULL, "ibv_create_ah");
	rec = fk_last_cmd(IB_USER_VERBS_CMD_CREATE_AH);
	check(rec && rec->out_bytes == 12, "create_ah: 4+8-byte response");
	qp = cq ? mk_qp(pd, cq, IBV_QPT_UD, NULL) : NULL;
	check(qp != NULL, "ibv_create_qp UD");
	if (!qp || !ah)
		return;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(9);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x123456;
	wr.wr.ud.remote_qkey = 0x11111111;
	nw0 = fk.nwqe;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == 0 && fk.nwqe == nw0 + 1 &&
	      log_wqe(nw0)->wr.ud.ah_num == 4242 &&
	      log_wqe(nw0)->wr.ud.remote_qpn == 0x123456 &&
	      log_wqe(nw0)->wr.ud.remote_qkey == 0x11111111 &&
	      log_wqe(nw0)->ex.imm_data == htobe32(9),
	      "UD send names the AH by ah_num, with remote QPN/QKey");
	wr.opcode = IBV_WR_RDMA_WRITE;
	check(ibv_post_send(qp, &wr, &bad) == EINVAL, "RDMA WRITE on UD: EINVAL");
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = NULL;
	check(ibv_post_send(qp, &wr, &bad) == EINVAL, "UD send without AH: EINVAL");
	memset(&aa.grh.dgid, 0, sizeof(aa.grh.dgid));
	aa.grh.dgid.raw[0] = 0xff;
	rec = ibv_attach_mcast(qp, &aa.grh.dgid, 0) ? NULL :
	      fk_last_cmd(IB_USER_VERBS_CMD_ATTACH_MCAST);
	check(rec && rec->in_bytes == 32,
	      "ibv_attach_mcast: the kernel's ATTACH_MCAST command");
	rec = ibv_detach_mcast(qp, &aa.grh.dgid, 0) ? NULL :
	      fk_last_cmd(IB_USER_VERBS_CMD_DETACH_MCAST);
	check(rec && rec->in_bytes == 32,
	      "ibv_detach_mcast: the kernel's DETACH_MCAST command");
	check(ibv_destroy_qp(qp) == 0 && ibv_destroy_ah(ah) == 0 &&
	      ibv_destroy_cq(cq) == 0, "destroy UD QP, AH, CQ");
}

static void test_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd,
		       struct ibv_mr *mr, char *buf)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 31, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_ex *qx;
	struct ibv_qp *qp;
	struct ibv_mw *mw;
	struct ibv_mw_bind_info bi;
	struct ibv_data_buf db[2];
	uint32_t nw0, db0, prod0;
	struct fk_qp *kq;
	int ret;
	bool ok;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 32;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = pd;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	errno = 0;
	check(ibv_create_qp_ex(ctx, &a) == NULL && errno == EOPNOTSUPP,
	      "create_qp_ex asking for TSO: EOPNOTSUPP");
	a.send_ops_flags = IBV_QP_EX_WITH_SEND;
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	check(ibv_create_qp_ex(ctx, &a) == NULL && errno == EOPNOTSUPP,
	      "create_qp_ex with a creation flag: EOPNOTSUPP");
	a.create_flags = 0;
	qp = ibv_create_qp_ex(ctx, &a);
	check(qp && a.cap.max_send_wr >= 16 && ibv_destroy_qp(qp) == 0,
	      "create_qp_ex naming zero creation flags: created, caps back");
	a.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			   IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
			   IBV_QP_EX_WITH_SEND_WITH_INV |
			   IBV_QP_EX_WITH_RDMA_READ |
			   IBV_QP_EX_WITH_ATOMIC_WRITE;
#if SROCE_HAVE_WR_FLUSH
	a.send_ops_flags |= IBV_QP_EX_WITH_FLUSH;
	{
		/* a kernel whose MRs cannot grant FLUSH (6.1) */
		struct ibv_context *c2;

		fk.uctx_flags = 0;
		c2 = ibv_open_device(ctx->device);
		fk.uctx_flags = SROCE_UCTX_F_FLUSH;
		errno = 0;
		check(c2 && ibv_create_qp_ex(c2, &a) == NULL &&
		      errno == EOPNOTSUPP,
		      "FLUSH not offered by a kernel that cannot execute it: EOPNOTSUPP");
		if (c2)
			ibv_close_device(c2);
	}
#endif
	qp = ibv_create_qp_ex(ctx, &a);
	check(qp != NULL && qp_to(qp, IBV_QPS_RTS) == 0,
	      "ibv_create_qp_ex with send_ops_flags, to RTS");
	if (!qp)
		return;
	qx = ibv_qp_to_qp_ex(qp);
	check(qx != NULL, "ibv_qp_to_qp_ex");
	kq = fk_qp_by_handle(qp->handle);
	if (!qx || !kq)
		return;

	db0 = fk.doorbells;
	nw0 = fk.nwqe;
	ibv_wr_start(qx);
	qx->wr_id = 11;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 32);
	qx->wr_id = 12;
	qx->wr_flags = 0;
	ibv_wr_rdma_write_imm(qx, 0x55, 0xbeef000, htobe32(42));
	db[0].addr = buf;
	db[0].length = 5;
	db[1].addr = buf + 10;
	db[1].length = 6;
	ibv_wr_set_inline_data_list(qx, 2, db);
	qx->wr_id = 13;
	ibv_wr_atomic_fetch_add(qx, 0x66, 0xc000, 17);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 8);
	qx->wr_id = 14;
	ibv_wr_send_inv(qx, 0x1234);
	ibv_wr_set_sge_list(qx, 0, NULL);
	qx->wr_id = 15;
	ibv_wr_local_inv(qx, 0x4321);
	ret = ibv_wr_complete(qx);
	ok = ret == 0 && fk.doorbells == db0 + 1 && fk.nwqe == nw0 + 5 &&
	     log_wqe(nw0)->wr_id == 11 &&
	     log_wqe(nw0)->opcode == IB_UVERBS_WR_SEND &&
	     log_wqe(nw0)->send_flags == SROCE_SEND_SIGNALED &&
	     log_wqe(nw0)->num_sge == 1 && log_sge(nw0, 0)->length == 32 &&
	     log_wqe(nw0 + 1)->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
	     log_wqe(nw0 + 1)->ex.imm_data == htobe32(42) &&
	     log_wqe(nw0 + 1)->wr.rdma.rkey == 0x55 &&
	     log_wqe(nw0 + 1)->inline_len == 11 &&
	     log_wqe(nw0 + 1)->send_flags == SROCE_SEND_INLINE &&
	     !memcmp(fk.wqe_log[nw0 + 1] + 64, buf, 5) &&
	     !memcmp(fk.wqe_log[nw0 + 1] + 69, buf + 10, 6) &&
	     log_wqe(nw0 + 2)->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD &&
	     log_wqe(nw0 + 2)->wr.atomic.compare_add == 17 &&
	     log_wqe(nw0 + 3)->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
	     log_wqe(nw0 + 3)->ex.invalidate_rkey == 0x1234 &&
	     log_wqe(nw0 + 4)->opcode == IB_UVERBS_WR_LOCAL_INV &&
	     log_wqe(nw0 + 4)->ex.invalidate_rkey == 0x4321;
	check(ok, "ibv_wr_* batch of 5 (send, write_imm+inline list, faa, send_inv, local_inv): one doorbell, exact WQEs");

	prod0 = ctl_of(&kq->sq)->prod;
	db0 = fk.doorbells;
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_set_inline_data(qx, buf, 33);
	check(ibv_wr_complete(qx) == EINVAL && ctl_of(&kq->sq)->prod == prod0 &&
	      fk.doorbells == db0,
	      "wr batch with 33 inline bytes > 32: EINVAL, nothing published");
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, 1, 2);
	check(ibv_wr_complete(qx) == EINVAL && fk.doorbells == db0,
	      "wr op not in send_ops_flags: EINVAL");
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_send_tso(qx, buf, 4, 100);
	check(ibv_wr_complete(qx) == EOPNOTSUPP && fk.doorbells == db0,
	      "ibv_wr_send_tso: EOPNOTSUPP, no crash");
	/* ATOMIC WRITE: its 8 bytes inline, in memory order */
	nw0 = fk.nwqe;
	ibv_wr_start(qx);
	qx->wr_id = 16;
	ibv_wr_atomic_write(qx, 0x77, 0xd008, "ABCDEFGH");
	ret = ibv_wr_complete(qx);
	check(ret == 0 && fk.nwqe == nw0 + 1 &&
	      log_wqe(nw0)->opcode == SROCE_WR_ATOMIC_WRITE &&
	      log_wqe(nw0)->wr.rdma.rkey == 0x77 &&
	      log_wqe(nw0)->wr.rdma.remote_addr == 0xd008 &&
	      log_wqe(nw0)->inline_len == 8 &&
	      (log_wqe(nw0)->send_flags & SROCE_SEND_INLINE) &&
	      !memcmp(fk.wqe_log[nw0] + 64, "ABCDEFGH", 8),
	      "ibv_wr_atomic_write: one WQE, 8 bytes inline");
	db0 = fk.doorbells;
	ibv_wr_start(qx);
	ibv_wr_atomic_write(qx, 0x77, 0xd004, "ABCDEFGH");
	check(ibv_wr_complete(qx) == EINVAL && fk.nwqe == nw0 + 1 &&
	      fk.doorbells == db0,
	      "ibv_wr_atomic_write to an unaligned address: EINVAL");
	ibv_wr_start(qx);
	ibv_wr_atomic_write(qx, 0x77, 0xd008, "ABCDEFGH");
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 8);
	check(ibv_wr_complete(qx) == EINVAL && fk.nwqe == nw0 + 1,
	      "ibv_wr_atomic_write then set_sge: EINVAL, nothing posted");
#if SROCE_HAVE_WR_FLUSH
	ibv_wr_start(qx);
	qx->wr_id = 17;
	ibv_wr_flush(qx, 0x1234, 0x1000, 64, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ret = ibv_wr_complete(qx);
	check(ret == 0 && fk.nwqe == nw0 + 2 &&
	      log_wqe(nw0 + 1)->opcode == SROCE_WR_FLUSH &&
	      log_wqe(nw0 + 1)->wr.flush.rkey == 0x1234 &&
	      log_wqe(nw0 + 1)->wr.flush.remote_addr == 0x1000 &&
	      log_wqe(nw0 + 1)->wr.flush.length == 64 &&
	      log_wqe(nw0 + 1)->wr.flush.type == SROCE_FLUSH_TYPE_GLOBAL &&
	      log_wqe(nw0 + 1)->wr.flush.level == SROCE_FLUSH_LEVEL_RANGE,
	      "ibv_wr_flush (rdma-core 56): one WQE, fields as given");
	db0 = fk.doorbells;
	ibv_wr_start(qx);
	ibv_wr_flush(qx, 0x1234, 0x1000, 64, 4, IBV_FLUSH_RANGE);
	check(ibv_wr_complete(qx) == EINVAL && fk.doorbells == db0,
	      "ibv_wr_flush with an unknown placement type: EINVAL");
	ibv_wr_start(qx);
	ibv_wr_flush(qx, 0x1234, 0x1000, 1ULL << 32, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_MR);
	check(ibv_wr_complete(qx) == EINVAL && fk.doorbells == db0,
	      "ibv_wr_flush of more than 2 GiB: EINVAL");
#endif
	prod0 = ctl_of(&kq->sq)->prod;
	db0 = fk.doorbells;
	ibv_wr_start(qx);
	ibv_wr_send(qx);
	ibv_wr_abort(qx);
	check(ctl_of(&kq->sq)->prod == prod0 && fk.doorbells == db0,
	      "ibv_wr_abort publishes nothing");

	/* memory windows */
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	check(mw && mw->rkey == 0xabcd00 && mw->type == IBV_MW_TYPE_2,
	      "ibv_alloc_mw type 2");
	if (mw) {
		memset(&bi, 0, sizeof(bi));
		bi.mr = mr;
		bi.addr = (uintptr_t)buf;
		bi.length = 64;
		bi.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		nw0 = fk.nwqe;
		ibv_wr_start(qx);
		qx->wr_id = 21;
		ibv_wr_bind_mw(qx, mw, 0xabcd05, &bi);
		ret = ibv_wr_complete(qx);
		check(ret == 0 && fk.nwqe == nw0 + 1 &&
		      log_wqe(nw0)->opcode == IB_UVERBS_WR_BIND_MW &&
		      log_wqe(nw0)->wr.bind.mw_rkey == 0xabcd05 &&
		      log_wqe(nw0)->wr.bind.mr_lkey == mr->lkey &&
		      log_wqe(nw0)->wr.bind.length == 64 &&
		      log_wqe(nw0)->wr.bind.access == IBV_ACCESS_REMOTE_READ,
		      "ibv_wr_bind_mw (type 2) goes through the SQ as BIND_MW");
		check(ibv_dealloc_mw(mw) == 0, "ibv_dealloc_mw");
	}
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (mw) {
		struct ibv_mw_bind mb;

		memset(&mb, 0, sizeof(mb));
		mb.wr_id = 31;
		mb.send_flags = IBV_SEND_SIGNALED;
		mb.bind_info.mr = mr;
		mb.bind_info.addr = (uintptr_t)buf;
		mb.bind_info.length = 16;
		mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		nw0 = fk.nwqe;
		ret = ibv_bind_mw(qp, mw, &mb);
		check(ret == 0 && mw->rkey == 0xabcd01 && fk.nwqe == nw0 + 1 &&
		      log_wqe(nw0)->opcode == IB_UVERBS_WR_BIND_MW &&
		      log_wqe(nw0)->wr.bind.mw_rkey == 0xabcd01 &&
		      log_wqe(nw0)->wr_id == 31,
		      "ibv_bind_mw (type 1): BIND_MW WQE, rkey key byte bumped");
		{
			struct ibv_send_wr w, *b;

			memset(&w, 0, sizeof(w));
			w.opcode = IBV_WR_BIND_MW;
			w.bind_mw.mw = mw;
			w.bind_mw.bind_info = mb.bind_info;
			check(ibv_post_send(qp, &w, &b) == EINVAL,
			      "type 1 window through ibv_post_send: EINVAL");
		}
		ibv_dealloc_mw(mw);
	}
	check(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0,
	      "destroy QP ex and CQ");
}

/* XRC_SEND: each WQE names the target's XRC SRQ, both ways of posting. */
static void test_xrc_send(struct ibv_context *ctx, struct ibv_pd *pd,
			  struct ibv_mr *mr, char *buf)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 31, NULL, NULL, 0);
	struct ibv_sge sge = { (uintptr_t)buf, 16, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 21, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_ex *qx;
	struct ibv_qp *qp;
	uint32_t nw0;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.qp_type = IBV_QPT_XRC_SEND;
	a.cap.max_send_wr = 8;
	a.cap.max_send_sge = 1;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = pd;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE;
	errno = 0;
	check(ibv_create_qp_ex(ctx, &a) == NULL && errno == EOPNOTSUPP,
	      "XRC_SEND with ATOMIC WRITE (RC only): EOPNOTSUPP");
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	qp = ibv_create_qp_ex(ctx, &a);
	check(qp && qp_to(qp, IBV_QPS_RTS) == 0, "XRC_SEND QP, to RTS");
	if (!qp)
		return;
	qx = ibv_qp_to_qp_ex(qp);
	nw0 = fk.nwqe;
	wr.qp_type.xrc.remote_srqn = 0x123456;
	check(ibv_post_send(qp, &wr, &bad) == 0 && fk.nwqe == nw0 + 1 &&
	      log_wqe(nw0)->xrc_srqn == 0x123456 &&
	      log_wqe(nw0)->opcode == IB_UVERBS_WR_SEND,
	      "ibv_post_send: the WQE names remote SRQ 0x123456");
	ibv_wr_start(qx);
	qx->wr_id = 22;
	ibv_wr_rdma_write(qx, 0x99, 0xe000);
	ibv_wr_set_xrc_srqn(qx, 0x654321);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 8);
	check(ibv_wr_complete(qx) == 0 && fk.nwqe == nw0 + 2 &&
	      log_wqe(nw0 + 1)->xrc_srqn == 0x654321 &&
	      log_wqe(nw0 + 1)->wr.rdma.rkey == 0x99,
	      "ibv_wr_set_xrc_srqn: the WQE names remote SRQ 0x654321");
	check(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0,
	      "XRC_SEND QP destroyed");
}

static void test_srq(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa;
	struct ibv_srq_attr at;
	struct ibv_recv_wr rw[3], *bad;
	struct ibv_sge sg[2] = { { 0x1000, 10, 1 }, { 0x2000, 20, 2 } };
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct fk_ring *r;
	uint32_t w0;
	int ret;
	bool ok;

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 2;
	srq = ibv_create_srq(pd, &sa);
	check(srq != NULL, "ibv_create_srq");
	if (!srq)
		return;
	r = fk_srq_ring(srq->handle);
	check(r && r->num == 4 && r->stride == 48 &&
	      fk_last_cmd(IB_USER_VERBS_CMD_CREATE_SRQ)->out_bytes == 48,
	      "SRQ ring 4x48, 16+32-byte response");
	if (!r)
		return;
	memset(rw, 0, sizeof(rw));
	rw[0].wr_id = 1;
	rw[0].sg_list = sg;
	rw[0].num_sge = 2;
	rw[0].next = &rw[1];
	rw[1].wr_id = 2;
	w0 = fk.writes;
	ret = ibv_post_srq_recv(srq, rw, &bad);
	{
		struct sroce_recv_wqe *e = slot_of(r, 0);
		struct sroce_sge *s = (struct sroce_sge *)(e + 1);

		ok = ret == 0 && fk.writes == w0 && ctl_of(r)->prod == 2 &&
		     e->wr_id == 1 && e->num_sge == 2 && s[1].addr == 0x2000 &&
		     s[1].length == 20 && s[1].lkey == 2 &&
		     ((struct sroce_recv_wqe *)slot_of(r, 1))->num_sge == 0;
	}
	check(ok, "ibv_post_srq_recv: 2 WQEs, prod=2, no system call");
	rw[0].next = NULL;
	rw[0].num_sge = 2;
	ibv_post_srq_recv(srq, rw, &bad);
	ibv_post_srq_recv(srq, rw, &bad);
	ret = ibv_post_srq_recv(srq, rw, &bad);
	check(ret == ENOMEM && bad == rw && ctl_of(r)->prod == 4,
	      "SRQ full at 4: ENOMEM");
	memset(&at, 0, sizeof(at));
	at.max_wr = 100;
	check(ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR) == 0,
	      "SRQ resize to 100");
	r = fk_srq_ring(srq->handle);
	check(r && r->num == 128 && ctl_of(r)->prod == 4 &&
	      ((struct sroce_recv_wqe *)slot_of(r, 3))->wr_id == 1,
	      "SRQ resized: 128 slots, the 4 WQEs moved to its start");
	rw[0].wr_id = 9;
	ret = ibv_post_srq_recv(srq, rw, &bad);
	check(ret == 0 && r && ctl_of(r)->prod == 5 &&
	      ((struct sroce_recv_wqe *)slot_of(r, 4))->wr_id == 9,
	      "post after resize: slot 4 of the new ring, prod=5");
	at.max_wr = 4;
	check(ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR) == EINVAL &&
	      r && ctl_of(r)->prod == 5, "SRQ shrink below 5 WQEs: EINVAL");
	at.srq_limit = 2;
	check(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT) == 0, "arm SRQ limit");
	check(ibv_query_srq(srq, &at) == 0 && at.max_wr == 128 &&
	      at.srq_limit == 3, "ibv_query_srq");

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qp = cq ? mk_qp(pd, cq, IBV_QPT_RC, srq) : NULL;
	check(qp != NULL && !fk_qp_by_handle(qp->handle)->rq.map,
	      "QP on an SRQ has no RQ ring");
	if (qp) {
		check(ibv_post_recv(qp, rw, &bad) == EINVAL,
		      "post_recv on an SRQ-attached QP: EINVAL");
		ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(cq);
	check(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
}

/* ---- concurrency: the per-queue locks ---- */

#define TH_N		4
#define TH_PER		2000

struct th_arg {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	int id;
	int errors;
	uint32_t got;
	uint8_t *seen;
};

static void *th_post_recv(void *p)
{
	struct th_arg *a = p;
	struct ibv_recv_wr w, *bad;
	int i;

	for (i = 0; i < TH_PER; i++) {
		memset(&w, 0, sizeof(w));
		w.wr_id = (uint64_t)a->id * TH_PER + i;
		if (ibv_post_recv(a->qp, &w, &bad))
			a->errors++;
	}
	return NULL;
}

static void *th_post_send(void *p)
{
	struct th_arg *a = p;
	struct ibv_send_wr w, *bad;
	int i, ret;

	for (i = 0; i < TH_PER; i++) {
		memset(&w, 0, sizeof(w));
		w.wr_id = (uint64_t)a->id * TH_PER + i;
		w.opcode = IBV_WR_SEND;
		while ((ret = ibv_post_send(a->qp, &w, &bad)) == ENOMEM)
			fk_kick_sq(a->qp->handle);
		if (ret)
			a->errors++;
	}
	return NULL;
}

static volatile int th_stop;	/* set once nothing is left to produce */

static void *th_poll(void *p)
{
	struct th_arg *a = p;
	struct ibv_wc wc[8];
	int n, i;

	for (;;) {
		n = ibv_poll_cq(a->cq, 8, wc);
		if (!n) {
			if (th_stop)
				break;
			continue;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id >= (uint64_t)TH_N * TH_PER ||
			    __atomic_fetch_add(&a->seen[wc[i].wr_id], 1,
					       __ATOMIC_RELAXED))
				a->errors++;
			a->got++;
		}
	}
	return NULL;
}

static void test_threads(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 255, NULL, NULL, 0);
	struct ibv_qp_init_attr qa;
	struct th_arg a[TH_N], pa[2];
	pthread_t t[TH_N], pt[2];
	static uint8_t seen[TH_N * TH_PER];
	struct ibv_qp *qp;
	struct fk_qp *kq;
	uint32_t i, errors = 0, got = 0;
	bool ok = true;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = TH_N * TH_PER;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = cq ? ibv_create_qp(pd, &qa) : NULL;
	if (qp && qp_to(qp, IBV_QPS_RTS))
		qp = NULL;
	kq = qp ? fk_qp_by_handle(qp->handle) : NULL;
	check(kq != NULL, "threads: QP with an 8192-entry RQ");
	if (!kq)
		return;

	for (i = 0; i < TH_N; i++) {
		a[i] = (struct th_arg){ .qp = qp, .id = (int)i };
		pthread_create(&t[i], NULL, th_post_recv, &a[i]);
	}
	for (i = 0; i < TH_N; i++) {
		pthread_join(t[i], NULL);
		errors += a[i].errors;
	}
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < TH_N * TH_PER; i++) {
		struct sroce_recv_wqe *w = slot_of(&kq->rq, i);

		if (w->wr_id >= TH_N * TH_PER || seen[w->wr_id]++)
			ok = false;
	}
	check(!errors && ok && ctl_of(&kq->rq)->prod == TH_N * TH_PER,
	      "4 threads x 2000 post_recv: every wr_id exactly once, prod=8000");

	/* senders race on the SQ while two pollers race on the CQ */
	memset(seen, 0, sizeof(seen));
	fk.cq_overflows = 0;
	th_stop = 0;
	for (i = 0; i < 2; i++) {
		pa[i] = (struct th_arg){ .cq = cq, .seen = seen };
		pthread_create(&pt[i], NULL, th_poll, &pa[i]);
	}
	for (i = 0; i < TH_N; i++) {
		a[i] = (struct th_arg){ .qp = qp, .id = (int)i };
		pthread_create(&t[i], NULL, th_post_send, &a[i]);
	}
	errors = 0;
	for (i = 0; i < TH_N; i++) {
		pthread_join(t[i], NULL);
		errors += a[i].errors;
	}
	while (fk_kick_sq(qp->handle))
		;
	th_stop = 1;
	for (i = 0; i < 2; i++) {
		pthread_join(pt[i], NULL);
		errors += pa[i].errors;
		got += pa[i].got;
	}
	ok = true;
	for (i = 0; i < TH_N * TH_PER; i++)
		if (seen[i] != 1)
			ok = false;
	check(!errors && ok && got == TH_N * TH_PER && !fk.cq_overflows,
	      "4 senders + 2 pollers: 8000 completions, each exactly once (got %u, errors %u, overflows %u)",
	      got, errors, fk.cq_overflows);
	check(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0,
	      "threads: destroy");
}

/* Unmodified rdma-core tools, with the fake kernel preloaded. */
static void test_tools(void)
{
	const char *pre = getenv("SROCE_PRELOAD");
	char cmd[1024], out[16384];
	size_t n;
	FILE *f;
	int st;

	if (!check(pre != NULL, "SROCE_PRELOAD names the preloadable fake kernel"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "LD_PRELOAD=%s ibv_devinfo -v -d sroce0 2>/dev/null", pre);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = 0;
	st = f ? pclose(f) : -1;
	check(st == 0 && strstr(out, "hca_id:\tsroce0") &&
	      strstr(out, "fw_ver:\t\t\t\t1.2.3") &&
	      strstr(out, "node_guid:\t\t\t1122:3344:5566:7788") &&
	      strstr(out, "PORT_ACTIVE") && strstr(out, "link_layer:\t\tEthernet") &&
	      strstr(out, "GID[  1]:\t\t::ffff:10.0.2.1, RoCE v2"),
	      "ibv_devinfo -v -d sroce0 runs clean and shows fw, GUID, port, RoCE v2 GID (exit %d)",
	      st);
	snprintf(cmd, sizeof(cmd), "LD_PRELOAD=%s ibv_devices 2>/dev/null", pre);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = 0;
	st = f ? pclose(f) : -1;
	check(st == 0 && strstr(out, "sroce0") && !strstr(out, "sroce1") &&
	      !strstr(out, "sroce2") && !strstr(out, "roce3"),
	      "ibv_devices lists sroce0 alone");
}

/*
 * The load-time version check, end to end: the plugin is loaded against a
 * stand-in libibverbs installed under each name in SROCE_STUB_VERSIONS
 * (44.0, 45.0, 56.1).  It registers, silently, with the one it was built
 * for, and refuses each other one with a single line naming both.
 */
static void test_loadcheck(void)
{
	const char *lc = getenv("SROCE_LOADCHECK");
	const char *dir = getenv("SROCE_STUB_DIR");
	const char *prov = getenv("SROCE_PROVIDER");
	const char *vers = getenv("SROCE_STUB_VERSIONS");
	char cmd[2048], out[4096], built[64], loaded[64], list[256];
	char *v, *save = NULL, *nl;
	int st, lines, mine = 0;
	size_t n;
	FILE *f;

	if (!check(lc && dir && prov && vers,
		   "load-check helper and stubs present"))
		return;
	snprintf(list, sizeof(list), "%s", vers);
	snprintf(built, sizeof(built), "built for rdma-core %s (%s)",
		 SROCE_RDMA_CORE_VERSION, SROCE_LIBIBVERBS_SONAME_TAIL);
	for (v = strtok_r(list, " ", &save); v; v = strtok_r(NULL, " ", &save)) {
		snprintf(cmd, sizeof(cmd),
			 "LD_LIBRARY_PATH=%s/stub%s %s %s 2>&1", dir, v, lc,
			 prov);
		f = popen(cmd, "r");
		n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
		out[n] = 0;
		st = f ? pclose(f) : -1;
		if (!strcmp(v, SROCE_RDMA_CORE_VERSION)) {
			mine++;
			check(st == 0 && strstr(out, "registered=1") &&
			      !strstr(out, "libsroce:"),
			      "libibverbs.so.1.14.%s: plugin registers, silently",
			      v);
			continue;
		}
		lines = 0;
		for (nl = out; (nl = strstr(nl, "libsroce:")); nl++)
			lines++;
		snprintf(loaded, sizeof(loaded), "but rdma-core %s is loaded", v);
		if (!check(st == 0 && strstr(out, "registered=0") && lines == 1 &&
		      strstr(out, "libsroce: not registering: ") &&
		      strstr(out, built) && strstr(out, loaded),
		      "libibverbs.so.1.14.%s: plugin refuses with one line naming %s and %s",
		      v, SROCE_RDMA_CORE_VERSION, v))
			printf("# %s", out);
	}
	check(mine == 1, "the stubs include the release built for (%s)",
	      SROCE_RDMA_CORE_VERSION);
}

/*
 * A second context on a "kernel" with the ioctl framework: CQ and QP
 * creation then travel as ioctl methods, our driver data as UHW attributes,
 * as they do on a real 6.1 kernel.
 */
static void test_ioctl_path(struct ibv_device *dev)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	struct sroce_cqe c;
	uint32_t cr0;

	fk.ioctl_mode = true;
	ctx = ibv_open_device(dev);
	check(ctx != NULL, "ioctl kernel: open (get_context falls back to write)");
	if (!ctx)
		goto out;
	pd = ibv_alloc_pd(ctx);
	cr0 = fk.ioctl_creates;
	cq = pd ? ibv_create_cq(ctx, 7, NULL, NULL, 0) : NULL;
	check(cq && fk.ioctl_creates == cr0 + 1 && fk.ioctl_uhw_out == 24 &&
	      fk.ioctl_uhw_in == 0 && fk.ioctl_driver_id == SROCE_DRIVER_ID &&
	      cq->cqe == 8,
	      "ioctl CQ_CREATE: UHW_OUT 24 bytes, no UHW_IN, sroce's driver id");
	if (!cq)
		goto close;
	c = mkcqe(0x77, IBV_WC_RECV, 5);
	fk_cq_push(cq->handle, &c);
	check(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 0x77,
	      "ioctl-created CQ ring works");
	qp = mk_qp(pd, cq, IBV_QPT_RC, NULL);
	check(qp && fk.ioctl_creates == cr0 + 2 && fk.ioctl_uhw_out == 48 &&
	      fk.ioctl_uhw_in == 0 && qp->qp_num == fk_qp_by_handle(qp->handle)->qpn,
	      "ioctl QP_CREATE: UHW_OUT 48 bytes, QPN and handle from attributes");
	if (qp) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x88;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		check(ibv_post_send(qp, &wr, &bad) == 0 &&
		      ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 0x88,
		      "ioctl-created QP: send through the ring, completion back");
		check(ibv_destroy_qp(qp) == 0, "ioctl context: destroy QP");
	}
	check(ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0,
	      "ioctl context: destroy CQ, PD");
close:
	ibv_close_device(ctx);
out:
	fk.ioctl_mode = false;
}

int main(void)
{
	const char *prov = getenv("SROCE_PROVIDER");
	const char *tmp = getenv("SROCE_TEST_TMP");
	char sysfs[512];
	struct ibv_device **list = NULL;
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr = NULL;
	static char buf[4096];
	void *h;

	fk_reset();
	snprintf(sysfs, sizeof(sysfs), "%s/sysfs.%d", tmp ? tmp : "/tmp",
		 (int)getpid());
	if (fk_make_sysfs(sysfs)) {
		printf("Bail out! cannot build fake sysfs at %s\n", sysfs);
		return 1;
	}
	setenv("SYSFS_PATH", sysfs, 1);
	/* The give-way test needs the default behaviour. */
	unsetenv("SROCE_CQ_GIVE_WAY");

	h = dlopen(prov ? prov : SROCE_PROVIDER_FILE, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		printf("Bail out! dlopen: %s\n", dlerror());
		return 1;
	}
	p_ops = (const struct verbs_context_ops *(*)(void))dlsym(h, "sroce_context_ops");
	p_path_ok = (bool (*)(const char *))dlsym(h, "sroce_libibverbs_path_ok");
	p_match = (bool (*)(struct verbs_sysfs_dev *))dlsym(h, "sroce_match_device");
	if (!p_ops || !p_path_ok || !p_match) {
		printf("Bail out! plugin lacks its test hooks\n");
		return 1;
	}

	test_pure(sysfs);
	ctx = open_sroce0(&list);
	check(ctx != NULL, "ibv_open_device(sroce0)");
	if (ctx) {
		const struct fk_cmd_rec *rec = fk_last_cmd(IB_USER_VERBS_CMD_GET_CONTEXT);

		check(rec && rec->in_bytes == 16 && rec->out_bytes == 24,
		      "get_context: 16-byte command, 8+16-byte response");
		test_ops_routing(ctx);
		test_device(ctx);
		test_unsupported(ctx);
		test_pd_mr(ctx, &pd, &mr, buf, sizeof(buf));
		if (pd && mr) {
			test_cq(ctx);
			test_cq_give_way(ctx);
			test_cq_ex(ctx);
			test_qp(ctx, pd, mr, buf);
			test_ud_ah(ctx, pd);
			test_qp_ex(ctx, pd, mr, buf);
			test_xrc_send(ctx, pd, mr, buf);
			test_parent_domain(ctx);
			test_srq(ctx, pd);
			test_threads(ctx, pd);
			check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
			check(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
		}
		check(ibv_close_device(ctx) == 0, "ibv_close_device");
	}

	if (list && list[0])
		test_ioctl_path(list[0]);

	/* a kernel speaking another sroce ABI is refused at open */
	if (list && list[0]) {
		fk.abi_version = SROCE_UVERBS_ABI_VERSION + 1;
		errno = 0;
		ctx = ibv_open_device(list[0]);
		check(ctx == NULL && errno == EPROTO,
		      "ucontext abi_version mismatch: open fails with EPROTO");
		if (ctx)
			ibv_close_device(ctx);
		fk.abi_version = SROCE_UVERBS_ABI_VERSION;
	}
	if (list)
		ibv_free_device_list(list);
	test_tools();
	test_loadcheck();

	printf("1..%d\n", t_num);
	printf("%d passed, %d failed\n", t_pass, t_fail);
	return t_fail ? 1 : 0;
}
