// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The fake sroce kernel: see fake_kernel.h.  Legacy write() commands only;
 * every ioctl on the device answers ENOTTY, which makes libibverbs use its
 * write() fallback for the whole context, exactly as it does on kernels
 * without the ioctl framework.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include "fake_kernel.h"

struct fk_state fk;
static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;

#define FK_DEV_PREFIX	"/dev/infiniband/uverbs"
#define FK_MAX_FDS	8

static int fk_fds[FK_MAX_FDS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static uint32_t fk_pd_next = 1, fk_mr_next = 1, fk_ah_next = 1,
		fk_mw_next = 1;

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static bool fk_is_dev_fd(int fd)
{
	int i;

	for (i = 0; i < FK_MAX_FDS; i++)
		if (fd >= 0 && fk_fds[i] == fd)
			return true;
	return false;
}

static bool fk_is_dev_path(const char *p)
{
	return p && !strncmp(p, FK_DEV_PREFIX, strlen(FK_DEV_PREFIX));
}

void fk_reset(void)
{
	uint32_t i;

	for (i = 0; i < FK_MAX_OBJ; i++) {
		fk.cq_used[i] = false;
		fk.srq_used[i] = false;
		fk.qp[i].used = false;
	}
	fk.abi_version = SROCE_UVERBS_ABI_VERSION;
	fk.uctx_flags = SROCE_UCTX_F_FLUSH;
	fk.sq_paused = false;
	fk.ioctl_mode = false;
	fk.ah_num_next = 77;
	fk.writes = fk.ioctls = fk.doorbells = 0;
	fk.notify_armed = fk.notify_solicited = 0;
	fk.cq_overflows = 0;
	fk.ncmds = 0;
	fk.nwqe = 0;
	if (!fk.next_offset_pages)
		fk.next_offset_pages = 1;
}

/* ---- rings ---- */

static uint32_t fk_pow2(uint32_t v)
{
	uint32_t n = 1;

	while (n < v && n < (1u << 20))
		n <<= 1;
	return n;
}

static int fk_ring_new(struct fk_ring *r, uint32_t num, uint32_t stride)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint32_t size = SROCE_RING_DATA_OFFSET + num * stride;

	REAL(mmap);
	size = (uint32_t)((size + pg - 1) / pg * pg);
	memset(r, 0, sizeof(*r));
	r->memfd = memfd_create("fk-ring", MFD_CLOEXEC);
	if (r->memfd < 0 || ftruncate(r->memfd, size))
		return ENOMEM;
	r->map = real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   r->memfd, 0);
	if (r->map == MAP_FAILED)
		return ENOMEM;
	r->size = size;
	r->num = num;
	r->stride = stride;
	r->offset = (uint64_t)fk.next_offset_pages * (uint64_t)pg;
	/* Leave a gap so a mapping that overruns would hit nothing valid. */
	fk.next_offset_pages += size / pg + 1;
	return 0;
}

static void fk_ring_mi(const struct fk_ring *r, struct sroce_mmap_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->offset = r->offset;
	mi->size = r->size;
	mi->num = r->num;
	mi->stride = r->stride;
}

static struct sroce_ring_ctl *fk_ctl(struct fk_ring *r)
{
	return r->map;
}

static void *fk_slot(struct fk_ring *r, uint32_t idx)
{
	return (uint8_t *)r->map + SROCE_RING_DATA_OFFSET +
	       (size_t)(idx & (r->num - 1)) * r->stride;
}

static struct fk_ring *fk_ring_by_offset(uint64_t off)
{
	uint32_t i;

	for (i = 0; i < FK_MAX_OBJ; i++) {
		if (fk.cq_used[i] && fk.cq[i].offset == off)
			return &fk.cq[i];
		if (fk.srq_used[i] && fk.srq[i].offset == off)
			return &fk.srq[i];
		if (fk.qp[i].used && fk.qp[i].sq.map && fk.qp[i].sq.offset == off)
			return &fk.qp[i].sq;
		if (fk.qp[i].used && fk.qp[i].rq.map && fk.qp[i].rq.offset == off)
			return &fk.qp[i].rq;
	}
	return NULL;
}

struct fk_ring *fk_cq_ring(uint32_t h)
{
	return h < FK_MAX_OBJ && fk.cq_used[h] ? &fk.cq[h] : NULL;
}

struct fk_qp *fk_qp_by_handle(uint32_t h)
{
	return h < FK_MAX_OBJ && fk.qp[h].used ? &fk.qp[h] : NULL;
}

struct fk_ring *fk_srq_ring(uint32_t h)
{
	return h < FK_MAX_OBJ && fk.srq_used[h] ? &fk.srq[h] : NULL;
}

int fk_cq_push(uint32_t h, const struct sroce_cqe *cqe)
{
	struct fk_ring *r = fk_cq_ring(h);
	uint32_t cons;

	if (!r)
		return -1;
	cons = __atomic_load_n(&fk_ctl(r)->cons, __ATOMIC_ACQUIRE);
	if (r->kidx - cons >= r->num) {
		fk.cq_overflows++;
		return -1;
	}
	memcpy(fk_slot(r, r->kidx), cqe, sizeof(*cqe));
	r->kidx++;
	__atomic_store_n(&fk_ctl(r)->prod, r->kidx, __ATOMIC_RELEASE);
	return 0;
}

static uint32_t fk_wc_opcode(uint32_t wr_op)
{
	switch (wr_op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IB_UVERBS_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IB_UVERBS_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

void fk_drain_sq(uint32_t h)
{
	struct fk_qp *qp = fk_qp_by_handle(h);
	struct fk_ring *r;
	uint32_t prod;

	if (!qp || !qp->sq.map)
		return;
	r = &qp->sq;
	prod = __atomic_load_n(&fk_ctl(r)->prod, __ATOMIC_ACQUIRE);
	if (prod - r->kidx > r->num)
		return;		/* a producer index we must not believe */
	while (r->kidx != prod) {
		struct sroce_send_wqe *w = fk_slot(r, r->kidx);

		if (fk.nwqe < FK_MAX_LOG) {
			memcpy(fk.wqe_log[fk.nwqe], w,
			       r->stride < 256 ? r->stride : 256);
			fk.wqe_qpn[fk.nwqe] = qp->qpn;
			fk.nwqe++;
		}
		if (w->send_flags & SROCE_SEND_SIGNALED) {
			struct fk_ring *cr = fk_cq_ring(qp->send_cq);
			struct sroce_cqe c;

			/* Like hardware, stall rather than overrun the CQ. */
			if (cr && cr->kidx - __atomic_load_n(&fk_ctl(cr)->cons,
							     __ATOMIC_ACQUIRE) >=
				  cr->num)
				break;

			memset(&c, 0, sizeof(c));
			c.wr_id = w->wr_id;
			c.status = IBV_WC_SUCCESS;
			c.opcode = fk_wc_opcode(w->opcode);
			c.qp_num = qp->qpn;
			fk_cq_push(qp->send_cq, &c);
		}
		r->kidx++;
	}
	__atomic_store_n(&fk_ctl(r)->cons, r->kidx, __ATOMIC_RELEASE);
}

uint32_t fk_kick_sq(uint32_t h)
{
	struct fk_qp *qp;
	uint32_t left = 0;

	pthread_mutex_lock(&fk_lock);
	fk_drain_sq(h);
	qp = fk_qp_by_handle(h);
	if (qp && qp->sq.map)
		left = __atomic_load_n(&fk_ctl(&qp->sq)->prod,
				       __ATOMIC_ACQUIRE) - qp->sq.kidx;
	pthread_mutex_unlock(&fk_lock);
	return left;
}

const struct fk_cmd_rec *fk_last_cmd(uint32_t command)
{
	uint32_t i;

	for (i = fk.ncmds; i-- > 0;)
		if (fk.cmds[i].command == command)
			return &fk.cmds[i];
	return NULL;
}

static int fk_alloc_slot(bool *used)
{
	int i;

	for (i = 1; i < FK_MAX_OBJ; i++)
		if (!used[i])
			return i;
	return -1;
}

/* ---- object creation shared by the write and ioctl paths ---- */

static int fk_create_cq(uint32_t cqe, uint32_t *handle, uint32_t *num_out,
			struct sroce_create_cq_resp *drv)
{
	int h = fk_alloc_slot(fk.cq_used);
	uint32_t num = fk_pow2(cqe + 1);

	if (h < 0)
		return ENOMEM;
	if (fk_ring_new(&fk.cq[h], num, SROCE_CQE_SIZE))
		return ENOMEM;
	fk.cq_used[h] = true;
	*handle = (uint32_t)h;
	*num_out = num;
	fk_ring_mi(&fk.cq[h], &drv->mi);
	return 0;
}

/* cap is in/out: what was asked, then what the QP got. */
static int fk_create_qp(uint8_t type, uint32_t scq, uint32_t rcq, bool srq,
			struct ib_uverbs_qp_cap *cap, uint32_t *handle,
			uint32_t *qpn, struct sroce_create_qp_resp *drv)
{
	bool used[FK_MAX_OBJ];
	struct fk_qp *qp;
	uint32_t i, data, sstride, rstride;
	int h;

	for (i = 0; i < FK_MAX_OBJ; i++)
		used[i] = fk.qp[i].used;
	h = fk_alloc_slot(used);
	if (h < 0)
		return ENOMEM;
	qp = &fk.qp[h];
	memset(qp, 0, sizeof(*qp));
	data = cap->max_send_sge * 16;
	if (data < ((cap->max_inline_data + 15) & ~15u))
		data = (cap->max_inline_data + 15) & ~15u;
	sstride = SROCE_SEND_WQE_HDR + data;
	rstride = SROCE_RECV_WQE_HDR + 16 * cap->max_recv_sge;
	if (fk_ring_new(&qp->sq, fk_pow2(cap->max_send_wr ?
					  cap->max_send_wr : 1), sstride))
		return ENOMEM;
	if (!srq && fk_ring_new(&qp->rq, fk_pow2(cap->max_recv_wr ?
						 cap->max_recv_wr : 1),
				rstride))
		return ENOMEM;
	qp->used = true;
	qp->qpn = 100 + (uint32_t)h;
	qp->send_cq = scq;
	qp->recv_cq = rcq;
	qp->qp_type = type;
	qp->state = IBV_QPS_RESET;
	*handle = (uint32_t)h;
	*qpn = qp->qpn;
	memset(drv, 0, sizeof(*drv));
	cap->max_send_wr = qp->sq.num;
	cap->max_inline_data = data;
	fk_ring_mi(&qp->sq, &drv->sq_mi);
	if (srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		cap->max_recv_wr = qp->rq.num;
		fk_ring_mi(&qp->rq, &drv->rq_mi);
	}
	return 0;
}

/* ---- commands ---- */

/* Core responses may end in a flexible array: keep them as bytes. */
#define FK_CORE(r, t) ((t *)(void *)(r)->core_b)

#define RESP(type) type *resp = (type *)(uintptr_t)*(const uint64_t *)in

static int fk_dispatch(uint32_t cmd, const uint8_t *in, uint32_t in_len,
		       uint32_t out_len)
{
	switch (cmd) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: {
		struct {
			uint8_t core_b[sizeof(struct ib_uverbs_get_context_resp)];
			struct sroce_alloc_ucontext_resp drv;
		} *resp = (void *)(uintptr_t)*(const uint64_t *)in;
		REAL(open);

		if (out_len < sizeof(*resp))
			return EINVAL;
		memset(resp, 0, sizeof(*resp));
		FK_CORE(resp, struct ib_uverbs_get_context_resp)->async_fd = real_open("/dev/null", O_RDONLY | O_CLOEXEC);
		FK_CORE(resp, struct ib_uverbs_get_context_resp)->num_comp_vectors = 1;
		resp->drv.abi_version = fk.abi_version;
		resp->drv.max_inline_data = 256;
		resp->drv.max_sge = 8;
		resp->drv.flags = fk.uctx_flags;
		return 0;
	}
	case IB_USER_VERBS_CMD_QUERY_DEVICE: {
		RESP(struct ib_uverbs_query_device_resp);

		if (out_len < sizeof(*resp))
			return EINVAL;
		memset(resp, 0, sizeof(*resp));
		resp->fw_ver = (1ull << 32) | (2ull << 16) | 3;
		resp->node_guid = htobe64(0x1122334455667788ull);
		resp->max_qp = 1234;
		resp->max_qp_wr = 4096;
		resp->max_sge = 8;
		resp->max_cq = 99;
		resp->max_cqe = 65536;
		resp->phys_port_cnt = 1;
		return 0;
	}
	case IB_USER_VERBS_CMD_QUERY_PORT: {
		RESP(struct ib_uverbs_query_port_resp);

		if (out_len < sizeof(*resp))
			return EINVAL;
		memset(resp, 0, sizeof(*resp));
		resp->state = IBV_PORT_ACTIVE;
		resp->max_mtu = IBV_MTU_4096;
		resp->active_mtu = IBV_MTU_1024;
		resp->gid_tbl_len = 2;
		resp->link_layer = IBV_LINK_LAYER_ETHERNET;
		return 0;
	}
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		RESP(struct ib_uverbs_alloc_pd_resp);

		resp->pd_handle = fk_pd_next++;
		return 0;
	}
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_DESTROY_AH:
	case IB_USER_VERBS_CMD_DEALLOC_MW:
	case IB_USER_VERBS_CMD_ATTACH_MCAST:
	case IB_USER_VERBS_CMD_DETACH_MCAST:
		return 0;
	case IB_USER_VERBS_CMD_REG_MR: {
		RESP(struct ib_uverbs_reg_mr_resp);
		uint32_t n = fk_mr_next++;

		resp->mr_handle = n;
		resp->lkey = 0x1000 + n;
		resp->rkey = 0x2000 + n;
		return 0;
	}
	case IB_USER_VERBS_CMD_REREG_MR: {
		RESP(struct ib_uverbs_rereg_mr_resp);

		resp->lkey = 0x3000;
		resp->rkey = 0x4000;
		return 0;
	}
	case IB_USER_VERBS_CMD_ALLOC_MW: {
		RESP(struct ib_uverbs_alloc_mw_resp);

		resp->mw_handle = fk_mw_next++;
		resp->rkey = 0xabcd00;
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_AH: {
		struct {
			uint8_t core_b[sizeof(struct ib_uverbs_create_ah_resp)];
			struct sroce_create_ah_resp drv;
		} *resp = (void *)(uintptr_t)*(const uint64_t *)in;

		if (out_len != sizeof(*resp))
			return EINVAL;
		FK_CORE(resp, struct ib_uverbs_create_ah_resp)->ah_handle = fk_ah_next++;
		resp->drv.ah_num = fk.ah_num_next;
		resp->drv.rsvd = 0;
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_CQ: {
		const struct ib_uverbs_create_cq *c = (const void *)in;
		struct {
			uint8_t core_b[sizeof(struct ib_uverbs_create_cq_resp)];
			struct sroce_create_cq_resp drv;
		} *resp = (void *)(uintptr_t)c->response;
		struct ib_uverbs_create_cq_resp *core =
			FK_CORE(resp, struct ib_uverbs_create_cq_resp);

		if (out_len != sizeof(*resp))
			return EINVAL;
		return fk_create_cq(c->cqe, &core->cq_handle, &core->cqe,
				    &resp->drv);
	}
	case IB_USER_VERBS_CMD_RESIZE_CQ: {
		const struct ib_uverbs_resize_cq *c = (const void *)in;
		struct {
			uint8_t core_b[sizeof(struct ib_uverbs_resize_cq_resp)];
			struct sroce_resize_cq_resp drv;
		} *resp = (void *)(uintptr_t)c->response;
		struct fk_ring *old = fk_cq_ring(c->cq_handle), nr;
		uint32_t cons, n = 0;

		if (!old || out_len != sizeof(*resp))
			return EINVAL;
		if (fk_ring_new(&nr, fk_pow2(c->cqe + 1), SROCE_CQE_SIZE))
			return ENOMEM;
		cons = __atomic_load_n(&fk_ctl(old)->cons, __ATOMIC_ACQUIRE);
		for (; cons != old->kidx; cons++, n++)
			memcpy(fk_slot(&nr, n), fk_slot(old, cons),
			       SROCE_CQE_SIZE);
		nr.kidx = n;
		fk_ctl(&nr)->prod = n;
		fk_ctl(&nr)->cons = 0;
		/* The old pages stay mapped until userspace unmaps them. */
		*old = nr;
		FK_CORE(resp, struct ib_uverbs_resize_cq_resp)->cqe = nr.num;
		fk_ring_mi(&nr, &resp->drv.mi);
		return 0;
	}
	case IB_USER_VERBS_CMD_MODIFY_SRQ: {
		/* As the kernel: unconsumed WQEs to the new ring's start. */
		const struct ib_uverbs_modify_srq *c = (const void *)in;
		const struct sroce_modify_srq_cmd *d = (const void *)(c + 1);
		struct fk_ring *old = fk_srq_ring(c->srq_handle), nr;
		struct sroce_mmap_info mi;
		uint32_t prod, n = 0;

		if (!old)
			return EINVAL;
		if (!(c->attr_mask & IBV_SRQ_MAX_WR))
			return 0;
		if (in_len < sizeof(*c) + sizeof(*d) || !d->mi_addr)
			return EINVAL;
		prod = __atomic_load_n(&fk_ctl(old)->prod, __ATOMIC_ACQUIRE);
		if (prod - old->kidx > fk_pow2(c->max_wr))
			return EINVAL;
		if (fk_ring_new(&nr, fk_pow2(c->max_wr), old->stride))
			return ENOMEM;
		for (; old->kidx != prod; old->kidx++, n++)
			memcpy(fk_slot(&nr, n), fk_slot(old, old->kidx),
			       nr.stride);
		fk_ctl(&nr)->prod = n;
		fk_ctl(&nr)->cons = 0;
		*old = nr;
		fk_ring_mi(&nr, &mi);
		memcpy((void *)(uintptr_t)d->mi_addr, &mi, sizeof(mi));
		return 0;
	}
	case IB_USER_VERBS_CMD_DESTROY_CQ: {
		const struct ib_uverbs_destroy_cq *c = (const void *)in;
		RESP(struct ib_uverbs_destroy_cq_resp);

		if (!fk_cq_ring(c->cq_handle))
			return EINVAL;
		fk.cq_used[c->cq_handle] = false;
		memset(resp, 0, sizeof(*resp));
		return 0;
	}
	case IB_USER_VERBS_CMD_REQ_NOTIFY_CQ: {
		const struct ib_uverbs_req_notify_cq *c = (const void *)in;

		if (!fk_cq_ring(c->cq_handle))
			return EINVAL;
		fk.notify_armed++;
		if (c->solicited_only)
			fk.notify_solicited++;
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_QP: {
		const struct ib_uverbs_create_qp *c = (const void *)in;
		struct {
			uint8_t core_b[sizeof(struct ib_uverbs_create_qp_resp)];
			struct sroce_create_qp_resp drv;
		} *resp = (void *)(uintptr_t)c->response;
		struct ib_uverbs_create_qp_resp *core =
			FK_CORE(resp, struct ib_uverbs_create_qp_resp);
		struct ib_uverbs_qp_cap cap = {
			.max_send_wr = c->max_send_wr,
			.max_recv_wr = c->max_recv_wr,
			.max_send_sge = c->max_send_sge,
			.max_recv_sge = c->max_recv_sge,
			.max_inline_data = c->max_inline_data,
		};
		int ret;

		if (out_len != sizeof(*resp))
			return EINVAL;
		memset(resp, 0, sizeof(*resp));
		ret = fk_create_qp(c->qp_type, c->send_cq_handle,
				   c->recv_cq_handle, c->is_srq, &cap,
				   &core->qp_handle, &core->qpn, &resp->drv);
		core->max_send_wr = cap.max_send_wr;
		core->max_recv_wr = cap.max_recv_wr;
		core->max_send_sge = cap.max_send_sge;
		core->max_recv_sge = cap.max_recv_sge;
		core->max_inline_data = cap.max_inline_data;
		return ret;
	}
	case IB_USER_VERBS_CMD_MODIFY_QP: {
		const struct ib_uverbs_modify_qp *c = (const void *)in;
		struct fk_qp *qp = fk_qp_by_handle(c->qp_handle);

		if (!qp)
			return EINVAL;
		if (c->attr_mask & IBV_QP_STATE)
			qp->state = c->qp_state;
		return 0;
	}
	case IB_USER_VERBS_CMD_QUERY_QP: {
		const struct ib_uverbs_query_qp *c = (const void *)in;
		RESP(struct ib_uverbs_query_qp_resp);
		struct fk_qp *qp = fk_qp_by_handle(c->qp_handle);

		if (!qp)
			return EINVAL;
		memset(resp, 0, sizeof(*resp));
		resp->qp_state = qp->state;
		resp->cur_qp_state = qp->state;
		resp->max_send_wr = qp->sq.num;
		return 0;
	}
	case IB_USER_VERBS_CMD_DESTROY_QP: {
		const struct ib_uverbs_destroy_qp *c = (const void *)in;
		RESP(struct ib_uverbs_destroy_qp_resp);

		if (!fk_qp_by_handle(c->qp_handle))
			return EINVAL;
		fk.qp[c->qp_handle].used = false;
		resp->events_reported = 0;
		return 0;
	}
	case IB_USER_VERBS_CMD_POST_SEND: {
		const struct ib_uverbs_post_send *c = (const void *)in;
		RESP(struct ib_uverbs_post_send_resp);

		/* sroce's doorbell carries no work requests, ever. */
		if (c->wr_count || c->sge_count || !fk_qp_by_handle(c->qp_handle))
			return EINVAL;
		fk.doorbells++;
		if (!fk.sq_paused)
			fk_drain_sq(c->qp_handle);
		resp->bad_wr = 0;
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_SRQ: {
		const struct ib_uverbs_create_srq *c = (const void *)in;
		struct {
			uint8_t core_b[sizeof(struct ib_uverbs_create_srq_resp)];
			struct sroce_create_srq_resp drv;
		} *resp = (void *)(uintptr_t)c->response;
		int h = fk_alloc_slot(fk.srq_used);

		if (out_len != sizeof(*resp) || h < 0)
			return EINVAL;
		if (fk_ring_new(&fk.srq[h], fk_pow2(c->max_wr),
				SROCE_RECV_WQE_HDR + 16 * c->max_sge))
			return ENOMEM;
		fk.srq_used[h] = true;
		memset(resp, 0, sizeof(*resp));
		FK_CORE(resp, struct ib_uverbs_create_srq_resp)->srq_handle = (uint32_t)h;
		FK_CORE(resp, struct ib_uverbs_create_srq_resp)->max_wr = fk.srq[h].num;
		FK_CORE(resp, struct ib_uverbs_create_srq_resp)->max_sge = c->max_sge;
		FK_CORE(resp, struct ib_uverbs_create_srq_resp)->srqn = 500 + (uint32_t)h;
		fk_ring_mi(&fk.srq[h], &resp->drv.mi);
		resp->drv.srq_num = 500 + (uint32_t)h;
		return 0;
	}
	case IB_USER_VERBS_CMD_QUERY_SRQ: {
		const struct ib_uverbs_query_srq *c = (const void *)in;
		RESP(struct ib_uverbs_query_srq_resp);
		struct fk_ring *r = fk_srq_ring(c->srq_handle);

		if (!r)
			return EINVAL;
		memset(resp, 0, sizeof(*resp));
		resp->max_wr = r->num;
		resp->max_sge = (r->stride - SROCE_RECV_WQE_HDR) / 16;
		resp->srq_limit = 3;
		return 0;
	}
	case IB_USER_VERBS_CMD_DESTROY_SRQ: {
		const struct ib_uverbs_destroy_srq *c = (const void *)in;
		RESP(struct ib_uverbs_destroy_srq_resp);

		if (!fk_srq_ring(c->srq_handle))
			return EINVAL;
		fk.srq_used[c->srq_handle] = false;
		resp->events_reported = 0;
		return 0;
	}
	default:
		return EOPNOTSUPP;
	}
}

/* ---- the ioctl path, for the two creates that carry ring mappings ---- */

/*
 * The driver namespace bit of an attribute id.  Older kernel headers
 * (Debian 12) call it UVERBS_UDATA_DRIVER_DATA_FLAG, newer ones (Debian
 * 13) UVERBS_ID_DRIVER_NS; both are this bit.
 */
#define FK_ID_DRIVER_NS	(1U << UVERBS_ID_NS_SHIFT)

struct fk_attrs {
	struct ib_uverbs_attr *a[64];
};

static struct ib_uverbs_attr *fk_attr(struct fk_attrs *t, uint16_t id)
{
	unsigned int slot = id & FK_ID_DRIVER_NS ?
			    32 + (id & 31) : id & 31;

	return t->a[slot];
}

static int fk_put_out(struct ib_uverbs_attr *a, const void *v, size_t n)
{
	if (!a || a->len < n)
		return ENOSPC;
	memcpy((void *)(uintptr_t)a->data, v, n);
	a->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
	return 0;
}

static uint32_t fk_in_u32(struct fk_attrs *t, uint16_t id)
{
	struct ib_uverbs_attr *a = fk_attr(t, id);

	return a ? (uint32_t)a->data : 0;
}

static int fk_ioctl(struct ib_uverbs_ioctl_hdr *h)
{
	struct fk_attrs t;
	struct ib_uverbs_attr *uo, *ui;
	unsigned int i;
	int ret;

	fk.ioctl_driver_id = h->driver_id;
	if (!fk.ioctl_mode)
		return ENOTTY;
	if (h->length != sizeof(*h) + h->num_attrs * sizeof(h->attrs[0]))
		return EINVAL;
	memset(&t, 0, sizeof(t));
	for (i = 0; i < h->num_attrs; i++) {
		uint16_t id = h->attrs[i].attr_id;

		t.a[id & FK_ID_DRIVER_NS ? 32 + (id & 31) :
		    id & 31] = &h->attrs[i];
	}
	ui = fk_attr(&t, UVERBS_ATTR_UHW_IN);
	uo = fk_attr(&t, UVERBS_ATTR_UHW_OUT);
	fk.ioctl_uhw_in = ui ? ui->len : 0;
	fk.ioctl_uhw_out = uo ? uo->len : 0;

	if (h->object_id == UVERBS_OBJECT_CQ &&
	    h->method_id == UVERBS_METHOD_CQ_CREATE) {
		struct sroce_create_cq_resp drv;
		uint32_t handle, num;

		if (!uo || uo->len != sizeof(drv))
			return EINVAL;
		ret = fk_create_cq(fk_in_u32(&t, UVERBS_ATTR_CREATE_CQ_CQE),
				   &handle, &num, &drv);
		if (ret)
			return ret;
		fk_attr(&t, UVERBS_ATTR_CREATE_CQ_HANDLE)->data = handle;
		fk_put_out(fk_attr(&t, UVERBS_ATTR_CREATE_CQ_RESP_CQE), &num,
			   sizeof(num));
		fk.ioctl_creates++;
		return fk_put_out(uo, &drv, sizeof(drv));
	}
	if (h->object_id == UVERBS_OBJECT_QP &&
	    h->method_id == UVERBS_METHOD_QP_CREATE) {
		struct ib_uverbs_attr *ca = fk_attr(&t, UVERBS_ATTR_CREATE_QP_CAP);
		struct sroce_create_qp_resp drv;
		struct ib_uverbs_qp_cap cap;
		uint32_t handle, qpn;

		if (!uo || uo->len != sizeof(drv) || !ca ||
		    ca->len != sizeof(cap))
			return EINVAL;
		memcpy(&cap, (void *)(uintptr_t)ca->data, sizeof(cap));
		ret = fk_create_qp((uint8_t)fk_in_u32(&t, UVERBS_ATTR_CREATE_QP_TYPE),
				   fk_in_u32(&t, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE),
				   fk_in_u32(&t, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE),
				   fk_attr(&t, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE),
				   &cap, &handle, &qpn, &drv);
		if (ret)
			return ret;
		fk_attr(&t, UVERBS_ATTR_CREATE_QP_HANDLE)->data = handle;
		fk_put_out(fk_attr(&t, UVERBS_ATTR_CREATE_QP_RESP_CAP), &cap,
			   sizeof(cap));
		fk_put_out(fk_attr(&t, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM), &qpn,
			   sizeof(qpn));
		fk.ioctl_creates++;
		return fk_put_out(uo, &drv, sizeof(drv));
	}
	/* The framework exists, this method does not: use write() for it. */
	return EPROTONOSUPPORT;
}

/* ---- interposed system calls ---- */

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd, i;
	REAL(open);

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!fk_is_dev_path(path))
		return real_open(path, flags, mode);
	/* /dev/null is a character device, which is what libibverbs checks. */
	fd = real_open("/dev/null", flags & ~O_CREAT);
	if (fd < 0)
		return fd;
	for (i = 0; i < FK_MAX_FDS; i++) {
		if (fk_fds[i] < 0) {
			fk_fds[i] = fd;
			return fd;
		}
	}
	close(fd);
	errno = EMFILE;
	return -1;
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return open(path, flags, mode);
}

int close(int fd)
{
	int i;
	REAL(close);

	for (i = 0; i < FK_MAX_FDS; i++)
		if (fk_fds[i] == fd)
			fk_fds[i] = -1;
	return real_close(fd);
}

int stat(const char *restrict path, struct stat *restrict st)
{
	REAL(stat);

	return real_stat(fk_is_dev_path(path) ? "/dev/null" : path, st);
}

int socket(int domain, int type, int protocol)
{
	REAL(socket);

	/* No RDMA netlink here: libibverbs must take its sysfs path. */
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return real_socket(domain, type, protocol);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	REAL(ioctl);

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fk_is_dev_fd(fd)) {
		int ret = ENOTTY;

		fk.ioctls++;
		if (req == RDMA_VERBS_IOCTL && arg) {
			pthread_mutex_lock(&fk_lock);
			ret = fk_ioctl(arg);
			pthread_mutex_unlock(&fk_lock);
		}
		if (!ret)
			return 0;
		errno = ret;
		return -1;
	}
	return real_ioctl(fd, req, arg);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	const struct ib_uverbs_cmd_hdr *h = buf;
	uint32_t in_bytes, out_bytes;
	int ret;
	REAL(write);

	if (!fk_is_dev_fd(fd))
		return real_write(fd, buf, n);
	fk.writes++;
	if (n < sizeof(*h) + 4) {
		errno = EINVAL;
		return -1;
	}
	if (h->command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		/* No extended commands: libibverbs falls back to legacy. */
		errno = ENOSYS;
		return -1;
	}
	in_bytes = h->in_words * 4u;
	out_bytes = h->out_words * 4u;
	if (in_bytes != n) {
		errno = EINVAL;
		return -1;
	}
	if (fk.ncmds < FK_MAX_LOG) {
		fk.cmds[fk.ncmds].command = h->command;
		fk.cmds[fk.ncmds].in_bytes = in_bytes;
		fk.cmds[fk.ncmds].out_bytes = out_bytes;
		fk.ncmds++;
	}
	/* The real kernel serialises per object; one big lock will do here. */
	pthread_mutex_lock(&fk_lock);
	ret = fk_dispatch(h->command, (const uint8_t *)(h + 1),
			  in_bytes - (uint32_t)sizeof(*h), out_bytes);
	pthread_mutex_unlock(&fk_lock);
	if (ret) {
		errno = ret;
		return -1;
	}
	return (ssize_t)n;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fk_ring *r;
	REAL(mmap);

	if (!fk_is_dev_fd(fd))
		return real_mmap(addr, len, prot, flags, fd, off);
	r = fk_ring_by_offset((uint64_t)off);
	if (!r || len > r->size || !(flags & MAP_SHARED)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	r->user_maps++;
	return real_mmap(addr, len, prot, flags, r->memfd, 0);
}

/* ---- sysfs ---- */

static int fk_put(const char *dir, const char *rel, const char *val)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f);
}

static int fk_mkdirs(const char *dir, const char *rel)
{
	char path[512];
	char *p;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(path, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* sroce_abi: what the device's sroce_abi_version file says; NULL: no file. */
static int fk_add_dev(const char *dir, int n, const char *name,
		      const char *abi, const char *sroce_abi)
{
	char rel[256];
	int e = 0;

	snprintf(rel, sizeof(rel), "class/infiniband_verbs/uverbs%d", n);
	e |= fk_mkdirs(dir, rel);
	snprintf(rel, sizeof(rel), "class/infiniband_verbs/uverbs%d/ibdev", n);
	e |= fk_put(dir, rel, name);
	snprintf(rel, sizeof(rel), "class/infiniband_verbs/uverbs%d/dev", n);
	e |= fk_put(dir, rel, "1:3\n");
	snprintf(rel, sizeof(rel),
		 "class/infiniband_verbs/uverbs%d/abi_version", n);
	e |= fk_put(dir, rel, abi);
	snprintf(rel, sizeof(rel), "class/infiniband/%s", name);
	e |= fk_mkdirs(dir, rel);
	if (sroce_abi) {
		snprintf(rel, sizeof(rel), "class/infiniband/%s/%s", name,
			 SROCE_SYSFS_ABI_ATTR);
		e |= fk_put(dir, rel, sroce_abi);
	}
	snprintf(rel, sizeof(rel), "class/infiniband/%s/node_type", name);
	e |= fk_put(dir, rel, "1: CA\n");
	snprintf(rel, sizeof(rel), "class/infiniband/%s/node_guid", name);
	e |= fk_put(dir, rel, "1122:3344:5566:7788\n");
	/* Two GIDs, as the kernel's sysfs shows them: link-local, IPv4. */
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gids", name);
	e |= fk_mkdirs(dir, rel);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/types",
		 name);
	e |= fk_mkdirs(dir, rel);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/ndevs",
		 name);
	e |= fk_mkdirs(dir, rel);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gids/0", name);
	e |= fk_put(dir, rel, "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gids/1", name);
	e |= fk_put(dir, rel, "0000:0000:0000:0000:0000:ffff:0a00:0201\n");
	snprintf(rel, sizeof(rel),
		 "class/infiniband/%s/ports/1/gid_attrs/types/0", name);
	e |= fk_put(dir, rel, "RoCE v2\n");
	snprintf(rel, sizeof(rel),
		 "class/infiniband/%s/ports/1/gid_attrs/types/1", name);
	e |= fk_put(dir, rel, "RoCE v2\n");
	snprintf(rel, sizeof(rel),
		 "class/infiniband/%s/ports/1/gid_attrs/ndevs/0", name);
	e |= fk_put(dir, rel, "lo\n");
	snprintf(rel, sizeof(rel),
		 "class/infiniband/%s/ports/1/gid_attrs/ndevs/1", name);
	e |= fk_put(dir, rel, "lo\n");
	return e;
}

int fk_make_sysfs(const char *dir)
{
	int e = 0;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	e |= fk_mkdirs(dir, "class/infiniband_verbs");
	e |= fk_put(dir, "class/infiniband_verbs/abi_version", "6\n");
	e |= fk_add_dev(dir, 0, "sroce0", "1\n", "1\n");
	/* A sroce-like name without sroce's sysfs file is not ours. */
	e |= fk_add_dev(dir, 1, "sroce1", "1\n", NULL);
	/* Ours, but another uverbs ABI: libibverbs must refuse it. */
	e |= fk_add_dev(dir, 2, "sroce2", "7\n", "1\n");
	/* sroce's file, another sroce ABI: the provider must refuse it. */
	e |= fk_add_dev(dir, 3, "roce3", "1\n", "2\n");
	return e;
}
