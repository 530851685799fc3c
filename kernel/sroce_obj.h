/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Private to the objects role (MR/MW, CQ, SRQ, QP files): helpers shared
 * between them that nobody else should call.
 */
#ifndef SROCE_OBJ_H
#define SROCE_OBJ_H

#include <rdma/uverbs_ioctl.h>
#include "sroce.h"

/* Driver input we do not define must be absent or all zero. */
static inline bool sroce_udata_in_ok(struct ib_udata *udata)
{
	return !udata || !udata->inlen ||
	       ib_is_udata_cleared(udata, 0, udata->inlen);
}

/* A response must fit entirely: a short buffer means a mismatched ABI. */
static inline int sroce_udata_out(struct ib_udata *udata, void *resp,
				  size_t len)
{
	if (udata->outlen < len)
		return -EINVAL;
	return ib_copy_to_udata(udata, resp, len);
}

static inline struct ib_ucontext *sroce_udata_uctx(struct ib_udata *udata)
{
	return &rdma_udata_to_drv_context(udata, struct sroce_ucontext,
					  ibuc)->ibuc;
}

/*
 * sroce_cq_post() without calling the completion handler: for callers
 * holding a QP lock the handler's owner might need (it may post again).
 * Call sroce_cq_notify() once the lock is dropped if *@notify was set.
 */
int sroce_cq_post_quiet(struct sroce_cq *cq, const struct sroce_cqe *cqe,
			bool solicited, bool *notify);
void sroce_cq_notify(struct sroce_cq *cq);

/*
 * sroce_qp_post.c, the receive ring's lock held: empty @q up to the
 * producer's index, completing each WQE on @cq with a flush error for
 * @qpn if @complete (else dropping it). -EIO: the ring is corrupt and
 * nothing moved.
 */
int sroce_recv_drain_locked(struct sroce_queue *q, struct sroce_cq *cq,
			    u32 qpn, bool complete, bool *notify);

/*
 * sroce_mr.c, mr->lock held: change the state and end every access
 * through the keys resolved so far.  Returns once the copies in progress
 * (at most a packet each) are done.
 */
void sroce_mr_set_state(struct sroce_mr *mr, enum sroce_mr_state st);
/* mw->lock of an unbinding window held: end accesses through windows. */
void sroce_mr_revoke_windows(struct sroce_mr *mr);

/* sroce_odp.c: on-demand paging regions */
int sroce_odp_mr_init(struct sroce_dev *dev, struct sroce_mr *mr, u64 start,
		      u64 length, u64 iova, int access);
/* Before the region goes: no fault runs or is queued any more. */
void sroce_odp_mr_stop(struct sroce_mr *mr);
/*
 * copy_lock held (read): where byte @iova of ODP region @mr is, if its
 * page is there with the right (@write) permission; else -EAGAIN, and a
 * fault is queued for its page and the next ones (@len: what the copy
 * still wants), or -EFAULT if that page could not be had just now.
 */
int sroce_odp_locate(struct sroce_mr *mr, u64 iova, u32 len, bool write,
		     void **va, u64 *chunk);
int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);

/* sroce_srq.c: take from a receive ring whose consumer lock is held. */
int sroce_recv_take(struct sroce_queue *q, u32 max_sge, struct sroce_rwqe *out);
/* Kernel post_recv/post_srq_recv into a receive ring, its lock held. */
int sroce_recv_post(struct sroce_queue *q, u32 max_sge,
		    const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

/* sroce_qp.c: with the QP in ERR, complete everything outstanding. */
void sroce_qp_flush(struct sroce_qp *qp);
/* sroce_qp_post.c */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void sroce_sq_flush(struct sroce_qp *qp);
void sroce_rq_flush(struct sroce_qp *qp);

#endif /* SROCE_OBJ_H */
