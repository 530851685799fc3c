// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * On-demand paging regions (IB_ACCESS_ON_DEMAND): registered without
 * pinning.  ib_umem_odp keeps, per page, the kernel address of what the
 * process has mapped there (this device uses virtual DMA) and its MMU
 * interval notifier tells us before a page goes.
 *
 * Copies run in softirq and cannot fault: a copy that finds a page
 * missing gets -EAGAIN and queues the region's fault work (one at a
 * time; the next miss queues the next), and its caller tries again
 * later: the responder with an RNR NAK, so that the peer resends, the
 * requester and completer after a pause (sroce_comp_odp_wait()).  A page
 * the process does not map at all fails the fault; for a while after,
 * copies from it fail (-EFAULT) instead of waiting for ever.
 *
 * An invalidation marks the range it takes away under copy_lock, so that
 * no copy uses those pages from then on and the ones in progress end
 * first, and unmaps them, which may sleep, after dropping the lock.
 *
 * An implicit region (start 0, length U64_MAX) covers the whole address
 * space: its pages live in child umems of SROCE_ODP_CHILD_SHIFT bytes
 * each, made by the fault work for an address the process maps, and
 * published only once one page of theirs is; they go with the region.
 */
#include <linux/hmm.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>
#include "sroce_obj.h"
#include "sroce_keys.h"

/* The most one fault maps: what the next packets of a stream need. */
#define SROCE_ODP_FAULT_MAX	(256 * 1024)
/* How long a range that failed to fault fails copies at once. */
#define SROCE_ODP_BAD_MS	1000

static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_mr *mr;
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	/*
	 * Read under umem_mutex: a child's is set after its notifier is live
	 * but before it is first mapped (under this mutex), so either we see
	 * it or our new sequence makes that map try again.
	 */
	mr = READ_ONCE(odp->private);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(odp), range->start);
	end = min_t(u64, ib_umem_end(odp), range->end);
	/*
	 * NULL only until sroce_odp_mr_init() or sroce_odp_child() set it,
	 * before any copy can see the umem.  Children of one region are
	 * invalidated each under its own umem_mutex: one at a time here.
	 */
	if (mr) {
		mutex_lock(&mr->inval_mutex);
		write_lock_bh(&mr->copy_lock);
		mr->inval_start = start;
		mr->inval_end = end;
		write_unlock_bh(&mr->copy_lock);
	}
	ib_umem_odp_unmap_dma_pages(odp, start, end);
	if (mr) {
		write_lock_bh(&mr->copy_lock);
		mr->inval_start = 0;
		mr->inval_end = 0;
		write_unlock_bh(&mr->copy_lock);
		mutex_unlock(&mr->inval_mutex);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

/*
 * ib_core keeps two u64 per page of an ODP range, allocated with no
 * memory cgroup to charge: a 16 TiB region would ask for 64 GiB.  So the
 * device's ODP page tables may take at most 1/16 of RAM, and past that
 * registration fails with ENOMEM.
 */
static int sroce_odp_charge(struct sroce_mr *mr, u64 len)
{
	struct sroce_dev *dev = to_sdev(mr->ibmr.device);
	u64 bytes = (len / PAGE_SIZE + 2) * 2 * sizeof(u64);
	u64 max = (u64)totalram_pages() << (PAGE_SHIFT - 4);

	if (atomic64_add_return(bytes, &dev->odp_table_bytes) > max) {
		atomic64_sub(bytes, &dev->odp_table_bytes);
		return -ENOMEM;
	}
	mr->odp_charged += bytes;
	return 0;
}

static void sroce_odp_uncharge(struct sroce_mr *mr, u64 len)
{
	u64 bytes = (len / PAGE_SIZE + 2) * 2 * sizeof(u64);

	atomic64_sub(bytes, &to_sdev(mr->ibmr.device)->odp_table_bytes);
	mr->odp_charged -= bytes;
}

/*
 * fault_mutex held: the child of implicit region @mr that holds @uaddr.
 * Without @make, the first one at or after @uaddr below @end, or NULL.
 * With it, made if missing (@fresh: not yet published), or an error
 * past the address space or the region's quota of children.
 */
static struct ib_umem_odp *sroce_odp_child(struct sroce_mr *mr, u64 uaddr,
					   u64 end, bool make, bool *fresh)
{
	unsigned long idx = uaddr >> SROCE_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;

	*fresh = false;
	if (!make)
		return xa_find(&mr->odp_children, &idx,
			       (end - 1) >> SROCE_ODP_CHILD_SHIFT, XA_PRESENT);
	child = xa_load(&mr->odp_children, idx);
	if (child)
		return child;
	if (uaddr >= TASK_SIZE_MAX ||
	    mr->odp_nchildren >= SROCE_ODP_MAX_CHILDREN ||
	    sroce_odp_charge(mr, 1UL << SROCE_ODP_CHILD_SHIFT))
		return ERR_PTR(-EFAULT);
	child = ib_umem_odp_alloc_child(mr->odp,
					(u64)idx << SROCE_ODP_CHILD_SHIFT,
					1UL << SROCE_ODP_CHILD_SHIFT,
					&sroce_odp_ops);
	if (IS_ERR(child)) {
		sroce_odp_uncharge(mr, 1UL << SROCE_ODP_CHILD_SHIFT);
		return child;
	}
	WRITE_ONCE(child->private, mr);
	*fresh = true;
	return child;
}

/*
 * fault_mutex held: map [@uaddr, @uaddr + @len) of @odp, which is all
 * inside it; a fresh child is published if that worked, else dropped.
 */
static int sroce_odp_map_one(struct sroce_mr *mr, struct ib_umem_odp *odp,
			     u64 uaddr, u64 len, u64 mask, bool fault,
			     bool fresh)
{
	int np = ib_umem_odp_map_dma_and_lock(odp, uaddr, len, mask, fault);

	if (np >= 0)
		mutex_unlock(&odp->umem_mutex);
	if (!fresh)
		return np;
	if (np >= 0)
		np = xa_insert(&mr->odp_children,
			       ib_umem_start(odp) >> SROCE_ODP_CHILD_SHIFT, odp,
			       GFP_KERNEL);
	if (np < 0) {
		ib_umem_odp_release(odp);
		sroce_odp_uncharge(mr, 1UL << SROCE_ODP_CHILD_SHIFT);
	} else {
		mr->odp_nchildren++;
	}
	return np;
}

/*
 * Process context: map [@uaddr, @uaddr + @len) of @mr, faulting pages in
 * (@fault) or taking only what is there.  fault_mutex keeps it from
 * running after sroce_odp_mr_stop().
 */
static int sroce_odp_map(struct sroce_mr *mr, u64 uaddr, u64 len, bool write,
			 bool fault)
{
	u64 mask = ODP_READ_ALLOWED_BIT, end = uaddr + len, next;
	struct ib_umem_odp *odp = mr->odp;
	bool fresh = false;
	int np = 0;

	if (write)
		mask |= ODP_WRITE_ALLOWED_BIT;
	mutex_lock(&mr->fault_mutex);
	while (uaddr < end && np >= 0) {
		if (READ_ONCE(mr->state) != SROCE_MR_VALID ||
		    READ_ONCE(mr->dying)) {
			np = -ENOENT;
			break;
		}
		if (mr->odp->is_implicit_odp) {
			odp = sroce_odp_child(mr, uaddr, end, fault, &fresh);
			if (IS_ERR_OR_NULL(odp)) {
				np = odp ? PTR_ERR(odp) : 0;
				break;
			}
			uaddr = max_t(u64, uaddr, ib_umem_start(odp));
		}
		next = min_t(u64, end, ib_umem_end(odp));
		np = sroce_odp_map_one(mr, odp, uaddr, next - uaddr, mask,
				       fault, fresh);
		uaddr = next;
		cond_resched();
	}
	mutex_unlock(&mr->fault_mutex);
	return np < 0 ? np : 0;
}

/*
 * The page a copy missed must come in; the rest of the window is mapped
 * as it can be, so that a stream does not fault page by page.  Pages of
 * a writable region are mapped writable (a read fault would also take
 * write permission back from the window's pages), unless only reading
 * is possible.  A page that cannot be had fails copies for a while.
 */
static void sroce_odp_fault_work(struct work_struct *w)
{
	struct sroce_mr *mr = container_of(w, struct sroce_mr, fault_work);
	struct sroce_dev *dev = to_sdev(mr->ibmr.device);
	bool wr = mr->fault_write || mr->odp->umem.writable;
	u64 page = 1ULL << mr->odp->page_shift;
	int err;

	err = sroce_odp_map(mr, mr->fault_addr, page, wr, true);
	if (err && wr && !mr->fault_write) {
		wr = false;
		err = sroce_odp_map(mr, mr->fault_addr, page, false, true);
	}
	if (err && err != -ENOENT) {
		write_lock_bh(&mr->copy_lock);
		mr->bad_start = mr->fault_addr;
		mr->bad_end = mr->fault_addr + page;
		mr->bad_until = jiffies + msecs_to_jiffies(SROCE_ODP_BAD_MS);
		write_unlock_bh(&mr->copy_lock);
	} else if (!err && mr->fault_len > page) {
		sroce_odp_map(mr, mr->fault_addr + page, mr->fault_len - page,
			      wr, true);
	}
	clear_bit_unlock(0, &mr->fault_busy);
	atomic_dec(&dev->odp_faults);
}

int sroce_odp_mr_init(struct sroce_dev *dev, struct sroce_mr *mr, u64 start,
		      u64 length, u64 iova, int access)
{
	struct ib_umem_odp *odp;
	int err;

	/* ib_core sets it on return; charges and their undoing need it now */
	mr->ibmr.device = &dev->ibdev;
	mutex_init(&mr->fault_mutex);
	mutex_init(&mr->inval_mutex);
	xa_init(&mr->odp_children);
	INIT_WORK(&mr->fault_work, sroce_odp_fault_work);
	/* implicit: the whole address space, at its own addresses */
	if (!start && length == U64_MAX)
		odp = iova ? ERR_PTR(-EINVAL) :
		      ib_umem_odp_alloc_implicit(&dev->ibdev, access);
	else if (!length || !sroce_mr_range_valid(iova, length) ||
		 !sroce_mr_range_valid(start, length))
		odp = ERR_PTR(-EINVAL);
	else if (sroce_odp_charge(mr, length))
		odp = ERR_PTR(-ENOMEM);
	else
		odp = ib_umem_odp_get(&dev->ibdev, start, length, access,
				      &sroce_odp_ops);
	if (IS_ERR(odp)) {
		atomic64_sub(mr->odp_charged, &dev->odp_table_bytes);
		mr->odp_charged = 0;
		return PTR_ERR(odp);
	}
	/*
	 * An implicit root holds no reference on its mm (only children's
	 * notifiers do): keep it for the children a fault may still make
	 * after the process is gone but its file lives on.
	 */
	if (odp->is_implicit_odp) {
		mr->odp_mm = odp->umem.owning_mm;
		mmgrab(mr->odp_mm);
	}
	odp->private = mr;
	mr->odp = odp;
	mr->umem = &odp->umem;
	mr->odp_start = start;
	mr->iova = iova;
	mr->length = length;
	mr->page_shift = odp->page_shift;
	/* what is mapped already is usable at once; the rest on demand */
	mr->state = SROCE_MR_VALID;
	if (odp->is_implicit_odp)
		return 0;
	err = sroce_odp_map(mr, start, length, ib_access_writable(access),
			    false);
	if (err) {
		mr->state = SROCE_MR_FREE;
		return err;
	}
	return 0;
}

void sroce_odp_mr_stop(struct sroce_mr *mr)
{
	struct ib_umem_odp *child;
	unsigned long idx;

	/* the state is no longer VALID: nothing queues or maps any more */
	cancel_work_sync(&mr->fault_work);
	mutex_lock(&mr->fault_mutex);
	mutex_unlock(&mr->fault_mutex);
	/* no copy reaches the region any more: children go before the root */
	xa_for_each(&mr->odp_children, idx, child)
		ib_umem_odp_release(child);
	xa_destroy(&mr->odp_children);
	mr->odp_nchildren = 0;
	if (mr->odp_mm)
		mmdrop(mr->odp_mm);
	mr->odp_mm = NULL;
	/* the root's tables (explicit) go just after, with the umem */
	atomic64_sub(mr->odp_charged,
		     &to_sdev(mr->ibmr.device)->odp_table_bytes);
	mr->odp_charged = 0;
}

/* copy_lock held: have the fault work map what a copy is missing. */
static void sroce_odp_want(struct sroce_mr *mr, u64 uaddr, bool write)
{
	u64 end = mr->odp->is_implicit_odp ? TASK_SIZE_MAX :
					     ib_umem_end(mr->odp);

	if (test_and_set_bit_lock(0, &mr->fault_busy))
		return;
	if (READ_ONCE(mr->state) != SROCE_MR_VALID || READ_ONCE(mr->dying)) {
		clear_bit_unlock(0, &mr->fault_busy);
		return;
	}
	/* the page missed, and what the next packets will want after it */
	mr->fault_addr = uaddr & ~((1ULL << mr->odp->page_shift) - 1);
	mr->fault_len = min_t(u64, SROCE_ODP_FAULT_MAX,
			      end - mr->fault_addr);
	mr->fault_write = write;
	atomic_inc(&to_sdev(mr->ibmr.device)->odp_faults);
	queue_work(system_unbound_wq, &mr->fault_work);
}

int sroce_odp_locate(struct sroce_mr *mr, u64 iova, u32 len, bool write,
		     void **va, u64 *chunk)
{
	struct ib_umem_odp *odp = mr->odp;
	u64 uaddr = mr->odp_start + (iova - mr->iova);
	u64 perm = write ? ODP_WRITE_ALLOWED_BIT : ODP_READ_ALLOWED_BIT;
	u64 psize = 1ULL << odp->page_shift, off;
	dma_addr_t dma;

	if (odp->is_implicit_odp) {
		if (uaddr >= TASK_SIZE_MAX)
			return -EFAULT;
		/* children are freed only after the last copy (mr_stop) */
		odp = xa_load(&mr->odp_children,
			      uaddr >> SROCE_ODP_CHILD_SHIFT);
	}
	if (odp && (uaddr < mr->inval_start || uaddr >= mr->inval_end)) {
		dma = READ_ONCE(odp->dma_list[(uaddr - ib_umem_start(odp)) >>
					      odp->page_shift]);
		if (dma & perm) {
			off = uaddr & (psize - 1);
			*va = (void *)(uintptr_t)((dma & ODP_DMA_ADDR_MASK) +
						  off);
			*chunk = psize - off;
			return 0;
		}
	}
	if (uaddr >= mr->bad_start && uaddr < mr->bad_end &&
	    time_before(jiffies, mr->bad_until))
		return -EFAULT;
	sroce_odp_want(mr, uaddr, write);
	return -EAGAIN;
}

int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *dev = to_sdev(ibpd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	struct sroce_mr *mr;
	u32 i;
	int err;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	/* done before returning, which also does for the FLUSH flag */
	for (i = 0; i < num_sge; i++) {
		mr = sroce_mr_get(dev, to_spd(ibpd), sg_list[i].lkey, false,
				  write ? IB_ACCESS_LOCAL_WRITE : 0,
				  sg_list[i].addr, sg_list[i].length);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		err = mr->type != SROCE_MR_ODP ? -EINVAL :
		      sroce_odp_map(mr, mr->odp_start +
				    (sg_list[i].addr - mr->iova),
				    sg_list[i].length, write,
				    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);
		sroce_mr_put(mr);
		if (err)
			return err;
	}
	return 0;
}
