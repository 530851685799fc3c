// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libFuzzer target for the stateless packet parser, the header builder
 * and the ICRC code. The input is treated both as a transport packet
 * (BTH..ICRC) and as an IP packet starting at the IP header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sroce_pkt.h"
#include "sroce_icrc.h"

#define CHECK(c)							\
	do {								\
		if (!(c))						\
			__builtin_trap();				\
	} while (0)

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

static void fuzz_parse(const uint8_t *data, u32 len)
{
	struct sroce_pkt p, q;
	uint8_t *rebuilt;
	int r, r2, hl;

	r = sroce_pkt_parse(data, len, &p);
	CHECK(r == 0 || r == -EINVAL || r == -EOPNOTSUPP || r == -EBADMSG);
	if (r != 0 && r != -EBADMSG)
		return;

	/* layout invariants of anything the parser decoded */
	CHECK(p.info == sroce_opcode_info(data[0]));
	CHECK(p.hdr_len == p.info->hdr_len && p.payload_off == p.hdr_len);
	CHECK(p.payload_off + p.payload_len + p.h.pad + SROCE_ICRC_LEN == len);
	CHECK(p.icrc_off == len - SROCE_ICRC_LEN && !(len & 3));
	CHECK(p.h.qpn <= SROCE_24BIT_MASK && p.h.psn <= SROCE_24BIT_MASK);
	CHECK(p.h.aeth_msn <= SROCE_24BIT_MASK);
	CHECK(p.h.deth_sqp <= SROCE_24BIT_MASK && p.h.pad <= 3);
	if (r == 0 && !(p.info->flags & SROCE_OPF_PAYLOAD))
		CHECK(p.payload_len == 0);

	/* rebuild the headers, keep payload/pad/ICRC, parse again */
	rebuilt = malloc(len);
	CHECK(rebuilt);
	hl = sroce_pkt_build(rebuilt, len, &p.h);
	CHECK(hl == (int)p.hdr_len);
	memcpy(rebuilt + hl, data + hl, len - hl);
	r2 = sroce_pkt_parse(rebuilt, len, &q);
	CHECK(r2 == r);
	CHECK(hdrs_equal(&p.h, &q.h));
	CHECK(q.payload_len == p.payload_len);
	/* only reserved bits may differ between input and rebuilt bytes */
	CHECK(rebuilt[0] == data[0] && rebuilt[1] == data[1]);
	CHECK(memcmp(rebuilt + 2, data + 2, 2) == 0);
	CHECK(rebuilt[5] == data[5] && rebuilt[6] == data[6] &&
	      rebuilt[7] == data[7]);
	CHECK(memcmp(rebuilt + 9, data + 9, 3) == 0);
	CHECK((rebuilt[4] & 0xc0) == (data[4] & 0xc0));
	CHECK((rebuilt[8] & 0x80) == (data[8] & 0x80));
	free(rebuilt);
}

static void fuzz_icrc(const uint8_t *data, u32 len)
{
	unsigned int ver = len ? data[0] >> 4 : 0;
	struct sroce_icrc st;
	u32 one, hdrs, mid;
	int r;

	r = sroce_icrc_check(data, len, ver);
	CHECK(r == 0 || r == -EBADMSG || r == -EINVAL);
	if (r == -EINVAL || sroce_icrc_compute(data, len, ver, &one))
		return;

	/* split the remainder at an input-dependent point */
	hdrs = sroce_icrc_hdrs_len(ver);
	CHECK(sroce_icrc_init(&st, data, hdrs, ver) == 0);
	mid = hdrs + (data[len - 1] % (len - hdrs - SROCE_ICRC_LEN + 1));
	sroce_icrc_update(&st, data + hdrs, mid - hdrs);
	sroce_icrc_update(&st, data + mid, len - SROCE_ICRC_LEN - mid);
	CHECK(sroce_icrc_final(&st) == one);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	fuzz_parse(data, size);
	fuzz_icrc(data, size);
	return 0;
}
