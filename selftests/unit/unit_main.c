// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Host unit tests for the pure transport code in kernel/. Output is TAP,
 * followed by a "N passed, N failed" summary; exit status 1 on failure.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tap.h"

static unsigned int tap_n, tap_fail;

int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_fail++;
	printf("%sok %u - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return cond;
}

void tap_diag_eq(long long got, long long want)
{
	printf("#   got %lld (0x%llx), want %lld (0x%llx)\n", got,
	       (unsigned long long)got, want, (unsigned long long)want);
}

int tap_done(void)
{
	printf("1..%u\n", tap_n);
	printf("%u passed, %u failed\n", tap_n - tap_fail, tap_fail);
	return tap_fail ? 1 : 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_pkt();
	test_icrc();
	test_psn_keys();
	test_flow();
	return tap_done();
}
