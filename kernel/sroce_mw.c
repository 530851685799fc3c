// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory windows and invalidation.
 *
 * A window lives in dev->mrs next to the regions, tagged so a lookup can
 * tell them apart.  Nothing holds a window by reference: every use
 * (lookup, bind, invalidate) happens inside one RCU read section under
 * mw->lock, so dealloc only has to unpublish it and wait for a grace
 * period before ib_core frees the memory.  A bound window holds a
 * reference on its region and counts in mr->num_mw, which keeps the region
 * from being deregistered or invalidated underneath it.  An unbind bumps
 * the region's mw_gen, which ends the messages in progress through any of
 * its windows (see sroce_mr.c).
 */
#include <linux/random.h>
#include "sroce_obj.h"
#include "sroce_keys.h"

#define SROCE_MW_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *dev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&dev->num_mw) > SROCE_MAX_MW) {
		atomic_dec(&dev->num_mw);
		return -ENOMEM;
	}
	spin_lock_init(&mw->lock);
	refcount_set(&mw->ref, 1);
	err = xa_alloc_cyclic(&dev->mrs, &index,
			      xa_tag_pointer(mw, SROCE_XA_TAG_MW),
			      XA_LIMIT(1, SROCE_KEY_MAX_INDEX), &dev->next_mr,
			      GFP_KERNEL);
	if (err < 0) {
		atomic_dec(&dev->num_mw);
		return err;
	}
	mw->rkey = sroce_key_make(index, get_random_u8());
	ibmw->rkey = mw->rkey;
	return 0;
}

/* Called with mw->lock held; returns the region to release, if any. */
static struct sroce_mr *sroce_mw_unbind_locked(struct sroce_mw *mw)
{
	struct sroce_mr *mr = mw->mr;

	/* a message in progress through this window stops here */
	if (mr)
		sroce_mr_revoke_windows(mr);
	mw->mr = NULL;
	mw->qpn = 0;
	mw->iova = 0;
	mw->length = 0;
	mw->access = 0;
	return mr;
}

static void sroce_mw_release_mr(struct sroce_mr *mr)
{
	if (mr) {
		atomic_dec(&mr->num_mw);
		sroce_mr_put(mr);
	}
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	unsigned long flags;
	struct sroce_dev *dev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *mr;

	xa_erase(&dev->mrs, sroce_key_index(mw->rkey));
	/* After this no lookup, bind or invalidate can still see the window. */
	synchronize_rcu();
	spin_lock_irqsave(&mw->lock, flags);
	mr = sroce_mw_unbind_locked(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_release_mr(mr);
	atomic_dec(&dev->num_mw);
	return 0;
}

/* BIND_MW work request (IBA 10.6.7.3): runs in the requester's context. */
int sroce_mw_bind(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	unsigned long flags;
	struct sroce_dev *dev = qp->dev;
	const struct sroce_send_wqe *w = &swqe->wqe;
	u32 rkey = w->wr.bind.mw_rkey;
	u32 access = w->wr.bind.access;
	u64 addr = w->wr.bind.addr, len = w->wr.bind.length;
	struct sroce_mr *mr = NULL, *old = NULL;
	struct sroce_mw *mw;
	void *entry;
	int err = 0;

	/*
	 * Local write means nothing for a window, but callers commonly pass
	 * the region's flags through (rdma-core's own tests do), so accept
	 * and drop it.  Zero-based windows are not offered.
	 */
	access &= ~IB_ACCESS_LOCAL_WRITE;
	if (access & ~SROCE_MW_ACCESS)
		return -EINVAL;
	if (!sroce_mr_range_valid(addr, len))
		return -EINVAL;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, sroce_key_index(rkey));
	if (!entry || xa_pointer_tag(entry) != SROCE_XA_TAG_MW) {
		rcu_read_unlock();
		return -ENOENT;
	}
	mw = xa_untag_pointer(entry);
	/* A type 1 window with no length is simply unbound. */
	if (mw->ibmw.type == IB_MW_TYPE_2 || len) {
		mr = sroce_mr_get(dev, qp->pd, w->wr.bind.mr_lkey, false, 0,
				  addr, len);
		if (IS_ERR(mr)) {
			rcu_read_unlock();
			return PTR_ERR(mr);
		}
		if (!(mr->access & IB_ACCESS_MW_BIND) ||
		    ((access & (IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_ATOMIC)) &&
		     !(mr->access & IB_ACCESS_LOCAL_WRITE))) {
			err = -EACCES;
			goto out_put;
		}
	}

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->ibmw.pd != &qp->pd->ibpd) {
		err = -EACCES;
	} else if (mw->ibmw.type == IB_MW_TYPE_2 &&
		   (mw->mr || sroce_key_byte(rkey) == sroce_key_byte(mw->rkey))) {
		/* Type 2 binds only from the free state, with a new key. */
		err = -EINVAL;
	} else if (mr) {
		spin_lock(&mr->lock);
		if (mr->dying || mr->state != SROCE_MR_VALID)
			err = -ENOENT;
		else
			atomic_inc(&mr->num_mw);
		spin_unlock(&mr->lock);
	}
	if (!err) {
		old = sroce_mw_unbind_locked(mw);
		mw->mr = mr;
		mr = NULL;		/* the window now owns the reference */
		mw->rkey = rkey;
		mw->ibmw.rkey = rkey;
		if (mw->mr) {
			mw->iova = addr;
			mw->length = len;
			mw->access = access;
			if (mw->ibmw.type == IB_MW_TYPE_2)
				mw->qpn = qp->ibqp.qp_num;
		}
	}
	spin_unlock_irqrestore(&mw->lock, flags);
out_put:
	rcu_read_unlock();
	if (mr)
		sroce_mr_put(mr);
	sroce_mw_release_mr(old);
	return err;
}

static int sroce_mw_invalidate(struct sroce_mw *mw, struct sroce_pd *pd,
			       u32 key, struct sroce_qp *qp)
{
	unsigned long flags;
	struct sroce_mr *mr = NULL;
	int err = 0;

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->rkey != key || !mw->mr)
		err = -ENOENT;
	else if (mw->ibmw.type != IB_MW_TYPE_2)
		err = -EINVAL;	/* type 1 windows are only unbound by bind */
	else if (mw->ibmw.pd != &pd->ibpd ||
		 (qp && mw->qpn != qp->ibqp.qp_num))
		err = -EACCES;
	else
		mr = sroce_mw_unbind_locked(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_release_mr(mr);
	return err;
}

int sroce_mr_invalidate(struct sroce_dev *dev, struct sroce_pd *pd, u32 key,
			struct sroce_qp *qp, bool remote)
{
	unsigned long flags;
	struct sroce_mr *mr;
	void *entry;
	int err;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, sroce_key_index(key));
	if (!entry) {
		err = -ENOENT;
		goto out;
	}
	if (xa_pointer_tag(entry) == SROCE_XA_TAG_MW) {
		err = sroce_mw_invalidate(xa_untag_pointer(entry), pd, key, qp);
		goto out;
	}
	mr = entry;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key || mr->dying)
		err = -ENOENT;
	else if (mr->type != SROCE_MR_FAST_REG)
		err = -EINVAL;
	else if (mr->pd != pd)
		err = -EACCES;
	else if (remote && !(mr->access & SROCE_ACCESS_REMOTE))
		err = -EACCES;
	else if (atomic_read(&mr->num_mw))
		err = -EBUSY;
	else
		err = 0;
	if (!err)
		sroce_mr_set_state(mr, SROCE_MR_FREE);
	spin_unlock_irqrestore(&mr->lock, flags);
out:
	rcu_read_unlock();
	return err;
}
