/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Opcode table, stateless packet parser and header builder for the
 * RoCEv2 transport. Shared by the kernel module and host-side tests.
 */
#ifndef SROCE_PKT_H
#define SROCE_PKT_H

#include "sroce_pure.h"
#include "sroce_wire.h"
#include "sroce_keys.h"

enum sroce_qpt {
	SROCE_QPT_NONE = 0,
	SROCE_QPT_RC,
	SROCE_QPT_UC,
	SROCE_QPT_UD,
	SROCE_QPT_XRC,
};

/* Extension headers that may follow the BTH. */
enum {
	SROCE_XH_DETH		= 1 << 0,
	SROCE_XH_RETH		= 1 << 1,
	SROCE_XH_ATMETH		= 1 << 2,
	SROCE_XH_AETH		= 1 << 3,
	SROCE_XH_ATMACK		= 1 << 4,
	SROCE_XH_IMMDT		= 1 << 5,
	SROCE_XH_IETH		= 1 << 6,
	SROCE_XH_FETH		= 1 << 7,
	SROCE_XH_XRCETH		= 1 << 8,
};

/* Per-opcode properties. ONLY packets carry both FIRST and LAST. */
enum {
	SROCE_OPF_VALID		= 1 << 0,
	SROCE_OPF_PAYLOAD	= 1 << 1,	/* may carry payload */
	SROCE_OPF_FIRST		= 1 << 2,
	SROCE_OPF_MIDDLE	= 1 << 3,
	SROCE_OPF_LAST		= 1 << 4,
	SROCE_OPF_REQ		= 1 << 5,	/* requester -> responder */
	SROCE_OPF_RESP		= 1 << 6,	/* responder -> requester */
	SROCE_OPF_SEND		= 1 << 7,
	SROCE_OPF_WRITE		= 1 << 8,
	SROCE_OPF_READ		= 1 << 9,	/* read request or response */
	SROCE_OPF_ATOMIC	= 1 << 10,	/* atomic request or ack */
	SROCE_OPF_NEEDS_ACK	= 1 << 11,	/* RC request: responder acks */
	SROCE_OPF_IMM		= 1 << 12,
	SROCE_OPF_INV		= 1 << 13,
	/* consumes a receive WQE at the responder */
	SROCE_OPF_RECV_WQE	= 1 << 14,
	/* completes a receive WQE at the responder */
	SROCE_OPF_RECV_COMP	= 1 << 15,
	/*
	 * FLUSH and ATOMIC WRITE requests: one PSN, answered by an empty
	 * READ response (IBA annex A19), never executed twice.
	 */
	SROCE_OPF_FLUSH		= 1 << 16,
	SROCE_OPF_ATOMIC_WRITE	= 1 << 17,
	SROCE_OPF_ONLY		= SROCE_OPF_FIRST | SROCE_OPF_LAST,
};

/* Longest BTH + extension headers of any opcode (XRC atomic requests). */
#define SROCE_MAX_HDR_LEN	(SROCE_BTH_LEN + SROCE_XRCETH_LEN + \
				 SROCE_ATMETH_LEN)

struct sroce_opcode_info {
	const char *name;
	u32 flags;		/* SROCE_OPF_* */
	u16 xhdrs;		/* SROCE_XH_* */
	u8 qpt;			/* enum sroce_qpt */
	u8 hdr_len;		/* BTH plus all extension headers */
};

extern const struct sroce_opcode_info sroce_opcode_table[256];

static inline const struct sroce_opcode_info *sroce_opcode_info(u8 opcode)
{
	return &sroce_opcode_table[opcode];
}

static inline bool sroce_opcode_valid(u8 opcode)
{
	return sroce_opcode_table[opcode].flags & SROCE_OPF_VALID;
}

/*
 * Header fields in host order (ImmDt stays in network order, like the
 * verbs imm_data it comes from and goes to). Fields of extension headers
 * the opcode does not have are zero after a parse and ignored by a build.
 */
struct sroce_pkt_hdrs {
	u8 opcode;
	u8 pad;
	bool se;
	bool migreq;
	bool fecn;
	bool becn;
	bool ackreq;
	u16 pkey;
	u32 qpn;
	u32 psn;

	u32 xrc_srqn;		/* XRC requests: the target's XRC SRQ */

	u64 reth_va;
	u32 reth_rkey;
	u32 reth_len;

	u8 aeth_syn;
	u32 aeth_msn;

	u32 deth_qkey;
	u32 deth_sqp;

	__be32 imm;

	u32 ieth_rkey;

	u64 atm_va;
	u32 atm_rkey;
	u64 atm_swap_add;
	u64 atm_compare;

	u64 atmack_orig;

	u8 feth_plt;		/* SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT */
	u8 feth_sel;		/* SROCE_FLUSH_SEL_* */
};

struct sroce_pkt {
	struct sroce_pkt_hdrs h;
	const struct sroce_opcode_info *info;
	u32 len;		/* BTH through ICRC, as passed in */
	u32 hdr_len;
	u32 payload_off;	/* from the start of the BTH */
	u32 payload_len;	/* excluding pad */
	u32 icrc_off;		/* from the start of the BTH */
};

/*
 * sroce_pkt_parse() - validate and decode one transport packet.
 * @bth: first byte of the BTH
 * @len: bytes from the BTH through the end of the ICRC (UDP payload)
 * @pkt: output; zeroed first
 *
 * Reads only bytes inside [bth, bth + min(len, opcode header length)):
 * never the payload, pad or ICRC, so only the headers need be linear.
 * The ICRC is not checked here.
 *
 * Return: 0 on success; -EINVAL for a malformed packet (truncated, bad
 * TVer, pad or length alignment), which must be dropped silently;
 * -EOPNOTSUPP for an opcode this transport does not implement (dropped);
 * -EBADMSG when the headers are well formed and fully decoded into @pkt
 * but the payload length breaks the opcode's rules, so an RC responder
 * may answer with an Invalid Request NAK.
 */
int sroce_pkt_parse(const void *bth, u32 len, struct sroce_pkt *pkt);

/*
 * sroce_pkt_build() - write BTH and extension headers for @h->opcode.
 *
 * The caller appends payload, @h->pad zero bytes and the ICRC.
 *
 * Return: header length written, -EINVAL for an unknown opcode or a field
 * that does not fit its wire width, -ENOSPC if @buflen is too small.
 */
int sroce_pkt_build(void *buf, u32 buflen, const struct sroce_pkt_hdrs *h);

/* Remote access right an incoming request needs on its R_Key's region. */
static inline u32 sroce_opcode_remote_access(u8 opcode)
{
	u32 fl = sroce_opcode_table[opcode].flags;

	if (!(fl & SROCE_OPF_REQ))
		return 0;
	if (fl & (SROCE_OPF_WRITE | SROCE_OPF_ATOMIC_WRITE))
		return SROCE_ACCESS_REMOTE_WRITE;
	if (fl & SROCE_OPF_READ)
		return SROCE_ACCESS_REMOTE_READ;
	if (fl & SROCE_OPF_ATOMIC)
		return SROCE_ACCESS_REMOTE_ATOMIC;
	return 0;
}

/* Length the transport part (BTH..ICRC) of a packet will have. */
static inline u32 sroce_pkt_wire_len(u8 opcode, u32 payload_len)
{
	return sroce_opcode_table[opcode].hdr_len + payload_len +
	       sroce_pad_for(payload_len) + SROCE_ICRC_LEN;
}

#endif /* SROCE_PKT_H */
