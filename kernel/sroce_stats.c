// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Port counters for `rdma statistic show link DEV/1` and
 * /sys/class/infiniband/DEV/ports/1/hw_counters, and the per-QP counters
 * of `rdma statistic qp`.  Writers bump per-CPU slots without atomics; a
 * reader sums the slots, so a value may lag a concurrent increment but
 * never goes backwards.
 */
#include "sroce.h"

#define CREATE_TRACE_POINTS
#include "sroce_trace.h"

static const struct rdma_stat_desc sroce_counter_desc[] = {
	[SROCE_CNT_SENT_PKTS].name = "sent_pkts",
	[SROCE_CNT_RCVD_PKTS].name = "rcvd_pkts",
	[SROCE_CNT_RETRANSMITS].name = "retransmits",
	[SROCE_CNT_RETRY_EXCEEDED].name = "retry_exceeded_err",
	[SROCE_CNT_DUP_REQUESTS].name = "duplicate_request",
	[SROCE_CNT_OUT_OF_SEQ].name = "out_of_seq_request",
	[SROCE_CNT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[SROCE_CNT_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[SROCE_CNT_RNR_RETRY_EXCEEDED].name = "rnr_retry_exceeded_err",
	[SROCE_CNT_NAKS_SENT].name = "naks_sent",
	[SROCE_CNT_NAKS_RCVD].name = "naks_rcvd",
	[SROCE_CNT_ACKS_SENT].name = "acks_sent",
	[SROCE_CNT_ACKS_COALESCED].name = "acks_coalesced",
	[SROCE_CNT_ICRC_ERRORS].name = "icrc_errors",
	[SROCE_CNT_MALFORMED].name = "malformed_pkts",
	[SROCE_CNT_NO_QP].name = "no_qp_drops",
	[SROCE_CNT_BAD_RKEY].name = "bad_rkey",
	[SROCE_CNT_LOCAL_ERRORS].name = "local_errors",
	[SROCE_CNT_CQ_OVERFLOW].name = "cq_overflows",
	[SROCE_CNT_TX_DROPS].name = "tx_drops",
	[SROCE_CNT_TX_WAITS].name = "tx_budget_waits",
	[SROCE_CNT_TX_BATCHES].name = "tx_batches",
	[SROCE_CNT_DOORBELLS].name = "sq_doorbells",
	/* ACKs, NAKs and responses for PSNs not sent or already acked */
	[SROCE_CNT_ACK_OUT_OF_WINDOW].name = "ack_out_of_window",
	/* duplicate READs refused: their resend budget was spent */
	[SROCE_CNT_DUP_READ_REFUSED].name = "dup_read_refused",
	/* duplicate READs not answered again: the answer left after them */
	[SROCE_CNT_DUP_READ_LATE].name = "dup_read_late",
	/* ACK timeouts waited out: the peer is on this host, packets moving */
	[SROCE_CNT_ACK_LATE].name = "ack_timeouts_late",
	/* packets built with their payload as page fragments (zero-copy) */
	[SROCE_CNT_TX_ZCOPY].name = "tx_zcopy_pkts",
	[SROCE_CNT_BAD_HDR].name = "malformed_hdr",
	[SROCE_CNT_BAD_OPCODE].name = "malformed_opcode",
	[SROCE_CNT_BAD_LEN].name = "malformed_len",
	[SROCE_CNT_BAD_PKEY].name = "malformed_pkey",
	[SROCE_CNT_WRONG_QP].name = "malformed_qp",
	[SROCE_CNT_BAD_QKEY].name = "malformed_qkey",
};

/* A counter added to the enum without a name would show up blank. */
static_assert(ARRAY_SIZE(sroce_counter_desc) == SROCE_NUM_COUNTERS);

const char *sroce_counter_name(enum sroce_counter c)
{
	return c < SROCE_NUM_COUNTERS ? sroce_counter_desc[c].name : "?";
}

static u64 sroce_slots_sum(struct sroce_counters __percpu *pc,
			   enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(pc, cpu)->cnt[c]);
	return sum;
}

/* The port's figures and each per-QP counter's have the same layout. */
static struct rdma_hw_stats *sroce_stats_alloc(void)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_desc,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static void sroce_stats_fill(struct rdma_hw_stats *stats,
			     struct sroce_counters __percpu *pc)
{
	int i;

	for (i = 0; i < SROCE_NUM_COUNTERS; i++)
		stats->value[i] = sroce_slots_sum(pc, i);
}

static struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						       u32 port)
{
	return sroce_stats_alloc();
}

static int sroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	if (stats->num_counters != SROCE_NUM_COUNTERS)
		return -EINVAL;
	sroce_stats_fill(stats, to_sdev(ibdev)->counters);
	return SROCE_NUM_COUNTERS;
}

static struct sroce_qpc *sroce_qpc_alloc(struct sroce_dev *dev, u32 *id)
{
	struct sroce_qpc *qpc;

	qpc = kzalloc(sizeof(*qpc), GFP_KERNEL_ACCOUNT);
	if (!qpc)
		return NULL;
	qpc->pc = alloc_percpu_gfp(struct sroce_counters, GFP_KERNEL_ACCOUNT);
	/*
	 * Cyclic: ib_core files a counter under its id and keeps a released
	 * one there a little longer, so an id must not come back at once.
	 */
	if (qpc->pc && xa_alloc_cyclic(&dev->qpcs, id, qpc,
				       XA_LIMIT(1, U32_MAX), &dev->next_qpc,
				       GFP_KERNEL) >= 0)
		return qpc;
	free_percpu(qpc->pc);
	kfree(qpc);
	return NULL;
}

/*
 * ib_core calls the counter ops with counter->lock held; the first bind
 * gives the counter its slots and its id (ib_core files it under that id).
 */
static int sroce_counter_bind_qp(struct rdma_counter *counter,
				 struct ib_qp *ibqp)
{
	struct sroce_dev *dev = to_sdev(counter->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_qpc *qpc;

	if (!counter->id) {
		qpc = sroce_qpc_alloc(dev, &counter->id);
		if (!qpc)
			return -ENOMEM;
	} else {
		qpc = xa_load(&dev->qpcs, counter->id);
		if (!qpc)
			return -EINVAL;
	}
	rcu_assign_pointer(qp->qpc, qpc);
	ibqp->counter = counter;
	return 0;
}

static int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	RCU_INIT_POINTER(qp->qpc, NULL);
	ibqp->counter = NULL;
	/*
	 * ib_core reads the counter one last time when its last QP leaves
	 * and adds it to the port's history: no increment may land after.
	 */
	synchronize_rcu();
	return 0;
}

static void sroce_qpc_free(struct sroce_qpc *qpc)
{
	free_percpu(qpc->pc);
	kfree(qpc);
}

/*
 * ib_core 6.1 deallocates a counter without its lock and while a reader
 * (sysfs, `rdma statistic`) may still be in update_stats: those read the
 * slots under RCU, so they go only after a grace period.
 */
static int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_dev *dev = to_sdev(counter->device);
	struct sroce_qpc *qpc;

	qpc = counter->id ? xa_erase(&dev->qpcs, counter->id) : NULL;
	if (qpc) {
		synchronize_rcu();
		sroce_qpc_free(qpc);
	}
	return 0;
}

static struct rdma_hw_stats *
sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	return sroce_stats_alloc();
}

static int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_dev *dev = to_sdev(counter->device);
	struct rdma_hw_stats *stats = counter->stats;
	struct sroce_qpc *qpc;

	if (stats->num_counters != SROCE_NUM_COUNTERS)
		return -EINVAL;
	rcu_read_lock();
	qpc = xa_load(&dev->qpcs, counter->id);
	if (qpc)
		sroce_stats_fill(stats, qpc->pc);
	rcu_read_unlock();
	return qpc ? 0 : -EINVAL;
}

/* Counters outlive no QP, so none should be left; free any that are. */
void sroce_stats_dev_fini(struct sroce_dev *dev)
{
	struct sroce_qpc *qpc;
	unsigned long id;

	xa_for_each(&dev->qpcs, id, qpc)
		sroce_qpc_free(qpc);
	xa_destroy(&dev->qpcs);
}

const struct ib_device_ops sroce_stats_ops = {
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,
	.counter_bind_qp = sroce_counter_bind_qp,
	.counter_unbind_qp = sroce_counter_unbind_qp,
	.counter_dealloc = sroce_counter_dealloc,
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_update_stats = sroce_counter_update_stats,
};
