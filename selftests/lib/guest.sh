# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers for selftest scripts running inside a test guest. Source with
#   . "$REPO/selftests/lib/guest.sh"
# The harness (scripts/vm.sh) sets VM_ID, NVMS, MTU, REPO, STAGE, RESULTS,
# SYNC and KVER. The VMs' eth0 addresses are 10.77.0.<id>/24, fd77::<id>/64.

: "${VM_ID:?guest.sh: VM_ID unset (not running under scripts/vm.sh?)}"
: "${NVMS:=1}"
# SROCE_TIMEOUT_SCALE on the host (make check-debug): every bound a test
# sets with timeout(1) or wait_for stretches with the kernel's slowness.
: "${TSCALE:=1}"

# timeout [-k SECS] SECS CMD...: timeout(1), both SECS times TSCALE.
timeout() {
	local a=()
	while [[ ${1:-} == -k ]]; do
		a+=(-k "$(($2 * TSCALE))")
		shift 2
	done
	[[ ${1:-} =~ ^[0-9]+$ ]] && { a+=("$(($1 * TSCALE))"); shift; }
	command timeout "${a[@]}" "$@"
}

vm_id() { echo "$VM_ID"; }

# With two VMs the peer is the other one; with one VM there is none.
peer_id() { echo $((3 - VM_ID)); }

# peer_ip [-6]
peer_ip() {
	if [ "${1:-}" = -6 ]; then echo "fd77::$(peer_id)"; else echo "10.77.0.$(peer_id)"; fi
}

# my_ip [-6]
my_ip() {
	if [ "${1:-}" = -6 ]; then echo "fd77::$VM_ID"; else echo "10.77.0.$VM_ID"; fi
}

# wait_for CMD TIMEOUT: poll until the shell command CMD succeeds; returns 1
# (and says so on stderr) if it has not after TIMEOUT seconds (may be a
# fraction). Also accepted: wait_for TIMEOUT CMD [ARGS...].
wait_for() {
	local cmd timeout deadline
	if [ $# -eq 2 ] && [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		cmd=$1 timeout=$2
	elif [[ ${1:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ $# -ge 2 ]; then
		timeout=$1
		shift
		cmd=$(printf '%q ' "$@")
	else
		echo "wait_for: usage: wait_for CMD TIMEOUT" >&2
		return 2
	fi
	timeout=$(awk -v t="$timeout" -v s="$TSCALE" 'BEGIN { print t * s }')
	deadline=$(awk -v t="$timeout" -v u="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { print u + t }')
	while :; do
		eval "$cmd" && return 0
		if awk -v d="$deadline" -v u="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { exit !(u > d) }'; then
			echo "wait_for: timed out after ${timeout}s: $cmd" >&2
			return 1
		fi
		sleep 0.1
	done
}

# vm_barrier NAME [TIMEOUT]: wait until every VM has reached the barrier
# NAME. A name may be used repeatedly; each use is a new barrier. Fails if
# a peer finishes its test without reaching it, or after TIMEOUT (120) s.
vm_barrier() {
	local name=${1:?vm_barrier NAME}
	local timeout=${2:-120} gen i deadline missing
	name=${name//[^A-Za-z0-9_.-]/_}
	gen=$(cat "/run/sroce-barrier.$name" 2>/dev/null || echo 0)
	gen=$((gen + 1))
	echo "$gen" > "/run/sroce-barrier.$name"
	: > "$SYNC/$name.$gen.vm$VM_ID"
	deadline=$(($(cut -d. -f1 /proc/uptime) + timeout))
	while :; do
		missing=
		for i in $(seq "$NVMS"); do
			[ -e "$SYNC/$name.$gen.vm$i" ] && continue
			missing=$i
			if [ -e "$RESULTS/vm$i.status" ]; then
				echo "vm_barrier $name: vm$i finished without reaching it" >&2
				return 1
			fi
		done
		[ -z "$missing" ] && return 0
		if (($(cut -d. -f1 /proc/uptime) >= deadline)); then
			echo "vm_barrier $name: timed out after ${timeout}s waiting for vm$missing" >&2
			return 1
		fi
		sleep 0.05
	done
}

# vm_put NAME VALUE / vm_get NAME [VM] [TIMEOUT]: pass a small value to the
# other VM (e.g. a QPN); vm_get waits for it.
vm_put() {
	printf '%s\n' "$2" > "$SYNC/val.$1.vm$VM_ID.tmp" &&
		mv "$SYNC/val.$1.vm$VM_ID.tmp" "$SYNC/val.$1.vm$VM_ID"
}
vm_get() {
	local f="$SYNC/val.$1.vm${2:-$(peer_id)}"
	wait_for "[ -e '$f' ]" "${3:-120}" && cat "$f"
}

# load_sroce: the RDMA core plus sroce from the staged install.
load_sroce() {
	modprobe -a ib_core ib_uverbs rdma_ucm || return 1
	modprobe sroce
}

# add_sroce_link [NAME] [NETDEV]: defaults sroce0 on eth0.
add_sroce_link() {
	rdma link add "${1:-sroce0}" type sroce netdev "${2:-eth0}"
}

# add_rxe_link [NAME] [NETDEV]: the in-kernel rdma_rxe, for comparison.
add_rxe_link() {
	modprobe -a ib_core ib_uverbs rdma_ucm rdma_rxe || return 1
	rdma link add "${1:-rxe0}" type rxe netdev "${2:-eth0}"
}

# Minimal TAP for subtests. t_ok DESC CMD...: CMD must succeed;
# t_fail DESC CMD...: CMD must fail. Output of a failing check is shown
# as TAP comments. t_done prints the plan and returns non-zero on failures.
_t_n=0
_t_failed=0
_t_report() { # rc-ok desc outputfile
	_t_n=$((_t_n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $_t_n - $2"
	else
		echo "not ok $_t_n - $2"
		sed -e 's/^/# /' "$3"
		_t_failed=$((_t_failed + 1))
	fi
}
# _t_took T0: " (N s)" if more than 4 s passed since uptime T0, for
# finding where a test spends its time.
_t_took() {
	awk -v t="$1" -v u="$(cut -d' ' -f1 /proc/uptime)" \
		'BEGIN { if (u - t > 4) printf " (%d s)", u - t }'
}
t_ok() {
	local desc=$1 out rc t0
	shift
	out=$(mktemp)
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" > "$out" 2>&1
	rc=$?
	desc+=$(_t_took "$t0")
	[ $rc -eq 0 ] && _t_report 1 "$desc" "$out" ||
		{ echo "exit status $rc: $*" >> "$out"; _t_report 0 "$desc" "$out"; }
	rm -f "$out"
	return $rc
}
t_fail() {
	local desc=$1 out rc
	shift
	out=$(mktemp)
	"$@" > "$out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		_t_report 1 "$desc" "$out"
	else
		echo "unexpectedly succeeded: $*" >> "$out"
		_t_report 0 "$desc" "$out"
	fi
	rm -f "$out"
	[ $rc -ne 0 ]
}
# t_pass DESC / t_bad DESC [WHY]: report an outcome checked by the caller.
t_pass() { _t_n=$((_t_n + 1)); echo "ok $_t_n - $1"; }
t_bad() {
	_t_n=$((_t_n + 1))
	_t_failed=$((_t_failed + 1))
	echo "not ok $_t_n - $1"
	[ -n "${2:-}" ] && echo "# $2"
	return 1
}
t_done() {
	echo "1..$_t_n"
	[ "$_t_failed" -eq 0 ]
}
