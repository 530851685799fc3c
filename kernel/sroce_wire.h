/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCEv2 / InfiniBand transport wire formats.
 *
 * Every struct mirrors the on-wire byte layout (big endian, packed) and its
 * size is pinned at compile time, so a layout slip breaks the build rather
 * than interoperability with rxe or hardware peers.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include "sroce_pure.h"

#define SROCE_UDP_PORT		4791
#define SROCE_ICRC_LEN		4
#define SROCE_TVER		0
#define SROCE_DEFAULT_PKEY	0xffff
#define SROCE_GSI_QKEY		0x80010000U
/* Only the low 24 bits of QPN, PSN, MSN and source QP travel on the wire. */
#define SROCE_24BIT_MASK	0x00ffffffU
#define SROCE_MAX_QPN		SROCE_24BIT_MASK
/* Set in a Q_Key by privileged consumers only (IBA 10.2.5). */
#define SROCE_QKEY_PRIV_BIT	0x80000000U

/* Base Transport Header */
struct sroce_bth {
	u8 opcode;
	u8 flags;	/* SE:1 MigReq:1 PadCnt:2 TVer:4 */
	__be16 pkey;
	__be32 qpn;	/* FECN:1 BECN:1 resv6:6 DestQP:24 */
	__be32 apsn;	/* AckReq:1 resv7:7 PSN:24 */
} __packed;

#define SROCE_BTH_SE		0x80
#define SROCE_BTH_MIG		0x40
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD_MASK	0x30
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_FECN		0x80000000U
#define SROCE_BTH_BECN		0x40000000U
#define SROCE_BTH_ACKREQ	0x80000000U
/* Byte 4 of the BTH (FECN, BECN, resv6) is excluded from the ICRC. */
#define SROCE_BTH_ICRC_MASK_OFF	4

/* RDMA Extended Transport Header */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 dma_len;
} __packed;

/* ACK Extended Transport Header */
struct sroce_aeth {
	__be32 smsn;	/* Syndrome:8 MSN:24 */
} __packed;

/* Datagram Extended Transport Header */
struct sroce_deth {
	__be32 qkey;
	__be32 sqp;	/* resv8:8 SrcQP:24 */
} __packed;

/* Immediate Data Extended Transport Header, kept in network order. */
struct sroce_immdt {
	__be32 imm;
} __packed;

/* Invalidate Extended Transport Header */
struct sroce_ieth {
	__be32 rkey;
} __packed;

/* Atomic Extended Transport Header */
struct sroce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/*
 * FLUSH Extended Transport Header (IBA 1.5 annex A19): which placement the
 * FLUSH asks for and of what; it precedes the RETH.
 */
struct sroce_feth {
	__be32 bits;	/* resv26:26 SelectivityLevel:2 PlacementType:4 */
} __packed;

#define SROCE_FETH_PLT_MASK		0x0000000fU
#define SROCE_FETH_SEL_MASK		0x00000030U
#define SROCE_FETH_SEL_SHIFT		4
/* Placement type bits */
#define SROCE_FLUSH_GLOBAL		0x1
#define SROCE_FLUSH_PERSISTENT		0x2
/* Selectivity levels */
#define SROCE_FLUSH_SEL_RANGE		0
#define SROCE_FLUSH_SEL_MR		1

/*
 * XRC Extended Transport Header: the XRC SRQ at the target that a request
 * of an XRC initiator is for; it follows the BTH of every XRC request.
 */
struct sroce_xrceth {
	__be32 srqn;	/* resv8:8 XRCSRQ:24 */
} __packed;

/* Atomic ACK Extended Transport Header */
struct sroce_atmack {
	__be64 orig;
} __packed;

/*
 * Global Route Header as presented at the start of a UD receive buffer.
 * For IPv4 RoCEv2 traffic the convention (followed by rxe and hardware) is
 * to leave the first 20 bytes zero and place the IPv4 header in the last 20.
 */
struct sroce_grh {
	__be32 ver_tc_flow;	/* IPVer:4 TClass:8 FlowLabel:20 */
	__be16 paylen;
	u8 next_hdr;
	u8 hop_limit;
	u8 sgid[16];
	u8 dgid[16];
} __packed;

#define SROCE_BTH_LEN		12
#define SROCE_RETH_LEN		16
#define SROCE_AETH_LEN		4
#define SROCE_DETH_LEN		8
#define SROCE_IMMDT_LEN		4
#define SROCE_IETH_LEN		4
#define SROCE_ATMETH_LEN	28
#define SROCE_ATMACK_LEN	8
#define SROCE_FETH_LEN		4
#define SROCE_XRCETH_LEN	4
#define SROCE_GRH_LEN		40

static_assert(sizeof(struct sroce_bth) == SROCE_BTH_LEN, "BTH size");
static_assert(sizeof(struct sroce_reth) == SROCE_RETH_LEN, "RETH size");
static_assert(sizeof(struct sroce_aeth) == SROCE_AETH_LEN, "AETH size");
static_assert(sizeof(struct sroce_deth) == SROCE_DETH_LEN, "DETH size");
static_assert(sizeof(struct sroce_immdt) == SROCE_IMMDT_LEN, "ImmDt size");
static_assert(sizeof(struct sroce_ieth) == SROCE_IETH_LEN, "IETH size");
static_assert(sizeof(struct sroce_atmeth) == SROCE_ATMETH_LEN, "AtomicETH");
static_assert(sizeof(struct sroce_atmack) == SROCE_ATMACK_LEN, "AtomicAck");
static_assert(sizeof(struct sroce_feth) == SROCE_FETH_LEN, "FETH size");
static_assert(sizeof(struct sroce_xrceth) == SROCE_XRCETH_LEN, "XRCETH");
static_assert(sizeof(struct sroce_grh) == SROCE_GRH_LEN, "GRH size");

/* Outer header sizes RoCEv2 uses (no IPv4 options, no IPv6 ext headers). */
#define SROCE_IPV4_HDR_LEN	20
#define SROCE_IPV6_HDR_LEN	40
#define SROCE_UDP_HDR_LEN	8
#define SROCE_IPPROTO_UDP	17

/*
 * Transport opcodes (IBA Table 38). The top three bits select the
 * transport service, the low five bits the operation.
 */
enum {
	SROCE_OPC_RC			= 0x00,
	SROCE_OPC_UC			= 0x20,
	SROCE_OPC_RD			= 0x40,
	SROCE_OPC_UD			= 0x60,
	SROCE_OPC_CNP			= 0x80,
	SROCE_OPC_XRC			= 0xa0,
	SROCE_OPC_SERVICE_MASK		= 0xe0,
	SROCE_OPC_OP_MASK		= 0x1f,
};

enum {
	SROCE_OP_SEND_FIRST			= 0x00,
	SROCE_OP_SEND_MIDDLE			= 0x01,
	SROCE_OP_SEND_LAST			= 0x02,
	SROCE_OP_SEND_LAST_IMM			= 0x03,
	SROCE_OP_SEND_ONLY			= 0x04,
	SROCE_OP_SEND_ONLY_IMM			= 0x05,
	SROCE_OP_WRITE_FIRST			= 0x06,
	SROCE_OP_WRITE_MIDDLE			= 0x07,
	SROCE_OP_WRITE_LAST			= 0x08,
	SROCE_OP_WRITE_LAST_IMM			= 0x09,
	SROCE_OP_WRITE_ONLY			= 0x0a,
	SROCE_OP_WRITE_ONLY_IMM			= 0x0b,
	SROCE_OP_READ_REQUEST			= 0x0c,
	SROCE_OP_READ_RESP_FIRST		= 0x0d,
	SROCE_OP_READ_RESP_MIDDLE		= 0x0e,
	SROCE_OP_READ_RESP_LAST			= 0x0f,
	SROCE_OP_READ_RESP_ONLY			= 0x10,
	SROCE_OP_ACK				= 0x11,
	SROCE_OP_ATOMIC_ACK			= 0x12,
	SROCE_OP_CMP_SWAP			= 0x13,
	SROCE_OP_FETCH_ADD			= 0x14,
	SROCE_OP_SEND_LAST_INV			= 0x16,
	SROCE_OP_SEND_ONLY_INV			= 0x17,
	SROCE_OP_FLUSH				= 0x1c,
	SROCE_OP_ATOMIC_WRITE			= 0x1d,
};

#define SROCE_OPCODE(svc, op)	(SROCE_OPC_##svc | SROCE_OP_##op)

enum sroce_opcode {
	SROCE_RC_SEND_FIRST		= SROCE_OPCODE(RC, SEND_FIRST),
	SROCE_RC_SEND_MIDDLE		= SROCE_OPCODE(RC, SEND_MIDDLE),
	SROCE_RC_SEND_LAST		= SROCE_OPCODE(RC, SEND_LAST),
	SROCE_RC_SEND_LAST_IMM		= SROCE_OPCODE(RC, SEND_LAST_IMM),
	SROCE_RC_SEND_ONLY		= SROCE_OPCODE(RC, SEND_ONLY),
	SROCE_RC_SEND_ONLY_IMM		= SROCE_OPCODE(RC, SEND_ONLY_IMM),
	SROCE_RC_WRITE_FIRST		= SROCE_OPCODE(RC, WRITE_FIRST),
	SROCE_RC_WRITE_MIDDLE		= SROCE_OPCODE(RC, WRITE_MIDDLE),
	SROCE_RC_WRITE_LAST		= SROCE_OPCODE(RC, WRITE_LAST),
	SROCE_RC_WRITE_LAST_IMM		= SROCE_OPCODE(RC, WRITE_LAST_IMM),
	SROCE_RC_WRITE_ONLY		= SROCE_OPCODE(RC, WRITE_ONLY),
	SROCE_RC_WRITE_ONLY_IMM		= SROCE_OPCODE(RC, WRITE_ONLY_IMM),
	SROCE_RC_READ_REQUEST		= SROCE_OPCODE(RC, READ_REQUEST),
	SROCE_RC_READ_RESP_FIRST	= SROCE_OPCODE(RC, READ_RESP_FIRST),
	SROCE_RC_READ_RESP_MIDDLE	= SROCE_OPCODE(RC, READ_RESP_MIDDLE),
	SROCE_RC_READ_RESP_LAST		= SROCE_OPCODE(RC, READ_RESP_LAST),
	SROCE_RC_READ_RESP_ONLY		= SROCE_OPCODE(RC, READ_RESP_ONLY),
	SROCE_RC_ACK			= SROCE_OPCODE(RC, ACK),
	SROCE_RC_ATOMIC_ACK		= SROCE_OPCODE(RC, ATOMIC_ACK),
	SROCE_RC_CMP_SWAP		= SROCE_OPCODE(RC, CMP_SWAP),
	SROCE_RC_FETCH_ADD		= SROCE_OPCODE(RC, FETCH_ADD),
	SROCE_RC_SEND_LAST_INV		= SROCE_OPCODE(RC, SEND_LAST_INV),
	SROCE_RC_SEND_ONLY_INV		= SROCE_OPCODE(RC, SEND_ONLY_INV),
	SROCE_RC_FLUSH			= SROCE_OPCODE(RC, FLUSH),
	SROCE_RC_ATOMIC_WRITE		= SROCE_OPCODE(RC, ATOMIC_WRITE),

	SROCE_UC_SEND_FIRST		= SROCE_OPCODE(UC, SEND_FIRST),
	SROCE_UC_SEND_MIDDLE		= SROCE_OPCODE(UC, SEND_MIDDLE),
	SROCE_UC_SEND_LAST		= SROCE_OPCODE(UC, SEND_LAST),
	SROCE_UC_SEND_LAST_IMM		= SROCE_OPCODE(UC, SEND_LAST_IMM),
	SROCE_UC_SEND_ONLY		= SROCE_OPCODE(UC, SEND_ONLY),
	SROCE_UC_SEND_ONLY_IMM		= SROCE_OPCODE(UC, SEND_ONLY_IMM),
	SROCE_UC_WRITE_FIRST		= SROCE_OPCODE(UC, WRITE_FIRST),
	SROCE_UC_WRITE_MIDDLE		= SROCE_OPCODE(UC, WRITE_MIDDLE),
	SROCE_UC_WRITE_LAST		= SROCE_OPCODE(UC, WRITE_LAST),
	SROCE_UC_WRITE_LAST_IMM		= SROCE_OPCODE(UC, WRITE_LAST_IMM),
	SROCE_UC_WRITE_ONLY		= SROCE_OPCODE(UC, WRITE_ONLY),
	SROCE_UC_WRITE_ONLY_IMM		= SROCE_OPCODE(UC, WRITE_ONLY_IMM),

	SROCE_UD_SEND_ONLY		= SROCE_OPCODE(UD, SEND_ONLY),
	SROCE_UD_SEND_ONLY_IMM		= SROCE_OPCODE(UD, SEND_ONLY_IMM),

	/* XRC: RC's operations; FLUSH and ATOMIC WRITE are RC only here */
	SROCE_XRC_SEND_FIRST		= SROCE_OPCODE(XRC, SEND_FIRST),
	SROCE_XRC_SEND_MIDDLE		= SROCE_OPCODE(XRC, SEND_MIDDLE),
	SROCE_XRC_SEND_LAST		= SROCE_OPCODE(XRC, SEND_LAST),
	SROCE_XRC_SEND_LAST_IMM		= SROCE_OPCODE(XRC, SEND_LAST_IMM),
	SROCE_XRC_SEND_ONLY		= SROCE_OPCODE(XRC, SEND_ONLY),
	SROCE_XRC_SEND_ONLY_IMM		= SROCE_OPCODE(XRC, SEND_ONLY_IMM),
	SROCE_XRC_WRITE_FIRST		= SROCE_OPCODE(XRC, WRITE_FIRST),
	SROCE_XRC_WRITE_MIDDLE		= SROCE_OPCODE(XRC, WRITE_MIDDLE),
	SROCE_XRC_WRITE_LAST		= SROCE_OPCODE(XRC, WRITE_LAST),
	SROCE_XRC_WRITE_LAST_IMM	= SROCE_OPCODE(XRC, WRITE_LAST_IMM),
	SROCE_XRC_WRITE_ONLY		= SROCE_OPCODE(XRC, WRITE_ONLY),
	SROCE_XRC_WRITE_ONLY_IMM	= SROCE_OPCODE(XRC, WRITE_ONLY_IMM),
	SROCE_XRC_READ_REQUEST		= SROCE_OPCODE(XRC, READ_REQUEST),
	SROCE_XRC_READ_RESP_FIRST	= SROCE_OPCODE(XRC, READ_RESP_FIRST),
	SROCE_XRC_READ_RESP_MIDDLE	= SROCE_OPCODE(XRC, READ_RESP_MIDDLE),
	SROCE_XRC_READ_RESP_LAST	= SROCE_OPCODE(XRC, READ_RESP_LAST),
	SROCE_XRC_READ_RESP_ONLY	= SROCE_OPCODE(XRC, READ_RESP_ONLY),
	SROCE_XRC_ACK			= SROCE_OPCODE(XRC, ACK),
	SROCE_XRC_ATOMIC_ACK		= SROCE_OPCODE(XRC, ATOMIC_ACK),
	SROCE_XRC_CMP_SWAP		= SROCE_OPCODE(XRC, CMP_SWAP),
	SROCE_XRC_FETCH_ADD		= SROCE_OPCODE(XRC, FETCH_ADD),
	SROCE_XRC_SEND_LAST_INV		= SROCE_OPCODE(XRC, SEND_LAST_INV),
	SROCE_XRC_SEND_ONLY_INV		= SROCE_OPCODE(XRC, SEND_ONLY_INV),
};

/* BTH field accessors; all return host-order values. */
static inline u8 sroce_bth_opcode(const struct sroce_bth *bth)
{
	return bth->opcode;
}

static inline bool sroce_bth_se(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_SE;
}

static inline bool sroce_bth_migreq(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_MIG;
}

static inline u8 sroce_bth_pad(const struct sroce_bth *bth)
{
	return (bth->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
}

static inline u8 sroce_bth_tver(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_TVER_MASK;
}

static inline u16 sroce_bth_pkey(const struct sroce_bth *bth)
{
	return be16_to_cpu(bth->pkey);
}

static inline bool sroce_bth_fecn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SROCE_BTH_FECN;
}

static inline bool sroce_bth_becn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SROCE_BTH_BECN;
}

static inline u32 sroce_bth_qpn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SROCE_24BIT_MASK;
}

static inline bool sroce_bth_ackreq(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_BTH_ACKREQ;
}

static inline u32 sroce_bth_psn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_24BIT_MASK;
}

/* Retransmission rewrites PSN/AckReq in an already built header. */
static inline void sroce_bth_set_psn(struct sroce_bth *bth, u32 psn,
				     bool ackreq)
{
	bth->apsn = cpu_to_be32((psn & SROCE_24BIT_MASK) |
				(ackreq ? SROCE_BTH_ACKREQ : 0));
}

/* Number of pad bytes that round a payload up to a 4-byte multiple. */
static inline u8 sroce_pad_for(u32 payload_len)
{
	return (u8)(-payload_len & 3);
}

/*
 * AETH syndrome: the top three bits give the kind, the low five bits its
 * argument (credit count for ACK, timer for RNR NAK, code for NAK).
 */
enum {
	SROCE_AETH_TYPE_MASK		= 0xe0,
	SROCE_AETH_VALUE_MASK		= 0x1f,
	SROCE_AETH_TYPE_ACK		= 0x00,
	SROCE_AETH_TYPE_RNR_NAK		= 0x20,
	SROCE_AETH_TYPE_RSVD		= 0x40,
	SROCE_AETH_TYPE_NAK		= 0x60,
	/* "no credit information" - what a QP without end-to-end FC sends */
	SROCE_AETH_CREDITS_INVALID	= 0x1f,
	SROCE_AETH_ACK_UNLIMITED	= SROCE_AETH_TYPE_ACK |
					  SROCE_AETH_CREDITS_INVALID,
};

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR		= 0,
	SROCE_NAK_INVALID_REQ		= 1,
	SROCE_NAK_REMOTE_ACCESS		= 2,
	SROCE_NAK_REMOTE_OP		= 3,
	SROCE_NAK_INVALID_RD_REQ	= 4,
};

static inline u8 sroce_aeth_syn_ack(u8 credits)
{
	return SROCE_AETH_TYPE_ACK | (credits & SROCE_AETH_VALUE_MASK);
}

static inline u8 sroce_aeth_syn_rnr(u8 timer)
{
	return SROCE_AETH_TYPE_RNR_NAK | (timer & SROCE_AETH_VALUE_MASK);
}

static inline u8 sroce_aeth_syn_nak(enum sroce_nak_code code)
{
	return SROCE_AETH_TYPE_NAK | ((u8)code & SROCE_AETH_VALUE_MASK);
}

static inline u8 sroce_aeth_syn_type(u8 syn)
{
	return syn & SROCE_AETH_TYPE_MASK;
}

static inline u8 sroce_aeth_syn_value(u8 syn)
{
	return syn & SROCE_AETH_VALUE_MASK;
}

static inline u32 sroce_aeth_pack(u8 syn, u32 msn)
{
	return ((u32)syn << 24) | (msn & SROCE_24BIT_MASK);
}

/*
 * RNR NAK timer field (IBA Table 45) in microseconds. Code 0 is the
 * longest delay, not the shortest.
 */
static inline u32 sroce_rnr_timer_usec(u8 timer)
{
	static const u32 usec[32] = {
		655360,     10,     20,     30,     40,     60,     80,    120,
		   160,    240,    320,    480,    640,    960,   1280,   1920,
		  2560,   3840,   5120,   7680,  10240,  15360,  20480,  30720,
		 40960,  61440,  81920, 122880, 163840, 245760, 327680, 491520,
	};

	return usec[timer & SROCE_AETH_VALUE_MASK];
}

#endif /* SROCE_WIRE_H */
