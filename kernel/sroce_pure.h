/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Minimal compatibility layer for the pure-logic transport files
 * (wire formats, packet parsing, ICRC, PSN and key arithmetic).
 *
 * Those files must build both inside the kernel module and in host
 * userspace (unit tests, fuzzers), so they include only this header and
 * use nothing beyond what it provides.
 */
#ifndef SROCE_PURE_H
#define SROCE_PURE_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/crc32.h>
#include <asm/byteorder.h>

#else /* !__KERNEL__ */

/*
 * Host builds (unit tests, fuzzers, libsroce) supply the userspace
 * equivalents; put selftests/unit on the include path.
 */
#include "sroce_pure_user.h"

#endif /* __KERNEL__ */

#endif /* SROCE_PURE_H */
