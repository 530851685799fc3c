#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# `make demo`: boot two VMs joined by one link, create sroce0 on each and
# run ibv_rc_pingpong and ib_write_bw between them, then print what the
# tools printed. Run by `make demo` after deps, build and stage.
set -euo pipefail
cd "$(dirname "$0")/.."
res=build/results/demo
rc=0
scripts/vm.sh -n 2 -q -o "$res" selftests/demo/pair.sh || rc=$?
echo
echo "=== sroce demo: what the two VMs printed ==="
grep -h '^demo\[' "$res"/vm1.log "$res"/vm2.log 2>/dev/null || true
echo
if [ "$rc" = 0 ]; then
	echo "demo: PASS (full logs in $res/)"
else
	echo "demo: FAILED with status $rc (full logs in $res/)" >&2
fi
exit "$rc"
