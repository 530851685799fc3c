#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 600
#
# `make demo`: sroce0 on each of two VMs, then ibv_rc_pingpong and
# ib_write_bw between them. VM 1 serves, VM 2 connects. Not a selftest
# (it lives outside the folders run-tests.sh collects).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

say() { echo "demo[vm$VM_ID]: $*"; }

sroce_up || exit 1
gid=$GID
say "sroce0 is ACTIVE, RoCE v2 GID index $gid"
ibv_devinfo -d sroce0 | sed "s/^/demo[vm$VM_ID]: /"
vm_barrier ready || exit 1

run_pair() { # name port server-cmd... -- client-args...
	local name=$1 port=$2 rc
	shift 2
	local -a srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	if [ "$VM_ID" = 1 ]; then
		timeout 120 "${srv[@]}" > "/tmp/$name.out" 2>&1 &
		local pid=$!
		wait_for "tcp_listening $port" 60 || { kill $pid; return 1; }
		vm_put "$name" listening
		wait $pid; rc=$?
	else
		vm_get "$name" 1 120 > /dev/null || return 1
		timeout 120 "${srv[@]}" "${cli[@]}" > "/tmp/$name.out" 2>&1
		rc=$?
	fi
	sed "s/^/demo[vm$VM_ID] $name: /" "/tmp/$name.out"
	say "$name exit status $rc"
	return $rc
}

fail=0
run_pair rc_pingpong 18515 ibv_rc_pingpong -d sroce0 -g "$gid" -s 4096 -n 1000 -c -- \
	"$(peer_ip)" || fail=1
vm_barrier between || exit 1
run_pair write_bw 18600 ib_write_bw -d sroce0 -x "$gid" -s 65536 -n 300 -F -p 18600 -- \
	"$(peer_ip)" || fail=1
vm_barrier done || exit 1
exit $fail
