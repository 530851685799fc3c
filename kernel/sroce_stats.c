// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Port counters for `rdma statistic show link DEV/1` and
 * /sys/class/infiniband/DEV/ports/1/hw_counters.  Writers bump per-CPU
 * slots without atomics; a reader sums the slots, so a value may lag a
 * concurrent increment but never goes backwards.
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

u64 sroce_counter_read(struct sroce_dev *dev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(dev->counters, cpu)->cnt[c]);
	return sum;
}

static struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						       u32 port)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_desc,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int sroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct sroce_dev *dev = to_sdev(ibdev);
	int i;

	if (stats->num_counters != SROCE_NUM_COUNTERS)
		return -EINVAL;
	for (i = 0; i < SROCE_NUM_COUNTERS; i++)
		stats->value[i] = sroce_counter_read(dev, i);
	return SROCE_NUM_COUNTERS;
}

const struct ib_device_ops sroce_stats_ops = {
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,
};
