// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Ring allocation and the index arithmetic both kinds of consumer share.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include "sroce.h"

u32 sroce_queue_num(u32 req)
{
	if (req < 1)
		req = 1;
	if (req > (1U << 31))
		return 0;
	return roundup_pow_of_two(req);
}

/*
 * vmalloc_user() charges nobody, and a ring can be megabytes that any
 * process allowed to open uverbs may ask for: build the same kind of area
 * (zeroed, mappable with remap_vmalloc_range) from pages charged to the
 * caller's memory cgroup.  Past its limit the caller gets -ENOMEM, not
 * the OOM killer (SROCE_GFP_USER).  vfree() releases pages and array
 * (VM_MAP_PUT_PAGES).
 */
static void *sroce_ring_alloc(size_t size)
{
	unsigned int i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *p;

	pages = kvmalloc_array(n, sizeof(*pages), SROCE_GFP_USER);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(SROCE_GFP_USER | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	p = vmap(pages, n, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES, PAGE_KERNEL);
	if (p)
		return p;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

int sroce_queue_init(struct sroce_queue *q, u32 num, u32 stride)
{
	size_t size;

	memset(q, 0, sizeof(*q));
	if (!num || !is_power_of_2(num) || !stride || stride % 16)
		return -EINVAL;
	if (check_mul_overflow((size_t)num, (size_t)stride, &size) ||
	    check_add_overflow(size, (size_t)SROCE_RING_DATA_OFFSET, &size))
		return -EINVAL;
	/* The mmap info carries a u32 size. */
	size = PAGE_ALIGN(size);
	if (size > U32_MAX)
		return -EINVAL;

	q->ctl = sroce_ring_alloc(size);
	if (!q->ctl)
		return -ENOMEM;
	q->data = (void *)q->ctl + SROCE_RING_DATA_OFFSET;
	q->size = size;
	q->num = num;
	q->stride = stride;
	return 0;
}

int sroce_queue_map(struct sroce_queue *q, struct ib_ucontext *uctx,
		    struct sroce_mmap_info *mi)
{
	int err;

	memset(mi, 0, sizeof(*mi));
	err = sroce_mmap_insert(uctx, q->ctl, q->size, &q->mmap_entry, mi);
	if (err) {
		q->mmap_entry = NULL;
		return err;
	}
	mi->size = q->size;
	mi->num = q->num;
	mi->stride = q->stride;
	return 0;
}

void sroce_queue_cleanup(struct sroce_queue *q)
{
	if (q->mmap_entry) {
		sroce_mmap_remove(q->mmap_entry);
		q->mmap_entry = NULL;
	}
	/*
	 * A user mapping that outlives the object keeps its own references
	 * on the pages, so freeing the area here is safe.
	 */
	vfree(q->ctl);
	q->ctl = NULL;
	q->data = NULL;
}

int sroce_queue_avail(const struct sroce_queue *q, u32 from, u32 *count)
{
	/* Pairs with the producer's release: entries are written. */
	u32 prod = smp_load_acquire(&q->ctl->prod);
	u32 n = prod - from;

	/* Also catches a producer index moved backwards past @from. */
	if (n > q->num || from - q->kidx > q->num ||
	    prod - q->kidx > q->num)
		return -EIO;
	*count = n;
	return 0;
}

int sroce_queue_space(const struct sroce_queue *q, u32 *space)
{
	/* Pairs with the consumer's release: its reads are done. */
	u32 cons = smp_load_acquire(&q->ctl->cons);
	u32 used = q->kidx - cons;

	if (used > q->num)
		return -EIO;
	*space = q->num - used;
	return 0;
}

void sroce_queue_set_state(struct sroce_queue *q, u32 state)
{
	if (q->ctl)
		WRITE_ONCE(q->ctl->state, state);
}
