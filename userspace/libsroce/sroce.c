// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libsroce: registration with libibverbs, device matching, context and the
 * control-path verbs that need nothing but the core uverbs commands.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "sroce.h"

/* Ours must not be one of the kernel's own driver ids. */
_Static_assert(SROCE_DRIVER_ID > RDMA_DRIVER_ERDMA + 1000, "driver id");

bool sroce_libibverbs_path_ok(const char *path)
{
	size_t n = strlen(SROCE_LIBIBVERBS_SONAME_TAIL);
	size_t len;

	if (!path)
		return false;
	len = strlen(path);
	if (len < n || strcmp(path + len - n, SROCE_LIBIBVERBS_SONAME_TAIL))
		return false;
	/* The whole file name, not a suffix of some other name. */
	return len == n || path[len - n - 1] == '/';
}

/*
 * The op table and the objects we hand over are laid out for the one
 * rdma-core release we were built against; another libibverbs exporting
 * the same PABI symbols can read them differently (56 moved verbs_qp's
 * tail, and both say PABI 34), so find out which file we were really
 * linked against.  Fills real with its resolved path, or an empty string.
 */
static bool sroce_libibverbs_ok(char *real, size_t len)
{
	char buf[PATH_MAX];
	Dl_info info;

	snprintf(real, len, "%s", "");
	if (!dladdr((void *)verbs_set_ops, &info) || !info.dli_fname)
		return false;
	if (!realpath(info.dli_fname, buf))
		return false;
	snprintf(real, len, "%s", buf);
	return sroce_libibverbs_path_ok(buf);
}

/* "56.1" from ".../libibverbs.so.1.14.56.1", or NULL for another name. */
static const char *sroce_libibverbs_version(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, SROCE_LIBIBVERBS_SONAME_PREFIX,
		    strlen(SROCE_LIBIBVERBS_SONAME_PREFIX)) ||
	    !base[strlen(SROCE_LIBIBVERBS_SONAME_PREFIX)])
		return NULL;
	return base + strlen(SROCE_LIBIBVERBS_SONAME_PREFIX);
}

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

/*
 * One uverbs ioctl, built from the kernel's uapi rather than libibverbs'
 * private command buffers, whose layout is not ours to rely on.
 */
#define SROCE_IOCTL_MAX_ATTRS 4
static int sroce_ioctl(int cmd_fd, uint16_t object, uint16_t method,
		       const struct ib_uverbs_attr *attrs, unsigned int n)
{
	union {
		struct ib_uverbs_ioctl_hdr hdr;
		uint8_t bytes[sizeof(struct ib_uverbs_ioctl_hdr) +
			      SROCE_IOCTL_MAX_ATTRS * sizeof(struct ib_uverbs_attr)];
	} buf;

	if (n > SROCE_IOCTL_MAX_ATTRS)
		return EINVAL;
	memset(&buf, 0, sizeof(buf));
	buf.hdr.length = sizeof(buf.hdr) + n * sizeof(*attrs);
	buf.hdr.object_id = object;
	buf.hdr.method_id = method;
	buf.hdr.num_attrs = n;
	buf.hdr.driver_id = SROCE_DRIVER_ID;
	memcpy(buf.bytes + sizeof(buf.hdr), attrs, n * sizeof(*attrs));
	return ioctl(cmd_fd, RDMA_VERBS_IOCTL, &buf.hdr) ? errno : 0;
}

static struct ib_uverbs_attr sroce_attr_out(uint16_t id, void *p, uint16_t len)
{
	return (struct ib_uverbs_attr) {
		.attr_id = id, .len = len, .data = (uintptr_t)p,
	};
}

/*
 * A PD of an imported context, by handle.  The kernel checks that the
 * handle names a PD of this context; the PD stays the owner's to free.
 */
static struct ibv_pd *sroce_import_pd(struct ibv_context *ctx,
				      uint32_t handle)
{
	/* an object attribute: the handle in data, len 0 */
	struct ib_uverbs_attr attr = {
		.attr_id = SROCE_ATTR_PD_QUERY_HANDLE,
		.flags = UVERBS_ATTR_F_MANDATORY,
		.data = handle,
	};
	struct sroce_pd *pd;
	int ret;

	ret = sroce_ioctl(ctx->cmd_fd, UVERBS_OBJECT_PD, SROCE_METHOD_PD_QUERY,
			  &attr, 1);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibv_pd.context = ctx;
	pd->ibv_pd.handle = handle;
	pd->imported = true;
	pd->holds = 1;
	return &pd->ibv_pd;
}

static void sroce_pd_drop(struct sroce_pd *pd)
{
	if (!__atomic_sub_fetch(&pd->holds, 1, __ATOMIC_ACQ_REL))
		free(pd);
}

/* Parent domains made over it still point at our copy (holds). */
static void sroce_unimport_pd(struct ibv_pd *ibpd)
{
	sroce_pd_drop(to_spd(ibpd));
}

static struct ibv_mr *sroce_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_query_mr(pd, vmr, handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static void sroce_unimport_mr(struct ibv_mr *mr)
{
	free((struct verbs_mr *)mr);
}

/* Flows steer frames to raw packet QPs; the kernel keeps them. */
static struct ibv_flow *sroce_create_flow(struct ibv_qp *qp,
					  struct ibv_flow_attr *attr)
{
	struct ibv_flow *flow;
	int ret;

	flow = calloc(1, sizeof(*flow));
	if (!flow)
		return NULL;
	ret = ibv_cmd_create_flow(qp, flow, attr, NULL, 0);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	return flow;
}

static int sroce_destroy_flow(struct ibv_flow *flow)
{
	int ret = ibv_cmd_destroy_flow(flow);

	if (!ret)
		free(flow);
	return ret;
}

/* No thread domains exist here (alloc_td is not offered). */
static struct ibv_pd *
sroce_alloc_parent_domain(struct ibv_context *ctx,
			  struct ibv_parent_domain_init_attr *attr)
{
	struct sroce_pd *pd, *parent;

	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					  IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ctx || attr->td ||
	    to_spd(attr->pd)->protection ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	parent = calloc(1, sizeof(*parent));
	if (!parent)
		return NULL;
	pd = to_spd(attr->pd);
	parent->ibv_pd.context = ctx;
	parent->ibv_pd.handle = pd->ibv_pd.handle;
	parent->protection = &pd->ibv_pd;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	__atomic_add_fetch(&pd->parents, 1, __ATOMIC_RELAXED);
	if (pd->imported)
		__atomic_add_fetch(&pd->holds, 1, __ATOMIC_RELAXED);
	return &parent->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sroce_pd *pd = to_spd(ibpd);
	int ret;

	if (pd->protection) {
		struct sroce_pd *prot = to_spd(pd->protection);

		__atomic_sub_fetch(&prot->parents, 1, __ATOMIC_RELAXED);
		if (prot->imported)
			sroce_pd_drop(prot);
		free(pd);
		return 0;
	}
	/* its parent domains would name a PD the kernel no longer has */
	if (__atomic_load_n(&pd->parents, __ATOMIC_RELAXED))
		return EBUSY;
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (!ret)
		free(pd);
	return ret;
}

/* An XRC domain is the kernel's alone: nothing of it is mapped. */
static struct ibv_xrcd *sroce_open_xrcd(struct ibv_context *ctx,
					struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_open_xrcd(ctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int sroce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = (struct verbs_xrcd *)ibxrcd;
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}

static struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int sroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

static struct ibv_ah *sroce_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct sroce_create_ah_resp_w resp;
	struct sroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, SROCE_CORE_RESP(&resp, struct ib_uverbs_create_ah_resp),
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibv_ah;
}

static int sroce_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (!ret)
		free(to_sah(ah));
	return ret;
}

static int sroce_query_device_ex(struct ibv_context *ctx,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int sroce_query_port(struct ibv_context *ctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/* ODP prefetch is the kernel's: the regions are its. */
static int sroce_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			   uint32_t flags, struct ibv_sge *sg_list,
			   uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

static const struct verbs_context_ops sroce_ctx_ops = {
	.advise_mr = sroce_advise_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_parent_domain = sroce_alloc_parent_domain,
	.alloc_pd = sroce_alloc_pd,
	/* group membership lives in the kernel: nothing to add here */
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = sroce_bind_mw,
	.close_xrcd = sroce_close_xrcd,
	.cq_event = sroce_cq_event,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.create_flow = sroce_create_flow,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.create_rwq_ind_table = sroce_create_rwq_ind_table,
	.create_wq = sroce_create_wq,
	.create_srq = sroce_create_srq,
	.create_srq_ex = sroce_create_srq_ex,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_flow = sroce_destroy_flow,
	.destroy_qp = sroce_destroy_qp,
	.destroy_rwq_ind_table = sroce_destroy_rwq_ind_table,
	.destroy_wq = sroce_destroy_wq,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sroce_free_context,
	.get_srq_num = sroce_get_srq_num,
	.import_mr = sroce_import_mr,
	.import_pd = sroce_import_pd,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.modify_wq = sroce_modify_wq,
	.open_qp = sroce_open_qp,
	.open_xrcd = sroce_open_xrcd,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_mr = sroce_reg_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.rereg_mr = sroce_rereg_mr,
	.resize_cq = sroce_resize_cq,
	.unimport_mr = sroce_unimport_mr,
	.unimport_pd = sroce_unimport_pd,
};

/* Exposed for the unit test, which checks what each slot points to. */
const struct verbs_context_ops *sroce_context_ops(void)
{
	return &sroce_ctx_ops;
}

/* The kernel's answer to GET_CONTEXT (or QUERY_CONTEXT) taken over. */
static int sroce_context_setup(struct sroce_context *ctx,
			       const struct sroce_alloc_ucontext_resp *resp)
{
	const char *give_way;

	if (resp->abi_version != SROCE_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			"libsroce: %s speaks sroce ABI %u, this provider %u\n",
			ctx->vctx.context.device->name, resp->abi_version,
			SROCE_UVERBS_ABI_VERSION);
		return EPROTO;
	}
	ctx->max_inline_data = resp->max_inline_data;
	ctx->max_sge = resp->max_sge;
	ctx->flags = resp->flags;
	give_way = getenv("SROCE_CQ_GIVE_WAY");
	ctx->give_way = !give_way || strcmp(give_way, "0");
	verbs_set_ops(&ctx->vctx, &sroce_ctx_ops);
	return 0;
}

static void sroce_context_fail(struct sroce_context *ctx, int err)
{
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
}

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct sroce_get_context_resp resp;
	struct ibv_get_context cmd;
	struct sroce_context *ctx;
	int ret;

	(void)private_data;
	/* vctx sits at offset 0, which is the offset argument's value. */
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx), NULL,
					    SROCE_DRIVER_ID);
	if (!ctx)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				  SROCE_CORE_RESP(&resp, struct ib_uverbs_get_context_resp),
				  sizeof(resp));
	if (!ret)
		ret = sroce_context_setup(ctx, &resp.drv);
	if (ret) {
		sroce_context_fail(ctx, ret);
		return NULL;
	}
	return &ctx->vctx;
}

/*
 * ibv_import_device(): @cmd_fd already has a context, made by another
 * process or another ibv_open_device(); ask the kernel what GET_CONTEXT
 * told its creator.  A stale fd (its device gone) fails here with EIO.
 */
static struct verbs_context *sroce_import_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	struct sroce_alloc_ucontext_resp resp;
	struct sroce_context *ctx;
	struct ib_uverbs_attr attrs[3];
	uint32_t comp_vectors = 0;
	uint64_t core_support = 0;
	int ret;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx), NULL,
					    SROCE_DRIVER_ID);
	if (!ctx)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	attrs[0] = sroce_attr_out(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS,
				  &comp_vectors, sizeof(comp_vectors));
	attrs[1] = sroce_attr_out(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT,
				  &core_support, sizeof(core_support));
	attrs[2] = sroce_attr_out(SROCE_ATTR_QUERY_CONTEXT_RESP, &resp,
				  sizeof(resp));
	attrs[2].flags = UVERBS_ATTR_F_MANDATORY;
	ret = sroce_ioctl(cmd_fd, UVERBS_OBJECT_DEVICE,
			  UVERBS_METHOD_QUERY_CONTEXT, attrs, 3);
	if (!ret)
		ret = sroce_context_setup(ctx, &resp);
	if (ret) {
		sroce_context_fail(ctx, ret);
		return NULL;
	}
	ctx->vctx.context.num_comp_vectors = (int)comp_vectors;
	/* struct verbs_device starts with its ibv_device (pinned) */
	((struct verbs_device *)ibdev)->core_support = core_support;
	return &ctx->vctx;
}

static struct verbs_device *sroce_alloc_device(struct verbs_sysfs_dev *sdev)
{
	struct sroce_device *dev;

	(void)sdev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void sroce_uninit_device(struct verbs_device *vdev)
{
	free((struct sroce_device *)vdev);
}

/*
 * The driver id entry makes libibverbs try us first for a sroce device,
 * before any provider that would claim it by name.  A name never decides
 * (see the uapi header): the device must also show the sysfs file only
 * sroce.ko publishes.
 */
static const struct verbs_match_ent sroce_match_table[] = {
	{
		.u.driver_id = SROCE_DRIVER_ID,
		.kind = SROCE_VERBS_MATCH_DRIVER_ID,
	},
	{ .kind = SROCE_VERBS_MATCH_SENTINEL },
};

static bool sroce_sysfs_abi_ok(const struct verbs_sysfs_dev *sdev)
{
	char path[IBV_SYSFS_PATH_MAX + sizeof(SROCE_SYSFS_ABI_ATTR) + 1];
	char buf[16], *end;
	unsigned long v;
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", sdev->ibdev_path,
		     SROCE_SYSFS_ABI_ATTR) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	errno = 0;
	v = strtoul(buf, &end, 10);
	return !errno && end != buf && (*end == '\n' || !*end) &&
	       v == SROCE_UVERBS_ABI_VERSION;
}

/*
 * Netlink gives libibverbs the driver id; reading devices from sysfs
 * alone it knows none (RDMA_DRIVER_UNKNOWN).  Any other id is another
 * driver's device.
 */
bool sroce_match_device(struct verbs_sysfs_dev *sdev)
{
	if (sdev->driver_id != SROCE_DRIVER_ID &&
	    sdev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	return sroce_sysfs_abi_ok(sdev);
}

const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = sroce_match_table,
	.match_device = sroce_match_device,
	.alloc_device = sroce_alloc_device,
	.uninit_device = sroce_uninit_device,
	.alloc_context = sroce_alloc_context,
	.import_context = sroce_import_context,
};

static __attribute__((constructor)) void sroce_register(void)
{
	char real[PATH_MAX];
	const char *v;

	if (!sroce_libibverbs_ok(real, sizeof(real))) {
		v = sroce_libibverbs_version(real);
		fprintf(stderr,
			"libsroce: not registering: built for rdma-core %s (%s), but %s%s is loaded (%s)\n",
			SROCE_RDMA_CORE_VERSION, SROCE_LIBIBVERBS_SONAME_TAIL,
			v ? "rdma-core " : "an unrecognised libibverbs",
			v ? v : "", real[0] ? real : "path unknown");
		return;
	}
	sroce_verbs_register_driver(&sroce_dev_ops);
}
