/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Userspace stand-ins for the few kernel facilities the pure transport
 * files (kernel/sroce_{wire,pkt,icrc,psn,keys}.h) use. Only included via
 * kernel/sroce_pure.h when __KERNEL__ is not defined.
 */
#ifndef SROCE_PURE_USER_H
#define SROCE_PURE_USER_H

#ifdef __KERNEL__
#error "userspace compat header included in a kernel build"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <assert.h>
#include <endian.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

#ifndef __force
#define __force
#endif
#ifndef __packed
#define __packed __attribute__((__packed__))
#endif
#ifndef __must_check
#define __must_check __attribute__((__warn_unused_result__))
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef BIT
#define BIT(n) (1UL << (n))
#endif
#ifndef U64_MAX
#define U64_MAX ((u64)~0ULL)
#endif
#ifndef U32_MAX
#define U32_MAX ((u32)~0U)
#endif

static inline __be16 cpu_to_be16(u16 x) { return (__force __be16)htobe16(x); }
static inline __be32 cpu_to_be32(u32 x) { return (__force __be32)htobe32(x); }
static inline __be64 cpu_to_be64(u64 x) { return (__force __be64)htobe64(x); }
static inline u16 be16_to_cpu(__be16 x) { return be16toh((__force u16)x); }
static inline u32 be32_to_cpu(__be32 x) { return be32toh((__force u32)x); }
static inline u64 be64_to_cpu(__be64 x) { return be64toh((__force u64)x); }
static inline __le32 cpu_to_le32(u32 x) { return (__force __le32)htole32(x); }
static inline u32 le32_to_cpu(__le32 x) { return le32toh((__force u32)x); }

/*
 * Same contract as the kernel's crc32_le(): reflected polynomial
 * 0xEDB88320, caller supplies the seed and does any final inversion.
 * A nibble table keeps this small; host-side speed does not matter.
 */
static inline u32 crc32_le(u32 crc, const unsigned char *p, size_t len)
{
	static const u32 nib[16] = {
		0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
		0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
		0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
		0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
	};

	while (len--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ nib[crc & 0xf];
		crc = (crc >> 4) ^ nib[crc & 0xf];
	}
	return crc;
}

#endif /* SROCE_PURE_USER_H */
