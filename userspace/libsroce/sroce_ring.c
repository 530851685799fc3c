// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Mapping of the rings the kernel shares through the uverbs fd. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sroce.h"

bool sroce_mmap_info_valid(const struct sroce_mmap_info *mi,
			   uint32_t min_stride)
{
	uint64_t need;
	long page = sysconf(_SC_PAGESIZE);

	if (!mi->num || (mi->num & (mi->num - 1)))
		return false;
	if (mi->stride < min_stride || mi->stride % 16)
		return false;
	if (page <= 0 || mi->offset % (uint64_t)page)
		return false;
	/* 64-bit arithmetic: num * stride cannot wrap for u32 inputs. */
	need = SROCE_RING_DATA_OFFSET + (uint64_t)mi->num * mi->stride;
	return mi->size >= need;
}

int sroce_ring_map(struct sroce_ring *ring, int cmd_fd,
		   const struct sroce_mmap_info *mi, uint32_t min_stride)
{
	void *p;

	memset(ring, 0, sizeof(*ring));
	if (!sroce_mmap_info_valid(mi, min_stride))
		return EINVAL;

	p = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)mi->offset);
	if (p == MAP_FAILED)
		return errno ? errno : ENOMEM;

	ring->map = p;
	ring->map_size = mi->size;
	ring->ctl = p;
	ring->data = (uint8_t *)p + SROCE_RING_DATA_OFFSET;
	ring->num = mi->num;
	ring->mask = mi->num - 1;
	ring->stride = mi->stride;
	/*
	 * Start from where the kernel set up the ring; from now on only our
	 * private copy counts.
	 */
	ring->idx = 0;
	if (pthread_spin_init(&ring->lock, PTHREAD_PROCESS_PRIVATE)) {
		munmap(p, mi->size);
		ring->map = NULL;
		return ENOMEM;
	}
	return 0;
}

void sroce_ring_unmap(struct sroce_ring *ring)
{
	if (!ring->map)
		return;
	munmap(ring->map, ring->map_size);
	pthread_spin_destroy(&ring->lock);
	ring->map = NULL;
}

/*
 * Move @ring to the freshly mapped @nr (a resized CQ or SRQ), keeping
 * @ring's lock, which the caller holds; the old mapping goes.
 */
void sroce_ring_adopt(struct sroce_ring *ring, struct sroce_ring *nr)
{
	pthread_spin_destroy(&nr->lock);
	munmap(ring->map, ring->map_size);
	ring->map = nr->map;
	ring->map_size = nr->map_size;
	ring->ctl = nr->ctl;
	ring->data = nr->data;
	ring->num = nr->num;
	ring->mask = nr->mask;
	ring->stride = nr->stride;
	ring->idx = nr->idx;
}
