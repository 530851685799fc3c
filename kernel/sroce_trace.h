/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Tracepoints for the transport events a user debugs with: a packet
 * dropped and why, a NAK sent or received, a retransmission and its cause.
 * Each names the device and, where one is known, the QP, so that
 * `trace-cmd record -e sroce` or /sys/kernel/tracing/events/sroce/ shows
 * which connection suffered what.  The port counters say how often; these
 * say where.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(_SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SROCE_TRACE_H

#include <linux/tracepoint.h>
#include "sroce.h"

/* Make the reason names resolvable by tools reading the raw format. */
TRACE_DEFINE_ENUM(SROCE_RETX_TIMEOUT);
TRACE_DEFINE_ENUM(SROCE_RETX_NAK_SEQ);
TRACE_DEFINE_ENUM(SROCE_RETX_IMPLIED);
TRACE_DEFINE_ENUM(SROCE_RETX_RNR);

TRACE_EVENT(sroce_drop,
	TP_PROTO(struct sroce_dev *dev, u32 qpn, enum sroce_counter cause),
	TP_ARGS(dev, qpn, cause),
	TP_STRUCT__entry(
		__string(dev, dev_name(&dev->ibdev.dev))
		__field(u32, qpn)
		__string(reason, sroce_counter_name(cause))
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&dev->ibdev.dev));
		__entry->qpn = qpn;
		sroce_assign_str(reason, sroce_counter_name(cause));
	),
	TP_printk("dev=%s qpn=%#x reason=%s", __get_str(dev), __entry->qpn,
		  __get_str(reason))
);

DECLARE_EVENT_CLASS(sroce_aeth_class,
	TP_PROTO(struct sroce_qp *qp, u32 psn, u8 syndrome),
	TP_ARGS(qp, psn, syndrome),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->dev->ibdev.dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&qp->dev->ibdev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
	),
	/* AETH syndrome: bits 6:5 the type (1 RNR NAK, 3 NAK), 4:0 the code */
	TP_printk("dev=%s qpn=%#x psn=%#x %s code=%u", __get_str(dev),
		  __entry->qpn, __entry->psn,
		  (__entry->syndrome >> 5) == 1 ? "rnr_nak" : "nak",
		  __entry->syndrome & 0x1f)
);

DEFINE_EVENT(sroce_aeth_class, sroce_nak_sent,
	TP_PROTO(struct sroce_qp *qp, u32 psn, u8 syndrome),
	TP_ARGS(qp, psn, syndrome));

DEFINE_EVENT(sroce_aeth_class, sroce_nak_rcvd,
	TP_PROTO(struct sroce_qp *qp, u32 psn, u8 syndrome),
	TP_ARGS(qp, psn, syndrome));

TRACE_EVENT(sroce_retransmit,
	TP_PROTO(struct sroce_qp *qp, u32 psn, int reason),
	TP_ARGS(qp, psn, reason),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->dev->ibdev.dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(int, reason)
	),
	TP_fast_assign(
		sroce_assign_str(dev, dev_name(&qp->dev->ibdev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
		__entry->reason = reason;
	),
	TP_printk("dev=%s qpn=%#x from_psn=%#x reason=%s", __get_str(dev),
		  __entry->qpn, __entry->psn,
		  __print_symbolic(__entry->reason,
				   { SROCE_RETX_TIMEOUT, "timeout" },
				   { SROCE_RETX_NAK_SEQ, "nak_seq" },
				   { SROCE_RETX_IMPLIED, "implied_nak" },
				   { SROCE_RETX_RNR, "rnr" }))
);

#endif /* _SROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sroce_trace
#include <trace/define_trace.h>
