/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The kernel interfaces that differ between the kernels sroce builds for,
 * Debian 12's 6.1 and the 6.12 of bookworm-backports, so that the rest of
 * the driver is written once, against the 6.1 shape of each.  Each branch
 * taken on 6.1 is exactly the code used before this header existed.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>

/*
 * Out of tree and built for several kernels, sroce must test versions, the
 * one thing checkpatch's LINUX_VERSION_CODE rule (ignored by make
 * checkpatch) forbids in-tree code.  Only this header does.
 */
#define SROCE_KERNEL_GE(maj, min) \
	(KERNEL_VERSION(maj, min, 0) <= LINUX_VERSION_CODE)

/*
 * RDMA FLUSH and ATOMIC WRITE (IBA annex A19): 6.2 named their access
 * bits, capability bits and opcodes; the uverbs values (access 1 << 8 and
 * 1 << 9, capabilities 1 << 38 and 1 << 40) are ABI, so sroce uses them on
 * 6.1 too.  rdma-core 56 sets the access bits on RC QPs whatever the
 * device does.  6.1's ib_core refuses MRs with them, so there FLUSH
 * always meets a remote access error and is not advertised.
 */
#define SROCE_ACCESS_FLUSH_GLOBAL	BIT(8)
#define SROCE_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define SROCE_ACCESS_FLUSH \
	(SROCE_ACCESS_FLUSH_GLOBAL | SROCE_ACCESS_FLUSH_PERSISTENT)
#define SROCE_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#if SROCE_KERNEL_GE(6, 2)
static_assert(SROCE_ACCESS_FLUSH_GLOBAL == IB_ACCESS_FLUSH_GLOBAL);
static_assert(SROCE_ACCESS_FLUSH_PERSISTENT == IB_ACCESS_FLUSH_PERSISTENT);
static_assert(SROCE_DEVICE_ATOMIC_WRITE == IB_DEVICE_ATOMIC_WRITE);
#define SROCE_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#else
#define SROCE_DEVICE_FLUSH_GLOBAL	0
#endif

/* 6.12 moved the unaligned accessors to linux/ and dropped asm/unaligned.h. */
#if SROCE_KERNEL_GE(6, 12)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * Since 6.11 create_cq is handed the whole uverbs bundle, not just the
 * driver's udata; kernel callers pass NULL either way.  sroce_create_cq()
 * takes a struct sroce_cq_attrs * and gets its udata from sroce_cq_udata().
 */
#if SROCE_KERNEL_GE(6, 11)
#include <rdma/uverbs_ioctl.h>
#define sroce_cq_attrs uverbs_attr_bundle
static inline struct ib_udata *sroce_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define sroce_cq_attrs ib_udata
static inline struct ib_udata *sroce_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * Since 6.10 a trace event's __assign_str() takes only the field: it copies
 * from the source the field's __string() named.
 */
#if SROCE_KERNEL_GE(6, 10)
#define sroce_assign_str(field, src)	__assign_str(field)
#else
#define sroce_assign_str(field, src)	__assign_str(field, src)
#endif

/*
 * Since 6.6 the IPv4 socket options are bits of inet_sock's atomic
 * inet_flags, no longer bitfields; 6.1's plain store is only safe on a
 * socket nobody else uses yet, which is how sroce calls it.
 */
#if SROCE_KERNEL_GE(6, 6)
#define sroce_inet_set_mc_loop(sk)	inet_set_bit(MC_LOOP, sk)
#else
#define sroce_inet_set_mc_loop(sk)	(inet_sk(sk)->mc_loop = 1)
#endif

#endif /* SROCE_COMPAT_H */
