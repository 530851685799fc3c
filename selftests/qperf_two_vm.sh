#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 450
# slub: 0
#
# Debian's qperf 0.4.11, a client nobody here wrote, over rdma_cm (-cm1)
# against sroce0: VM 1 runs the qperf server, VM 2 one client run of the
# RC tests. The client must exit 0 and print a positive figure for each
# test; on the server every per-test child must end and leave no QP or MR
# behind.
#
# qperf 0.4.11's server child always segfaults when it closes an rdma_cm
# test (cm_close() calls rdma_destroy_qp() on the listening id, whose qp
# is NULL: a NULL read in ibv_destroy_qp; qperf fixed that after 0.4.11,
# commit 83bc16e). rxe0 crashes exactly the same way. The child's exit
# then has the kernel tear down a live RTS QP and its MR: with sroce that
# exit once hung in D state in sroce_dereg_mr, so the server never
# forked the next test's child and the client timed out on its second
# test, which is what this test catches. The segfault itself is not
# logged (quiet_user_faults), or the harness would read it as a splat.
# qperf without -cm1 cannot run on RoCE at all: it addresses by LID, and
# ib_core refuses an RTR without a GRH on RoCE (EINVAL, rxe alike).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

TESTS=(rc_rdma_write_bw rc_rdma_read_bw rc_bw rc_lat)

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "user-space faults not logged as kernel faults" quiet_user_faults
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# qperf_children: pids of the qperf server's per-test children.
qperf_children() { pgrep -P "$SERVE_PID" -x qperf; }

# no_children: the server has no child left; if one is stuck, its state
# and kernel stack say where.
no_children() {
	local p
	[ -z "$(qperf_children)" ] && return 0
	for p in $(qperf_children); do
		echo "child $p: $(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)"
		cat "/proc/$p/stack" 2>/dev/null
	done
	return 1
}

# nothing_left TYPE: no qperf object of rdma resource TYPE remains.
nothing_left() {
	! rdma resource show "$1" | grep 'comm qperf'
}

# results_ok FILE: every test in TESTS printed its name and then a
# positive bw or latency figure.
results_ok() {
	local t bad=0
	for t in "${TESTS[@]}"; do
		awk -v t="$t:" '$1 == t { h = 1; next }
			h && ($1 == "bw" || $1 == "latency") && $2 == "=" {
				if ($3 + 0 > 0) ok = 1; h = 0 }
			END { exit !ok }' "$1" || { echo "no figure for $t"; bad=1; }
	done
	return $bad
}

if [ "$VM_ID" = 1 ]; then
	qperf > /tmp/qperf_srv.out 2>&1 &
	SERVE_PID=$!
	t_ok "qperf server listens" wait_for "tcp_listening 19765" 60
	vm_put qperf ready
	t_ok "client done" vm_get qperf_cli "$(peer_id)" 400
	t_ok "every per-test child ended" wait_for no_children 30
	t_ok "no qperf QP left" nothing_left qp
	t_ok "no qperf MR left" nothing_left mr
	kill "$SERVE_PID"
	wait "$SERVE_PID"
	sed 's/^/# srv: /' /tmp/qperf_srv.out
else
	t_ok "qperf -cm1 ${TESTS[*]}" client qperf \
		timeout 200 qperf -cm1 -t 2 -m 65536 "$(peer_ip)" "${TESTS[@]}"
	vm_put qperf_cli done
	t_ok "a positive figure for each test" results_ok /tmp/qperf.out
fi
pair_done
