// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Engine glue: the work queue the requester runs on, and the per-QP
 * init/modify/stop hooks the objects role calls.
 */
#include "sroce.h"
#include "sroce_psn.h"

/*
 * Unbound so sending for many QPs spreads over every CPU instead of
 * queueing behind the poster's CPU; high priority because every queued
 * item is latency on the wire.
 */
static struct workqueue_struct *sroce_wq;

int sroce_engine_init(void)
{
	sroce_resp_module_init();
	sroce_wq = alloc_workqueue("sroce_req", WQ_UNBOUND | WQ_HIGHPRI, 0);
	return sroce_wq ? 0 : -ENOMEM;
}

void sroce_engine_exit(void)
{
	sroce_resp_exit();
	if (sroce_wq)
		destroy_workqueue(sroce_wq);
	sroce_wq = NULL;
}

void sroce_req_schedule(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->req.sched_lock, flags);
	if (!qp->req.stopped)
		queue_work(sroce_wq, &qp->req.work);
	spin_unlock_irqrestore(&qp->req.sched_lock, flags);
}

static void engine_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->oldest = 0;
	req->nfetched = 0;
	req->cur = 0;
	req->rd_out = 0;
	req->rnr_wait = false;
	req->tx_budget = false;
	req->blocked = false;
	req->err = false;
	req->err_raised = false;
	req->no_db = false;
	if (qp->sq.ctl)
		WRITE_ONCE(qp->sq.ctl->flags, 0);
	qp->comp.rd_rerequest_valid = false;
}

int sroce_engine_qp_init(struct sroce_qp *qp)
{
	spin_lock_init(&qp->req.lock);
	spin_lock_init(&qp->req.sched_lock);
	INIT_LIST_HEAD(&qp->req.tx_wait);
	qp->req.tx_dead = false;
	timer_setup(&qp->req.retry_timer, sroce_comp_retry_timer, 0);
	timer_setup(&qp->comp.rnr_timer, sroce_comp_rnr_timer, 0);
	timer_setup(&qp->comp.odp_timer, sroce_comp_odp_timer, 0);
	INIT_WORK(&qp->req.work, sroce_req_work);
	qp->req.stopped = false;
	qp->req.psn = 0;
	qp->req.high_psn = 0;
	qp->req.sent_psn = 0;
	qp->req.ackreq_psn = 0;
	qp->comp.psn = 0;
	qp->comp.retry_cnt = 7;
	qp->comp.rnr_retry = 7;
	engine_reset(qp);
	return sroce_resp_init(qp);
}

int sroce_engine_qp_modified(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			     int mask)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	if (state == IB_QPS_ERR) {
		/*
		 * May run inside a requester/completer section (via
		 * sroce_qp_error()), so take no requester lock: the work
		 * item flushes the SQ under req.lock.
		 */
		del_timer(&qp->req.retry_timer);
		del_timer(&qp->comp.rnr_timer);
		del_timer(&qp->comp.odp_timer);
		sroce_resp_stop(qp, true);
		sroce_req_schedule(qp);
		return 0;
	}
	if (!attr)
		mask = 0;
	if (state == IB_QPS_RESET)
		sroce_resp_stop(qp, false);
	if ((mask & IB_QP_STATE) && state == IB_QPS_RTR)
		err = sroce_resp_reset(qp, qp->attr.rq_psn);

	spin_lock_irqsave(&qp->req.lock, flags);
	if (state == IB_QPS_RESET) {
		del_timer(&qp->req.retry_timer);
		del_timer(&qp->comp.rnr_timer);
		del_timer(&qp->comp.odp_timer);
		qp->comp.odp_rerequest = false;
		engine_reset(qp);
	}
	if (mask & IB_QP_SQ_PSN) {
		qp->req.psn = attr->sq_psn & SROCE_PSN_MASK;
		qp->req.high_psn = qp->req.psn;
		qp->req.sent_psn = qp->req.psn;
		qp->req.ackreq_psn = sroce_psn_sub(qp->req.psn, 1);
		qp->comp.psn = qp->req.psn;
	}
	if (mask & IB_QP_RETRY_CNT)
		qp->comp.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->comp.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_STATE) {
		qp->req.draining = state == IB_QPS_SQD;
		qp->req.drain_notify = qp->req.draining &&
				       (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
				       attr->en_sqd_async_notify;
	}
	spin_unlock_irqrestore(&qp->req.lock, flags);

	/*
	 * WQEs posted before RTS (or during SQD) go out now; a drain that
	 * has nothing begun ends at once, in the requester.
	 */
	if (state == IB_QPS_RTS || state == IB_QPS_SQD)
		sroce_req_schedule(qp);
	return err;
}

void sroce_engine_qp_stop(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_bh(&qp->req.lock);
	spin_lock_irqsave(&qp->req.sched_lock, flags);
	qp->req.stopped = true;
	spin_unlock_irqrestore(&qp->req.sched_lock, flags);
	spin_unlock_bh(&qp->req.lock);
	sroce_net_tx_unwait(qp);

	/* Timers only schedule work; once stopped nothing rearms them. */
	del_timer_sync(&qp->req.retry_timer);
	del_timer_sync(&qp->comp.rnr_timer);
	del_timer_sync(&qp->comp.odp_timer);
	cancel_work_sync(&qp->req.work);
	del_timer_sync(&qp->req.retry_timer);
	sroce_resp_stop(qp, false);
	/* Stopped, no pass re-arms it. */
	del_timer_sync(&qp->resp.tx_timer);
}

void sroce_engine_qp_cleanup(struct sroce_qp *qp)
{
	sroce_resp_cleanup(qp);
}
