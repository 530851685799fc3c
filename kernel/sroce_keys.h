/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory key layout and pure access checks.
 *
 * An L_Key/R_Key is (index << 8) | key byte. The index names the MR/MW
 * slot; the key byte changes on every (re)registration or rebind, so a
 * stale key that still names a reused slot is rejected.
 */
#ifndef SROCE_KEYS_H
#define SROCE_KEYS_H

#include "sroce_pure.h"

#define SROCE_KEY_BYTE_BITS	8
#define SROCE_KEY_BYTE_MASK	0xffU
#define SROCE_KEY_MAX_INDEX	(U32_MAX >> SROCE_KEY_BYTE_BITS)

/* Same bit values as IB_ACCESS_* / IBV_ACCESS_*. */
enum {
	SROCE_ACCESS_LOCAL_WRITE	= 1 << 0,
	SROCE_ACCESS_REMOTE_WRITE	= 1 << 1,
	SROCE_ACCESS_REMOTE_READ	= 1 << 2,
	SROCE_ACCESS_REMOTE_ATOMIC	= 1 << 3,
	SROCE_ACCESS_MW_BIND		= 1 << 4,
	SROCE_ACCESS_REMOTE		= SROCE_ACCESS_REMOTE_WRITE |
					  SROCE_ACCESS_REMOTE_READ |
					  SROCE_ACCESS_REMOTE_ATOMIC,
};

static inline u32 sroce_key_index(u32 key)
{
	return key >> SROCE_KEY_BYTE_BITS;
}

static inline u8 sroce_key_byte(u32 key)
{
	return key & SROCE_KEY_BYTE_MASK;
}

/* Caller guarantees index <= SROCE_KEY_MAX_INDEX. */
static inline u32 sroce_key_make(u32 index, u8 key_byte)
{
	return (index << SROCE_KEY_BYTE_BITS) | key_byte;
}

/* Same slot, different key byte: what a re-registration hands out. */
static inline u32 sroce_key_next(u32 key)
{
	return sroce_key_make(sroce_key_index(key),
			      (u8)(sroce_key_byte(key) + 1));
}

/*
 * True iff [iova, iova + len) lies within [mr_iova, mr_iova + mr_len).
 * Ranges are taken on the integer line, never modulo 2^64: a request whose
 * end would wrap past the top of the address space is refused even if the
 * MR claims to cover it. An empty request is contained in anything (IBA
 * lets zero-length RDMA skip key and address checks altogether).
 */
static inline bool sroce_range_ok(u64 mr_iova, u64 mr_len, u64 iova, u64 len)
{
	u64 off;

	if (!len)
		return true;
	if (iova < mr_iova || len - 1 > U64_MAX - iova)
		return false;
	off = iova - mr_iova;
	return off < mr_len && len <= mr_len - off;
}

/* A registration may not describe a range that wraps past 2^64. */
static inline bool sroce_mr_range_valid(u64 iova, u64 len)
{
	return !len || len - 1 <= U64_MAX - iova;
}

static inline bool sroce_access_ok(u32 granted, u32 needed)
{
	return (granted & needed) == needed;
}

/*
 * Remote write or atomic access requires local write as well (IBA): the
 * peer must not be able to modify memory its owner registered read-only.
 */
static inline bool sroce_access_flags_valid(u32 flags, u32 supported)
{
	if (flags & ~supported)
		return false;
	if ((flags & (SROCE_ACCESS_REMOTE_WRITE | SROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(flags & SROCE_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

/* Atomic operations act on naturally aligned 64-bit words. */
static inline bool sroce_atomic_va_ok(u64 va)
{
	return !(va & 7);
}

#endif /* SROCE_KEYS_H */
