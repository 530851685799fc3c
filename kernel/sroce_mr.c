// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory regions: registration, key lookup and access to registered
 * memory on behalf of the transport engine.
 *
 * dev->mrs maps a key index to an MR or a memory window (tagged pointer).
 * Lookups run under RCU and take a reference with refcount_inc_not_zero();
 * that reference keeps the structure only.  The memory is reached only by
 * copies that hold mr->copy_lock for reading and find the key they were
 * resolved by still valid (struct sroce_mref); invalidation and
 * deregistration change the state under the write lock, so they wait for
 * the copies in progress and nothing else: a peer that stops in the middle
 * of a message cannot hold them up.  Deregistration then releases the
 * pages; the structure goes after its last reference and a grace period.
 */
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include "sroce_obj.h"
#include "sroce_keys.h"

/*
 * No FLUSH_PERSISTENT: nothing sroce registers is persistent memory, and a
 * FLUSH of that type must not claim otherwise.
 */
#define SROCE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | SROCE_ACCESS_FLUSH_GLOBAL)

/* One lock for every atomic: atomics on the same word must not interleave. */
static DEFINE_SPINLOCK(sroce_atomic_lock);

static int sroce_mr_check_access(int access)
{
	/*
	 * Optional flags (e.g. relaxed ordering) may be ignored by spec.
	 * HUGETLB only says the pages are huge: we map any page size at 4 KiB,
	 * pinned or on demand, so it is a hint we need not take.
	 */
	access &= ~(IB_ACCESS_OPTIONAL | IB_ACCESS_HUGETLB);
	if (!sroce_access_flags_valid(access, SROCE_MR_ACCESS))
		return -EINVAL;
	return access;
}

static struct sroce_mr *sroce_mr_alloc(struct sroce_dev *dev,
				       struct sroce_pd *pd, int access)
{
	struct sroce_mr *mr;

	if (atomic_inc_return(&dev->num_mr) > SROCE_MAX_MR) {
		atomic_dec(&dev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&dev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->pd = pd;
	mr->access = access;
	spin_lock_init(&mr->lock);
	rwlock_init(&mr->copy_lock);
	refcount_set(&mr->ref, 1);
	return mr;
}

/* Publish @mr under a fresh key index; the key byte starts at random. */
static int sroce_mr_publish(struct sroce_dev *dev, struct sroce_mr *mr)
{
	u32 index;
	int err;

	err = xa_alloc_cyclic(&dev->mrs, &index, mr,
			      XA_LIMIT(1, SROCE_KEY_MAX_INDEX), &dev->next_mr,
			      GFP_KERNEL);
	if (err < 0)
		return err;
	mr->key = sroce_key_make(index, get_random_u8());
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return 0;
}

void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		kfree_rcu(mr, rcu);
}

/*
 * Release the memory (process context) and the registration's reference.
 * Only for a region no copy can reach: never published, or made invalid
 * by sroce_mr_set_state().
 */
static void sroce_mr_release(struct sroce_dev *dev, struct sroce_mr *mr)
{
	if (mr->odp)
		sroce_odp_mr_stop(mr);
	/* an ODP umem goes with its notifier, waiting for invalidations */
	if (mr->umem)
		ib_umem_release(mr->umem);
	mr->odp = NULL;
	mr->umem = NULL;
	kvfree(mr->pages);
	mr->pages = NULL;
	kfree(mr->fr_list);
	mr->fr_list = NULL;
	kfree(mr->fr_next);
	mr->fr_next = NULL;
	mr->npages = 0;
	atomic_dec(&dev->num_mr);
	sroce_mr_put(mr);
}

/*
 * The new values are stored before the write lock is taken: softirq
 * readers do not queue behind a waiting writer, and a stream of copies
 * could starve it, but a copy that already sees them stops at once (and
 * fails its QP), so the stream dries up.  A copy that saw the old values
 * holds the read lock, and the writer waits for it.
 */
static void sroce_mr_wait_copies(struct sroce_mr *mr)
{
	write_lock(&mr->copy_lock);
	write_unlock(&mr->copy_lock);
}

void sroce_mr_set_state(struct sroce_mr *mr, enum sroce_mr_state st)
{
	WRITE_ONCE(mr->state, st);
	WRITE_ONCE(mr->gen, mr->gen + 1);
	sroce_mr_wait_copies(mr);
}

void sroce_mr_revoke_windows(struct sroce_mr *mr)
{
	WRITE_ONCE(mr->mw_gen, mr->mw_gen + 1);
	sroce_mr_wait_copies(mr);
}

static struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_dev *dev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	access = sroce_mr_check_access(access);
	if (access < 0)
		return ERR_PTR(access);
	mr = sroce_mr_alloc(dev, to_spd(ibpd), access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = SROCE_MR_DMA;
	mr->state = SROCE_MR_VALID;
	mr->iova = 0;
	mr->length = U64_MAX;
	err = sroce_mr_publish(dev, mr);
	if (err) {
		atomic_dec(&dev->num_mr);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* Pin the user range and record one struct page per PAGE_SIZE. */
static int sroce_mr_pin(struct sroce_dev *dev, struct sroce_mr *mr, u64 start,
			u64 length, u64 iova, int access)
{
	struct sg_page_iter it;
	struct ib_umem *umem;
	size_t n;
	u32 i = 0;

	if (!length || !sroce_mr_range_valid(iova, length) ||
	    !sroce_mr_range_valid(start, length))
		return -EINVAL;
	/* Pages have the same offset in the user range and the iova range. */
	umem = ib_umem_get(&dev->ibdev, start, length, access);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	n = ib_umem_num_pages(umem);
	if (!n || n > U32_MAX) {
		ib_umem_release(umem);
		return -EINVAL;
	}
	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ib_umem_release(umem);
		return -ENOMEM;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	if (i != n) {
		kvfree(mr->pages);
		mr->pages = NULL;
		ib_umem_release(umem);
		return -EFAULT;
	}
	mr->umem = umem;
	mr->npages = n;
	mr->max_pages = n;
	mr->page_shift = PAGE_SHIFT;
	mr->offset = ib_umem_offset(umem);
	mr->iova = iova;
	mr->length = length;
	return 0;
}

/* A valid user MR over [start, start + length), not yet in any table. */
static struct sroce_mr *sroce_mr_new_user(struct sroce_dev *dev,
					  struct sroce_pd *pd, u64 start,
					  u64 length, u64 iova, int access)
{
	struct sroce_mr *mr;
	int err;

	mr = sroce_mr_alloc(dev, pd, access & ~IB_ACCESS_ON_DEMAND);
	if (IS_ERR(mr))
		return mr;
	if (access & IB_ACCESS_ON_DEMAND) {
		mr->type = SROCE_MR_ODP;
		err = sroce_odp_mr_init(dev, mr, start, length, iova, access);
	} else {
		mr->type = SROCE_MR_USER;
		err = sroce_mr_pin(dev, mr, start, length, iova, access);
	}
	if (err) {
		mr->state = SROCE_MR_FREE;
		sroce_mr_release(dev, mr);
		return ERR_PTR(err);
	}
	mr->state = SROCE_MR_VALID;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	return mr;
}

static struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start,
				       u64 length, u64 iova, int access,
				       struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err, odp;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EOPNOTSUPP);
	/* on demand: not pinned, faulted in as copies need it (sroce_odp.c) */
	odp = access & IB_ACCESS_ON_DEMAND;
	access = sroce_mr_check_access(access & ~IB_ACCESS_ON_DEMAND);
	if (access < 0)
		return ERR_PTR(access);
	mr = sroce_mr_new_user(dev, to_spd(ibpd), start, length, iova,
			       access | odp);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = sroce_mr_publish(dev, mr);
	if (err) {
		sroce_mr_release(dev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags,
					 u64 start, u64 length, u64 iova,
					 int access, struct ib_pd *ibpd,
					 struct ib_udata *udata)
{
	unsigned long irqflags;
	struct sroce_dev *dev = to_sdev(ibmr->device);
	struct sroce_mr *old = to_smr(ibmr), *mr;
	struct sroce_pd *pd = old->pd;
	u32 index = sroce_key_index(old->key);
	void *cur;
	int err;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	if (old->type != SROCE_MR_USER && old->type != SROCE_MR_ODP)
		return ERR_PTR(-EINVAL);
	/* new pages for an ODP region: register a new one instead */
	if (old->type == SROCE_MR_ODP && (flags & IB_MR_REREG_TRANS))
		return ERR_PTR(-EOPNOTSUPP);
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EOPNOTSUPP);
	if (flags & IB_MR_REREG_PD) {
		if (!ibpd)
			return ERR_PTR(-EINVAL);
		pd = to_spd(ibpd);
	}
	if (flags & IB_MR_REREG_ACCESS) {
		/* an ODP region stays one: its bit may come along */
		if (old->type == SROCE_MR_ODP)
			access &= ~IB_ACCESS_ON_DEMAND;
		access = sroce_mr_check_access(access);
		if (access < 0)
			return ERR_PTR(access);
	} else {
		access = old->access;
	}

	if (!(flags & IB_MR_REREG_TRANS)) {
		/*
		 * Same pages: change PD and rights in place and keep the keys.
		 * Peers that were handed the rkey keep using it (rdma-core's
		 * tests rely on this, as on rxe and mlx5); every later access
		 * is checked against the new PD and rights under mr->lock.
		 */
		spin_lock_irqsave(&old->lock, irqflags);
		if (atomic_read(&old->num_mw)) {
			spin_unlock_irqrestore(&old->lock, irqflags);
			return ERR_PTR(-EBUSY);
		}
		/* messages in progress lose what was taken away */
		if (old->pd != pd || (old->access & ~access))
			sroce_mr_set_state(old, old->state);
		old->pd = pd;
		old->access = access;
		spin_unlock_irqrestore(&old->lock, irqflags);
		return NULL;
	}

	/*
	 * New pages: build a second MR and swap it into the same key slot
	 * with the next key byte.  ib_core then deregisters the old one,
	 * whose in-flight users keep its page array alive until they finish.
	 */
	mr = sroce_mr_new_user(dev, pd, start, length, iova, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	spin_lock_irqsave(&old->lock, irqflags);
	if (atomic_read(&old->num_mw) || old->dying) {
		spin_unlock_irqrestore(&old->lock, irqflags);
		err = -EBUSY;
		goto err_free;
	}
	old->dying = true;
	sroce_mr_set_state(old, SROCE_MR_FREE);
	mr->key = sroce_key_next(old->key);
	spin_unlock_irqrestore(&old->lock, irqflags);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;

	cur = xa_cmpxchg(&dev->mrs, index, old, mr, GFP_KERNEL);
	if (cur != old) {
		/* Cannot happen while ib_core holds the MR object; be safe. */
		spin_lock_irqsave(&old->lock, irqflags);
		old->dying = false;
		sroce_mr_set_state(old, SROCE_MR_VALID);
		spin_unlock_irqrestore(&old->lock, irqflags);
		err = xa_is_err(cur) ? xa_err(cur) : -EBUSY;
		goto err_free;
	}
	return &mr->ibmr;

err_free:
	sroce_mr_release(dev, mr);
	return ERR_PTR(err);
}

static int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	unsigned long flags;
	struct sroce_dev *dev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	spin_lock_irqsave(&mr->lock, flags);
	if (atomic_read(&mr->num_mw)) {
		/* IBA: a region with bound windows cannot be deregistered. */
		spin_unlock_irqrestore(&mr->lock, flags);
		return -EBUSY;
	}
	mr->dying = true;
	sroce_mr_set_state(mr, SROCE_MR_FREE);
	spin_unlock_irqrestore(&mr->lock, flags);

	/*
	 * A rereg may already have handed the slot to a successor.  A
	 * responder may still hold the structure (a message whose rest
	 * never came): it finds the key revoked and stops there.
	 */
	xa_cmpxchg(&dev->mrs, sroce_key_index(mr->key), mr, NULL, GFP_KERNEL);
	sroce_mr_release(dev, mr);
	return 0;
}

static struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				    u32 max_num_sg)
{
	struct sroce_dev *dev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(dev, to_spd(ibpd), 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = SROCE_MR_FAST_REG;
	mr->state = SROCE_MR_FREE;
	mr->max_pages = max_num_sg;
	mr->fr_list = kcalloc(max_num_sg, sizeof(*mr->fr_list), GFP_KERNEL);
	mr->fr_next = kcalloc(max_num_sg, sizeof(*mr->fr_next), GFP_KERNEL);
	if (!mr->fr_list || !mr->fr_next) {
		err = -ENOMEM;
		goto err_free;
	}
	err = sroce_mr_publish(dev, mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	kfree(mr->fr_list);
	kfree(mr->fr_next);
	atomic_dec(&dev->num_mr);
	kfree(mr);
	return ERR_PTR(err);
}

static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->next_npages >= mr->max_pages)
		return -ENOMEM;
	mr->fr_next[mr->next_npages++] = addr;
	return 0;
}

/*
 * Fills the staging list only: a ULP may map before the LOCAL_INV it
 * posts with the REG_MR (iSER does), while the old mapping is still in
 * use.  REG_MR makes the new list current, as a NIC's does.
 */
static int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			   int sg_nents, unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int n;

	if (mr->type != SROCE_MR_FAST_REG || !is_power_of_2(ibmr->page_size))
		return -EINVAL;
	mr->next_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
	/*
	 * The DMA addresses of a virtual-DMA device are kernel virtual
	 * addresses; remember where the region starts inside its first block
	 * since ULPs may rewrite ibmr->iova (zero-based) before REG_MR.
	 */
	mr->next_shift = ilog2(ibmr->page_size);
	mr->next_offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

static bool sroce_entry_is_mw(void *entry)
{
	return xa_pointer_tag(entry) == SROCE_XA_TAG_MW;
}

/*
 * Resolve @key.  A window's checks are made against the window; the MR
 * behind it is returned with the window's bounds already verified.  @ref,
 * if given, records what a later copy must find unchanged.
 */
static struct sroce_mr *sroce_mr_lookup(struct sroce_dev *dev,
					struct sroce_pd *pd,
					struct sroce_qp *qp, u32 key,
					bool remote, int access, u64 iova,
					u64 len, struct sroce_mref *ref)
{
	unsigned long flags;
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	int err = -ENOENT;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, sroce_key_index(key));
	if (!entry)
		goto out;
	if (sroce_entry_is_mw(entry)) {
		/* A window names remote access only. */
		if (!remote)
			goto out;
		mw = xa_untag_pointer(entry);
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->rkey != key || !mw->mr) {
			err = -ENOENT;
		} else if (mw->ibmw.pd != &pd->ibpd ||
			   (mw->ibmw.type == IB_MW_TYPE_2 &&
			    qp && mw->qpn != qp->ibqp.qp_num)) {
			err = -EACCES;
		} else if (!sroce_access_ok(mw->access, access)) {
			err = -EACCES;
		} else if (!sroce_range_ok(mw->iova, mw->length, iova, len)) {
			err = -ERANGE;
		} else if (refcount_inc_not_zero(&mw->mr->ref)) {
			mr = mw->mr;
			err = 0;
			if (ref) {
				/* an unbind bumps it under mw->lock too */
				ref->mw_gen = READ_ONCE(mr->mw_gen);
				ref->via_mw = true;
			}
		}
		spin_unlock_irqrestore(&mw->lock, flags);
		if (mr) {
			/* The region itself must still be usable. */
			spin_lock_irqsave(&mr->lock, flags);
			if (mr->state != SROCE_MR_VALID || mr->dying)
				err = -ENOENT;
			else if (ref)
				ref->gen = mr->gen;
			spin_unlock_irqrestore(&mr->lock, flags);
		}
		goto out;
	}

	mr = entry;
	if (!refcount_inc_not_zero(&mr->ref)) {
		mr = NULL;
		goto out;
	}
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key || mr->state != SROCE_MR_VALID || mr->dying)
		err = -ENOENT;
	else if (mr->pd != pd)
		err = -EACCES;
	else if (!sroce_access_ok(mr->access, access))
		err = -EACCES;
	else if (!sroce_range_ok(mr->iova, mr->length, iova, len))
		err = -ERANGE;
	else
		err = 0;
	if (ref) {
		ref->gen = mr->gen;
		ref->via_mw = false;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
out:
	rcu_read_unlock();
	if (err) {
		if (mr)
			sroce_mr_put(mr);
		return ERR_PTR(err);
	}
	if (ref)
		ref->mr = mr;
	return mr;
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *dev, struct sroce_pd *pd,
			      u32 key, bool remote, int access,
			      u64 iova, u64 len)
{
	return sroce_mr_lookup(dev, pd, NULL, key, remote, access, iova, len,
			       NULL);
}

int sroce_mref_get(struct sroce_mref *ref, struct sroce_qp *qp, u32 key,
		   int access, u64 iova, u64 len)
{
	struct sroce_mr *mr;

	/* the responder's PD: the QP's, or the XRC SRQ's of this request */
	mr = sroce_mr_lookup(qp->dev, qp->resp.pd, qp, key, true, access,
			     iova, len, ref);
	return PTR_ERR_OR_ZERO(mr);
}

void sroce_mref_put(struct sroce_mref *ref)
{
	if (ref->mr) {
		sroce_mr_put(ref->mr);
		ref->mr = NULL;
	}
}

/* copy_lock held: the key @ref was resolved by is still good. */
static bool sroce_mref_live(const struct sroce_mref *ref)
{
	const struct sroce_mr *mr = ref->mr;

	return READ_ONCE(mr->state) == SROCE_MR_VALID &&
	       READ_ONCE(mr->gen) == ref->gen &&
	       (!ref->via_mw || READ_ONCE(mr->mw_gen) == ref->mw_gen);
}

/*
 * Where byte @iova lives: @va for DMA and fast-reg regions (kernel
 * virtual addresses), @page otherwise.  @chunk is how many bytes from
 * there on are contiguous.
 */
static int sroce_mr_locate(struct sroce_mr *mr, u64 iova, u32 len, bool write,
			   void **va, struct page **page, unsigned int *off,
			   u64 *chunk)
{
	u64 pos, bsize, idx;

	*va = NULL;
	*page = NULL;
	switch (mr->type) {
	case SROCE_MR_DMA:
		*va = (void *)(uintptr_t)iova;
		*chunk = U64_MAX;
		return 0;
	case SROCE_MR_ODP:
		return sroce_odp_locate(mr, iova, len, write, va, chunk);
	case SROCE_MR_USER:
	case SROCE_MR_FAST_REG:
		break;
	default:
		return -EINVAL;
	}
	if (iova < mr->iova)
		return -ERANGE;
	pos = iova - mr->iova + mr->offset;
	if (pos < mr->offset)
		return -ERANGE;
	bsize = 1ULL << mr->page_shift;
	idx = pos >> mr->page_shift;
	if (idx >= mr->npages)
		return -ERANGE;
	*off = pos & (bsize - 1);
	*chunk = bsize - *off;
	if (mr->type == SROCE_MR_USER)
		*page = mr->pages[idx];
	else
		*va = (void *)(uintptr_t)(mr->fr_list[idx] + *off);
	return 0;
}

static int sroce_mr_copy_locked(struct sroce_mr *mr, u64 iova, void *buf,
				u32 len, enum sroce_copy_dir dir)
{
	struct page *page;
	unsigned int off;
	u64 chunk;
	void *va;
	int err;

	if (!sroce_range_ok(mr->iova, mr->length, iova, len))
		return -ERANGE;
	while (len) {
		u32 n;

		err = sroce_mr_locate(mr, iova, len, dir == SROCE_TO_MR, &va,
				      &page, &off, &chunk);
		if (err)
			return err;
		n = min_t(u64, len, chunk);
		if (page) {
			va = kmap_local_page(page);
			if (dir == SROCE_TO_MR)
				memcpy(va + off, buf, n);
			else
				memcpy(buf, va + off, n);
			kunmap_local(va);
		} else if (dir == SROCE_TO_MR) {
			memcpy(va, buf, n);
		} else {
			memcpy(buf, va, n);
		}
		buf += n;
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * The hot path: one read lock per copy (at most a packet), so that an
 * invalidation waits for this copy and every later one sees it.  Copies
 * run with bottom halves off, never preempted while they hold the lock.
 */
int sroce_mr_copy(const struct sroce_mref *ref, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir)
{
	struct sroce_mr *mr = ref->mr;
	int err = -EKEYREVOKED;

	read_lock(&mr->copy_lock);
	if (sroce_mref_live(ref))
		err = sroce_mr_copy_locked(mr, iova, buf, len, dir);
	read_unlock(&mr->copy_lock);
	return err;
}

static int sroce_mr_atomic_locked(struct sroce_mr *mr, u64 iova,
				  enum sroce_atomic_op op, u64 a, u64 b,
				  u64 *orig)
{
	struct page *page;
	unsigned int off;
	unsigned long flags;
	u64 chunk, *p, old;
	void *va, *map = NULL;
	int err;

	if (!sroce_atomic_va_ok(iova))
		return -EINVAL;
	if (!sroce_range_ok(mr->iova, mr->length, iova, sizeof(u64)))
		return -ERANGE;
	err = sroce_mr_locate(mr, iova, sizeof(u64), true, &va, &page, &off,
			      &chunk);
	if (err)
		return err;
	/* An aligned word never straddles a page, but blocks might be odd. */
	if (chunk < sizeof(u64))
		return -EINVAL;
	if (page) {
		map = kmap_local_page(page);
		va = map + off;
	}
	p = va;
	spin_lock_irqsave(&sroce_atomic_lock, flags);
	old = READ_ONCE(*p);
	switch (op) {
	case SROCE_ATOMIC_CMP_SWAP:
		if (old == a)
			WRITE_ONCE(*p, b);
		break;
	case SROCE_ATOMIC_FETCH_ADD:
		WRITE_ONCE(*p, old + a);
		break;
	case SROCE_ATOMIC_WRITE:
		WRITE_ONCE(*p, a);
		break;
	}
	spin_unlock_irqrestore(&sroce_atomic_lock, flags);
	if (map)
		kunmap_local(map);
	*orig = old;
	return 0;
}

int sroce_mr_atomic(const struct sroce_mref *ref, u64 iova,
		    enum sroce_atomic_op op, u64 a, u64 b, u64 *orig)
{
	struct sroce_mr *mr = ref->mr;
	int err = -EKEYREVOKED;

	read_lock(&mr->copy_lock);
	if (sroce_mref_live(ref))
		err = sroce_mr_atomic_locked(mr, iova, op, a, b, orig);
	read_unlock(&mr->copy_lock);
	return err;
}

/*
 * Zero-copy transmit: @len bytes from @iova as page fragments of @skb,
 * each with its own page reference, so a page the MR unpins on
 * deregistration lives on until the skb is freed.  Only pinned user
 * pages qualify: ODP pages may be taken away by an invalidation, and
 * kernel regions may be slab memory, which skb fragments must not hold.
 */
static int sroce_mr_frags_locked(struct sroce_mr *mr, u64 iova, u32 len,
				 struct sk_buff *skb, u32 max_frags)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	struct page *page;
	unsigned int off;
	u64 chunk;
	void *va;
	int err;

	if (mr->type != SROCE_MR_USER)
		return -EOPNOTSUPP;
	if (!sroce_range_ok(mr->iova, mr->length, iova, len))
		return -ERANGE;
	while (len) {
		u32 n, i = sh->nr_frags;

		err = sroce_mr_locate(mr, iova, len, false, &va, &page, &off,
				      &chunk);
		if (err)
			return err;
		n = min_t(u64, len, chunk);
		if (i && skb_can_coalesce(skb, i, page, off)) {
			skb_frag_size_add(&sh->frags[i - 1], n);
		} else {
			if (i >= max_frags)
				return -EOPNOTSUPP;
			get_page(page);
			skb_fill_page_desc(skb, i, page, off, n);
		}
		iova += n;
		len -= n;
	}
	return 0;
}

static int sroce_mr_frags(const struct sroce_mref *ref, u64 iova, u32 len,
			  struct sk_buff *skb, u32 max_frags)
{
	struct sroce_mr *mr = ref->mr;
	int err = -EKEYREVOKED;

	read_lock(&mr->copy_lock);
	if (sroce_mref_live(ref))
		err = sroce_mr_frags_locked(mr, iova, len, skb, max_frags);
	read_unlock(&mr->copy_lock);
	return err;
}

/*
 * Walk @len bytes of an SGE list from @offset, checking each lkey against
 * @pd and @access: copy them to or from @buf, or, with @skb, add them to
 * it as fragments (at most @max_frags in all).
 */
static int sroce_sge_walk(struct sroce_dev *dev, struct sroce_pd *pd,
			  const struct sroce_sge *sge, u32 num_sge, u32 offset,
			  void *buf, u32 len, int access,
			  enum sroce_copy_dir dir, struct sk_buff *skb,
			  u32 max_frags)
{
	u32 i;

	for (i = 0; i < num_sge && len; i++) {
		struct sroce_mref ref;
		struct sroce_mr *mr;
		u32 slen = sge[i].length, n;
		u64 addr;
		int err;

		if (offset >= slen) {
			offset -= slen;
			continue;
		}
		n = min(slen - offset, len);
		if (check_add_overflow(sge[i].addr, (u64)offset, &addr))
			return -ERANGE;
		mr = sroce_mr_lookup(dev, pd, NULL, sge[i].lkey, false, access,
				     addr, n, &ref);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		if (skb) {
			err = sroce_mr_frags(&ref, addr, n, skb, max_frags);
		} else {
			err = sroce_mr_copy(&ref, addr, buf, n, dir);
			buf += n;
		}
		sroce_mr_put(mr);
		if (err)
			return err;
		len -= n;
		offset = 0;
	}
	/* The SGE list is shorter than the data. */
	return len ? -EMSGSIZE : 0;
}

int sroce_sge_copy(struct sroce_dev *dev, struct sroce_pd *pd,
		   const struct sroce_sge *sge, u32 num_sge, u32 offset,
		   void *buf, u32 len, int access, enum sroce_copy_dir dir)
{
	return sroce_sge_walk(dev, pd, sge, num_sge, offset, buf, len, access,
			      dir, NULL, 0);
}

int sroce_sge_frags(struct sroce_dev *dev, struct sroce_pd *pd,
		    const struct sroce_sge *sge, u32 num_sge, u32 offset,
		    u32 len, struct sk_buff *skb, u32 max_frags)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	int err;

	if (sh->nr_frags)
		return -EINVAL;
	err = sroce_sge_walk(dev, pd, sge, num_sge, offset, NULL, len, 0,
			     SROCE_FROM_MR, skb, max_frags);
	if (err) {
		while (sh->nr_frags)
			put_page(skb_frag_page(&sh->frags[--sh->nr_frags]));
	}
	return err;
}

int sroce_mr_fast_reg(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	unsigned long flags;
	struct sroce_mr *mr;
	u64 room;
	int access, err = 0;

	if (!swqe->reg_mr)
		return -EINVAL;
	mr = to_smr(swqe->reg_mr);
	access = sroce_mr_check_access(swqe->reg_access);
	if (access < 0)
		return access;
	if (mr->type != SROCE_MR_FAST_REG || mr->pd != qp->pd)
		return -EACCES;
	if (sroce_key_index(swqe->reg_key) != sroce_key_index(mr->key))
		return -EINVAL;
	if (!sroce_mr_range_valid(mr->ibmr.iova, mr->ibmr.length))
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	room = ((u64)mr->next_npages << mr->next_shift) - mr->next_offset;
	if (mr->state != SROCE_MR_FREE || mr->dying) {
		err = -EINVAL;
	} else if (mr->next_npages && mr->ibmr.length > room) {
		err = -EINVAL;
	} else if (!mr->next_npages && mr->ibmr.length) {
		err = -EINVAL;
	} else {
		mr->key = swqe->reg_key;
		mr->ibmr.lkey = mr->key;
		mr->ibmr.rkey = mr->key;
		mr->access = access;
		write_lock(&mr->copy_lock);
		/* the staged list becomes current; keep it for the next map */
		memcpy(mr->fr_list, mr->fr_next,
		       mr->next_npages * sizeof(*mr->fr_list));
		mr->npages = mr->next_npages;
		mr->page_shift = mr->next_shift;
		mr->offset = mr->next_offset;
		mr->iova = mr->ibmr.iova;
		mr->length = mr->ibmr.length;
		WRITE_ONCE(mr->state, SROCE_MR_VALID);
		WRITE_ONCE(mr->gen, mr->gen + 1);
		write_unlock(&mr->copy_lock);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

const struct ib_device_ops sroce_mr_ops = {
	.get_dma_mr = sroce_get_dma_mr,
	.reg_user_mr = sroce_reg_user_mr,
	.advise_mr = sroce_advise_mr,
	.rereg_user_mr = sroce_rereg_user_mr,
	.dereg_mr = sroce_dereg_mr,
	.alloc_mr = sroce_alloc_mr,
	.map_mr_sg = sroce_map_mr_sg,
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
};
