/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Tiny TAP producer: one "ok"/"not ok" line per assertion. */
#ifndef SROCE_TAP_H
#define SROCE_TAP_H

#include <stdio.h>

__attribute__((format(printf, 2, 3)))
int tap_ok(int cond, const char *fmt, ...);
void tap_diag_eq(long long got, long long want);
int tap_done(void);

/* Equality with both values shown on failure. */
#define TAP_EQ(got, want, ...)						\
	do {								\
		long long g_ = (long long)(got), w_ = (long long)(want); \
		if (!tap_ok(g_ == w_, __VA_ARGS__))			\
			tap_diag_eq(g_, w_);				\
	} while (0)

void test_pkt(void);
void test_icrc(void);
void test_psn_keys(void);
void test_flow(void);

#endif /* SROCE_TAP_H */
