// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ICRC tests against vectors computed independently by
 * gen_icrc_vectors.py (zlib.crc32 over hand-masked headers).
 */
#include <stdio.h>
#include <string.h>

#include "sroce_icrc.h"
#include "sroce_pkt.h"
#include "tap.h"
#include "icrc_vectors.h"

/* Is bit 'bit' of byte 'i' one the ICRC treats as variant? */
static int masked_bit(unsigned int ver, unsigned int i, unsigned int bit)
{
	unsigned int udp = ver == 4 ? 20 : 40, bth = udp + 8;

	if (i == udp + 6 || i == udp + 7 || i == bth + 4)
		return 1;
	if (ver == 4)
		return i == 1 || i == 8 || i == 10 || i == 11;
	return (i == 0 && bit < 4) || i == 1 || i == 2 || i == 3 || i == 7;
}

static void flip_sweep(const unsigned char *vec, unsigned int len,
		       unsigned int ver)
{
	unsigned char pkt[128];
	unsigned int i, bit, masked_bad = 0, unmasked_bad = 0, n = 0;

	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			int r;

			memcpy(pkt, vec, len);
			pkt[i] ^= 1u << bit;
			r = sroce_icrc_check(pkt, len, ver);
			n++;
			if (i < len - 4 && masked_bit(ver, i, bit)) {
				if (r != 0)
					masked_bad++;
			} else if (r == 0) {
				unmasked_bad++;
				printf("# v%u flip byte %u bit %u undetected\n",
				       ver, i, bit);
			}
		}
	}
	TAP_EQ(masked_bad, 0, "IPv%u: flips in masked fields keep ICRC", ver);
	TAP_EQ(unmasked_bad, 0,
	       "IPv%u: every other single-bit flip (%u tried) is caught",
	       ver, n);
}

static void chunked(const unsigned char *vec, unsigned int len,
		    unsigned int ver, u32 want)
{
	u32 hdrs = sroce_icrc_hdrs_len(ver);
	unsigned int step, bad = 0;

	for (step = 1; step <= 17; step++) {
		struct sroce_icrc st;
		unsigned int off;

		if (sroce_icrc_init(&st, vec, hdrs, ver)) {
			bad++;
			continue;
		}
		for (off = hdrs; off < len - 4; off += step) {
			unsigned int n = len - 4 - off;

			sroce_icrc_update(&st, vec + off, n < step ? n : step);
		}
		if (sroce_icrc_final(&st) != want)
			bad++;
	}
	TAP_EQ(bad, 0, "IPv%u: incremental ICRC in 1..17 byte chunks", ver);
}

void test_icrc(void)
{
	static const unsigned char lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	unsigned char pkt[128];
	struct sroce_pkt p;
	struct sroce_icrc st;
	u32 icrc = 0;
	int r;

	TAP_EQ(~crc32_le(~0U, (const unsigned char *)"123456789", 9),
	       0xcbf43926U, "crc32_le gives the CRC-32 check value");
	TAP_EQ(crc32_le(~0U, lrh, 8), ICRC_LRH_SEED,
	       "phantom LRH seed matches Python");

	r = sroce_icrc_compute(icrc_vec_v4, sizeof(icrc_vec_v4), 4, &icrc);
	tap_ok(r == 0 && icrc == ICRC_VEC_V4_ICRC, "IPv4 vector ICRC");
	r = sroce_icrc_compute(icrc_vec_v6, sizeof(icrc_vec_v6), 6, &icrc);
	tap_ok(r == 0 && icrc == ICRC_VEC_V6_ICRC, "IPv6 vector ICRC");
	TAP_EQ(sroce_icrc_check(icrc_vec_v4, sizeof(icrc_vec_v4), 4), 0,
	       "IPv4 vector checks");
	TAP_EQ(sroce_icrc_check(icrc_vec_v6, sizeof(icrc_vec_v6), 6), 0,
	       "IPv6 vector checks");
	tap_ok(icrc_vec_v6[sizeof(icrc_vec_v6) - 4] == (ICRC_VEC_V6_ICRC & 0xff),
	       "ICRC is stored least significant byte first");

	r = sroce_pkt_parse(icrc_vec_v4 + 28, sizeof(icrc_vec_v4) - 28, &p);
	tap_ok(r == 0 && p.h.opcode == SROCE_RC_WRITE_ONLY &&
	       p.payload_len == 13 && p.h.pad == 3 && p.h.reth_len == 13 &&
	       p.h.fecn && p.h.becn, "vector transport part parses");

	chunked(icrc_vec_v4, sizeof(icrc_vec_v4), 4, ICRC_VEC_V4_ICRC);
	chunked(icrc_vec_v6, sizeof(icrc_vec_v6), 6, ICRC_VEC_V6_ICRC);
	flip_sweep(icrc_vec_v4, sizeof(icrc_vec_v4), 4);
	flip_sweep(icrc_vec_v6, sizeof(icrc_vec_v6), 6);

	/* rewritten variant fields: what routers and ECN marking do */
	memcpy(pkt, icrc_vec_v4, sizeof(icrc_vec_v4));
	pkt[1] = 0x03;
	pkt[8] = 1;
	pkt[10] = 0;
	pkt[11] = 0;
	pkt[26] = 0;
	pkt[27] = 0;
	pkt[32] = 0x00;
	TAP_EQ(sroce_icrc_check(pkt, sizeof(icrc_vec_v4), 4), 0,
	       "IPv4: new TOS/TTL/csums/FECN keep ICRC");
	memcpy(pkt, icrc_vec_v6, sizeof(icrc_vec_v6));
	pkt[0] = 0x60;
	pkt[1] = 0;
	pkt[2] = 0;
	pkt[3] = 0;
	pkt[7] = 1;
	TAP_EQ(sroce_icrc_check(pkt, sizeof(icrc_vec_v6), 6), 0,
	       "IPv6: new TC/flow/hop limit keep ICRC");

	/* input validation */
	TAP_EQ(sroce_icrc_init(&st, icrc_vec_v4, sizeof(icrc_vec_v4), 6),
	       -EINVAL, "version mismatch refused");
	TAP_EQ(sroce_icrc_init(&st, icrc_vec_v4, sizeof(icrc_vec_v4), 5),
	       -EINVAL, "IP version 5 refused");
	TAP_EQ(sroce_icrc_init(&st, icrc_vec_v4, 39, 4), -EINVAL,
	       "short header copy refused");
	TAP_EQ(sroce_icrc_init(&st, icrc_vec_v4, 40, 4), 0,
	       "IP+UDP+BTH is enough for init");
	TAP_EQ(sroce_icrc_compute(icrc_vec_v4, 43, 4, &icrc), -EINVAL,
	       "no room for ICRC refused");
	TAP_EQ(sroce_icrc_compute(icrc_vec_v4, 44, 4, &icrc), 0,
	       "header-only packet computes");
	memcpy(pkt, icrc_vec_v4, sizeof(icrc_vec_v4));
	pkt[0] = 0x46;
	TAP_EQ(sroce_icrc_check(pkt, sizeof(icrc_vec_v4), 4), -EINVAL,
	       "IPv4 options refused");
	memcpy(pkt, icrc_vec_v4, sizeof(icrc_vec_v4));
	pkt[9] = 6;
	TAP_EQ(sroce_icrc_check(pkt, sizeof(icrc_vec_v4), 4), -EINVAL,
	       "IPv4 non-UDP refused");
	memcpy(pkt, icrc_vec_v6, sizeof(icrc_vec_v6));
	pkt[6] = 0;
	TAP_EQ(sroce_icrc_check(pkt, sizeof(icrc_vec_v6), 6), -EINVAL,
	       "IPv6 extension header refused");
	memcpy(pkt, icrc_vec_v4, sizeof(icrc_vec_v4));
	pkt[sizeof(icrc_vec_v4) - 1] ^= 0x80;
	TAP_EQ(sroce_icrc_check(pkt, sizeof(icrc_vec_v4), 4), -EBADMSG,
	       "corrupt ICRC is -EBADMSG");
}
