/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal types of libsroce, the userspace provider for sroce devices. */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ibv_private.h"
#include <rdma/sroce-abi.h>

/*
 * Driver-data wrappers of the commands we issue: the core response, then
 * ours.  The core part is kept as bytes because some core structs end in
 * a flexible array, which may not sit in the middle of a struct; sizes
 * are pinned below and in ibv_private.h.
 */
#define SROCE_RESP_WRAP(name, core, drv_t)				\
	struct name {							\
		uint8_t core_bytes[sizeof(struct core)];		\
		drv_t drv;						\
	} __attribute__((aligned(8)))

SROCE_RESP_WRAP(sroce_get_context_resp, ib_uverbs_get_context_resp,
		struct sroce_alloc_ucontext_resp);
SROCE_RESP_WRAP(sroce_create_cq_resp_w, ib_uverbs_create_cq_resp,
		struct sroce_create_cq_resp);
SROCE_RESP_WRAP(sroce_resize_cq_resp_w, ib_uverbs_resize_cq_resp,
		struct sroce_resize_cq_resp);
SROCE_RESP_WRAP(sroce_create_qp_resp_w, ib_uverbs_create_qp_resp,
		struct sroce_create_qp_resp);
SROCE_RESP_WRAP(sroce_create_srq_resp_w, ib_uverbs_create_srq_resp,
		struct sroce_create_srq_resp);
SROCE_RESP_WRAP(sroce_create_wq_resp_w, ib_uverbs_ex_create_wq_resp,
		struct sroce_create_srq_resp);
/*
 * An RSS QP's create_qp, the extended command (the legacy one cannot name
 * an indirection table): its hash configuration after the core part.
 */
struct sroce_create_qp_rss_w {
	struct ibv_create_qp_ex ibv;
	struct sroce_create_qp_rss_cmd drv;
};
SROCE_RESP_WRAP(sroce_create_qp_ex_resp_w, ib_uverbs_ex_create_qp_resp,
		struct sroce_create_qp_resp);
/* 4 + 8 bytes: only 4-byte alignment, so no aligned(8) padding. */
struct sroce_create_ah_resp_w {
	uint8_t core_bytes[sizeof(struct ib_uverbs_create_ah_resp)];
	struct sroce_create_ah_resp drv;
};

/* modify_srq's command with our data after the core part. */
struct sroce_modify_srq_cmd_w {
	struct ibv_modify_srq ibv;
	struct sroce_modify_srq_cmd drv;
};

#define SROCE_CORE_RESP(w, type) ((type *)(void *)(w)->core_bytes)

/* The kernel finds our data right after its core struct: no padding. */
_Static_assert(offsetof(struct sroce_get_context_resp, drv) == 8, "ctx resp");
_Static_assert(sizeof(struct sroce_get_context_resp) == 24, "ctx resp size");
_Static_assert(offsetof(struct sroce_create_cq_resp_w, drv) == 8, "cq resp");
_Static_assert(sizeof(struct sroce_create_cq_resp_w) == 32, "cq resp size");
_Static_assert(offsetof(struct sroce_resize_cq_resp_w, drv) == 8, "rcq resp");
_Static_assert(sizeof(struct sroce_resize_cq_resp_w) == 32, "rcq resp size");
_Static_assert(offsetof(struct sroce_create_qp_resp_w, drv) == 32, "qp resp");
_Static_assert(sizeof(struct sroce_create_qp_resp_w) == 80, "qp resp size");
_Static_assert(offsetof(struct sroce_create_srq_resp_w, drv) == 16, "srq resp");
_Static_assert(sizeof(struct sroce_create_srq_resp_w) == 48, "srq resp size");
_Static_assert(offsetof(struct sroce_modify_srq_cmd_w, drv) == 24, "msrq cmd");
_Static_assert(offsetof(struct sroce_create_wq_resp_w, drv) == 24, "wq resp");
_Static_assert(offsetof(struct sroce_create_qp_rss_w, drv) == 88, "rss cmd");
_Static_assert(offsetof(struct sroce_create_qp_ex_resp_w, drv) == 40, "qp ex resp");
_Static_assert(sizeof(struct sroce_modify_srq_cmd_w) == 32, "msrq cmd size");
_Static_assert(offsetof(struct sroce_create_ah_resp_w, drv) == 4, "ah resp");
_Static_assert(sizeof(struct sroce_create_ah_resp_w) == 12, "ah resp size");

struct sroce_device {
	struct verbs_device vdev;
};

struct sroce_context {
	struct verbs_context vctx;	/* first: see sroce_alloc_context */
	uint32_t max_inline_data;
	uint32_t max_sge;
	uint32_t flags;		/* SROCE_UCTX_F_* from the kernel */
	bool give_way;		/* SROCE_CQ_GIVE_WAY is not "0" */
};

/*
 * One mapped ring.  'idx' is this side's own index (prod for a ring we
 * produce, cons for one we consume); the shared copy is only ever written
 * from it, never read back, so a corrupted shared value cannot steer us.
 */
struct sroce_ring {
	void *map;
	size_t map_size;
	struct sroce_ring_ctl *ctl;
	uint8_t *data;
	uint32_t num;
	uint32_t mask;
	uint32_t stride;
	uint32_t idx;
	pthread_spinlock_t lock;
};

struct sroce_cq {
	struct verbs_cq vcq;
	struct sroce_ring ring;
	bool ex;		/* created through create_cq_ex */
	bool polling;		/* between start_poll and end_poll */
	struct sroce_cqe cur;	/* snapshot of the entry start/next_poll read */
	uint64_t wc_flags;	/* ibv_cq_init_attr_ex.wc_flags */
	uint32_t events;	/* completion events acknowledged via cq_event */
	uint32_t rx_task_seen;	/* ctl->rx_task_seq at the last empty poll */
};

/*
 * How long an empty poll sleeps when it competes with our own receive
 * work (sroce_cq_starves_rx).  With the default 50 us timer slack this
 * is ~70 us; ib_send_bw's 64 KiB sends on one vCPU went from 19 to 30
 * MiB/s (median of 5), 100 us did no better.
 */
#define SROCE_CQ_GIVE_WAY_NS	20000
/* Packets processed in a task since the last empty poll that make a backlog. */
#define SROCE_CQ_GIVE_WAY_PKTS	4

/*
 * A PD, or a parent domain (@protection set): the protection domain's
 * handle, so every command reaches the kernel in that PD, and what the
 * application gave with it.  Custom allocators are accepted and never
 * called: every buffer libsroce uses is a ring the kernel allocated and
 * maps, none is the application's to place.
 */
struct sroce_pd {
	struct ibv_pd ibv_pd;
	struct ibv_pd *protection;	/* parent domains only */
	void *pd_context;
	uint32_t parents;		/* parent domains over this PD */
	/*
	 * Imported PDs: 1 for the import and 1 per parent domain over it;
	 * whoever drops the last frees our copy.
	 */
	bool imported;
	uint32_t holds;
};
struct sroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;
};

struct sroce_srq {
	struct verbs_srq vsrq;
	struct sroce_ring ring;
	uint32_t max_sge;
};

/* A receive WQ, fed to RSS QPs through indirection tables. */
struct sroce_wq {
	struct ibv_wq ibv_wq;
	struct sroce_ring ring;
	uint32_t max_sge;
	pthread_mutex_t modify_lock;	/* orders modify_wq's in_err updates */
	bool in_err;		/* in ERR, or being moved there */
};

struct sroce_qp {
	struct verbs_qp vqp;
	struct sroce_ring sq;
	struct sroce_ring rq;
	bool has_sq;
	bool has_rq;
	bool sq_sig_all;
	uint32_t max_send_sge;
	uint32_t max_inline;
	uint32_t max_recv_sge;
	uint64_t send_ops_flags;
	/* ibv_wr_* batch state, valid between wr_start and wr_complete */
	uint32_t wr_start_idx;
	struct sroce_send_wqe *wr_cur;
	int wr_err;
	/* doorbells skipped since the last one rung (sroce_doorbell_needed) */
	uint32_t db_skipped;
};

/* struct ibv_context is the last member of struct verbs_context. */
static inline struct sroce_context *to_sctx(struct ibv_context *ctx)
{
	return (struct sroce_context *)((char *)ctx -
		offsetof(struct sroce_context, vctx.context));
}

static inline struct sroce_cq *to_scq(struct ibv_cq *cq)
{
	return (struct sroce_cq *)cq;
}

static inline struct sroce_cq *to_scq_ex(struct ibv_cq_ex *cq)
{
	return (struct sroce_cq *)cq;
}

static inline struct sroce_qp *to_sqp(struct ibv_qp *qp)
{
	return (struct sroce_qp *)qp;
}

static inline struct sroce_qp *to_sqp_ex(struct ibv_qp_ex *qp)
{
	return (struct sroce_qp *)qp;
}

static inline struct sroce_srq *to_ssrq(struct ibv_srq *srq)
{
	return (struct sroce_srq *)srq;
}

static inline struct sroce_pd *to_spd(struct ibv_pd *pd)
{
	return (struct sroce_pd *)pd;
}
static inline struct sroce_ah *to_sah(struct ibv_ah *ah)
{
	return (struct sroce_ah *)ah;
}

/* Ring helpers (sroce_ring.c). */
int sroce_ring_map(struct sroce_ring *ring, int cmd_fd,
		   const struct sroce_mmap_info *mi, uint32_t min_stride);
void sroce_ring_unmap(struct sroce_ring *ring);
void sroce_ring_adopt(struct sroce_ring *ring, struct sroce_ring *nr);
bool sroce_mmap_info_valid(const struct sroce_mmap_info *mi,
			   uint32_t min_stride);

static inline uint32_t sroce_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sroce_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *sroce_ring_slot(struct sroce_ring *ring, uint32_t idx)
{
	return ring->data + (size_t)(idx & ring->mask) * ring->stride;
}

/* Free slots a producer has, from its private prod and the peer's cons. */
static inline uint32_t sroce_ring_space(struct sroce_ring *ring)
{
	uint32_t used = ring->idx - sroce_load_acquire(&ring->ctl->cons);

	/* A consumer index ahead of us is nonsense: treat the ring as full. */
	return used > ring->num ? 0 : ring->num - used;
}

/* Version check, exposed for the unit test. */
bool sroce_libibverbs_path_ok(const char *path);

/* Verbs, by file. */
struct ibv_cq *sroce_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ctx,
				     struct ibv_cq_init_attr_ex *attr);
int sroce_destroy_cq(struct ibv_cq *cq);
int sroce_resize_cq(struct ibv_cq *cq, int cqe);
int sroce_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int sroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void sroce_cq_event(struct ibv_cq *cq);
void sroce_cq_clean(struct ibv_cq *cq, uint32_t qpn);

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr);
int sroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask);
int sroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int sroce_destroy_qp(struct ibv_qp *qp);
int sroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int sroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int sroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ctx,
				    struct ibv_srq_init_attr_ex *attr);
int sroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int attr_mask);
int sroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int sroce_destroy_srq(struct ibv_srq *srq);
int sroce_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_qp *sroce_open_qp(struct ibv_context *ctx,
			     struct ibv_qp_open_attr *attr);
struct ibv_wq *sroce_create_wq(struct ibv_context *ctx,
			       struct ibv_wq_init_attr *attr);
int sroce_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int sroce_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *
sroce_create_rwq_ind_table(struct ibv_context *ctx,
			   struct ibv_rwq_ind_table_init_attr *attr);
int sroce_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t);
int sroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

#endif /* SROCE_PROVIDER_H */
