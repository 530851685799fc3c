/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The slice of libibverbs' private provider ABI (IBVERBS_PRIVATE_34) that
 * libsroce uses, for each rdma-core release we support: 44.0 (Debian 12)
 * and 56.x (Debian 13).  Distributions do not ship rdma-core's internal
 * headers, so this file declares exactly what we call and what we lay out,
 * and pins every size and offset we rely on.  Within one PABI number the
 * layout is not versioned (44 and 56 both say PABI 34, yet struct verbs_qp
 * differs between them): a slot that moved would make libibverbs call the
 * wrong function, so any mismatch must fail the build (the asserts below)
 * or refuse to load (the runtime version check in sroce.c), never
 * misbehave at run time.
 *
 * userspace/Makefile reads the installed rdma-core's version and defines
 * SROCE_RDMA_CORE_VERSION ("44.0", "56.1") and SROCE_RDMA_CORE_MAJOR
 * (44, 56), which pick the layout, and SROCE_PABI_VERSION, read from the
 * installed libibverbs' IBVERBS_PRIVATE_NN symbol version, which names the
 * plugin file (libsroce-rdmavNN.so) and the registration symbol.
 */
#ifndef SROCE_IBV_PRIVATE_H
#define SROCE_IBV_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#if !defined(SROCE_RDMA_CORE_MAJOR) || !defined(SROCE_RDMA_CORE_VERSION) || \
	!defined(SROCE_PABI_VERSION)
#error "build through userspace/Makefile: it defines SROCE_RDMA_CORE_MAJOR, SROCE_RDMA_CORE_VERSION and SROCE_PABI_VERSION from the installed rdma-core"
#endif

/*
 * Per-release facts.  SROCE_LAYOUT_PABI is the PABI the layout below was
 * measured for; the L_* numbers are the pins that differ between releases.
 */
#if SROCE_RDMA_CORE_MAJOR == 44
#define SROCE_LAYOUT_PABI		34
#define SROCE_L_QP_EX_SIZE		352
#define SROCE_L_VERBS_QP_SIZE		368
#define SROCE_L_VERBS_QP_COMP_MASK	352
#define SROCE_L_VERBS_QP_XRCD		360
#define SROCE_L_PORT_ATTR_SIZE		52
#define SROCE_HAVE_WR_FLUSH		0
#elif SROCE_RDMA_CORE_MAJOR == 56
/* 56 appended wr_flush to struct ibv_qp_ex: verbs_qp grew by 8 bytes. */
#define SROCE_LAYOUT_PABI		34
#define SROCE_L_QP_EX_SIZE		360
#define SROCE_L_VERBS_QP_SIZE		376
#define SROCE_L_VERBS_QP_COMP_MASK	360
#define SROCE_L_VERBS_QP_XRCD		368
#define SROCE_L_PORT_ATTR_SIZE		56
#define SROCE_HAVE_WR_FLUSH		1
#else
#error "libsroce has no private-ABI layout for this rdma-core release (known: 44, 56)"
#endif

#if SROCE_PABI_VERSION != SROCE_LAYOUT_PABI
#error "the installed libibverbs' PABI is not the one this rdma-core layout was measured for"
#endif

#define SROCE_STR_(x)	#x
#define SROCE_STR(x)	SROCE_STR_(x)
#define SROCE_PASTE_(a, b)	a##b
#define SROCE_PASTE(a, b)	SROCE_PASTE_(a, b)

/* The file name of the libibverbs we were built against, e.g. ...56.1 */
#define SROCE_LIBIBVERBS_SONAME_TAIL	"libibverbs.so.1.14." SROCE_RDMA_CORE_VERSION
#define SROCE_LIBIBVERBS_SONAME_PREFIX	"libibverbs.so.1.14."
#define SROCE_PROVIDER_FILE \
	"libsroce-rdmav" SROCE_STR(SROCE_PABI_VERSION) ".so"

struct sroce_list_node {
	struct sroce_list_node *next, *prev;
};

/* enum verbs_match_kind */
enum {
	SROCE_VERBS_MATCH_SENTINEL = 0,
	SROCE_VERBS_MATCH_PCI = 1,
	SROCE_VERBS_MATCH_MODALIAS = 2,
	SROCE_VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev {
	struct sroce_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct sroce_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* enum ibv_mr_type */
enum {
	SROCE_IBV_MR_TYPE_MR,
	SROCE_IBV_MR_TYPE_NULL_MR,
	SROCE_IBV_MR_TYPE_IMPORTED_MR,
	SROCE_IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;		/* enum ibv_mr_type, an int-sized enum */
	int access;
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* enum verbs_qp_mask */
#define SROCE_VERBS_QP_XRCD	(1 << 0)
#define SROCE_VERBS_QP_EX	(1 << 1)

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* The op table, sorted by name; 44 and 56 have the same 76 slots. */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
			struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
			struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
			struct ibv_context *context,
			struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
			struct ibv_context *context,
			struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

#define SROCE_VERBS_OPS_SLOTS	76

/*
 * Legacy command wrappers: the uverbs command header followed by the core
 * request.  libibverbs finds the driver data at cmd + sizeof(wrapper), so
 * the sizes below must be exactly those of libibverbs' own wrappers.
 */
#define SROCE_DECLARE_CMD(name, core)				\
	struct name {						\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct core core_payload;			\
	}

SROCE_DECLARE_CMD(ibv_get_context, ib_uverbs_get_context);
SROCE_DECLARE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
SROCE_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
SROCE_DECLARE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
SROCE_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
SROCE_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
SROCE_DECLARE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
SROCE_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
SROCE_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
SROCE_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
SROCE_DECLARE_CMD(ibv_create_srq, ib_uverbs_create_srq);
SROCE_DECLARE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
SROCE_DECLARE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
SROCE_DECLARE_CMD(ibv_query_srq, ib_uverbs_query_srq);
SROCE_DECLARE_CMD(ibv_query_port, ib_uverbs_query_port);
SROCE_DECLARE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
SROCE_DECLARE_CMD(ibv_open_qp, ib_uverbs_open_qp);

/* Extended commands: the extended header, then the core request. */
struct sroce_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};
#define SROCE_DECLARE_CMD_EX(name, core)			\
	struct name {						\
		struct sroce_ex_hdr hdr;			\
		struct core core_payload;			\
	}
SROCE_DECLARE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
SROCE_DECLARE_CMD_EX(ibv_create_wq, ib_uverbs_ex_create_wq);
SROCE_DECLARE_CMD_EX(ibv_modify_wq, ib_uverbs_ex_modify_wq);

/* The PABI symbol name carries the version so a mismatch fails to link. */
#define sroce_verbs_register_driver \
	SROCE_PASTE(verbs_register_driver_, SROCE_PABI_VERSION)
void sroce_verbs_register_driver(const struct verbs_device_ops *ops);

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd,
			size_t ucmd_size);
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
		      struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr,
		      struct ibv_modify_wq *cmd, size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/*
 * Layout pins.  The numbers were measured by compiling against rdma-core's
 * own driver.h at v44.0 and at v56.1 (56.2 to 56.4 change no header); each
 * one guards a structure libibverbs and this provider both read or write.
 * Those that differ between releases are the SROCE_L_* numbers above.
 */
#define SROCE_PIN_SIZE(t, n) _Static_assert(sizeof(t) == (n), "size of " #t)
#define SROCE_PIN_OFF(t, m, n) \
	_Static_assert(offsetof(t, m) == (n), "offset of " #t "." #m)

SROCE_PIN_SIZE(struct ibv_device, 664);
SROCE_PIN_SIZE(struct verbs_context, 648);
SROCE_PIN_SIZE(struct ibv_context, 328);
SROCE_PIN_OFF(struct verbs_context, context, 320);
SROCE_PIN_SIZE(struct verbs_context_ops, SROCE_VERBS_OPS_SLOTS * sizeof(void *));
SROCE_PIN_SIZE(struct verbs_device, 712);
SROCE_PIN_OFF(struct verbs_device, ops, 664);
SROCE_PIN_OFF(struct verbs_device, refcount, 672);
SROCE_PIN_OFF(struct verbs_device, entry, 680);
SROCE_PIN_OFF(struct verbs_device, sysfs, 696);
SROCE_PIN_OFF(struct verbs_device, core_support, 704);
SROCE_PIN_SIZE(struct verbs_device_ops, 72);
SROCE_PIN_OFF(struct verbs_device_ops, match_min_abi_version, 8);
SROCE_PIN_OFF(struct verbs_device_ops, match_table, 16);
SROCE_PIN_OFF(struct verbs_device_ops, match_device, 32);
SROCE_PIN_OFF(struct verbs_device_ops, alloc_context, 40);
SROCE_PIN_OFF(struct verbs_device_ops, import_context, 48);
SROCE_PIN_OFF(struct verbs_device_ops, alloc_device, 56);
SROCE_PIN_OFF(struct verbs_device_ops, uninit_device, 64);
SROCE_PIN_SIZE(struct verbs_sysfs_dev, 992);
SROCE_PIN_OFF(struct verbs_sysfs_dev, match, 24);
SROCE_PIN_OFF(struct verbs_sysfs_dev, sysfs_name, 36);
SROCE_PIN_OFF(struct verbs_sysfs_dev, ibdev_name, 112);
SROCE_PIN_OFF(struct verbs_sysfs_dev, modalias, 432);
SROCE_PIN_OFF(struct verbs_sysfs_dev, driver_id, 952);
SROCE_PIN_OFF(struct verbs_sysfs_dev, abi_ver, 968);
SROCE_PIN_OFF(struct verbs_sysfs_dev, time_created, 976);
SROCE_PIN_SIZE(struct verbs_match_ent, 24);
SROCE_PIN_OFF(struct verbs_match_ent, u, 8);
SROCE_PIN_OFF(struct verbs_match_ent, kind, 20);
SROCE_PIN_SIZE(struct verbs_mr, 56);
SROCE_PIN_OFF(struct verbs_mr, mr_type, 48);
SROCE_PIN_OFF(struct verbs_mr, access, 52);
SROCE_PIN_SIZE(struct ibv_qp_ex, SROCE_L_QP_EX_SIZE);
SROCE_PIN_SIZE(struct verbs_qp, SROCE_L_VERBS_QP_SIZE);
SROCE_PIN_OFF(struct verbs_qp, comp_mask, SROCE_L_VERBS_QP_COMP_MASK);
SROCE_PIN_OFF(struct verbs_qp, xrcd, SROCE_L_VERBS_QP_XRCD);
/* ibv_cmd_query_port fills the caller's attr up to this size */
SROCE_PIN_SIZE(struct ibv_port_attr, SROCE_L_PORT_ATTR_SIZE);
SROCE_PIN_SIZE(struct verbs_cq, 288);
SROCE_PIN_SIZE(struct verbs_srq, 160);
SROCE_PIN_OFF(struct verbs_srq, srq_type, 128);
SROCE_PIN_OFF(struct verbs_srq, srq_num, 152);
SROCE_PIN_SIZE(struct verbs_xrcd, 16);

/* A sample of slots across the table, on top of the total size above. */
SROCE_PIN_OFF(struct verbs_context_ops, advise_mr, 0);
SROCE_PIN_OFF(struct verbs_context_ops, alloc_pd, 40);
SROCE_PIN_OFF(struct verbs_context_ops, create_cq, 120);
SROCE_PIN_OFF(struct verbs_context_ops, poll_cq, 424);
SROCE_PIN_OFF(struct verbs_context_ops, post_send, 440);
SROCE_PIN_OFF(struct verbs_context_ops, req_notify_cq, 552);
SROCE_PIN_OFF(struct verbs_context_ops, unimport_pd, 600);

SROCE_PIN_SIZE(struct ibv_get_context, 16);
SROCE_PIN_SIZE(struct ibv_alloc_pd, 16);
SROCE_PIN_SIZE(struct ibv_reg_mr, 48);
SROCE_PIN_SIZE(struct ibv_rereg_mr, 56);
SROCE_PIN_SIZE(struct ibv_alloc_mw, 24);
SROCE_PIN_SIZE(struct ibv_create_cq, 40);
SROCE_PIN_SIZE(struct ibv_resize_cq, 24);
SROCE_PIN_SIZE(struct ibv_create_qp, 64);
SROCE_PIN_SIZE(struct ibv_modify_qp, 120);
SROCE_PIN_SIZE(struct ibv_query_qp, 24);
SROCE_PIN_SIZE(struct ibv_create_srq, 40);
SROCE_PIN_SIZE(struct ibv_create_xsrq, 56);
SROCE_PIN_SIZE(struct ibv_modify_srq, 24);
SROCE_PIN_SIZE(struct ibv_query_srq, 24);
SROCE_PIN_SIZE(struct ibv_query_port, 24);
SROCE_PIN_SIZE(struct ibv_open_xrcd, 24);
SROCE_PIN_SIZE(struct ibv_open_qp, 40);
SROCE_PIN_SIZE(struct ibv_create_qp_ex, 88);
SROCE_PIN_SIZE(struct ibv_create_wq, 64);
SROCE_PIN_SIZE(struct ibv_modify_wq, 48);

/* Core response sizes: driver data follows each at exactly this offset. */
SROCE_PIN_SIZE(struct ib_uverbs_get_context_resp, 8);
SROCE_PIN_SIZE(struct ib_uverbs_create_cq_resp, 8);
SROCE_PIN_SIZE(struct ib_uverbs_resize_cq_resp, 8);
SROCE_PIN_SIZE(struct ib_uverbs_create_qp_resp, 32);
SROCE_PIN_SIZE(struct ib_uverbs_create_srq_resp, 16);
SROCE_PIN_SIZE(struct ib_uverbs_create_ah_resp, 4);
SROCE_PIN_SIZE(struct ib_uverbs_open_xrcd_resp, 4);
SROCE_PIN_SIZE(struct ib_uverbs_ex_create_wq_resp, 24);
SROCE_PIN_SIZE(struct ib_uverbs_ex_create_qp_resp, 40);

#endif /* SROCE_IBV_PRIVATE_H */
