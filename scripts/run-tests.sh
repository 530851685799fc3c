#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# The `make check` test runner: host unit tests, then every VM selftest.
# Emits TAP (one line per test file, the test's own output indented below
# it) and ends with "N passed, N failed". Exit status 1 if anything failed.
#
# Usage: run-tests.sh [-t PATTERNS] [-x PATTERNS]
#   -t: run only these; -x: leave these out.
#   PATTERNS: comma-separated names or globs, matched against the test name
#   (path under selftests/ without .sh, e.g. harness/boot_ok, link_add) and
#   its basename; "unit" selects the host unit tests, "provider" the
#   libsroce unit test.
#   SROCE_RESULTS: results folder (default build/results); for the VM
#   settings make check-debug changes see scripts/vm.sh.
#
# Test files: selftests/*.sh and selftests/harness/*.sh. Header comments:
#   # vms: 1|2       boot that many VMs and run the script in each guest
#   # vms: 0         run the script on the host (it may call scripts/vm.sh)
#   # timeout: N     seconds (default 300 per VM run, 600 for host tests)
#   # mtu: N         eth0 MTU in the guests (default 1500)
#   # cpus: N        vCPUs per guest (default 1); such a test takes N slots
#   # slub: 0        boot without slub_debug: data-path and interop tests
#                    (two-VM ones and rc_loopback), whose memory safety make
#                    check-debug's KASAN covers; every hostile and teardown
#                    test keeps it
#   # secs: N        its usual run time, for long one-VM tests: they start
#                    longest first, so that none runs alone at the end
#   # stage: none    the guests start without the staged build (the test
#                    installs sroce itself)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=${SROCE_RESULTS:-$ROOT/build/results}
PATTERNS= EXCLUDE=
while getopts t:x: o; do
	case $o in
	t) PATTERNS=$OPTARG ;;
	x) EXCLUDE=$OPTARG ;;
	*) sed -n '/^# Usage/,/^#   # mtu/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

matches() { # name patterns
	local n=$1 p
	IFS=, read -ra pats <<< "$2"
	for p in "${pats[@]}"; do
		# shellcheck disable=SC2053
		[[ $n == $p || ${n##*/} == $p || $n == ${p%.sh} ]] && return 0
	done
	return 1
}
selected() { # name
	[[ -n $EXCLUDE ]] && matches "$1" "$EXCLUDE" && return 1
	[[ -z $PATTERNS ]] || matches "$1" "$PATTERNS"
}

header() { # file key
	sed -n "s/^#[[:space:]]*$2:[[:space:]]*\([0-9]\{1,\}\).*/\1/p" "$1" | head -n1
}

tests=()
[[ -f $ROOT/selftests/unit/Makefile ]] && selected unit && tests+=(unit)
[[ -f $ROOT/userspace/Makefile ]] && selected provider && tests+=(provider)
# Host and one-VM tests first, then the two-VM ones: the one-VM tests can
# then run side by side (see JOBS below) instead of waiting between two-VM
# tests that run alone.
pairs=()
for f in "$ROOT"/selftests/harness/*.sh "$ROOT"/selftests/*.sh; do
	[[ -f $f ]] || continue
	n=${f#"$ROOT/selftests/"}
	n=${n%.sh}
	selected "$n" || continue
	v=$(header "$f" vms)
	if ((${v:-1} >= 2)); then pairs+=("$n"); else tests+=("$n"); fi
done

indent() { sed -e 's/^/    /'; }

# run_one NAME: run one test; its output, exit status and seconds land in
# $RESULTS/NAME/{output,rc,secs}.
run_one() {
	local n=$1 res=$RESULTS/$1 t0 rc f vms to mtu cpus stage
	t0=$(date +%s)
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
		cpus=$(header "$f" cpus)
		slub=()
		[[ $(header "$f" slub) == 0 ]] && slub=(--no-slub-debug)
		stage=()
		grep -Eq '^#[[:space:]]*stage:[[:space:]]*none[[:space:]]*$' "$f" &&
			stage=(--stage none)
		if [[ -z $vms ]]; then
			echo "missing '# vms: N' header in $f" > "$res/output"
			rc=2
		elif [[ $vms == 0 ]]; then
			ROOT=$ROOT RESULTS=$res timeout -k 10 "$((${to:-600} * ${SROCE_TIMEOUT_SCALE:-1}))" \
				bash "$f" > "$res/output" 2>&1 < /dev/null
			rc=$?
		else
			"$ROOT/scripts/vm.sh" -n "$vms" -c "${cpus:-1}" -t "${to:-300}" --mtu "${mtu:-1500}" \
				-o "$res" "${slub[@]}" "${stage[@]}" "$f" > "$res/output" 2>&1 < /dev/null
			rc=$?
		fi
	fi
	echo $(($(date +%s) - t0)) > "$res/secs"
	echo $rc > "$res/rc"
}

# Tests run SROCE_TEST_JOBS (default 2, one per host core) at a time: a
# one-VM or host test takes one slot, a two-VM test takes them all, so a
# guest never shares a core with more than one other guest's vCPU.
JOBS=${SROCE_TEST_JOBS:-2}
((JOBS >= 1)) || JOBS=1
weight() { # NAME
	local vms=1 cpus=1 f=$ROOT/selftests/$1.sh
	if [[ -f $f ]]; then
		vms=$(header "$f" vms)
		cpus=$(header "$f" cpus)
	fi
	((${vms:-1} >= 2 || ${cpus:-1} >= 2)) && echo "$JOBS" || echo 1
}

# One-slot tests longest first (by their secs header) after any that take
# all slots: the slots then drain together before the two-VM tests.
order() {
	local n f secs i=0
	for n in "${tests[@]}"; do
		f=$ROOT/selftests/$n.sh
		secs=0
		[[ -f $f ]] && secs=$(header "$f" secs)
		echo "$(weight "$n") ${secs:-0} $i $n"
		i=$((i + 1))
	done | sort -k1,1nr -k2,2nr -k3,3n | cut -d' ' -f4
}
mapfile -t tests < <(order)
tests+=("${pairs[@]}")
if ((${#tests[@]} == 0)); then
	echo "run-tests: no test matches '$PATTERNS'" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

# Results of an earlier run must not be taken for this one's: report()
# looks at tests that have not started yet.
for n in "${tests[@]}"; do
	rm -rf "${RESULTS:?}/$n"
done

pass=0 fail=0 shown=0 used=0
declare -A pid_weight=()
echo "TAP version 13"
echo "1..${#tests[@]}"
start=$(date +%s)

# report: print, in order, every finished test not yet shown.
report() {
	local n res rc dt
	while ((shown < ${#tests[@]})); do
		n=${tests[$shown]}
		res=$RESULTS/$n
		[[ -f $res/rc ]] || return 0
		shown=$((shown + 1))
		rc=$(cat "$res/rc")
		dt=$(cat "$res/secs")
		indent < "$res/output"
		if ((rc == 0)); then
			echo "ok $shown $n # ${dt}s"
			pass=$((pass + 1))
		else
			echo "not ok $shown $n # ${dt}s, results in ${res#"$ROOT/"}/"
			fail=$((fail + 1))
		fi
	done
}

# reap: wait for any running test to end and free its slots.
reap() {
	local p
	wait -n 2> /dev/null
	for p in "${!pid_weight[@]}"; do
		if ! kill -0 "$p" 2> /dev/null; then
			used=$((used - pid_weight[$p]))
			unset "pid_weight[$p]"
		fi
	done
}

for n in "${tests[@]}"; do
	w=$(weight "$n")
	while ((used > 0 && used + w > JOBS)); do
		reap
		report
	done
	mkdir -p "$RESULTS/$n"
	run_one "$n" &
	pid_weight[$!]=$w
	used=$((used + w))
	report
done
while ((${#pid_weight[@]})); do
	reap
	report
done
report
echo "# total $(($(date +%s) - start))s"
echo "$pass passed, $fail failed"
((fail == 0))
