// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sroce_frmr: fast-register MRs as a kernel consumer (NVMe, NFS, iSER)
 * uses them, run once when loaded: insmod sroce_frmr.ko dev=sroce0 gid=N.
 *
 * QP b registers four separate pages with IB_WR_REG_MR; QP a, connected
 * to b in loopback, writes and reads them through the key.  b invalidates
 * the key with LOCAL_INV, and later a new key with a's SEND_WITH_INV; after
 * each, a WRITE through the dead key must fail with a remote access error
 * and change no byte.  One TAP line per check goes to the kernel log
 * ("sroce_frmr: ok N - ..."); loading fails with -EIO if a check failed.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "sroce0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");
static int gid = 1;
module_param(gid, int, 0444);
MODULE_PARM_DESC(gid, "RoCE v2 GID index of the device's own address");

#define NPAGES	4
#define LEN	(NPAGES * PAGE_SIZE)
#define MSG	64

struct frmr_test {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cqa, *cqb;
	struct ib_qp *a, *b;		/* a: initiator; b: owns the MR */
	struct ib_mr *mr;
	struct page *pages[NPAGES];
	struct scatterlist sg[NPAGES];
	bool sg_mapped;
	u8 *src, *dst;			/* a's buffers, LEN each */
	union ib_gid gid;
	int n, failed;
};

static void check(struct frmr_test *t, bool ok, const char *what)
{
	t->n++;
	if (!ok)
		t->failed++;
	pr_info("sroce_frmr: %sok %d - %s\n", ok ? "" : "not ", t->n, what);
}

/* The CQs are polled; nothing arms them, and no event is expected. */
static void no_comp(struct ib_cq *cq, void *ctx)
{
}

static void no_event(struct ib_event *ev, void *ctx)
{
}

/* The completion with @id on @cq, within 10 s; flushed others are skipped. */
static int wait_wc(struct ib_cq *cq, u64 id, struct ib_wc *out)
{
	unsigned long end = jiffies + 10 * HZ;
	struct ib_wc wc;
	int n;

	while (time_before(jiffies, end)) {
		n = ib_poll_cq(cq, 1, &wc);
		if (n < 0)
			return n;
		if (n == 1 && wc.wr_id == id) {
			*out = wc;
			return 0;
		}
		if (!n)
			usleep_range(500, 1000);
	}
	return -ETIMEDOUT;
}

static int qp_connect(struct frmr_test *t, struct ib_qp *qp, u32 dqpn)
{
	struct ib_qp_attr at = {};
	int err;

	at.qp_state = IB_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	err = ib_modify_qp(qp, &at, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IB_QPS_RTR;
	at.path_mtu = IB_MTU_1024;
	at.dest_qp_num = dqpn;
	at.rq_psn = 1;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	at.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&at.ah_attr, 1);
	rdma_ah_set_grh(&at.ah_attr, &t->gid, 0, gid, 64, 0);
	err = ib_modify_qp(qp, &at, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IB_QPS_RTS;
	at.sq_psn = 1;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 1;
	return ib_modify_qp(qp, &at, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static void pair_down(struct frmr_test *t)
{
	if (t->a)
		ib_destroy_qp(t->a);
	if (t->b)
		ib_destroy_qp(t->b);
	t->a = NULL;
	t->b = NULL;
}

/* A fresh connected pair: a QP that met a dead key is in ERR for good. */
static int pair_up(struct frmr_test *t)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qp;
	int err;

	ia.send_cq = t->cqa;
	ia.recv_cq = t->cqa;
	qp = ib_create_qp(t->pd, &ia);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	t->a = qp;
	ia.send_cq = t->cqb;
	ia.recv_cq = t->cqb;
	qp = ib_create_qp(t->pd, &ia);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	t->b = qp;
	err = qp_connect(t, t->a, t->b->qp_num);
	return err ?: qp_connect(t, t->b, t->a->qp_num);
}

static int post_wait(struct ib_qp *qp, struct ib_cq *cq, struct ib_send_wr *wr,
		     enum ib_wc_status *st, struct ib_wc *out)
{
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	int err;

	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(qp, wr, &bad);
	if (!err)
		err = wait_wc(cq, wr->wr_id, &wc);
	if (err)
		return err;
	*st = wc.status;
	if (out)
		*out = wc;
	return 0;
}

/* b registers the pages under the MR's current key. */
static bool fast_reg(struct frmr_test *t)
{
	struct ib_reg_wr wr = {};
	enum ib_wc_status st;

	if (ib_map_mr_sg(t->mr, t->sg, NPAGES, NULL, PAGE_SIZE) != NPAGES)
		return false;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_id = 1;
	wr.mr = t->mr;
	wr.key = t->mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		    IB_ACCESS_REMOTE_READ;
	return !post_wait(t->b, t->cqb, &wr.wr, &st, NULL) &&
	       st == IB_WC_SUCCESS;
}

/* a's RDMA WRITE (from src) or READ (into dst) of all pages via @rkey. */
static int rdma_op(struct frmr_test *t, enum ib_wr_opcode op, u32 rkey,
		   enum ib_wc_status *st)
{
	u8 *buf = op == IB_WR_RDMA_READ ? t->dst : t->src;
	struct ib_sge sge = {
		.addr = (uintptr_t)buf,
		.length = LEN,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {};

	wr.wr.opcode = op;
	wr.wr.wr_id = 2;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = t->mr->iova;
	wr.rkey = rkey;
	return post_wait(t->a, t->cqa, &wr.wr, st, NULL);
}

/* Do the registered pages hold @buf? */
static bool pages_hold(struct frmr_test *t, const u8 *buf)
{
	int i;

	for (i = 0; i < NPAGES; i++)
		if (memcmp(page_address(t->pages[i]), buf + i * PAGE_SIZE,
			   PAGE_SIZE))
			return false;
	return true;
}

static void pages_copy_to(struct frmr_test *t, u8 *buf)
{
	int i;

	for (i = 0; i < NPAGES; i++)
		memcpy(buf + i * PAGE_SIZE, page_address(t->pages[i]),
		       PAGE_SIZE);
}

/* A WRITE through the dead @rkey fails and leaves every byte alone. */
static void dead_key(struct frmr_test *t, u32 rkey, const char *what)
{
	enum ib_wc_status st = IB_WC_SUCCESS;
	char msg[96];
	int err;

	pages_copy_to(t, t->dst);
	memset(t->src, 0x5a, LEN);
	err = rdma_op(t, IB_WR_RDMA_WRITE, rkey, &st);
	snprintf(msg, sizeof(msg), "WRITE through the key %s: %s",
		 what, ib_wc_status_msg(st));
	check(t, !err && st == IB_WC_REM_ACCESS_ERR, msg);
	check(t, pages_hold(t, t->dst), "... and no byte changed");
}

static void run(struct frmr_test *t)
{
	enum ib_wc_status st = IB_WC_GENERAL_ERR;
	struct ib_send_wr inv = {};
	struct ib_recv_wr rwr = {};
	const struct ib_recv_wr *rbad;
	struct ib_sge rsge;
	struct ib_wc wc = {};
	u32 key;
	int err;

	check(t, fast_reg(t), "REG_MR of 4 separate pages");
	get_random_bytes(t->src, LEN);
	err = rdma_op(t, IB_WR_RDMA_WRITE, t->mr->rkey, &st);
	check(t, !err && st == IB_WC_SUCCESS && pages_hold(t, t->src),
	      "RDMA WRITE of 16 KiB through the key lands byte for byte");
	get_random_bytes(page_address(t->pages[2]), PAGE_SIZE);
	memset(t->dst, 0, LEN);
	err = rdma_op(t, IB_WR_RDMA_READ, t->mr->rkey, &st);
	check(t, !err && st == IB_WC_SUCCESS && pages_hold(t, t->dst),
	      "RDMA READ of 16 KiB through the key returns the pages");

	key = t->mr->rkey;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_id = 3;
	inv.ex.invalidate_rkey = key;
	err = post_wait(t->b, t->cqb, &inv, &st, NULL);
	check(t, !err && st == IB_WC_SUCCESS, "LOCAL_INV of the key");
	dead_key(t, key, "LOCAL_INV killed");

	/* Both QPs met the error; the MR is reused with a new key. */
	pair_down(t);
	err = pair_up(t);
	check(t, !err, "a new QP pair");
	if (err)
		return;
	ib_update_fast_reg_key(t->mr, (t->mr->rkey & 0xff) + 1);
	check(t, t->mr->rkey != key && fast_reg(t),
	      "REG_MR again under a new key");
	get_random_bytes(t->src, LEN);
	err = rdma_op(t, IB_WR_RDMA_WRITE, t->mr->rkey, &st);
	check(t, !err && st == IB_WC_SUCCESS && pages_hold(t, t->src),
	      "RDMA WRITE through the new key lands byte for byte");
	err = rdma_op(t, IB_WR_RDMA_WRITE, key, &st);
	check(t, !err && st == IB_WC_REM_ACCESS_ERR,
	      "... the old key stays dead");

	pair_down(t);
	err = pair_up(t);
	check(t, !err, "a new QP pair");
	if (err)
		return;
	rsge.addr = (uintptr_t)t->dst;
	rsge.length = MSG;
	rsge.lkey = t->pd->local_dma_lkey;
	rwr.wr_id = 4;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	err = ib_post_recv(t->b, &rwr, &rbad);
	rsge.addr = (uintptr_t)t->src;
	inv.opcode = IB_WR_SEND_WITH_INV;
	inv.wr_id = 5;
	inv.sg_list = &rsge;
	inv.num_sge = 1;
	inv.ex.invalidate_rkey = t->mr->rkey;
	err = err ?: post_wait(t->a, t->cqa, &inv, &st, NULL);
	check(t, !err && st == IB_WC_SUCCESS, "SEND_WITH_INV of the new key");
	err = wait_wc(t->cqb, 4, &wc);
	check(t, !err && wc.status == IB_WC_SUCCESS &&
	      (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	      wc.ex.invalidate_rkey == t->mr->rkey &&
	      !memcmp(t->dst, t->src, MSG),
	      "... received with IB_WC_WITH_INVALIDATE naming the key");
	dead_key(t, t->mr->rkey, "SEND_WITH_INV killed");
}

static void teardown(struct frmr_test *t)
{
	int i;

	pair_down(t);
	if (t->mr && !IS_ERR(t->mr))
		ib_dereg_mr(t->mr);
	if (t->sg_mapped)
		ib_dma_unmap_sg(t->ibdev, t->sg, NPAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < NPAGES; i++)
		if (t->pages[i])
			__free_page(t->pages[i]);
	kfree(t->src);
	kfree(t->dst);
	if (t->cqa && !IS_ERR(t->cqa))
		ib_destroy_cq(t->cqa);
	if (t->cqb && !IS_ERR(t->cqb))
		ib_destroy_cq(t->cqb);
	if (t->pd && !IS_ERR(t->pd))
		ib_dealloc_pd(t->pd);
	ib_device_put(t->ibdev);
}

static int setup(struct frmr_test *t)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	int i;

	if (rdma_query_gid(t->ibdev, 1, gid, &t->gid))
		return -EINVAL;
	t->pd = ib_alloc_pd(t->ibdev, 0);
	if (IS_ERR(t->pd))
		return PTR_ERR(t->pd);
	t->cqa = ib_create_cq(t->ibdev, no_comp, no_event, t, &ca);
	t->cqb = ib_create_cq(t->ibdev, no_comp, no_event, t, &ca);
	if (IS_ERR(t->cqa) || IS_ERR(t->cqb))
		return -ENOMEM;
	t->src = kmalloc(LEN, GFP_KERNEL);
	t->dst = kmalloc(LEN, GFP_KERNEL);
	if (!t->src || !t->dst)
		return -ENOMEM;
	sg_init_table(t->sg, NPAGES);
	for (i = 0; i < NPAGES; i++) {
		t->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!t->pages[i])
			return -ENOMEM;
		sg_set_page(&t->sg[i], t->pages[i], PAGE_SIZE, 0);
	}
	if (ib_dma_map_sg(t->ibdev, t->sg, NPAGES, DMA_BIDIRECTIONAL) != NPAGES)
		return -EIO;
	t->sg_mapped = true;
	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, NPAGES);
	if (IS_ERR(t->mr))
		return PTR_ERR(t->mr);
	return pair_up(t);
}

static int __init frmr_init(void)
{
	struct frmr_test *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int err;

	if (!t)
		return -ENOMEM;
	t->ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!t->ibdev) {
		pr_err("sroce_frmr: no RDMA device %s\n", dev);
		kfree(t);
		return -ENODEV;
	}
	err = setup(t);
	check(t, !err, "PD, CQs, MR of 4 pages, a connected RC QP pair");
	if (!err)
		run(t);
	teardown(t);
	pr_info("sroce_frmr: 1..%d\n", t->n);
	err = t->failed ? -EIO : 0;
	kfree(t);
	return err;
}

static void __exit frmr_exit(void)
{
}

module_init(frmr_init);
module_exit(frmr_exit);
MODULE_DESCRIPTION("sroce selftest: fast-register MRs from a kernel consumer");
MODULE_LICENSE("Dual BSD/GPL");
