#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 400
#
# A process that lies through everything it shares with the kernel
# (selftests/verbs/sroce_hostile: its own rings written behind libsroce's
# back, malformed WQEs, a scribbling thread, a child killed mid-transfer,
# objects freed while in use, SRQ resizes with bad commands) gets errors
# back and nothing else: every case passes, no object outlives the
# process, the device still carries a pingpong, and it goes away cleanly.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
quiet_user_faults
HOSTILE_OUT=$(mktemp)
hostile() {
	timeout 300 "$VERBS_BIN/sroce_hostile" -d sroce0 -g "$GID" 2>&1 | tee "$HOSTILE_OUT"
	return "${PIPESTATUS[0]}"
}
t_ok "sroce_hostile: every case gets an error back, the kernel survives" hostile
grep -h 'rx_task_seq moved' "$HOSTILE_OUT" | sed 's/^ */# /'
rm -f "$HOSTILE_OUT"
show_counters
nres() { rdma resource show "$1" 2>/dev/null | grep -c "comm sroce_hostile"; }
t_ok "no QP, CQ, MR or PD of it outlives the process" \
	wait_for '[ $(($(nres qp) + $(nres cq) + $(nres mr) + $(nres pd))) = 0 ]' 30
pingpong() {
	local srv rc
	timeout 120 ibv_rc_pingpong -d sroce0 -g "$GID" -p 18700 -c -n 50 > /tmp/pp.srv 2>&1 &
	srv=$!
	wait_for "tcp_listening 18700" 30 &&
		timeout 120 ibv_rc_pingpong -d sroce0 -g "$GID" -p 18700 -c -n 50 "$(my_ip)" > /tmp/pp.cli 2>&1
	rc=$?
	wait $srv && [ $rc = 0 ] && grep -q ' iters in ' /tmp/pp.cli
}
t_ok "a well-behaved pingpong still works" pingpong
t_ok "rdma link delete sroce0" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
