// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Opcode table, stateless packet parser and header builder.
 *
 * Nothing here may depend on QP or device state: the same code runs in
 * the kernel and under host fuzzers.
 */
#include "sroce_pkt.h"

#define XH_LEN(x)							\
	((((x) & SROCE_XH_DETH) ? SROCE_DETH_LEN : 0) +			\
	 (((x) & SROCE_XH_RETH) ? SROCE_RETH_LEN : 0) +			\
	 (((x) & SROCE_XH_ATMETH) ? SROCE_ATMETH_LEN : 0) +		\
	 (((x) & SROCE_XH_AETH) ? SROCE_AETH_LEN : 0) +			\
	 (((x) & SROCE_XH_ATMACK) ? SROCE_ATMACK_LEN : 0) +		\
	 (((x) & SROCE_XH_IMMDT) ? SROCE_IMMDT_LEN : 0) +		\
	 (((x) & SROCE_XH_IETH) ? SROCE_IETH_LEN : 0) +			\
	 (((x) & SROCE_XH_FETH) ? SROCE_FETH_LEN : 0) +			\
	 (((x) & SROCE_XH_XRCETH) ? SROCE_XRCETH_LEN : 0))

#define OPE(op, type, xh, fl)						\
	[op] = {							\
		.name = #op,						\
		.flags = SROCE_OPF_VALID | (fl),			\
		.xhdrs = (xh),						\
		.qpt = (type),						\
		.hdr_len = SROCE_BTH_LEN + XH_LEN(xh),			\
	}

/* Flag sets shared by the RC and UC flavours of an operation. */
#define F_SEND		(SROCE_OPF_PAYLOAD | SROCE_OPF_REQ | SROCE_OPF_SEND)
#define F_WRITE		(SROCE_OPF_PAYLOAD | SROCE_OPF_REQ | SROCE_OPF_WRITE)
#define F_SEND_FIRST	(F_SEND | SROCE_OPF_FIRST | SROCE_OPF_RECV_WQE)
#define F_SEND_MIDDLE	(F_SEND | SROCE_OPF_MIDDLE)
#define F_SEND_LAST	(F_SEND | SROCE_OPF_LAST | SROCE_OPF_RECV_COMP)
#define F_SEND_ONLY	(F_SEND | SROCE_OPF_ONLY | SROCE_OPF_RECV_WQE |	\
			 SROCE_OPF_RECV_COMP)
#define F_WRITE_IMM	(SROCE_OPF_IMM | SROCE_OPF_RECV_WQE |		\
			 SROCE_OPF_RECV_COMP)
#define F_READ_RESP	(SROCE_OPF_PAYLOAD | SROCE_OPF_RESP | SROCE_OPF_READ)
#define ACKD		SROCE_OPF_NEEDS_ACK

/*
 * XRC's operations are RC's with, in requests, an XRCETH right behind the
 * BTH; the unit test holds each to its RC twin.
 */
#define OPX(op, xh, fl)							\
	OPE(SROCE_XRC_##op, XRC,					\
	    (xh) | (((fl) & SROCE_OPF_REQ) ? SROCE_XH_XRCETH : 0), fl)

#define RC		SROCE_QPT_RC
#define XRC		SROCE_QPT_XRC
#define UC		SROCE_QPT_UC
#define UD		SROCE_QPT_UD

const struct sroce_opcode_info sroce_opcode_table[256] = {
	OPE(SROCE_RC_SEND_FIRST, RC, 0, F_SEND_FIRST | ACKD),
	OPE(SROCE_RC_SEND_MIDDLE, RC, 0, F_SEND_MIDDLE | ACKD),
	OPE(SROCE_RC_SEND_LAST, RC, 0, F_SEND_LAST | ACKD),
	OPE(SROCE_RC_SEND_LAST_IMM, RC, SROCE_XH_IMMDT,
	    F_SEND_LAST | SROCE_OPF_IMM | ACKD),
	OPE(SROCE_RC_SEND_ONLY, RC, 0, F_SEND_ONLY | ACKD),
	OPE(SROCE_RC_SEND_ONLY_IMM, RC, SROCE_XH_IMMDT,
	    F_SEND_ONLY | SROCE_OPF_IMM | ACKD),
	OPE(SROCE_RC_WRITE_FIRST, RC, SROCE_XH_RETH,
	    F_WRITE | SROCE_OPF_FIRST | ACKD),
	OPE(SROCE_RC_WRITE_MIDDLE, RC, 0, F_WRITE | SROCE_OPF_MIDDLE | ACKD),
	OPE(SROCE_RC_WRITE_LAST, RC, 0, F_WRITE | SROCE_OPF_LAST | ACKD),
	OPE(SROCE_RC_WRITE_LAST_IMM, RC, SROCE_XH_IMMDT,
	    F_WRITE | SROCE_OPF_LAST | F_WRITE_IMM | ACKD),
	OPE(SROCE_RC_WRITE_ONLY, RC, SROCE_XH_RETH,
	    F_WRITE | SROCE_OPF_ONLY | ACKD),
	OPE(SROCE_RC_WRITE_ONLY_IMM, RC, SROCE_XH_RETH | SROCE_XH_IMMDT,
	    F_WRITE | SROCE_OPF_ONLY | F_WRITE_IMM | ACKD),
	OPE(SROCE_RC_READ_REQUEST, RC, SROCE_XH_RETH,
	    SROCE_OPF_REQ | SROCE_OPF_READ | SROCE_OPF_ONLY | ACKD),
	OPE(SROCE_RC_READ_RESP_FIRST, RC, SROCE_XH_AETH,
	    F_READ_RESP | SROCE_OPF_FIRST),
	OPE(SROCE_RC_READ_RESP_MIDDLE, RC, 0, F_READ_RESP | SROCE_OPF_MIDDLE),
	OPE(SROCE_RC_READ_RESP_LAST, RC, SROCE_XH_AETH,
	    F_READ_RESP | SROCE_OPF_LAST),
	OPE(SROCE_RC_READ_RESP_ONLY, RC, SROCE_XH_AETH,
	    F_READ_RESP | SROCE_OPF_ONLY),
	OPE(SROCE_RC_ACK, RC, SROCE_XH_AETH, SROCE_OPF_RESP | SROCE_OPF_ONLY),
	OPE(SROCE_RC_ATOMIC_ACK, RC, SROCE_XH_AETH | SROCE_XH_ATMACK,
	    SROCE_OPF_RESP | SROCE_OPF_ATOMIC | SROCE_OPF_ONLY),
	OPE(SROCE_RC_CMP_SWAP, RC, SROCE_XH_ATMETH,
	    SROCE_OPF_REQ | SROCE_OPF_ATOMIC | SROCE_OPF_ONLY | ACKD),
	OPE(SROCE_RC_FETCH_ADD, RC, SROCE_XH_ATMETH,
	    SROCE_OPF_REQ | SROCE_OPF_ATOMIC | SROCE_OPF_ONLY | ACKD),
	OPE(SROCE_RC_SEND_LAST_INV, RC, SROCE_XH_IETH,
	    F_SEND_LAST | SROCE_OPF_INV | ACKD),
	OPE(SROCE_RC_SEND_ONLY_INV, RC, SROCE_XH_IETH,
	    F_SEND_ONLY | SROCE_OPF_INV | ACKD),
	OPE(SROCE_RC_FLUSH, RC, SROCE_XH_FETH | SROCE_XH_RETH,
	    SROCE_OPF_REQ | SROCE_OPF_FLUSH | SROCE_OPF_ONLY | ACKD),
	OPE(SROCE_RC_ATOMIC_WRITE, RC, SROCE_XH_RETH,
	    SROCE_OPF_PAYLOAD | SROCE_OPF_REQ | SROCE_OPF_ATOMIC_WRITE |
	    SROCE_OPF_ONLY | ACKD),

	OPX(SEND_FIRST, 0, F_SEND_FIRST | ACKD),
	OPX(SEND_MIDDLE, 0, F_SEND_MIDDLE | ACKD),
	OPX(SEND_LAST, 0, F_SEND_LAST | ACKD),
	OPX(SEND_LAST_IMM, SROCE_XH_IMMDT,
	    F_SEND_LAST | SROCE_OPF_IMM | ACKD),
	OPX(SEND_ONLY, 0, F_SEND_ONLY | ACKD),
	OPX(SEND_ONLY_IMM, SROCE_XH_IMMDT,
	    F_SEND_ONLY | SROCE_OPF_IMM | ACKD),
	OPX(WRITE_FIRST, SROCE_XH_RETH,
	    F_WRITE | SROCE_OPF_FIRST | ACKD),
	OPX(WRITE_MIDDLE, 0, F_WRITE | SROCE_OPF_MIDDLE | ACKD),
	OPX(WRITE_LAST, 0, F_WRITE | SROCE_OPF_LAST | ACKD),
	OPX(WRITE_LAST_IMM, SROCE_XH_IMMDT,
	    F_WRITE | SROCE_OPF_LAST | F_WRITE_IMM | ACKD),
	OPX(WRITE_ONLY, SROCE_XH_RETH,
	    F_WRITE | SROCE_OPF_ONLY | ACKD),
	OPX(WRITE_ONLY_IMM, SROCE_XH_RETH | SROCE_XH_IMMDT,
	    F_WRITE | SROCE_OPF_ONLY | F_WRITE_IMM | ACKD),
	OPX(READ_REQUEST, SROCE_XH_RETH,
	    SROCE_OPF_REQ | SROCE_OPF_READ | SROCE_OPF_ONLY | ACKD),
	OPX(READ_RESP_FIRST, SROCE_XH_AETH,
	    F_READ_RESP | SROCE_OPF_FIRST),
	OPX(READ_RESP_MIDDLE, 0, F_READ_RESP | SROCE_OPF_MIDDLE),
	OPX(READ_RESP_LAST, SROCE_XH_AETH,
	    F_READ_RESP | SROCE_OPF_LAST),
	OPX(READ_RESP_ONLY, SROCE_XH_AETH,
	    F_READ_RESP | SROCE_OPF_ONLY),
	OPX(ACK, SROCE_XH_AETH, SROCE_OPF_RESP | SROCE_OPF_ONLY),
	OPX(ATOMIC_ACK, SROCE_XH_AETH | SROCE_XH_ATMACK,
	    SROCE_OPF_RESP | SROCE_OPF_ATOMIC | SROCE_OPF_ONLY),
	OPX(CMP_SWAP, SROCE_XH_ATMETH,
	    SROCE_OPF_REQ | SROCE_OPF_ATOMIC | SROCE_OPF_ONLY | ACKD),
	OPX(FETCH_ADD, SROCE_XH_ATMETH,
	    SROCE_OPF_REQ | SROCE_OPF_ATOMIC | SROCE_OPF_ONLY | ACKD),
	OPX(SEND_LAST_INV, SROCE_XH_IETH,
	    F_SEND_LAST | SROCE_OPF_INV | ACKD),
	OPX(SEND_ONLY_INV, SROCE_XH_IETH,
	    F_SEND_ONLY | SROCE_OPF_INV | ACKD),

	OPE(SROCE_UC_SEND_FIRST, UC, 0, F_SEND_FIRST),
	OPE(SROCE_UC_SEND_MIDDLE, UC, 0, F_SEND_MIDDLE),
	OPE(SROCE_UC_SEND_LAST, UC, 0, F_SEND_LAST),
	OPE(SROCE_UC_SEND_LAST_IMM, UC, SROCE_XH_IMMDT,
	    F_SEND_LAST | SROCE_OPF_IMM),
	OPE(SROCE_UC_SEND_ONLY, UC, 0, F_SEND_ONLY),
	OPE(SROCE_UC_SEND_ONLY_IMM, UC, SROCE_XH_IMMDT,
	    F_SEND_ONLY | SROCE_OPF_IMM),
	OPE(SROCE_UC_WRITE_FIRST, UC, SROCE_XH_RETH, F_WRITE | SROCE_OPF_FIRST),
	OPE(SROCE_UC_WRITE_MIDDLE, UC, 0, F_WRITE | SROCE_OPF_MIDDLE),
	OPE(SROCE_UC_WRITE_LAST, UC, 0, F_WRITE | SROCE_OPF_LAST),
	OPE(SROCE_UC_WRITE_LAST_IMM, UC, SROCE_XH_IMMDT,
	    F_WRITE | SROCE_OPF_LAST | F_WRITE_IMM),
	OPE(SROCE_UC_WRITE_ONLY, UC, SROCE_XH_RETH, F_WRITE | SROCE_OPF_ONLY),
	OPE(SROCE_UC_WRITE_ONLY_IMM, UC, SROCE_XH_RETH | SROCE_XH_IMMDT,
	    F_WRITE | SROCE_OPF_ONLY | F_WRITE_IMM),

	OPE(SROCE_UD_SEND_ONLY, UD, SROCE_XH_DETH, F_SEND_ONLY),
	OPE(SROCE_UD_SEND_ONLY_IMM, UD, SROCE_XH_DETH | SROCE_XH_IMMDT,
	    F_SEND_ONLY | SROCE_OPF_IMM),
};

/*
 * Length rules every opcode imposes on its payload. FIRST and MIDDLE
 * packets are exactly one PMTU, hence non-empty and never padded; a LAST
 * packet carries the 1..PMTU byte remainder of a longer message.
 */
static int sroce_pkt_check_payload(const struct sroce_pkt *pkt)
{
	u32 fl = pkt->info->flags;

	if (!(fl & SROCE_OPF_PAYLOAD))
		return (pkt->payload_len || pkt->h.pad) ? -EBADMSG : 0;
	/* an ATOMIC WRITE carries exactly the 8 bytes it stores */
	if (fl & SROCE_OPF_ATOMIC_WRITE)
		return (pkt->payload_len != 8 || pkt->h.pad ||
			pkt->h.reth_len != 8) ? -EBADMSG : 0;
	if ((fl & SROCE_OPF_ONLY) == SROCE_OPF_ONLY)
		return 0;
	if (!pkt->payload_len)
		return -EBADMSG;
	if (!(fl & SROCE_OPF_LAST) && pkt->h.pad)
		return -EBADMSG;
	return 0;
}

int sroce_pkt_parse(const void *buf, u32 len, struct sroce_pkt *pkt)
{
	const struct sroce_bth *bth = buf;
	const struct sroce_opcode_info *info;
	const u8 *p = buf;
	u32 off, avail;
	u16 xh;

	memset(pkt, 0, sizeof(*pkt));

	if (unlikely(len < SROCE_BTH_LEN + SROCE_ICRC_LEN))
		return -EINVAL;

	info = sroce_opcode_info(bth->opcode);
	if (unlikely(!(info->flags & SROCE_OPF_VALID)))
		return -EOPNOTSUPP;
	if (unlikely(sroce_bth_tver(bth) != SROCE_TVER))
		return -EINVAL;
	/* headers are word multiples and pad completes the last word */
	if (unlikely(len & 3))
		return -EINVAL;
	if (unlikely(len < (u32)info->hdr_len + SROCE_ICRC_LEN))
		return -EINVAL;
	avail = len - info->hdr_len - SROCE_ICRC_LEN;
	if (unlikely(sroce_bth_pad(bth) > avail))
		return -EINVAL;

	pkt->info = info;
	pkt->len = len;
	pkt->hdr_len = info->hdr_len;
	pkt->payload_off = info->hdr_len;
	pkt->h.pad = sroce_bth_pad(bth);
	pkt->payload_len = avail - pkt->h.pad;
	pkt->icrc_off = len - SROCE_ICRC_LEN;

	pkt->h.opcode = bth->opcode;
	pkt->h.se = sroce_bth_se(bth);
	pkt->h.migreq = sroce_bth_migreq(bth);
	pkt->h.pkey = sroce_bth_pkey(bth);
	pkt->h.fecn = sroce_bth_fecn(bth);
	pkt->h.becn = sroce_bth_becn(bth);
	pkt->h.qpn = sroce_bth_qpn(bth);
	pkt->h.ackreq = sroce_bth_ackreq(bth);
	pkt->h.psn = sroce_bth_psn(bth);

	/* IBA 9.2 fixes the order in which extension headers appear. */
	xh = info->xhdrs;
	off = SROCE_BTH_LEN;
	if (xh & SROCE_XH_XRCETH) {
		const struct sroce_xrceth *x = (const void *)(p + off);

		/* bits 31:24 are reserved: ignored on receive */
		pkt->h.xrc_srqn = be32_to_cpu(x->srqn) & SROCE_24BIT_MASK;
		off += SROCE_XRCETH_LEN;
	}
	if (xh & SROCE_XH_FETH) {
		const struct sroce_feth *f = (const void *)(p + off);
		u32 bits = be32_to_cpu(f->bits);

		/* bits 31:6 are reserved: ignored on receive */
		pkt->h.feth_plt = bits & SROCE_FETH_PLT_MASK;
		pkt->h.feth_sel = (bits & SROCE_FETH_SEL_MASK) >>
				  SROCE_FETH_SEL_SHIFT;
		off += SROCE_FETH_LEN;
	}
	if (xh & SROCE_XH_DETH) {
		const struct sroce_deth *d = (const void *)(p + off);

		pkt->h.deth_qkey = be32_to_cpu(d->qkey);
		pkt->h.deth_sqp = be32_to_cpu(d->sqp) & SROCE_24BIT_MASK;
		off += SROCE_DETH_LEN;
	}
	if (xh & SROCE_XH_RETH) {
		const struct sroce_reth *r = (const void *)(p + off);

		pkt->h.reth_va = be64_to_cpu(r->va);
		pkt->h.reth_rkey = be32_to_cpu(r->rkey);
		pkt->h.reth_len = be32_to_cpu(r->dma_len);
		off += SROCE_RETH_LEN;
	}
	if (xh & SROCE_XH_ATMETH) {
		const struct sroce_atmeth *a = (const void *)(p + off);

		pkt->h.atm_va = be64_to_cpu(a->va);
		pkt->h.atm_rkey = be32_to_cpu(a->rkey);
		pkt->h.atm_swap_add = be64_to_cpu(a->swap_add);
		pkt->h.atm_compare = be64_to_cpu(a->compare);
		off += SROCE_ATMETH_LEN;
	}
	if (xh & SROCE_XH_AETH) {
		const struct sroce_aeth *a = (const void *)(p + off);
		u32 smsn = be32_to_cpu(a->smsn);

		pkt->h.aeth_syn = smsn >> 24;
		pkt->h.aeth_msn = smsn & SROCE_24BIT_MASK;
		off += SROCE_AETH_LEN;
	}
	if (xh & SROCE_XH_ATMACK) {
		const struct sroce_atmack *a = (const void *)(p + off);

		pkt->h.atmack_orig = be64_to_cpu(a->orig);
		off += SROCE_ATMACK_LEN;
	}
	if (xh & SROCE_XH_IMMDT) {
		const struct sroce_immdt *i = (const void *)(p + off);

		pkt->h.imm = i->imm;
		off += SROCE_IMMDT_LEN;
	}
	if (xh & SROCE_XH_IETH) {
		const struct sroce_ieth *i = (const void *)(p + off);

		pkt->h.ieth_rkey = be32_to_cpu(i->rkey);
		off += SROCE_IETH_LEN;
	}
	return sroce_pkt_check_payload(pkt);
}

int sroce_pkt_build(void *buf, u32 buflen, const struct sroce_pkt_hdrs *h)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(h->opcode);
	struct sroce_bth *bth = buf;
	u8 *p = buf;
	u32 off;
	u16 xh;

	if (!(info->flags & SROCE_OPF_VALID))
		return -EINVAL;
	if (h->pad > 3 || h->qpn > SROCE_24BIT_MASK ||
	    h->psn > SROCE_24BIT_MASK)
		return -EINVAL;
	xh = info->xhdrs;
	if ((xh & SROCE_XH_AETH) && h->aeth_msn > SROCE_24BIT_MASK)
		return -EINVAL;
	if ((xh & SROCE_XH_DETH) && h->deth_sqp > SROCE_24BIT_MASK)
		return -EINVAL;
	if ((xh & SROCE_XH_XRCETH) && h->xrc_srqn > SROCE_24BIT_MASK)
		return -EINVAL;
	if ((xh & SROCE_XH_FETH) &&
	    (h->feth_plt > SROCE_FETH_PLT_MASK ||
	     h->feth_sel > (SROCE_FETH_SEL_MASK >> SROCE_FETH_SEL_SHIFT)))
		return -EINVAL;
	if (buflen < info->hdr_len)
		return -ENOSPC;

	bth->opcode = h->opcode;
	bth->flags = (h->se ? SROCE_BTH_SE : 0) |
		     (h->migreq ? SROCE_BTH_MIG : 0) |
		     (h->pad << SROCE_BTH_PAD_SHIFT) | SROCE_TVER;
	bth->pkey = cpu_to_be16(h->pkey);
	bth->qpn = cpu_to_be32(h->qpn | (h->fecn ? SROCE_BTH_FECN : 0) |
			       (h->becn ? SROCE_BTH_BECN : 0));
	sroce_bth_set_psn(bth, h->psn, h->ackreq);

	off = SROCE_BTH_LEN;
	if (xh & SROCE_XH_XRCETH) {
		struct sroce_xrceth *x = (void *)(p + off);

		x->srqn = cpu_to_be32(h->xrc_srqn);
		off += SROCE_XRCETH_LEN;
	}
	if (xh & SROCE_XH_FETH) {
		struct sroce_feth *f = (void *)(p + off);

		f->bits = cpu_to_be32(h->feth_plt |
				      (u32)h->feth_sel << SROCE_FETH_SEL_SHIFT);
		off += SROCE_FETH_LEN;
	}
	if (xh & SROCE_XH_DETH) {
		struct sroce_deth *d = (void *)(p + off);

		d->qkey = cpu_to_be32(h->deth_qkey);
		d->sqp = cpu_to_be32(h->deth_sqp);
		off += SROCE_DETH_LEN;
	}
	if (xh & SROCE_XH_RETH) {
		struct sroce_reth *r = (void *)(p + off);

		r->va = cpu_to_be64(h->reth_va);
		r->rkey = cpu_to_be32(h->reth_rkey);
		r->dma_len = cpu_to_be32(h->reth_len);
		off += SROCE_RETH_LEN;
	}
	if (xh & SROCE_XH_ATMETH) {
		struct sroce_atmeth *a = (void *)(p + off);

		a->va = cpu_to_be64(h->atm_va);
		a->rkey = cpu_to_be32(h->atm_rkey);
		a->swap_add = cpu_to_be64(h->atm_swap_add);
		a->compare = cpu_to_be64(h->atm_compare);
		off += SROCE_ATMETH_LEN;
	}
	if (xh & SROCE_XH_AETH) {
		struct sroce_aeth *a = (void *)(p + off);

		a->smsn = cpu_to_be32(sroce_aeth_pack(h->aeth_syn,
						      h->aeth_msn));
		off += SROCE_AETH_LEN;
	}
	if (xh & SROCE_XH_ATMACK) {
		struct sroce_atmack *a = (void *)(p + off);

		a->orig = cpu_to_be64(h->atmack_orig);
		off += SROCE_ATMACK_LEN;
	}
	if (xh & SROCE_XH_IMMDT) {
		struct sroce_immdt *i = (void *)(p + off);

		i->imm = h->imm;
		off += SROCE_IMMDT_LEN;
	}
	if (xh & SROCE_XH_IETH) {
		struct sroce_ieth *i = (void *)(p + off);

		i->rkey = cpu_to_be32(h->ieth_rkey);
		off += SROCE_IETH_LEN;
	}

	return off;
}
