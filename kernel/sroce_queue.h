/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Rings shared with userspace (or private to a kernel consumer): the
 * kernel side of the layout in uapi/rdma/sroce-abi.h.  Owned by the
 * objects role (sroce_queue.c).
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>
#include "uapi/rdma/sroce-abi.h"

struct rdma_user_mmap_entry;

struct sroce_queue {
	struct sroce_ring_ctl *ctl;	/* shared control block */
	void *data;			/* first entry */
	size_t size;			/* bytes allocated (vmalloc_user) */
	u32 num;			/* entries, a power of two */
	u32 stride;			/* bytes per entry */
	u32 kidx;			/* the index the kernel owns, private */
	struct rdma_user_mmap_entry *mmap_entry;
};

#endif /* SROCE_QUEUE_H */
