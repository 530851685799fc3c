/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sroce: objects shared by every part of the driver and the calls that
 * cross file boundaries.  Each file owns one role (see DESIGN.md); this
 * header is the contract between them.  Structures private to one role
 * live in that role's header (sroce_queue.h, sroce_engine.h, ...).
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/hashtable.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <linux/percpu.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include "uapi/rdma/sroce-abi.h"
#include "sroce_compat.h"
#include "sroce_queue.h"
#include "sroce_engine.h"

#define SROCE_PORT		1
#define SROCE_UDP_PORT		4791
#define SROCE_VENDOR_ID		0xffffff	/* no OUI: a software device */

/* Limits advertised in query_device and enforced at creation time. */
#define SROCE_MAX_QP		0x10000
#define SROCE_MAX_QP_WR		0x4000
#define SROCE_MAX_SGE		32
#define SROCE_MAX_INLINE	256
#define SROCE_MAX_CQ		0x10000
#define SROCE_MAX_CQE		0x10000
#define SROCE_MAX_MR		0x10000
#define SROCE_MAX_MW		0x10000
#define SROCE_MAX_PD		0x10000
#define SROCE_MAX_XRCD		0x10000
#define SROCE_MAX_AH		0x10000
#define SROCE_MAX_SRQ		0x4000
#define SROCE_MAX_SRQ_WR	0x4000
#define SROCE_MAX_IND_TBL	1024
#define SROCE_MAX_IND_TBL_LOG	8
#define SROCE_MAX_RD_ATOMIC	128
#define SROCE_MAX_MR_SIZE	(~0ULL)
#define SROCE_MAX_MSG_SIZE	0x80000000U	/* 2 GiB, the IB limit */
#define SROCE_MAX_FAST_REG_PAGES 512
#define SROCE_MAX_MCAST_GRP	1024	/* groups per device */
#define SROCE_MAX_MCAST_QP_ATTACH 64	/* QPs per group */
#define SROCE_MAX_MCAST_ATTACH	8192	/* attachments per device */
#define SROCE_ODP_CAPS_RC	(IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | \
				 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ | \
				 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV)
/*
 * Implicit ODP: the span of one child region, and how many one region may
 * have (their page tables cost 16 bytes per 4 KiB page: at most 256 MiB).
 */
#define SROCE_ODP_CHILD_SHIFT	24
#define SROCE_ODP_MAX_CHILDREN	4096

/*
 * Rings and their kernel-side copies, sized by the caller: charged to the
 * caller's memory cgroup, and -ENOMEM rather than the OOM killer when they
 * do not fit.  A process at its limit is told so by the error; the log
 * gets no allocation-failure dump for it (6.12's vmalloc prints one).
 */
#define SROCE_GFP_USER		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)
#define SROCE_MAX_PKEYS		1
#define SROCE_DEFAULT_PKEY	0xffff

/*
 * Counters shown by `rdma statistic show link DEV/1`.  Hot paths bump
 * per-CPU slots with sroce_count(); readers sum them.
 */
enum sroce_counter {
	SROCE_CNT_SENT_PKTS,
	SROCE_CNT_RCVD_PKTS,
	SROCE_CNT_RETRANSMITS,
	SROCE_CNT_RETRY_EXCEEDED,
	SROCE_CNT_DUP_REQUESTS,
	SROCE_CNT_OUT_OF_SEQ,
	SROCE_CNT_RNR_NAKS_SENT,
	SROCE_CNT_RNR_NAKS_RCVD,
	SROCE_CNT_RNR_RETRY_EXCEEDED,
	SROCE_CNT_NAKS_SENT,
	SROCE_CNT_NAKS_RCVD,
	SROCE_CNT_ACKS_SENT,
	SROCE_CNT_ACKS_COALESCED,
	SROCE_CNT_ICRC_ERRORS,
	SROCE_CNT_MALFORMED,
	SROCE_CNT_NO_QP,
	SROCE_CNT_BAD_RKEY,
	SROCE_CNT_LOCAL_ERRORS,
	SROCE_CNT_CQ_OVERFLOW,
	SROCE_CNT_TX_DROPS,
	SROCE_CNT_TX_WAITS,
	SROCE_CNT_TX_BATCHES,
	SROCE_CNT_DOORBELLS,
	SROCE_CNT_ACK_OUT_OF_WINDOW,
	SROCE_CNT_DUP_READ_REFUSED,
	SROCE_CNT_DUP_READ_LATE,
	SROCE_CNT_ACK_LATE,
	SROCE_CNT_TX_ZCOPY,
	/*
	 * Why a packet counted in malformed_pkts was refused, one cause each:
	 * so a user can tell a broken peer from a misconfigured one.
	 */
	SROCE_CNT_BAD_HDR,
	SROCE_CNT_BAD_OPCODE,
	SROCE_CNT_BAD_LEN,
	SROCE_CNT_BAD_PKEY,
	SROCE_CNT_WRONG_QP,
	SROCE_CNT_BAD_QKEY,
	SROCE_NUM_COUNTERS
};

/* Why a requester resends from an older PSN (tracepoint sroce_retransmit). */
enum sroce_retx_reason {
	SROCE_RETX_TIMEOUT,
	SROCE_RETX_NAK_SEQ,
	SROCE_RETX_IMPLIED,
	SROCE_RETX_RNR,
};

/* Zero-copy transmit (sroce_net_zc_ok()): the zero_copy sysfs values. */
enum sroce_zc_mode {
	SROCE_ZC_OFF,
	SROCE_ZC_AUTO,		/* where the netdev gathers (NETIF_F_SG) */
	SROCE_ZC_ALWAYS,
};

struct sroce_counters {
	u64 cnt[SROCE_NUM_COUNTERS];
};

/*
 * The slots of one `rdma statistic qp` counter (struct rdma_counter, found
 * by its id in dev->qpcs).  A QP bound to it counts here instead of in
 * the device's slots; ib_core adds both (and released counters' totals)
 * for the port's figures, so nothing is counted twice or lost.
 */
struct sroce_qpc {
	struct sroce_counters __percpu *pc;
};

/* One per `rdma link add`. */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;	/* held (netdev_hold) for our lifetime */
	netdevice_tracker ndev_tracker;
	/*
	 * The netdev's namespace when the device was made (moving the
	 * netdev removes the device), and its RoCEv2 sockets (sroce_net.c).
	 */
	possible_net_t net;
	struct sroce_netns *sn;
	struct list_head list;		/* in the global device list, RCU */
	/*
	 * Our sysfs parent (sroce_dev.c) and the netdev's name as its net/
	 * link has it; both change only under RTNL once registered.
	 */
	struct device *parent;
	struct kobject *parent_net;
	int parent_id;
	char parent_link[IFNAMSIZ];

	struct ib_device_attr attr;
	enum ib_port_state port_state;	/* follows the netdev's carrier */
	enum ib_mtu active_mtu;		/* follows the netdev's MTU */

	/* Lookup tables; values are refcounted objects, readers use RCU. */
	struct xarray qps;		/* qpn -> struct sroce_qp */
	struct xarray mrs;		/* key index -> struct sroce_mr or sroce_mw */
	struct xarray ahs;		/* ah_num -> struct sroce_ah */
	struct xarray srqs;		/* srq_num -> struct sroce_srq */
	u32 next_qpn, next_mr, next_ah, next_srq, next_qpc; /* cyclic cursors */

	atomic_t num_qp, num_cq, num_mr, num_mw, num_pd, num_ah, num_srq;
	atomic_t num_xrcd;
	atomic_t odp_faults;		/* ODP fault work queued (sroce_odp.c) */
	atomic64_t odp_table_bytes;	/* ib_core's ODP page tables (ditto) */

	struct sroce_counters __percpu *counters;
	struct xarray qpcs;		/* rdma_counter id -> sroce_qpc */

	/*
	 * Transmit budget (sroce_net.c): every skb we send is charged to
	 * @txsk until the netdev frees it; a requester that finds the
	 * budget spent waits on @tx_waiters until the queue has drained.
	 */
	struct socket *txsk;
	spinlock_t tx_wait_lock;
	struct list_head tx_waiters;
	atomic_t tx_freed;		/* skbs freed, to tell a stuck netdev */
	u8 zero_copy;			/* enum sroce_zc_mode, sysfs zero_copy */

	/*
	 * Flows of raw packet QPs (sroce_raw.c), RCU; writers hold
	 * flow_mutex.  flow_pt is the netdev tap, added while nflows > 0.
	 */
	struct list_head flows;
	struct mutex flow_mutex;
	u32 nflows;
	struct packet_type flow_pt;

	/* UD multicast groups (sroce_mcast.c); writers hold mcast_mutex. */
	struct mutex mcast_mutex;
	DECLARE_HASHTABLE(mcgs, 6);	/* struct sroce_mcg, RCU */
	u32 nmcg, nmcast_attach;
};

static inline struct net *sroce_dev_net(const struct sroce_dev *dev)
{
	return read_pnet(&dev->net);
}

struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

struct sroce_pd {
	struct ib_pd ibpd;
};

/*
 * An XRC domain.  Its TGT QPs are listed so that destroying one of its
 * SRQs can take that SRQ from a responder still receiving a message into
 * it (sroce_srq.c).
 */
struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
	struct mutex lock;		/* the list */
	struct list_head tgts;		/* sroce_qp.xrcd_link */
};

/*
 * Address vector: everything the transmit path needs to build the
 * Ethernet/IP/UDP headers for a destination, resolved once when the AH or
 * RC/UC path is set, not per packet.
 */
struct sroce_av {
	u8 network_type;		/* RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6 */
	u8 hop_limit;
	u8 traffic_class;
	u8 sgid_index;
	u32 flow_label;
	int ifindex;			/* source GID's netdev: ours or a VLAN on it */
	u8 dmac[ETH_ALEN];
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} saddr, daddr;
	union ib_gid dgid;
};

/*
 * ib_core frees an AH's memory as soon as destroy_ah returns, which may be
 * called where we cannot wait for the send path.  So the object the send
 * path sees is a separate, refcounted snapshot (@snap), freed after an RCU
 * grace period once the table and every sroce_ah_get() user let go.  In a
 * snapshot only av, ah_num, pd (compare, never dereference) and ref are
 * meaningful; its ibah is unused.
 */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	u32 ah_num;
	struct rcu_head rcu;
	struct sroce_pd *pd;		/* snapshot: owner, for the UD PD check */
	refcount_t ref;			/* snapshot: table + sroce_ah_get() users */
	struct sroce_ah *snap;		/* ib_core's AH: its snapshot */
};

/* Key layout lives in sroce_keys.h: index << 8 | key byte. */
enum sroce_mr_type {
	SROCE_MR_USER,		/* ib_umem pages */
	SROCE_MR_DMA,		/* kernel virtual addresses */
	SROCE_MR_FAST_REG,	/* page list set by IB_WR_REG_MR */
	SROCE_MR_ODP,		/* ib_umem_odp: pages faulted in on demand */
};

enum sroce_mr_state {
	SROCE_MR_FREE,		/* fast-reg MR between invalidate and reg */
	SROCE_MR_VALID,
};

struct sroce_mr {
	struct ib_mr ibmr;
	enum sroce_mr_type type;
	enum sroce_mr_state state;
	struct sroce_pd *pd;
	struct ib_umem *umem;
	u64 iova;
	u64 length;
	int access;			/* IB_ACCESS_* */
	u32 page_shift;
	u32 npages, max_pages;
	struct page **pages;		/* USER: one per PAGE_SIZE */
	refcount_t ref;
	struct rcu_head rcu;
	u32 key;			/* the valid lkey == rkey */
	u32 offset;			/* of iova in the first page/block */
	u64 *fr_list;			/* FAST_REG: block addresses (kernel VA) */
	spinlock_t lock;		/* key, state, pd, access, num_mw */
	atomic_t num_mw;		/* windows bound to this MR */
	bool dying;			/* deregistration has started */
	/*
	 * Held for reading around every copy; taken for writing (under
	 * @lock) after changing state, @gen or @mw_gen, or to change the
	 * translation: that waits for the copies in progress only.
	 */
	rwlock_t copy_lock;
	u32 gen;			/* bumped by every invalidation */
	u32 mw_gen;			/* bumped by every window unbind */
	/* FAST_REG: map_mr_sg fills these; REG_MR makes them current. */
	u64 *fr_next;
	u32 next_npages, next_shift, next_offset;
	/*
	 * ODP (sroce_odp.c): the user address iova maps to; the range an
	 * invalidation is taking away, under copy_lock; one page fault at a
	 * time, queued by copies that found a page missing.  An implicit
	 * region's @odp maps nothing: its pages are in @odp_children, one
	 * per SROCE_ODP_CHILD bytes of address space, made as faults need.
	 */
	struct ib_umem_odp *odp;
	u64 odp_start;
	u64 inval_start, inval_end;
	struct mutex inval_mutex;	/* one invalidation sets them at once */
	struct xarray odp_children;
	u32 odp_nchildren;		/* under fault_mutex */
	struct mm_struct *odp_mm;	/* implicit: mmgrab'ed for children */
	u64 odp_charged;		/* our share of dev->odp_table_bytes */
	struct work_struct fault_work;
	struct mutex fault_mutex;	/* a fault or prefetch maps pages */
	unsigned long fault_busy;	/* bit 0: fault_work queued */
	u64 fault_addr;			/* user address, under fault_busy */
	u32 fault_len;
	bool fault_write;
	u64 bad_start, bad_end;		/* the last range that failed to fault */
	unsigned long bad_until;	/* ... fails copies until then */
};

/* dev->mrs entries for windows carry this xa_tag_pointer() tag. */
#define SROCE_XA_TAG_MW		1

struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mr *mr;		/* bound MR, NULL when unbound */
	struct sroce_qp *qp;		/* type 2: the QP it is bound to */
	u64 iova;
	u64 length;
	int access;
	u32 rkey;
	refcount_t ref;
	struct rcu_head rcu;
	spinlock_t lock;		/* binding state */
	u32 qpn;			/* type 2: QPN it is bound to (qp unused) */
};

struct sroce_cq {
	struct ib_cq ibcq;
	struct sroce_queue q;		/* ring of struct sroce_cqe */
	spinlock_t lock;		/* serialises producers */
	u8 notify;			/* IB_CQ_SOLICITED / IB_CQ_NEXT_COMP armed */
	bool overflowed;
	bool is_user;
	struct ib_qp **kqp;		/* kernel CQs: wc->qp per slot */
};

/*
 * A receive queue shared by QPs.  An XRC SRQ is also found by number, by
 * the responders of its domain's TGT QPs, which hold @ref while they
 * consume from it and post to its @cq.
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_pd *pd;
	struct sroce_xrcd *xrcd;	/* XRC SRQs only */
	struct sroce_cq *cq;		/* XRC SRQs only: receive completions */
	struct completion free_done;	/* destroy waits for the last ref */
	struct sroce_queue rq;		/* ring of struct sroce_recv_wqe */
	spinlock_t lock;		/* serialises consumers */
	u32 srq_num;
	u32 max_sge;
	u32 limit;			/* armed SRQ limit, 0 when disarmed */
	bool is_user;
	refcount_t ref;
};

/* Opcode given to a send WQE that failed sroce_sq_fetch()'s checks. */
#define SROCE_WQE_OPCODE_BAD	0xffU

/* Kernel copy of one send WQE, taken out of the ring before any check. */
struct sroce_swqe {
	struct sroce_send_wqe wqe;
	struct ib_mr *reg_mr;		/* IB_WR_REG_MR (kernel QPs only) */
	u32 reg_key;
	int reg_access;
	struct sroce_av *av;		/* UD: resolved AH (holds a reference) */
	struct sroce_ah *ah;
	struct sroce_swqe_state st;	/* requester/completer progress */
	u32 total_len;			/* sum of sge lengths / inline_len */
	/*
	 * IB_WC_SUCCESS, or why sroce_sq_fetch() found the WQE malformed; its
	 * opcode is then SROCE_WQE_OPCODE_BAD so it cannot be executed.
	 */
	u8 fetch_status;
	struct sroce_sge sge[SROCE_MAX_SGE];
	u8 inline_data[SROCE_MAX_INLINE];
};

/* Kernel copy of one receive WQE. */
struct sroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 total_len;			/* sum of sge lengths, checked */
	struct sroce_sge sge[SROCE_MAX_SGE];
};

struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_dev *dev;
	struct sroce_pd *pd;
	struct sroce_cq *scq, *rcq;
	struct sroce_srq *srq;
	/*
	 * RSS raw packet QPs (ibqp.rwq_ind_tbl set): what is hashed, with
	 * which Toeplitz key, to pick a WQ of the table (sroce_raw.c).
	 */
	u64 rss_fields;
	u8 rss_key[40];
	/*
	 * XRC TGT QPs: their domain, in whose list they are; they have no
	 * PD, CQ or receive queue of their own, each request names the SRQ
	 * it is for.
	 */
	struct sroce_xrcd *xrcd;
	struct list_head xrcd_link;
	bool is_user;
	bool loop_peer;			/* its packets went to this host */
	u32 nmcast;			/* groups attached, dev->mcast_mutex */
	struct sroce_qpc __rcu *qpc;	/* bound counter's slots, or NULL */

	struct sroce_queue sq;		/* ring of struct sroce_send_wqe */
	struct sroce_swqe *swqe;	/* kernel copies, one per SQ slot */
	struct ib_mr **sq_kmr;		/* kernel QPs: REG_MR's MR per slot */
	bool sig_all;			/* IB_SIGNAL_ALL_WR */
	struct sroce_queue rq;		/* ring of struct sroce_recv_wqe */
	spinlock_t sq_lock, rq_lock;	/* serialise kernel-side posters */

	/* Attributes, written under state_lock by modify_qp. */
	struct mutex state_lock;
	spinlock_t state_spin;		/* for state changes from softirq */
	enum ib_qp_state state;
	struct ib_qp_attr attr;		/* the last values set by modify */
	struct sroce_av av;		/* RC/UC destination */
	u32 max_send_sge, max_recv_sge, max_inline;
	u16 src_port;			/* UDP source port, from the QPN */
	u32 mtu;			/* path MTU in bytes */

	struct sroce_req req;		/* requester: SQ -> wire */
	struct sroce_comp comp;		/* completer: ACKs/responses -> CQ */
	struct sroce_resp resp;		/* responder: requests -> memory/RQ */

	refcount_t ref;
	struct completion free_done;	/* destroy waits for the last ref */
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

static inline struct sroce_xrcd *to_sxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct sroce_xrcd, ibxrcd);
}

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline struct sroce_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct sroce_ucontext, ibuc);
}

/* RC and both XRC QP types: the reliable, acknowledged transport. */
static inline bool sroce_qp_reliable(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* Opcode service bits of @qp's packets: RC's or XRC's. */
static inline u8 sroce_qp_opc(const struct sroce_qp *qp)
{
	return (qp->ibqp.qp_type == IB_QPT_XRC_INI ||
		qp->ibqp.qp_type == IB_QPT_XRC_TGT) ? SROCE_OPC_XRC : 0;
}

static inline void sroce_count(struct sroce_dev *dev, enum sroce_counter c)
{
	this_cpu_inc(dev->counters->cnt[c]);
}

/* A refused packet: malformed_pkts and its cause (SROCE_CNT_BAD_*). */
static inline void sroce_count_malformed(struct sroce_dev *dev,
					 enum sroce_counter cause)
{
	sroce_count(dev, SROCE_CNT_MALFORMED);
	sroce_count(dev, cause);
}

static inline void sroce_count_add(struct sroce_dev *dev,
				   enum sroce_counter c, u32 n)
{
	this_cpu_add(dev->counters->cnt[c], n);
}

/* An event of @qp's: in its bound counter's slots, else the device's. */
static inline void sroce_qp_count_add(struct sroce_qp *qp,
				      enum sroce_counter c, u32 n)
{
	struct sroce_qpc *qpc;

	rcu_read_lock();
	qpc = rcu_dereference(qp->qpc);
	if (qpc)
		this_cpu_add(qpc->pc->cnt[c], n);
	else
		this_cpu_add(qp->dev->counters->cnt[c], n);
	rcu_read_unlock();
}

static inline void sroce_qp_count(struct sroce_qp *qp, enum sroce_counter c)
{
	sroce_qp_count_add(qp, c, 1);
}

/* ib_device_ops fragments, one per role; sroce_dev.c merges them. */
extern const struct ib_device_ops sroce_dev_ops;	/* sroce_verbs.c */
extern const struct ib_device_ops sroce_mr_ops;		/* sroce_mr.c */
extern const struct ib_device_ops sroce_cq_ops;		/* sroce_cq.c */
extern const struct ib_device_ops sroce_srq_ops;	/* sroce_srq.c */
int sroce_srq_ring_init(struct sroce_srq *srq, struct sroce_pd *pd,
			u32 max_wr, u32 max_sge, bool is_user);
extern const struct ib_device_ops sroce_qp_ops;		/* sroce_qp.c */
extern const struct ib_device_ops sroce_stats_ops;	/* sroce_stats.c */
extern const struct ib_device_ops sroce_mcast_ops;	/* sroce_mcast.c */
extern const struct ib_device_ops sroce_raw_ops;	/* sroce_raw.c */
void sroce_raw_dev_init(struct sroce_dev *dev);
u32 sroce_raw_max_frame(const struct sroce_dev *dev);
int sroce_rss_qp_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata);
/* sroce_import.c: what ibv_import_device() and ibv_import_pd() need */
void sroce_import_setup(struct ib_device *ibdev);
/* sroce_verbs.c: GET_CONTEXT's answer, which importers ask for again */
void sroce_ucontext_resp(struct sroce_alloc_ucontext_resp *resp);

/* sroce_dev.c: devices and their netdevs */
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev);
void sroce_dev_put(struct sroce_dev *dev);
void sroce_dev_unregister_net(struct net *net);
/* rdma_link_ops.newlink: `rdma link add NAME type sroce netdev NDEV` */
int sroce_dev_newlink(const char *ibdev_name, struct net_device *ndev);
int sroce_dev_init(void);
void sroce_dev_exit(void);

/* sroce_mcast.c: UD multicast groups */
void sroce_mcast_dev_init(struct sroce_dev *dev);
void sroce_mcast_dev_fini(struct sroce_dev *dev);
void sroce_mcast_qp_destroy(struct sroce_qp *qp);
/* Receive path, under RCU: false if no QP here is in the group. */
bool sroce_mcast_rcv(struct sroce_dev *dev, struct sroce_rx *rx);

/* sroce_verbs.c: device/port/PD/AH/ucontext/mmap entry points */
/* Fill dev->attr from the SROCE_MAX_* limits (at device creation). */
void sroce_dev_attr_init(struct sroce_dev *dev);
int sroce_av_from_attr(struct sroce_dev *dev, const struct rdma_ah_attr *attr,
		       struct sroce_av *av);
struct sroce_ah *sroce_ah_get(struct sroce_dev *dev, u32 ah_num,
			      struct sroce_pd *pd);
void sroce_ah_put(struct sroce_ah *ah);
/*
 * Expose a vmalloc_user() buffer through the uverbs fd's mmap space and
 * fill @mi (offset, size); the entry is removed with sroce_mmap_remove().
 * The caller keeps owning @buf: once sroce_mmap_remove() returns no mmap()
 * can still be mapping it, so the caller may vfree() it (pages already
 * mapped by a process stay alive until it unmaps them).
 */
int sroce_mmap_insert(struct ib_ucontext *uctx, void *buf, size_t size,
		      struct rdma_user_mmap_entry **entry,
		      struct sroce_mmap_info *mi);
void sroce_mmap_remove(struct rdma_user_mmap_entry *entry);

/* sroce_mr.c: memory, keys, and access to registered memory */
enum sroce_copy_dir {
	SROCE_TO_MR,		/* write into registered memory */
	SROCE_FROM_MR,		/* read out of registered memory */
};

/*
 * Look up a key for a local (lkey) or remote (rkey) access and check PD,
 * state, access rights and bounds with overflow-safe arithmetic.  Returns
 * a referenced MR (windows resolve to their MR, with the window's bounds
 * applied) or an ERR_PTR: -ENOENT unknown/stale key, -EACCES rights,
 * -ERANGE bounds.  The reference keeps the structure, not the memory:
 * access the memory only through a struct sroce_mref.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *dev, struct sroce_pd *pd,
			      u32 key, bool remote, int access,
			      u64 iova, u64 len);
void sroce_mr_put(struct sroce_mr *mr);
/*
 * The responder's rkey lookup, in the PD of the request it handles
 * (qp->resp.pd; type 2 windows must be bound to @qp).
 * Fills @ref, which then stays usable for copies until the key is
 * invalidated, its window unbound or the region deregistered; after that
 * copies fail with -EKEYREVOKED.  0 or -errno as sroce_mr_get().
 */
int sroce_mref_get(struct sroce_mref *ref, struct sroce_qp *qp, u32 key,
		   int access, u64 iova, u64 len);
void sroce_mref_put(struct sroce_mref *ref);
int sroce_mr_copy(const struct sroce_mref *ref, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir);
enum sroce_atomic_op {
	SROCE_ATOMIC_CMP_SWAP,		/* if (*p == a) *p = b */
	SROCE_ATOMIC_FETCH_ADD,		/* *p += a */
	SROCE_ATOMIC_WRITE,		/* *p = a (ATOMIC WRITE) */
};

/* 8-byte atomic at iova (must be aligned); *orig gets the old value. */
int sroce_mr_atomic(const struct sroce_mref *ref, u64 iova,
		    enum sroce_atomic_op op, u64 a, u64 b, u64 *orig);
/*
 * Copy between a kernel buffer and an SGE list starting @offset bytes into
 * it, checking each lkey against @pd and @access.  Returns 0 or -errno
 * (the caller turns it into a local protection/length error).
 */
int sroce_sge_copy(struct sroce_dev *dev, struct sroce_pd *pd,
		   const struct sroce_sge *sge, u32 num_sge, u32 offset,
		   void *buf, u32 len, int access, enum sroce_copy_dir dir);
/*
 * Zero-copy transmit: the same bytes added to @skb (no fragments yet) as
 * page fragments of user MRs, at most @max_frags.  0, -EOPNOTSUPP when
 * a byte is not in a pinned user page or needs too many fragments, or an
 * error as sroce_sge_copy()'s; on any error @skb has no fragments.
 */
int sroce_sge_frags(struct sroce_dev *dev, struct sroce_pd *pd,
		    const struct sroce_sge *sge, u32 num_sge, u32 offset,
		    u32 len, struct sk_buff *skb, u32 max_frags);
/* LOCAL_INV / SEND_WITH_INV / REG_MR / BIND_MW work requests. */
int sroce_mr_invalidate(struct sroce_dev *dev, struct sroce_pd *pd, u32 key,
			struct sroce_qp *qp, bool remote);
int sroce_mr_fast_reg(struct sroce_qp *qp, struct sroce_swqe *swqe);
int sroce_mw_bind(struct sroce_qp *qp, struct sroce_swqe *swqe);

/* sroce_cq.c */
/*
 * Append one completion.  Returns -ENOSPC on overflow, after raising
 * IB_EVENT_CQ_ERR; the caller moves the QP to the error state.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited);
void sroce_cq_rx_task(struct sroce_cq *cq);

/* sroce_srq.c */
/* Take one receive WQE (copied and validated); -EAGAIN when empty. */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *out);
/*
 * The XRC SRQ @srqn of @xrcd, referenced, for one request to a TGT QP;
 * NULL if there is none (not an XRC SRQ, or of another domain).
 */
struct sroce_srq *sroce_xsrq_get(struct sroce_dev *dev, u32 srqn,
				 struct sroce_xrcd *xrcd);
void sroce_srq_put(struct sroce_srq *srq);

/* sroce_qp.c: QP objects, state machine, queue access for the engine */
struct sroce_qp *sroce_qp_get(struct sroce_dev *dev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);
/* Move to IB_QPS_ERR from any context, flush, raise the async event. */
void sroce_qp_error(struct sroce_qp *qp, enum ib_event_type ev);
void sroce_qp_sq_drained(struct sroce_qp *qp);
/*
 * Next send WQE not yet fetched from the SQ, copied out of the ring and
 * validated; NULL when the ring is empty.  A malformed user WQE completes
 * in error and puts the QP in error (returns NULL).
 */
struct sroce_swqe *sroce_sq_fetch(struct sroce_qp *qp);
/* Has the poster published WQEs sroce_sq_fetch() has not taken yet? */
bool sroce_sq_unfetched(const struct sroce_qp *qp);
/* Retire the oldest fetched send WQE: free its slot for the producer. */
void sroce_sq_retire(struct sroce_qp *qp);
/*
 * Post @cqe (NULL: unsignaled, no CQE) for the oldest fetched send WQE and
 * retire it, atomically with respect to the error flush.  -ENOENT: the
 * flush already completed it; -ENOSPC: CQ overflow (the QP is failed).
 */
int sroce_sq_complete(struct sroce_qp *qp, const struct sroce_cqe *cqe);
/* enum ib_wc_opcode for a send WQE's opcode (IB_WR_*). */
u32 sroce_wr_to_wc_opcode(u32 opcode);
/*
 * Take one receive WQE from @srq (the QP's, or the XRC SRQ a request
 * named) or else the QP's RQ; -EAGAIN when empty.
 */
int sroce_rq_take(struct sroce_qp *qp, struct sroce_srq *srq,
		  struct sroce_rwqe *out);

/* sroce_stats.c */
void sroce_stats_dev_fini(struct sroce_dev *dev);
const char *sroce_counter_name(enum sroce_counter c);

#endif /* SROCE_H */
