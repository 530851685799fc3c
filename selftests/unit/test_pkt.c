// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Opcode table, parser and builder tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sroce_pkt.h"
#include "tap.h"

/* Every opcode the spec defines for RC, UC and UD, with its header size. */
static const struct {
	u8 op;
	u8 hdr_len;
} expected_ops[] = {
	{ 0x00, 12 }, { 0x01, 12 }, { 0x02, 12 }, { 0x03, 16 }, { 0x04, 12 },
	{ 0x05, 16 }, { 0x06, 28 }, { 0x07, 12 }, { 0x08, 12 }, { 0x09, 16 },
	{ 0x0a, 28 }, { 0x0b, 32 }, { 0x0c, 28 }, { 0x0d, 16 }, { 0x0e, 12 },
	{ 0x0f, 16 }, { 0x10, 16 }, { 0x11, 16 }, { 0x12, 24 }, { 0x13, 40 },
	{ 0x14, 40 }, { 0x16, 16 }, { 0x17, 16 }, { 0x1c, 32 }, { 0x1d, 28 },
	{ 0x20, 12 }, { 0x21, 12 }, { 0x22, 12 }, { 0x23, 16 }, { 0x24, 12 },
	{ 0x25, 16 }, { 0x26, 28 }, { 0x27, 12 }, { 0x28, 12 }, { 0x29, 16 },
	{ 0x2a, 28 }, { 0x2b, 32 },
	{ 0x64, 20 }, { 0x65, 24 },
	/* XRC: RC's headers, and an XRCETH in requests */
	{ 0xa0, 16 }, { 0xa1, 16 }, { 0xa2, 16 }, { 0xa3, 20 }, { 0xa4, 16 },
	{ 0xa5, 20 }, { 0xa6, 32 }, { 0xa7, 16 }, { 0xa8, 16 }, { 0xa9, 20 },
	{ 0xaa, 32 }, { 0xab, 36 }, { 0xac, 32 }, { 0xad, 16 }, { 0xae, 12 },
	{ 0xaf, 16 }, { 0xb0, 16 }, { 0xb1, 16 }, { 0xb2, 24 }, { 0xb3, 44 },
	{ 0xb4, 44 }, { 0xb6, 20 }, { 0xb7, 20 },
};

static unsigned int xh_len(u16 xh)
{
	return (xh & SROCE_XH_DETH ? 8 : 0) + (xh & SROCE_XH_RETH ? 16 : 0) +
	       (xh & SROCE_XH_ATMETH ? 28 : 0) + (xh & SROCE_XH_AETH ? 4 : 0) +
	       (xh & SROCE_XH_ATMACK ? 8 : 0) + (xh & SROCE_XH_IMMDT ? 4 : 0) +
	       (xh & SROCE_XH_IETH ? 4 : 0) + (xh & SROCE_XH_FETH ? 4 : 0) +
	       (xh & SROCE_XH_XRCETH ? 4 : 0);
}

static void test_table(void)
{
	unsigned int nvalid = 0, bad_len = 0, bad_consist = 0, i;
	int expected[256] = { 0 };

	for (i = 0; i < ARRAY_SIZE(expected_ops); i++)
		expected[expected_ops[i].op] = expected_ops[i].hdr_len;

	for (i = 0; i < 256; i++) {
		const struct sroce_opcode_info *in = sroce_opcode_info(i);
		u32 f = in->flags;
		u8 svc = i & SROCE_OPC_SERVICE_MASK, op = i & 0x1f;
		int ok = 1;

		if (!(f & SROCE_OPF_VALID)) {
			if (expected[i])
				tap_ok(0, "opcode 0x%02x should be valid", i);
			continue;
		}
		nvalid++;
		if (!expected[i]) {
			tap_ok(0, "opcode 0x%02x should be invalid", i);
			continue;
		}
		if (in->hdr_len != expected[i] ||
		    in->hdr_len != 12 + xh_len(in->xhdrs))
			bad_len++;

		ok &= in->qpt == (svc == 0x00 ? SROCE_QPT_RC :
				  svc == 0x20 ? SROCE_QPT_UC :
				  svc == 0xa0 ? SROCE_QPT_XRC : SROCE_QPT_UD);
		ok &= !(in->qpt == SROCE_QPT_XRC && (f & SROCE_OPF_REQ)) ==
		      !(in->xhdrs & SROCE_XH_XRCETH);
		/* an XRC opcode is its RC twin but for the XRCETH */
		if (in->qpt == SROCE_QPT_XRC) {
			const struct sroce_opcode_info *rc =
				sroce_opcode_info(op);

			ok &= rc->flags == f &&
			      rc->xhdrs == (in->xhdrs & ~SROCE_XH_XRCETH);
		}
		ok &= !(f & SROCE_OPF_REQ) != !(f & SROCE_OPF_RESP);
		ok &= !!(f & SROCE_OPF_MIDDLE) !=
		      !!(f & (SROCE_OPF_FIRST | SROCE_OPF_LAST));
		ok &= !(f & SROCE_OPF_IMM) == !(in->xhdrs & SROCE_XH_IMMDT);
		ok &= !(f & SROCE_OPF_INV) == !(in->xhdrs & SROCE_XH_IETH);
		ok &= !(in->qpt == SROCE_QPT_UD) ==
		      !(in->xhdrs & SROCE_XH_DETH);
		ok &= !((in->qpt == SROCE_QPT_RC || in->qpt == SROCE_QPT_XRC) &&
			(f & SROCE_OPF_REQ)) == !(f & SROCE_OPF_NEEDS_ACK);
		ok &= !((f & SROCE_OPF_ATOMIC) && (f & SROCE_OPF_REQ)) ==
		      !(in->xhdrs & SROCE_XH_ATMETH);
		ok &= !(op == SROCE_OP_ATOMIC_ACK) ==
		      !(in->xhdrs & SROCE_XH_ATMACK);
		/* AETH on every response except READ RESPONSE MIDDLE */
		ok &= !((f & SROCE_OPF_RESP) && op != SROCE_OP_READ_RESP_MIDDLE)
		      == !(in->xhdrs & SROCE_XH_AETH);
		ok &= !(op == SROCE_OP_WRITE_FIRST || op == SROCE_OP_WRITE_ONLY ||
			op == SROCE_OP_WRITE_ONLY_IMM ||
			op == SROCE_OP_READ_REQUEST || op == SROCE_OP_FLUSH ||
			op == SROCE_OP_ATOMIC_WRITE) ==
		      !(in->xhdrs & SROCE_XH_RETH);
		ok &= !(op == SROCE_OP_FLUSH) == !(in->xhdrs & SROCE_XH_FETH);
		ok &= !(op == SROCE_OP_FLUSH) == !(f & SROCE_OPF_FLUSH);
		ok &= !(op == SROCE_OP_ATOMIC_WRITE) ==
		      !(f & SROCE_OPF_ATOMIC_WRITE);
		ok &= !(op == SROCE_OP_READ_REQUEST || op == SROCE_OP_ACK ||
			op == SROCE_OP_ATOMIC_ACK || op == SROCE_OP_CMP_SWAP ||
			op == SROCE_OP_FETCH_ADD || op == SROCE_OP_FLUSH) ==
		      !!(f & SROCE_OPF_PAYLOAD);
		ok &= in->name && strncmp(in->name, "SROCE_", 6) == 0;
		if (!ok) {
			bad_consist++;
			printf("# inconsistent entry 0x%02x %s\n", i, in->name);
		}
	}
	for (i = 0; i < 256; i++)
		if (sroce_opcode_info(i)->hdr_len > SROCE_MAX_HDR_LEN)
			bad_len++;
	TAP_EQ(nvalid, ARRAY_SIZE(expected_ops), "62 valid opcodes");
	TAP_EQ(bad_len, 0, "header lengths match spec and extension headers");
	TAP_EQ(bad_consist, 0, "opcode flags are mutually consistent");

	tap_ok(!sroce_opcode_valid(0x15), "0x15 reserved");
	tap_ok(!sroce_opcode_valid(0x40), "RD not supported");
	tap_ok(!sroce_opcode_valid(0x80), "CNP not a transport opcode here");
	tap_ok(!sroce_opcode_valid(0x60), "UD SEND FIRST does not exist");
	tap_ok(sroce_opcode_info(SROCE_RC_SEND_ONLY)->flags &
	       SROCE_OPF_RECV_COMP, "SEND ONLY completes a receive");
	tap_ok(!(sroce_opcode_info(SROCE_RC_WRITE_ONLY)->flags &
		 SROCE_OPF_RECV_WQE), "WRITE ONLY consumes no receive WQE");
	tap_ok(sroce_opcode_info(SROCE_UC_WRITE_LAST_IMM)->flags &
	       SROCE_OPF_RECV_WQE, "WRITE LAST IMM consumes a receive WQE");
	TAP_EQ(sroce_opcode_remote_access(SROCE_RC_WRITE_MIDDLE),
	       SROCE_ACCESS_REMOTE_WRITE, "write needs remote write");
	TAP_EQ(sroce_opcode_remote_access(SROCE_RC_READ_REQUEST),
	       SROCE_ACCESS_REMOTE_READ, "read needs remote read");
	TAP_EQ(sroce_opcode_remote_access(SROCE_RC_FETCH_ADD),
	       SROCE_ACCESS_REMOTE_ATOMIC, "atomic needs remote atomic");
	TAP_EQ(sroce_opcode_remote_access(SROCE_RC_READ_RESP_ONLY), 0,
	       "responses need no remote access");
	TAP_EQ(sroce_pkt_wire_len(SROCE_RC_SEND_ONLY, 5), 12 + 5 + 3 + 4,
	       "wire length includes pad and ICRC");
	TAP_EQ(sroce_rnr_timer_usec(0), 655360, "RNR timer 0 is 655.36 ms");
	TAP_EQ(sroce_rnr_timer_usec(1), 10, "RNR timer 1 is 10 us");
	TAP_EQ(sroce_rnr_timer_usec(14), 1280, "RNR timer 14 is 1.28 ms");
	TAP_EQ(sroce_rnr_timer_usec(25), 61440, "RNR timer 25 is 61.44 ms");
	TAP_EQ(sroce_rnr_timer_usec(31), 491520, "RNR timer 31 is 491.52 ms");
	TAP_EQ(sroce_aeth_syn_nak(SROCE_NAK_REMOTE_ACCESS), 0x62,
	       "NAK remote access syndrome");
	TAP_EQ(sroce_aeth_syn_rnr(13), 0x2d, "RNR NAK syndrome");
	TAP_EQ(sroce_aeth_syn_ack(SROCE_AETH_CREDITS_INVALID), 0x1f,
	       "unlimited ACK syndrome");
}

/*
 * Run the parser on a private heap copy sized exactly len, so ASan reports
 * any read past the end.
 */
static int parse_exact(const u8 *bytes, u32 len, struct sroce_pkt *pkt)
{
	u8 *copy = malloc(len ? len : 1);
	int ret;

	memcpy(copy, bytes, len);
	ret = sroce_pkt_parse(copy, len, pkt);
	free(copy);
	return ret;
}

static void test_parse_hand_built(void)
{
	struct sroce_pkt p;
	int r;

	/* RC SEND ONLY, SE, pad 3, pkey 0x8001, QPN 0x000011, AckReq, PSN 5 */
	static const u8 send_only[] = {
		0x04, 0xb0, 0x80, 0x01, 0x00, 0x00, 0x00, 0x11,
		0x80, 0x00, 0x00, 0x05,
		'h', 'e', 'l', 'l', 'o', 0, 0, 0,
		0xde, 0xad, 0xbe, 0xef,
	};
	r = parse_exact(send_only, sizeof(send_only), &p);
	TAP_EQ(r, 0, "RC SEND ONLY parses");
	tap_ok(p.h.opcode == 0x04 && p.h.se && !p.h.migreq && p.h.pad == 3 &&
	       p.h.pkey == 0x8001 && p.h.qpn == 0x11 && p.h.ackreq &&
	       p.h.psn == 5 && !p.h.fecn && !p.h.becn,
	       "RC SEND ONLY BTH fields");
	tap_ok(p.payload_off == 12 && p.payload_len == 5 &&
	       p.icrc_off == 20 && p.hdr_len == 12 &&
	       memcmp(send_only + p.payload_off, "hello", 5) == 0,
	       "RC SEND ONLY payload location");

	/* RC RDMA WRITE ONLY IMM: RETH + ImmDt, FECN+BECN+MigReq */
	static const u8 write_imm[] = {
		0x0b, 0x40, 0xff, 0xff, 0xc0, 0xab, 0xcd, 0xef,
		0x00, 0xff, 0xff, 0xff,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x00, 0x04,
		0x01, 0x02, 0x03, 0x04,
		'd', 'a', 't', 'a',
		0, 0, 0, 0,
	};
	r = parse_exact(write_imm, sizeof(write_imm), &p);
	TAP_EQ(r, 0, "RC WRITE ONLY IMM parses");
	tap_ok(p.h.migreq && !p.h.se && p.h.fecn && p.h.becn &&
	       p.h.qpn == 0xabcdef && p.h.psn == 0xffffff && !p.h.ackreq,
	       "WRITE ONLY IMM BTH fields incl. FECN/BECN/24-bit PSN");
	tap_ok(p.h.reth_va == 0x1122334455667788ULL &&
	       p.h.reth_rkey == 0xaabbccdd && p.h.reth_len == 4,
	       "RETH fields");
	tap_ok(p.h.imm == cpu_to_be32(0x01020304), "ImmDt kept in wire order");
	tap_ok(p.payload_off == 32 && p.payload_len == 4 && p.h.pad == 0,
	       "WRITE ONLY IMM payload location");

	/* XRC RDMA WRITE ONLY: XRCETH (reserved byte set) before the RETH */
	static const u8 xrc_write[] = {
		0xaa, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22,
		0x00, 0x00, 0x00, 0x07,
		0xff, 0x12, 0x34, 0x56,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x00, 0x04,
		'x', 'r', 'c', '!',
		0, 0, 0, 0,
	};
	r = parse_exact(xrc_write, sizeof(xrc_write), &p);
	TAP_EQ(r, 0, "XRC WRITE ONLY parses");
	tap_ok(p.info->qpt == SROCE_QPT_XRC && p.h.xrc_srqn == 0x123456 &&
	       p.h.reth_va == 0x1122334455667788ULL &&
	       p.h.reth_rkey == 0xaabbccdd && p.h.reth_len == 4 &&
	       p.payload_off == 32 && p.payload_len == 4,
	       "XRCETH (reserved bits ignored), then RETH and payload");
	static const u8 xrc_ack[] = {
		0xb1, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22,
		0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x09,
		0, 0, 0, 0,
	};
	r = parse_exact(xrc_ack, sizeof(xrc_ack), &p);
	tap_ok(!r && p.info->qpt == SROCE_QPT_XRC &&
	       (p.info->flags & SROCE_OPF_RESP) && p.h.aeth_msn == 9 &&
	       !p.h.xrc_srqn, "XRC ACK: an AETH and no XRCETH");
	r = parse_exact(xrc_write, 16, &p);
	tap_ok(r == -EINVAL, "XRC WRITE ONLY cut inside its RETH: -EINVAL");

	/* RC RDMA READ REQUEST */
	static const u8 read_req[] = {
		0x0c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x02,
		0x80, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00,
		0, 0, 0, 0,
	};
	r = parse_exact(read_req, sizeof(read_req), &p);
	TAP_EQ(r, 0, "RC READ REQUEST parses");
	tap_ok(p.h.reth_va == 0x10000 && p.h.reth_rkey == 0x100 &&
	       p.h.reth_len == 0x100000 && p.payload_len == 0 &&
	       p.h.psn == 0x1000, "READ REQUEST fields");

	/* RC ACK carrying NAK remote access error, MSN 0x123456 */
	static const u8 nak[] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x09,
		0x62, 0x12, 0x34, 0x56,
		0, 0, 0, 0,
	};
	r = parse_exact(nak, sizeof(nak), &p);
	TAP_EQ(r, 0, "RC ACK parses");
	tap_ok(sroce_aeth_syn_type(p.h.aeth_syn) == SROCE_AETH_TYPE_NAK &&
	       sroce_aeth_syn_value(p.h.aeth_syn) == SROCE_NAK_REMOTE_ACCESS &&
	       p.h.aeth_msn == 0x123456, "AETH NAK syndrome and MSN");

	/* RC ATOMIC ACKNOWLEDGE */
	static const u8 atm_ack[] = {
		0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x0a,
		0x1f, 0x00, 0x00, 0x03,
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
		0, 0, 0, 0,
	};
	r = parse_exact(atm_ack, sizeof(atm_ack), &p);
	TAP_EQ(r, 0, "RC ATOMIC ACK parses");
	tap_ok(p.h.aeth_syn == SROCE_AETH_ACK_UNLIMITED && p.h.aeth_msn == 3 &&
	       p.h.atmack_orig == 0xfedcba9876543210ULL, "AtomicAckETH fields");

	/* RC COMPARE SWAP */
	static const u8 cmp_swap[] = {
		0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
		0x80, 0x00, 0x00, 0x0b,
		0x00, 0x00, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xd8,
		0x00, 0x00, 0x12, 0x34,
		0x01, 0x01, 0x01, 0x01, 0x02, 0x02, 0x02, 0x02,
		0x03, 0x03, 0x03, 0x03, 0x04, 0x04, 0x04, 0x04,
		0, 0, 0, 0,
	};
	r = parse_exact(cmp_swap, sizeof(cmp_swap), &p);
	TAP_EQ(r, 0, "RC COMPARE SWAP parses");
	tap_ok(p.h.atm_va == 0xaabbccd8 && p.h.atm_rkey == 0x1234 &&
	       p.h.atm_swap_add == 0x0101010102020202ULL &&
	       p.h.atm_compare == 0x0303030304040404ULL,
	       "AtomicETH fields");

	/* UD SEND ONLY IMM: DETH + ImmDt, GSI Q_Key, source QP 1 */
	static const u8 ud_imm[] = {
		0x65, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x00,
		0x80, 0x01, 0x00, 0x00, 0xee, 0x00, 0x00, 0x01,
		0xca, 0xfe, 0xf0, 0x0d,
		1, 2, 3, 4, 5, 6, 7, 8,
		0, 0, 0, 0,
	};
	r = parse_exact(ud_imm, sizeof(ud_imm), &p);
	TAP_EQ(r, 0, "UD SEND ONLY IMM parses");
	tap_ok(p.h.deth_qkey == SROCE_GSI_QKEY && p.h.deth_sqp == 1 &&
	       p.h.imm == cpu_to_be32(0xcafef00d) && p.payload_off == 24 &&
	       p.payload_len == 8, "DETH fields, reserved byte ignored");
	tap_ok(p.info->qpt == SROCE_QPT_UD, "UD opcode reports UD QP type");

	/* UC SEND LAST IMM: ImmDt only */
	static const u8 last_imm[] = {
		0x23, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x0e,
		0x0a, 0x0b, 0x0c, 0x0d,
		'q', 'r', 's', 't',
		0, 0, 0, 0,
	};
	r = parse_exact(last_imm, sizeof(last_imm), &p);
	tap_ok(r == 0 && p.h.imm == cpu_to_be32(0x0a0b0c0d) &&
	       p.payload_off == 16 && p.payload_len == 4 &&
	       p.info->qpt == SROCE_QPT_UC, "UC SEND LAST IMM parses");

	/* UD SEND ONLY: DETH only, reserved BTH bits set and ignored */
	static const u8 ud_only[] = {
		0x64, 0x00, 0xff, 0xff, 0x3f, 0x00, 0x00, 0x05,
		0x7f, 0x00, 0x00, 0x01,
		0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x02,
		0, 0, 0, 0,
	};
	r = parse_exact(ud_only, sizeof(ud_only), &p);
	tap_ok(r == 0 && p.h.deth_qkey == 0x11111111 && p.h.deth_sqp == 2 &&
	       p.h.qpn == 5 && p.h.psn == 1 && !p.h.ackreq && !p.h.fecn &&
	       !p.h.becn && p.payload_len == 0, "UD SEND ONLY parses");

	/* RC SEND ONLY WITH INVALIDATE */
	static const u8 send_inv[] = {
		0x17, 0x10, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
		0x80, 0x00, 0x00, 0x0c,
		0x00, 0x00, 0x42, 0x07,
		'x', 'y', 'z', 0,
		0, 0, 0, 0,
	};
	r = parse_exact(send_inv, sizeof(send_inv), &p);
	TAP_EQ(r, 0, "RC SEND ONLY INV parses");
	tap_ok(p.h.ieth_rkey == 0x4207 && p.payload_len == 3 && p.h.pad == 1,
	       "IETH field and padded payload");

	/* RC FLUSH: FETH (placement global, level MR) before the RETH */
	static const u8 flush[] = {
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x09,
		0x80, 0x00, 0x01, 0x00,
		0xff, 0xff, 0xff, 0xd1,
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x33, 0x44, 0x00, 0x00, 0x10, 0x00,
		0, 0, 0, 0,
	};
	r = parse_exact(flush, sizeof(flush), &p);
	TAP_EQ(r, 0, "RC FLUSH parses");
	tap_ok(p.h.feth_plt == SROCE_FLUSH_GLOBAL &&
	       p.h.feth_sel == SROCE_FLUSH_SEL_MR &&
	       p.h.reth_va == 0x7f0000001000ULL && p.h.reth_rkey == 0x3344 &&
	       p.h.reth_len == 0x1000 && p.h.ackreq && p.payload_len == 0,
	       "FETH fields (reserved bits ignored), RETH after it");

	/* RC READ RESPONSE FIRST: AETH + one 256-byte PMTU of payload */
	u8 rr_first[12 + 4 + 256 + 4] = {
		0x0d, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x0d,
		0x00, 0x00, 0x00, 0x05,
	};
	r = parse_exact(rr_first, sizeof(rr_first), &p);
	TAP_EQ(r, 0, "RC READ RESPONSE FIRST parses");
	tap_ok(p.payload_off == 16 && p.payload_len == 256 &&
	       p.h.aeth_msn == 5, "READ RESPONSE FIRST layout");
	rr_first[0] = SROCE_RC_READ_RESP_MIDDLE;
	r = parse_exact(rr_first, sizeof(rr_first), &p);
	tap_ok(r == 0 && p.payload_off == 12 && p.payload_len == 260,
	       "READ RESPONSE MIDDLE has no AETH");
}

static void test_parse_reject(void)
{
	static const u8 ok_ack[] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x01,
		0, 0, 0, 0,
	};
	u8 buf[128];
	struct sroce_pkt p;
	unsigned int i, len, bad = 0;
	int r;

	TAP_EQ(parse_exact(ok_ack, 0, &p), -EINVAL, "empty packet rejected");
	TAP_EQ(parse_exact(ok_ack, 15, &p), -EINVAL, "15 bytes rejected");

	/* every valid opcode, every length shorter than headers + ICRC */
	for (i = 0; i < 256; i++) {
		const struct sroce_opcode_info *in = sroce_opcode_info(i);

		if (!(in->flags & SROCE_OPF_VALID))
			continue;
		memset(buf, 0, sizeof(buf));
		buf[0] = i;
		for (len = 0; len < in->hdr_len + 4u; len++)
			if (parse_exact(buf, len, &p) != -EINVAL)
				bad++;
	}
	TAP_EQ(bad, 0, "truncated headers rejected for every opcode");

	bad = 0;
	for (i = 0; i < 256; i++) {
		if (sroce_opcode_valid(i))
			continue;
		memset(buf, 0, sizeof(buf));
		buf[0] = i;
		if (parse_exact(buf, 64, &p) != -EOPNOTSUPP)
			bad++;
	}
	TAP_EQ(bad, 0, "unknown opcodes rejected with -EOPNOTSUPP");

	memcpy(buf, ok_ack, sizeof(ok_ack));
	TAP_EQ(parse_exact(buf, sizeof(ok_ack), &p), 0, "baseline ACK ok");
	for (i = 1; i < 16; i++) {
		buf[1] = i;
		if (parse_exact(buf, sizeof(ok_ack), &p) != -EINVAL)
			bad++;
	}
	TAP_EQ(bad, 0, "TVer 1..15 rejected");

	/* SEND ONLY with no payload but pad 1 */
	memset(buf, 0, sizeof(buf));
	buf[0] = SROCE_RC_SEND_ONLY;
	TAP_EQ(parse_exact(buf, 16, &p), 0, "empty SEND ONLY accepted");
	buf[1] = 1 << 4;
	TAP_EQ(parse_exact(buf, 16, &p), -EINVAL, "pad beyond payload rejected");
	buf[1] = 3 << 4;
	TAP_EQ(parse_exact(buf, 16, &p), -EINVAL, "pad 3, no payload rejected");
	TAP_EQ(parse_exact(buf, 20, &p), 0, "pad 3 with 1 byte payload ok");
	TAP_EQ(p.payload_len, 1, "payload length subtracts pad");
	TAP_EQ(parse_exact(buf, 18, &p), -EINVAL, "unaligned length rejected");
	TAP_EQ(parse_exact(buf, 21, &p), -EINVAL, "unaligned length rejected");

	/* payload rules: decoded but flagged -EBADMSG */
	memcpy(buf, ok_ack, sizeof(ok_ack));
	r = parse_exact(buf, sizeof(ok_ack) + 4, &p);
	tap_ok(r == -EBADMSG && p.h.qpn == 7 && p.h.psn == 9,
	       "ACK with payload is -EBADMSG, BTH still decoded");
	memset(buf, 0, sizeof(buf));
	buf[0] = SROCE_RC_SEND_MIDDLE;
	TAP_EQ(parse_exact(buf, 16, &p), -EBADMSG, "empty SEND MIDDLE");
	TAP_EQ(parse_exact(buf, 20, &p), 0, "non-empty SEND MIDDLE");
	buf[1] = 1 << 4;
	TAP_EQ(parse_exact(buf, 20, &p), -EBADMSG, "padded SEND MIDDLE");
	buf[0] = SROCE_UC_SEND_LAST;
	TAP_EQ(parse_exact(buf, 20, &p), 0, "padded SEND LAST ok");
	buf[1] = 0;
	TAP_EQ(parse_exact(buf, 16, &p), -EBADMSG, "empty SEND LAST");
	buf[0] = SROCE_RC_WRITE_FIRST;
	TAP_EQ(parse_exact(buf, 32, &p), -EBADMSG, "empty WRITE FIRST");
	buf[0] = SROCE_RC_WRITE_ONLY;
	TAP_EQ(parse_exact(buf, 32, &p), 0, "empty WRITE ONLY ok");
	buf[0] = SROCE_RC_READ_REQUEST;
	TAP_EQ(parse_exact(buf, 36, &p), -EBADMSG, "READ REQUEST with data");
	buf[0] = SROCE_RC_CMP_SWAP;
	TAP_EQ(parse_exact(buf, 48, &p), -EBADMSG, "atomic with data");
	TAP_EQ(parse_exact(buf, 44, &p), 0, "atomic without data ok");
	buf[0] = SROCE_RC_FLUSH;
	TAP_EQ(parse_exact(buf, 36, &p), 0, "FLUSH without data ok");
	TAP_EQ(parse_exact(buf, 40, &p), -EBADMSG, "FLUSH with data");
	/* ATOMIC WRITE: RETH length 8 and exactly 8 bytes, unpadded */
	memset(buf, 0, sizeof(buf));
	buf[0] = SROCE_RC_ATOMIC_WRITE;
	buf[27] = 8;
	TAP_EQ(parse_exact(buf, 40, &p), 0, "ATOMIC WRITE of 8 bytes ok");
	TAP_EQ(parse_exact(buf, 36, &p), -EBADMSG, "ATOMIC WRITE of 4 bytes");
	TAP_EQ(parse_exact(buf, 44, &p), -EBADMSG, "ATOMIC WRITE of 12 bytes");
	TAP_EQ(parse_exact(buf, 32, &p), -EBADMSG, "empty ATOMIC WRITE");
	buf[1] = 3 << SROCE_BTH_PAD_SHIFT;
	TAP_EQ(parse_exact(buf, 44, &p), -EBADMSG, "ATOMIC WRITE, 9 + 3 pad");
	buf[1] = 0;
	buf[27] = 16;
	TAP_EQ(parse_exact(buf, 40, &p), -EBADMSG, "ATOMIC WRITE, RETH 16");
}

/* Headers-only buffer with a longer claimed length: no payload reads. */
static void test_parse_headers_only(void)
{
	unsigned int i, bad = 0;
	struct sroce_pkt p;

	for (i = 0; i < 256; i++) {
		const struct sroce_opcode_info *in = sroce_opcode_info(i);
		u8 *hdr;
		int r;

		if (!(in->flags & SROCE_OPF_VALID))
			continue;
		hdr = calloc(1, in->hdr_len);
		hdr[0] = i;
		r = sroce_pkt_parse(hdr, in->hdr_len + 256 + 4, &p);
		if (r != 0 && r != -EBADMSG)
			bad++;
		free(hdr);
	}
	TAP_EQ(bad, 0, "parse touches only the headers (ASan-checked)");
}

static int hdrs_equal(const struct sroce_pkt_hdrs *a,
		      const struct sroce_pkt_hdrs *b)
{
	return a->opcode == b->opcode && a->pad == b->pad && a->se == b->se &&
	       a->migreq == b->migreq && a->fecn == b->fecn &&
	       a->becn == b->becn && a->ackreq == b->ackreq &&
	       a->pkey == b->pkey && a->qpn == b->qpn && a->psn == b->psn &&
	       a->reth_va == b->reth_va && a->reth_rkey == b->reth_rkey &&
	       a->reth_len == b->reth_len && a->aeth_syn == b->aeth_syn &&
	       a->aeth_msn == b->aeth_msn && a->deth_qkey == b->deth_qkey &&
	       a->deth_sqp == b->deth_sqp && a->imm == b->imm &&
	       a->ieth_rkey == b->ieth_rkey && a->atm_va == b->atm_va &&
	       a->atm_rkey == b->atm_rkey &&
	       a->atm_swap_add == b->atm_swap_add &&
	       a->atm_compare == b->atm_compare &&
	       a->atmack_orig == b->atmack_orig &&
	       a->feth_plt == b->feth_plt && a->feth_sel == b->feth_sel &&
	       a->xrc_srqn == b->xrc_srqn;
}

static u64 rng_state = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void random_hdrs(u8 op, struct sroce_pkt_hdrs *h)
{
	u16 xh = sroce_opcode_info(op)->xhdrs;

	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->se = rnd() & 1;
	h->migreq = rnd() & 1;
	h->fecn = rnd() & 1;
	h->becn = rnd() & 1;
	h->ackreq = rnd() & 1;
	h->pkey = rnd();
	h->qpn = rnd() & SROCE_24BIT_MASK;
	h->psn = rnd() & SROCE_24BIT_MASK;
	if (xh & SROCE_XH_XRCETH)
		h->xrc_srqn = rnd() & SROCE_24BIT_MASK;
	if (xh & SROCE_XH_RETH) {
		h->reth_va = rnd();
		h->reth_rkey = rnd();
		h->reth_len = rnd();
	}
	if (xh & SROCE_XH_AETH) {
		h->aeth_syn = rnd();
		h->aeth_msn = rnd() & SROCE_24BIT_MASK;
	}
	if (xh & SROCE_XH_DETH) {
		h->deth_qkey = rnd();
		h->deth_sqp = rnd() & SROCE_24BIT_MASK;
	}
	if (xh & SROCE_XH_IMMDT)
		h->imm = (__be32)rnd();
	if (xh & SROCE_XH_IETH)
		h->ieth_rkey = rnd();
	if (xh & SROCE_XH_ATMETH) {
		h->atm_va = rnd();
		h->atm_rkey = rnd();
		h->atm_swap_add = rnd();
		h->atm_compare = rnd();
	}
	if (xh & SROCE_XH_ATMACK)
		h->atmack_orig = rnd();
	if (xh & SROCE_XH_FETH) {
		h->feth_plt = rnd() & SROCE_FETH_PLT_MASK;
		h->feth_sel = rnd() & 3;
	}
	if (sroce_opcode_info(op)->flags & SROCE_OPF_ATOMIC_WRITE)
		h->reth_len = 8;
}

/* Payload size that satisfies the opcode's rules. */
static u32 legal_payload(const struct sroce_opcode_info *in)
{
	u32 f = in->flags;

	if (!(f & SROCE_OPF_PAYLOAD))
		return 0;
	if (f & SROCE_OPF_ATOMIC_WRITE)
		return 8;
	if (!(f & SROCE_OPF_LAST))
		return 256;
	if ((f & SROCE_OPF_ONLY) == SROCE_OPF_ONLY)
		return rnd() % 300;
	return 1 + rnd() % 256;
}

static void test_build(void)
{
	unsigned int i, iter, bad = 0, checked = 0;
	struct sroce_pkt_hdrs h;
	struct sroce_pkt p;
	u8 buf[512];
	int r;

	for (iter = 0; iter < 50; iter++) {
		for (i = 0; i < 256; i++) {
			const struct sroce_opcode_info *in =
				sroce_opcode_info(i);
			u32 plen, len;

			if (!(in->flags & SROCE_OPF_VALID))
				continue;
			random_hdrs(i, &h);
			plen = legal_payload(in);
			h.pad = sroce_pad_for(plen);
			memset(buf, 0xa5, sizeof(buf));
			r = sroce_pkt_build(buf, sizeof(buf), &h);
			len = sroce_pkt_wire_len(i, plen);
			checked++;
			if (r != in->hdr_len ||
			    sroce_pkt_parse(buf, len, &p) != 0 ||
			    !hdrs_equal(&h, &p.h) || p.payload_len != plen ||
			    p.payload_off != in->hdr_len) {
				bad++;
				printf("# round trip failed for %s\n",
				       in->name);
			}
		}
	}
	TAP_EQ(bad, 0, "build->parse round trip, %u packets", checked);

	random_hdrs(SROCE_RC_ATOMIC_ACK, &h);
	memset(buf, 0xa5, sizeof(buf));
	TAP_EQ(sroce_pkt_build(buf, 23, &h), -ENOSPC, "short buffer -ENOSPC");
	tap_ok(buf[0] == 0xa5, "nothing written on -ENOSPC");
	TAP_EQ(sroce_pkt_build(buf, 24, &h), 24, "exact buffer fits");
	tap_ok(buf[24] == 0xa5, "no write past the headers");
	h.qpn = 1 << 24;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL, "25-bit QPN refused");
	h.qpn = 1;
	h.psn = 1 << 24;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL, "25-bit PSN refused");
	random_hdrs(SROCE_XRC_SEND_ONLY, &h);
	h.xrc_srqn = 1 << 24;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL,
	       "25-bit XRC SRQ number refused");
	h.psn = 1;
	h.pad = 4;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL, "pad 4 refused");
	h.pad = 0;
	h.aeth_msn = 1 << 24;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL, "25-bit MSN refused");
	random_hdrs(SROCE_UD_SEND_ONLY, &h);
	h.deth_sqp = 1 << 24;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL, "25-bit src QP refused");
	h.opcode = 0x15;
	TAP_EQ(sroce_pkt_build(buf, 64, &h), -EINVAL, "reserved opcode refused");

	/* builder output matches a hand-written header byte for byte */
	static const u8 want[] = {
		0x0b, 0x40, 0xff, 0xff, 0xc0, 0xab, 0xcd, 0xef,
		0x00, 0xff, 0xff, 0xff,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x00, 0x04,
		0x01, 0x02, 0x03, 0x04,
	};
	memset(&h, 0, sizeof(h));
	h.opcode = SROCE_RC_WRITE_ONLY_IMM;
	h.migreq = true;
	h.fecn = true;
	h.becn = true;
	h.pkey = 0xffff;
	h.qpn = 0xabcdef;
	h.psn = 0xffffff;
	h.reth_va = 0x1122334455667788ULL;
	h.reth_rkey = 0xaabbccdd;
	h.reth_len = 4;
	h.imm = cpu_to_be32(0x01020304);
	r = sroce_pkt_build(buf, sizeof(buf), &h);
	tap_ok(r == 32 && memcmp(buf, want, sizeof(want)) == 0,
	       "builder bytes match hand-written WRITE ONLY IMM header");

	/* retransmit rewrite of PSN/AckReq leaves the rest intact */
	sroce_bth_set_psn((struct sroce_bth *)buf, 0x1000005, true);
	tap_ok(buf[8] == 0x80 && buf[9] == 0 && buf[10] == 0 &&
	       buf[11] == 5 && memcmp(buf, want, 8) == 0,
	       "sroce_bth_set_psn masks to 24 bits and sets AckReq");
}

void test_pkt(void)
{
	test_table();
	test_parse_hand_built();
	test_parse_reject();
	test_parse_headers_only();
	test_build();
}
