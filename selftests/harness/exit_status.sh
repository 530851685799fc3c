#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 0
# timeout: 600
#
# Harness self-test, run on the host: a guest script's exit status reaches
# the host, and a non-zero one fails the run without any kernel splat.
set -u
out=$RESULTS/inner
"$ROOT/scripts/vm.sh" -q -n 1 -t 300 --stage none -o "$out" \
	"$ROOT/selftests/harness/guest/exit_3.sh"
rc=$?
bad=0
[ $rc = 1 ] || { echo "FAIL: vm.sh exited $rc, expected 1"; bad=1; }
[ "$(cat "$out/vm1.status" 2>/dev/null)" = 3 ] ||
	{ echo "FAIL: status file does not say 3"; bad=1; }
grep -q 'exit status 3' "$out/verdict" || { echo "FAIL: verdict lacks exit status"; bad=1; }
! grep -q 'SPLAT\|PANIC\|TIMEOUT' "$out/verdict" ||
	{ echo "FAIL: clean guest was blamed on the kernel"; bad=1; }
grep -q 'output before exiting' "$out/vm1.log" ||
	{ echo "FAIL: guest output not saved"; bad=1; }
[ $bad = 0 ] && echo "exit status 3 came through as it should"
exit $bad
