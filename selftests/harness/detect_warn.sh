#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 0
# timeout: 600
#
# Harness self-test, run on the host: a guest whose kernel WARNs must be
# reported as a failure, with the warning found in the saved console log.
set -u
out=$RESULTS/inner
"$ROOT/scripts/vm.sh" -q -n 1 -t 300 --stage none -o "$out" \
	"$ROOT/selftests/harness/guest/load_warn_module.sh"
rc=$?
bad=0
[ $rc = 1 ] || { echo "FAIL: vm.sh exited $rc, expected 1"; bad=1; }
grep -q 'SPLAT' "$out/verdict" || { echo "FAIL: no splat in verdict"; bad=1; }
grep -q 'WARNING:' "$out/verdict" || { echo "FAIL: WARNING not in verdict"; bad=1; }
grep -aq 'deliberate warning for the harness' "$out/vm1.console" ||
	{ echo "FAIL: the module's warning is not in the console log"; bad=1; }
grep -aq 'panic_on_warn' "$out/vm1.console" ||
	{ echo "FAIL: guest did not panic on the warning"; bad=1; }
[ ! -e "$out/vm1.status" ] || { echo "FAIL: guest wrote a status after warning"; bad=1; }
[ $bad = 0 ] && echo "harness detected the warning as it should"
exit $bad
