/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Rings shared with userspace (or private to a kernel consumer): the
 * kernel side of the layout in uapi/rdma/sroce-abi.h.  Owned by the
 * objects role (sroce_queue.c).
 *
 * Whatever userspace can write (ctl->prod, ctl->cons, the entries) is read
 * once, validated, and never trusted afterwards.  For rings whose "user"
 * side is a kernel consumer (kernel QPs and CQs) the same code runs, with
 * the peer index kept in @kpeer instead of being taken on faith from the
 * ring.
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>
#include "uapi/rdma/sroce-abi.h"

struct rdma_user_mmap_entry;
struct ib_ucontext;

struct sroce_queue {
	struct sroce_ring_ctl *ctl;	/* shared control block */
	void *data;			/* first entry */
	size_t size;			/* bytes allocated (vmalloc_user) */
	u32 num;			/* entries, a power of two */
	u32 stride;			/* bytes per entry */
	u32 kidx;			/* the index the kernel owns, private */
	/*
	 * Kernel consumers only: the index of the "user" side (the poster of
	 * a kernel QP, the poller of a kernel CQ).
	 */
	u32 kpeer;
	/* SQ only: WQEs copied out of the ring; kidx <= kfetch <= prod. */
	u32 kfetch;
	struct rdma_user_mmap_entry *mmap_entry;
};

/* Smallest power of two >= @req with room for at least one entry. */
u32 sroce_queue_num(u32 req);
int sroce_queue_init(struct sroce_queue *q, u32 num, u32 stride);
/* Make the ring mappable by @uctx and describe it in @mi. */
int sroce_queue_map(struct sroce_queue *q, struct ib_ucontext *uctx,
		    struct sroce_mmap_info *mi);
void sroce_queue_cleanup(struct sroce_queue *q);

static inline void *sroce_queue_slot(const struct sroce_queue *q, u32 idx)
{
	return q->data + (size_t)(idx & (q->num - 1)) * q->stride;
}

/*
 * Consumer side (the kernel consumes): entries published by the peer and
 * not yet consumed, counted from @from (kidx, or kfetch for the SQ).
 * Returns -EIO if the peer's index is impossible: the ring is corrupt.
 */
int sroce_queue_avail(const struct sroce_queue *q, u32 from, u32 *count);
static inline void sroce_queue_publish_cons(struct sroce_queue *q)
{
	/* Our copies of the consumed entries are done before reuse. */
	smp_store_release(&q->ctl->cons, q->kidx);
}

/*
 * Producer side (the kernel produces, e.g. CQs): free slots.  Returns -EIO
 * if the peer's consumer index is impossible.
 */
int sroce_queue_space(const struct sroce_queue *q, u32 *space);
static inline void sroce_queue_publish_prod(struct sroce_queue *q)
{
	/* Entries are written before the index that publishes them. */
	smp_store_release(&q->ctl->prod, q->kidx);
}

void sroce_queue_set_state(struct sroce_queue *q, u32 state);

#endif /* SROCE_QUEUE_H */
