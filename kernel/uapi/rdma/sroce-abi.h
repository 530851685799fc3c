/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The sroce kernel/user ABI: the driver-private parts of the uverbs
 * commands and the layout of the rings shared through mmap.  This one
 * header is included by the kernel module and by libsroce; anything either
 * side depends on is pinned here with a size check.
 *
 * Rings follow one rule: every index has exactly one writer.  The producer
 * publishes entries with a release store of 'prod'; the consumer frees
 * slots with a release store of 'cons'.  Each side keeps its own index in
 * private memory and only *reads* the other side's index from the ring, so
 * the kernel never trusts a value it once wrote and userspace could since
 * have changed.  Indices are free-running u32s; slot = index & (num - 1).
 *
 *   ring       producer  consumer
 *   SQ         user      kernel   (doorbell: post_send with zero WRs)
 *   RQ, SRQ    user      kernel   (no doorbell; read when a packet needs it)
 *   CQ         kernel    user
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#include <linux/types.h>

#define SROCE_UVERBS_ABI_VERSION	1

/*
 * How libsroce recognises a sroce device, whatever its name (names are the
 * administrator's and may change at any time):
 *  - ib_core publishes SROCE_DRIVER_ID over netlink, and libibverbs tries a
 *    provider whose table lists a device's driver id before any provider
 *    that would claim it by name (rdma-core's rxe claims "rxe*" names).
 *    The in-tree enum rdma_driver_id counts up from 0; this value ("srce"
 *    in ASCII) is far outside it.  ib_core also rejects ioctl commands
 *    whose header carries another driver id, so a foreign provider that
 *    opened a sroce device anyway fails at once instead of misreading it.
 *  - The device's sysfs directory holds SROCE_SYSFS_ABI_ATTR, which holds
 *    SROCE_UVERBS_ABI_VERSION; no other driver publishes that file.  The
 *    provider requires it, also where libibverbs reads devices from sysfs
 *    only and knows no driver ids.
 */
#define SROCE_DRIVER_ID			0x73726365
#define SROCE_SYSFS_ABI_ATTR		"sroce_abi_version"

#define SROCE_CACHELINE			64

/*
 * Shared control block at offset 0 of every ring mapping.  'prod' and
 * 'cons' sit on their own cache lines so producer and consumer never
 * false-share.  'state' and 'flags' are written only by the kernel;
 * 'state' lets the provider notice an errored QP without a system call.
 */
struct sroce_ring_ctl {
	__u32 prod;
	__u8 rsvd0[SROCE_CACHELINE - 4];
	__u32 cons;
	__u32 arm;		/* CQ only: SROCE_CQ_ARM_*, consumer-written */
	__u8 rsvd1[SROCE_CACHELINE - 8];
	__u32 state;		/* enum sroce_ring_state, kernel-written */
	__u32 flags;		/* SROCE_RING_F_*, kernel-written */
	__u32 rx_task_seq;	/* CQ only: see below, kernel-written */
	__u32 rx_task_cpu;
	__u8 rsvd3[SROCE_CACHELINE - 16];
};

/*
 * SQ only.  Set while the kernel is sure to look at the SQ again without
 * being asked (an RC QP with packets awaiting their ACK: the completer
 * fetches new WQEs when it arrives), so a post may skip the doorbell.
 * The provider publishes 'prod', then issues a full fence, then reads
 * 'flags' and 'state'; the kernel clears the bit, issues a full fence and
 * then rereads 'prod'.  So either the provider sees the bit clear and
 * rings, or the kernel sees the WQE.  A provider must ring whenever the
 * bit is clear or 'state' is not SROCE_RING_OK; kernels that predate the
 * bit never set it.
 */
#define SROCE_RING_F_NO_DOORBELL	(1U << 0)

/*
 * CQ only, with SROCE_UCTX_F_CQ_ARM: ibv_req_notify_cq without a system
 * call.  The provider stores an arm value in 'arm' with a full fence and
 * polls again; the kernel publishes 'prod', issues a full fence, reads
 * 'arm' and, if the new entry satisfies it, swaps it to 0 and signals the
 * completion channel.  So a completion is either seen by the poll after
 * arming or signalled.  "Next" covers "solicited": the provider never
 * replaces NEXT by SOLICITED.  Any other nonzero value means NEXT.
 */
#define SROCE_CQ_ARM_NEXT		1U
#define SROCE_CQ_ARM_SOLICITED		2U

/*
 * CQ only: 'rx_task_seq' moves each time the kernel processes a packet
 * for the CQ's QPs in a task (ksoftirqd, when the receive softirq is
 * behind) rather than on interrupt exit, and 'rx_task_cpu' says on which
 * CPU.  A poller spinning on that CPU with nothing to poll is taking the
 * CPU from the very work it waits for; it should give the CPU up for a
 * moment.  Older kernels leave both 0.
 */

enum sroce_ring_state {
	SROCE_RING_OK		= 0,
	SROCE_RING_ERROR	= 1,	/* QP/SRQ/CQ in error: new work is flushed */
	/*
	 * The object is destroyed, e.g. by device removal while the process
	 * still polls; nothing will arrive after the entries already there.
	 */
	SROCE_RING_DEAD		= 2,
};

/* Entries start here; the mapping size is SROCE_RING_DATA_OFFSET + num * stride. */
#define SROCE_RING_DATA_OFFSET		(3 * SROCE_CACHELINE)

/* Where a ring lives in the uverbs fd's mmap space. */
struct sroce_mmap_info {
	__aligned_u64 offset;	/* pass to mmap() on the uverbs fd */
	__u32 size;		/* bytes to map */
	__u32 num;		/* entries, a power of two */
	__u32 stride;		/* bytes per entry, a multiple of 16 */
	__u32 rsvd;
};

struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * Send WQE: a 64-byte header, then either num_sge struct sroce_sge or,
 * with IB_UVERBS_SEND_INLINE, inline_len bytes of data.  opcode and
 * send_flags use the uverbs values (enum ib_uverbs_wr_opcode,
 * enum ib_uverbs_send_flags).
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 inline_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	} ex;
	__u32 xrc_srqn;		/* XRC INI QPs: the target's XRC SRQ */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 rsvd;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 rsvd;
		} atomic;
		struct {
			__u32 ah_num;	/* from struct sroce_create_ah_resp */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 rsvd;
		} ud;
		/* SROCE_WR_FLUSH */
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;
			__u8 type;	/* SROCE_FLUSH_TYPE_* bits */
			__u8 level;	/* SROCE_FLUSH_LEVEL_* */
			__u8 rsvd[6];
		} flush;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mw_rkey;	/* the rkey the window gets */
			__u32 mr_lkey;	/* the MR the window binds to */
			__u32 access;	/* enum ib_uverbs_access_flags */
			__u32 rsvd;
		} bind;
	} wr;
};

#define SROCE_SEND_WQE_HDR	64

/*
 * The two opcodes uverbs numbered in Linux 6.2 (ib_uverbs_wr_opcode and
 * ib_uverbs_wc_opcode), named here so that both sides build on 6.1 too.
 * SROCE_WR_ATOMIC_WRITE uses wr.rdma and carries its 8 bytes as inline
 * data (SROCE_SEND_INLINE, inline_len 8), in memory order.
 */
#define SROCE_WR_FLUSH		14
#define SROCE_WR_ATOMIC_WRITE	15
#define SROCE_WC_FLUSH		8
#define SROCE_WC_ATOMIC_WRITE	9
/* wr.flush.type and .level: the values of IBV_FLUSH_* */
#define SROCE_FLUSH_TYPE_GLOBAL		(1 << 0)
#define SROCE_FLUSH_TYPE_PERSISTENT	(1 << 1)
#define SROCE_FLUSH_LEVEL_RANGE		0
#define SROCE_FLUSH_LEVEL_MR		1

/*
 * send_flags bits.  uAPI exports no enum for them; these are the values of
 * the kernel's enum ib_send_flags (and of libibverbs' IBV_SEND_*).
 */
#define SROCE_SEND_FENCE	(1 << 0)
#define SROCE_SEND_SIGNALED	(1 << 1)
#define SROCE_SEND_SOLICITED	(1 << 2)
#define SROCE_SEND_INLINE	(1 << 3)

/* Receive WQE: a 16-byte header, then num_sge struct sroce_sge. */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 rsvd;
};

#define SROCE_RECV_WQE_HDR	16

/*
 * Completion entry.  The first 48 bytes match struct ib_uverbs_wc field
 * for field; the rest is room to grow without changing the stride.
 */
struct sroce_cqe {
	__aligned_u64 wr_id;
	__u32 status;		/* enum ib_wc_status */
	__u32 opcode;		/* enum ib_uverbs_wc_opcode */
	__u32 vendor_err;
	__u32 byte_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	} ex;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;		/* enum ib_uverbs_wc_flags */
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 network_hdr_type;	/* RDMA_NETWORK_IPV4/IPV6 for UD with GRH */
	__u8 smac[6];
	__u16 vlan_id;
	__u32 rsvd[2];
};

#define SROCE_CQE_SIZE		64

/*
 * wc_flags bits of struct sroce_cqe in a user CQ ring: libibverbs'
 * IBV_WC_* values, so the provider passes them through.  WITH_INV differs
 * from the kernel's IB_WC_WITH_INVALIDATE; CQEs of kernel CQs carry enum
 * ib_wc_flags values instead (the producer writes the right ones).
 */
#define SROCE_WC_GRH		(1 << 0)
#define SROCE_WC_WITH_IMM	(1 << 1)
#define SROCE_WC_WITH_INV	(1 << 3)

/* Driver data of the uverbs commands (cmd: user to kernel; resp: back). */

struct sroce_alloc_ucontext_resp {
	__u32 abi_version;	/* SROCE_UVERBS_ABI_VERSION */
	__u32 max_inline_data;
	__u32 max_sge;
	__u32 flags;		/* SROCE_UCTX_F_*; older kernels leave 0 */
};

/*
 * RDMA FLUSH can be executed here: the kernel's ib_core lets MRs grant
 * FLUSH access (6.2 and later), so a provider may offer ibv_wr_flush.
 */
#define SROCE_UCTX_F_FLUSH	(1U << 0)
/* CQs can be armed through their ring: see SROCE_CQ_ARM_NEXT. */
#define SROCE_UCTX_F_CQ_ARM	(1U << 1)

struct sroce_create_cq_resp {
	struct sroce_mmap_info mi;
};

struct sroce_resize_cq_resp {
	struct sroce_mmap_info mi;
};

struct sroce_create_qp_resp {
	struct sroce_mmap_info sq_mi;	/* size 0 when the QP has no SQ */
	struct sroce_mmap_info rq_mi;	/* size 0 with an SRQ */
};

/*
 * create_qp of an RSS QP: a raw packet QP over an indirection table of
 * receive WQs (whose create_wq response is a struct sroce_create_srq_resp,
 * srq_num being the WQ's number).  Toeplitz is the one hash function.
 */
#define SROCE_RX_HASH_FUNC_TOEPLITZ	1	/* IBV_RX_HASH_FUNC_TOEPLITZ */
#define SROCE_RX_HASH_KEY_LEN		40
#define SROCE_RX_HASH_FIELDS		0xffULL	/* IBV_RX_HASH_{SRC,DST}_* */

struct sroce_create_qp_rss_cmd {
	__aligned_u64 rx_hash_fields_mask;
	__u8 rx_hash_function;
	__u8 rx_key_len;
	__u8 rsvd[6];
	__u8 rx_hash_key[SROCE_RX_HASH_KEY_LEN];
};

struct sroce_create_srq_resp {
	struct sroce_mmap_info mi;
	__u32 srq_num;
	__u32 rsvd;
};

/*
 * modify_srq with IB_SRQ_MAX_WR on a user SRQ: the command has no
 * response, so the kernel writes the new ring's struct sroce_mmap_info to
 * @mi_addr in the caller's memory before the new ring replaces the old.
 * WQEs posted and not yet consumed move to the start of the new ring
 * (prod = their number, cons = 0).
 */
struct sroce_modify_srq_cmd {
	__aligned_u64 mi_addr;
};

struct sroce_create_ah_resp {
	__u32 ah_num;		/* name of the AH in UD send WQEs */
	__u32 rsvd;
};

/*
 * Driver ids of the ioctl interface (driver namespace: bit 12 and up),
 * for ibv_import_device() and ibv_import_pd():
 *  - UVERBS_METHOD_QUERY_CONTEXT takes SROCE_ATTR_QUERY_CONTEXT_RESP, an
 *    output of struct sroce_alloc_ucontext_resp, the same answer
 *    GET_CONTEXT gave the process that created the context;
 *  - SROCE_METHOD_PD_QUERY on UVERBS_OBJECT_PD checks that the handle in
 *    SROCE_ATTR_PD_QUERY_HANDLE names a PD of the caller's context.
 * Enums, not macros: the kernel's method macros paste these names.
 */
enum sroce_query_context_attrs {
	SROCE_ATTR_QUERY_CONTEXT_RESP = 1U << 12,
};

enum sroce_pd_methods {
	SROCE_METHOD_PD_QUERY = 1U << 12,
};

enum sroce_pd_query_attrs {
	SROCE_ATTR_PD_QUERY_HANDLE = 1U << 12,
};

#ifdef __cplusplus
#define SROCE_ABI_ASSERT(e, m) static_assert(e, m)
#else
#define SROCE_ABI_ASSERT(e, m) _Static_assert(e, m)
#endif

SROCE_ABI_ASSERT(sizeof(struct sroce_ring_ctl) == SROCE_RING_DATA_OFFSET,
		 "ring control block size");
SROCE_ABI_ASSERT(sizeof(struct sroce_mmap_info) == 24, "mmap info size");
SROCE_ABI_ASSERT(sizeof(struct sroce_sge) == 16, "sge size");
SROCE_ABI_ASSERT(sizeof(struct sroce_send_wqe) == SROCE_SEND_WQE_HDR,
		 "send wqe header size");
SROCE_ABI_ASSERT(sizeof(struct sroce_recv_wqe) == SROCE_RECV_WQE_HDR,
		 "recv wqe header size");
SROCE_ABI_ASSERT(sizeof(struct sroce_cqe) == SROCE_CQE_SIZE, "cqe size");
SROCE_ABI_ASSERT(sizeof(struct sroce_alloc_ucontext_resp) == 16,
		 "ucontext resp size");
SROCE_ABI_ASSERT(sizeof(struct sroce_create_qp_resp) == 48,
		 "create qp resp size");
SROCE_ABI_ASSERT(sizeof(struct sroce_create_srq_resp) == 32,
		 "create srq resp size");
SROCE_ABI_ASSERT(sizeof(struct sroce_modify_srq_cmd) == 8,
		 "modify srq cmd size");
SROCE_ABI_ASSERT(sizeof(struct sroce_create_qp_rss_cmd) == 56,
		 "create rss qp cmd size");
SROCE_ABI_ASSERT(sizeof(struct sroce_create_ah_resp) == 8,
		 "create ah resp size");

#endif /* SROCE_ABI_H */
