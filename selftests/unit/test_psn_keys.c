// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* PSN arithmetic and memory key / range / access helper tests. */
#include "sroce_psn.h"
#include "sroce_keys.h"
#include "tap.h"

static void test_psn(void)
{
	TAP_EQ(sroce_psn_add(0xffffff, 1), 0, "psn add wraps");
	TAP_EQ(sroce_psn_add(0xfffff0, 0x20), 0x10, "psn add wraps by n");
	TAP_EQ(sroce_psn_next(0x7fffff), 0x800000, "psn next");
	TAP_EQ(sroce_psn_sub(0, 1), 0xffffff, "psn sub wraps");
	TAP_EQ(sroce_psn_diff(0, 0xffffff), 1, "diff across wrap");
	TAP_EQ(sroce_psn_diff(0xffffff, 0), -1, "negative diff across wrap");
	TAP_EQ(sroce_psn_diff(5, 5), 0, "diff equal");
	TAP_EQ(sroce_psn_diff(0x7fffff, 0), 0x7fffff, "max positive diff");
	TAP_EQ(sroce_psn_diff(0x800000, 0), -0x800000, "half space is behind");
	TAP_EQ(sroce_psn_diff(0, 0x800001), 0x7fffff, "just under half ahead");
	TAP_EQ(sroce_psn_diff(0x1000005, 3), 2, "bits above 24 ignored");
	tap_ok(sroce_psn_before(0xfffffe, 1), "0xfffffe before 1");
	tap_ok(sroce_psn_after(1, 0xfffffe), "1 after 0xfffffe");
	tap_ok(!sroce_psn_before(3, 3) && !sroce_psn_after(3, 3),
	       "neither before nor after itself");
	tap_ok(sroce_psn_before_eq(3, 3) && sroce_psn_after_eq(3, 3),
	       "before_eq/after_eq include equality");
	tap_ok(sroce_psn_in_window(0xfffffe, 0xfffffe, 4) &&
	       sroce_psn_in_window(0xffffff, 0xfffffe, 4) &&
	       sroce_psn_in_window(0, 0xfffffe, 4) &&
	       sroce_psn_in_window(1, 0xfffffe, 4),
	       "window spanning the wrap contains its 4 PSNs");
	tap_ok(!sroce_psn_in_window(2, 0xfffffe, 4) &&
	       !sroce_psn_in_window(0xfffffd, 0xfffffe, 4),
	       "window excludes neighbours");
	tap_ok(!sroce_psn_in_window(7, 7, 0), "empty window is empty");

	/*
	 * The completer's ACK window, [oldest unacked, one past highest
	 * sent).  A 2 GiB READ at MTU 256 spans 2^23 PSNs: a signed
	 * distance calls that negative, and every response was dropped.
	 */
	tap_ok(sroce_psn_diff(0x800000, 0) < 0,
	       "a 2^23 span is negative as a signed distance");
	tap_ok(sroce_psn_in_range(0, 0, 0x800000) &&
	       sroce_psn_in_range(5, 0, 0x800000) &&
	       sroce_psn_in_range(0x7fffff, 0, 0x800000),
	       "a 2^23-PSN range holds its first, middle and last PSN");
	tap_ok(!sroce_psn_in_range(0x800000, 0, 0x800000) &&
	       !sroce_psn_in_range(0xffffff, 0, 0x800000),
	       "a 2^23-PSN range excludes its end and what is before it");
	tap_ok(sroce_psn_in_range(0xffff00, 0xffff00, 0x7fff00) &&
	       sroce_psn_in_range(0x7ffeff, 0xffff00, 0x7fff00) &&
	       !sroce_psn_in_range(0x7fff00, 0xffff00, 0x7fff00),
	       "a 2^23-PSN range across the wrap");
	tap_ok(sroce_psn_in_range(0xfffffd, 0xffffff, 0xfffffe) &&
	       !sroce_psn_in_range(0xfffffe, 0xffffff, 0xfffffe) &&
	       !sroce_psn_in_range(0xfffffe, 0xffffff, 0xffffff),
	       "2^24 - 1 PSNs, and an empty range");
	TAP_EQ(sroce_psn_furthest(0xfffff0, 0x10, 0xfffff8), 0x10,
	       "furthest across the wrap");
	TAP_EQ(sroce_psn_furthest(0, 0x800000, 0x200), 0x800000,
	       "furthest at half the space");
	TAP_EQ(sroce_psn_furthest(7, 7, 9), 9, "furthest of base and more");
}

static void test_keys(void)
{
	TAP_EQ(sroce_key_index(0x123456ab), 0x123456, "key index");
	TAP_EQ(sroce_key_byte(0x123456ab), 0xab, "key byte");
	TAP_EQ(sroce_key_make(0x123456, 0xab), 0x123456ab, "key make");
	TAP_EQ(sroce_key_next(0x123456ab), 0x123456ac, "next key byte");
	TAP_EQ(sroce_key_next(0x123456ff), 0x12345600,
	       "next key byte wraps within the slot");
	TAP_EQ(sroce_key_next(0xffffffff), 0xffffff00,
	       "next key of max index stays in slot");

	tap_ok(sroce_range_ok(0, 0, 0, 0), "empty access, empty MR");
	tap_ok(sroce_range_ok(0x1000, 0x10, 0x9999, 0),
	       "empty access anywhere is allowed");
	tap_ok(!sroce_range_ok(0, 0, 0, 1), "1 byte in empty MR refused");
	tap_ok(sroce_range_ok(0x1000, 0x1000, 0x1000, 0x1000), "whole MR");
	tap_ok(sroce_range_ok(0x1000, 0x1000, 0x1fff, 1), "last byte");
	tap_ok(!sroce_range_ok(0x1000, 0x1000, 0x2000, 1), "one past end");
	tap_ok(!sroce_range_ok(0x1000, 0x1000, 0xfff, 1), "one before start");
	tap_ok(!sroce_range_ok(0x1000, 0x1000, 0x1001, 0x1000),
	       "overhanging end refused");
	tap_ok(!sroce_range_ok(0x1000, 0x1000, 0x1800, U64_MAX),
	       "huge length refused");
	tap_ok(sroce_range_ok(0, U64_MAX, 0, U64_MAX), "max MR, max access");
	tap_ok(!sroce_range_ok(0, U64_MAX, 1, U64_MAX), "max access shifted");
	tap_ok(sroce_range_ok(U64_MAX - 9, 10, U64_MAX, 1),
	       "top byte of address space");
	tap_ok(!sroce_range_ok(U64_MAX - 9, 10, U64_MAX, 2),
	       "access wrapping past 2^64 refused");
	tap_ok(!sroce_range_ok(U64_MAX - 9, 100, U64_MAX - 5, 20),
	       "wrapping access refused even if MR length claims it");
	tap_ok(sroce_range_ok(U64_MAX - 9, 100, U64_MAX - 5, 6),
	       "access ending exactly at 2^64");
	tap_ok(!sroce_range_ok(U64_MAX, 1, 0, 1),
	       "address 0 not inside an MR at the top");
	tap_ok(sroce_mr_range_valid(U64_MAX - 9, 10) &&
	       !sroce_mr_range_valid(U64_MAX - 9, 11) &&
	       sroce_mr_range_valid(U64_MAX, 0) &&
	       sroce_mr_range_valid(0, U64_MAX), "MR range validity");

	tap_ok(sroce_access_ok(SROCE_ACCESS_REMOTE_READ |
			       SROCE_ACCESS_LOCAL_WRITE,
			       SROCE_ACCESS_REMOTE_READ), "granted access");
	tap_ok(!sroce_access_ok(SROCE_ACCESS_REMOTE_READ,
				SROCE_ACCESS_REMOTE_READ |
				SROCE_ACCESS_REMOTE_WRITE),
	       "partial grant refused");
	tap_ok(sroce_access_ok(0, 0), "nothing needed, nothing granted");
	tap_ok(!sroce_access_flags_valid(SROCE_ACCESS_REMOTE_WRITE, 0x1f),
	       "remote write needs local write");
	tap_ok(!sroce_access_flags_valid(SROCE_ACCESS_REMOTE_ATOMIC, 0x1f),
	       "remote atomic needs local write");
	tap_ok(sroce_access_flags_valid(SROCE_ACCESS_REMOTE_READ, 0x1f),
	       "remote read alone is fine");
	tap_ok(sroce_access_flags_valid(SROCE_ACCESS_LOCAL_WRITE |
					SROCE_ACCESS_REMOTE_WRITE |
					SROCE_ACCESS_REMOTE_ATOMIC, 0x1f),
	       "local+remote write+atomic ok");
	tap_ok(!sroce_access_flags_valid(0x100, 0x1f), "unknown bit refused");
	tap_ok(sroce_atomic_va_ok(0x1000) && !sroce_atomic_va_ok(0x1004),
	       "atomic VA must be 8-byte aligned");
}

void test_psn_keys(void)
{
	test_psn();
	test_keys();
}
