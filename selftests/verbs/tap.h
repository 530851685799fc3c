/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One "ok"/"not ok" line per check, counted, for the verbs test programs
 * that end with "# N checks, M failed" and exit 1 if any failed.
 */
#ifndef SROCE_TAP_H
#define SROCE_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int failures, checks;

static void report(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void report(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

#define CHECK(cond, ...) report(!!(cond), __VA_ARGS__)

#endif
