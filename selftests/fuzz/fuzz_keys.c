// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libFuzzer target comparing the overflow-safe range check and the PSN
 * arithmetic against straightforward 128-bit / 64-bit reference models.
 */
#include <stdint.h>
#include <string.h>

#include "sroce_keys.h"
#include "sroce_psn.h"

#define CHECK(c)							\
	do {								\
		if (!(c))						\
			__builtin_trap();				\
	} while (0)

static int ref_range_ok(u64 mr_iova, u64 mr_len, u64 iova, u64 len)
{
	/* 128-bit sums cannot overflow, so they model the integer line */
	unsigned __int128 mr_end = (unsigned __int128)mr_iova + mr_len;
	unsigned __int128 end = (unsigned __int128)iova + len;
	unsigned __int128 top = (unsigned __int128)1 << 64;

	if (!len)
		return 1;
	return iova >= mr_iova && end <= mr_end && end <= top;
}

static s32 ref_psn_diff(u32 a, u32 b)
{
	int64_t d = (int64_t)(a & 0xffffff) - (int64_t)(b & 0xffffff);

	while (d >= 0x800000)
		d -= 0x1000000;
	while (d < -0x800000)
		d += 0x1000000;
	return (s32)d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u64 v[4] = { 0 };
	u32 a, b, n;

	/* small values and edges matter most: reuse bytes liberally */
	memcpy(v, data, size < sizeof(v) ? size : sizeof(v));
	if (size > 32 && (data[32] & 1))
		v[1] = U64_MAX - v[1];
	if (size > 32 && (data[32] & 2))
		v[2] = v[0] + (v[2] & 0xffff);
	if (size > 32 && (data[32] & 4))
		v[3] &= 0xffff;
	CHECK(sroce_range_ok(v[0], v[1], v[2], v[3]) ==
	      ref_range_ok(v[0], v[1], v[2], v[3]));

	a = (u32)v[0];
	b = (u32)(v[0] >> 32);
	n = (u32)v[1] & 0xffffff;
	CHECK(sroce_psn_diff(a, b) == ref_psn_diff(a, b));
	CHECK(sroce_psn_add(b, sroce_psn_diff(a, b)) == (a & 0xffffff));
	CHECK(sroce_psn_in_window(a, b, n) ==
	      ((u32)((a - b) & 0xffffff) < n));
	CHECK(sroce_psn_before(a, b) == (ref_psn_diff(a, b) < 0));
	CHECK(sroce_key_make(sroce_key_index(a), sroce_key_byte(a)) == a);
	CHECK(sroce_key_index(sroce_key_next(a)) == sroce_key_index(a) &&
	      sroce_key_byte(sroce_key_next(a)) != sroce_key_byte(a));
	return 0;
}
