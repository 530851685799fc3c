#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# The `make check` test runner: host unit tests, then every VM selftest.
# Emits TAP (one line per test file, the test's own output indented below
# it) and ends with "N passed, N failed". Exit status 1 if anything failed.
#
# Usage: run-tests.sh [-t PATTERNS]
#   PATTERNS: comma-separated names or globs, matched against the test name
#   (path under selftests/ without .sh, e.g. harness/boot_ok, link_add) and
#   its basename; "unit" selects the host unit tests, "provider" the
#   libsroce unit test.
#
# Test files: selftests/*.sh and selftests/harness/*.sh. Header comments:
#   # vms: 1|2       boot that many VMs and run the script in each guest
#   # vms: 0         run the script on the host (it may call scripts/vm.sh)
#   # timeout: N     seconds (default 300 per VM run, 600 for host tests)
#   # mtu: N         eth0 MTU in the guests (default 1500)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=$ROOT/build/results
PATTERNS=
while getopts t: o; do
	case $o in
	t) PATTERNS=$OPTARG ;;
	*) sed -n '/^# Usage/,/^#   # mtu/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

selected() { # name
	local n=$1 p
	[[ -z $PATTERNS ]] && return 0
	IFS=, read -ra pats <<< "$PATTERNS"
	for p in "${pats[@]}"; do
		# shellcheck disable=SC2053
		[[ $n == $p || ${n##*/} == $p || $n == ${p%.sh} ]] && return 0
	done
	return 1
}

header() { # file key
	sed -n "s/^#[[:space:]]*$2:[[:space:]]*\([0-9]\{1,\}\).*/\1/p" "$1" | head -n1
}

tests=()
[[ -f $ROOT/selftests/unit/Makefile ]] && selected unit && tests+=(unit)
[[ -f $ROOT/userspace/Makefile ]] && selected provider && tests+=(provider)
for f in "$ROOT"/selftests/harness/*.sh "$ROOT"/selftests/*.sh; do
	[[ -f $f ]] || continue
	n=${f#"$ROOT/selftests/"}
	n=${n%.sh}
	selected "$n" && tests+=("$n")
done
if ((${#tests[@]} == 0)); then
	echo "run-tests: no test matches '$PATTERNS'" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

indent() { sed -e 's/^/    /'; }

pass=0 fail=0 i=0
echo "TAP version 13"
echo "1..${#tests[@]}"
start=$(date +%s)
for n in "${tests[@]}"; do
	i=$((i + 1))
	t0=$(date +%s)
	res=$RESULTS/$n
	rm -rf "$res"
	mkdir -p "$res"
	if [[ $n == unit ]]; then
		make -s -C "$ROOT/selftests/unit" check > "$res/output" 2>&1
		rc=$?
	elif [[ $n == provider ]]; then
		# libsroce against an in-process fake kernel: no VM needed.
		make -s -C "$ROOT/userspace" check > "$res/output" 2>&1
		rc=$?
	else
		f=$ROOT/selftests/$n.sh
		vms=$(header "$f" vms)
		to=$(header "$f" timeout)
		mtu=$(header "$f" mtu)
		if [[ -z $vms ]]; then
			echo "missing '# vms: N' header in $f" > "$res/output"
			rc=2
		elif [[ $vms == 0 ]]; then
			ROOT=$ROOT RESULTS=$res timeout -k 10 "${to:-600}" \
				bash "$f" > "$res/output" 2>&1 < /dev/null
			rc=$?
		else
			"$ROOT/scripts/vm.sh" -n "$vms" -t "${to:-300}" --mtu "${mtu:-1500}" \
				-o "$res" "$f" > "$res/output" 2>&1 < /dev/null
			rc=$?
		fi
	fi
	indent < "$res/output"
	dt=$(($(date +%s) - t0))
	if ((rc == 0)); then
		echo "ok $i $n # ${dt}s"
		pass=$((pass + 1))
	else
		echo "not ok $i $n # ${dt}s, results in ${res#"$ROOT/"}/"
		fail=$((fail + 1))
	fi
done
echo "# total $(($(date +%s) - start))s"
echo "$pass passed, $fail failed"
((fail == 0))
