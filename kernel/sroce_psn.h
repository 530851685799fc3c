/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * 24-bit packet sequence number arithmetic.
 *
 * PSNs wrap at 2^24, so ordering is only meaningful within half the space:
 * a is "before" b when b lies less than 2^23 steps ahead of a.
 */
#ifndef SROCE_PSN_H
#define SROCE_PSN_H

#include "sroce_pure.h"

#define SROCE_PSN_BITS		24
#define SROCE_PSN_MASK		0x00ffffffU
#define SROCE_PSN_HALF		0x00800000U

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

static inline u32 sroce_psn_sub(u32 psn, u32 n)
{
	return (psn - n) & SROCE_PSN_MASK;
}

static inline u32 sroce_psn_next(u32 psn)
{
	return sroce_psn_add(psn, 1);
}

/* a - b as a signed distance in [-2^23, 2^23 - 1]. */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	u32 d = (a - b) & SROCE_PSN_MASK;

	return d & SROCE_PSN_HALF ? (s32)d - (s32)(SROCE_PSN_MASK + 1) : (s32)d;
}

static inline bool sroce_psn_before(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) < 0;
}

static inline bool sroce_psn_after(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) > 0;
}

static inline bool sroce_psn_before_eq(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) <= 0;
}

static inline bool sroce_psn_after_eq(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) >= 0;
}

/* True iff psn is one of the n PSNs start, start + 1, ..., start + n - 1. */
static inline bool sroce_psn_in_window(u32 psn, u32 start, u32 n)
{
	return ((psn - start) & SROCE_PSN_MASK) < n;
}

/*
 * True iff psn is one of start, start + 1, ..., end - 1.  Unlike a signed
 * sroce_psn_diff(end, start), the range may cover up to 2^24 - 1 PSNs: a
 * 2 GiB READ at a 256-byte MTU opens 2^23, half the space.
 */
static inline bool sroce_psn_in_range(u32 psn, u32 start, u32 end)
{
	return sroce_psn_in_window(psn, start, (end - start) & SROCE_PSN_MASK);
}

/*
 * Of a and b, the one lying further ahead of base (both at or after it,
 * at most 2^24 - 1 PSNs away).
 */
static inline u32 sroce_psn_furthest(u32 base, u32 a, u32 b)
{
	return ((a - base) & SROCE_PSN_MASK) >= ((b - base) & SROCE_PSN_MASK) ?
	       a : b;
}

#endif /* SROCE_PSN_H */
