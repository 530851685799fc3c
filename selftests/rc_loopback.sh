#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 600
# secs: 60
# slub: 0
#
# libibverbs example programs in loopback: server and client are two
# processes on the same sroce0, talking through the device to itself, with
# -c (every received buffer checked). Then the port counters must show the
# traffic and no retransmission on this lossless path. Last, every perftest
# tool in loopback (-R runs between two VMs, in tools_two_vm and interop).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)
port=18515

# pingpong PROG ARGS...: server in the background, client once it listens.
pingpong() {
	local prog=$1 srv rc_s rc_c
	shift
	timeout 200 "$prog" -d sroce0 -g "$GID" -p $port -c "$@" > /tmp/pp.srv 2>&1 &
	srv=$!
	if wait_for "tcp_listening $port || ! kill -0 $srv 2>/dev/null" 60 &&
		kill -0 $srv 2>/dev/null; then
		timeout 200 "$prog" -d sroce0 -g "$GID" -p $port -c "$@" "$(my_ip)" > /tmp/pp.cli 2>&1
		rc_c=$?
	else
		rc_c=99
		kill $srv 2>/dev/null
	fi
	wait $srv
	rc_s=$?
	sed 's/^/srv: /' /tmp/pp.srv
	sed 's/^/cli: /' /tmp/pp.cli 2>/dev/null
	port=$((port + 1))
	echo "server exit $rc_s, client exit $rc_c"
	# both sides must report their completed iterations
	[ "$rc_s" = 0 ] && [ "$rc_c" = 0 ] && grep -q ' iters in ' /tmp/pp.srv &&
		grep -q ' iters in ' /tmp/pp.cli
}

t_ok "ibv_rc_pingpong 1 byte" pingpong ibv_rc_pingpong -n 100 -s 1
t_ok "ibv_rc_pingpong 4096 bytes" pingpong ibv_rc_pingpong -n 100 -s 4096
t_ok "ibv_rc_pingpong 65536 bytes" pingpong ibv_rc_pingpong -n 50 -s 65536
t_ok "ibv_rc_pingpong events (-e)" pingpong ibv_rc_pingpong -n 50 -s 4096 -e
t_ok "ibv_uc_pingpong" pingpong ibv_uc_pingpong -n 100 -s 4096
t_ok "ibv_ud_pingpong" pingpong ibv_ud_pingpong -n 100 -s 1024
t_ok "ibv_srq_pingpong" pingpong ibv_srq_pingpong -n 100 -s 4096

show_counters
t_ok "sent_pkts > 0" test "$(hw_counter sent_pkts)" -gt 0
t_ok "rcvd_pkts > 0" test "$(hw_counter rcvd_pkts)" -gt 0
t_ok "no retransmits" test "$(hw_counter retransmits)" -eq 0
t_ok "no duplicate/out-of-sequence requests" \
	test "$(($(hw_counter duplicate_request) + $(hw_counter out_of_seq_request)))" -eq 0
t_ok "rdma statistic agrees: sent_pkts" \
	sh -c "rdma statistic show link sroce0/1 | grep -Eq 'sent_pkts [1-9]'"

# perf TOOL ARGS...: a perftest tool in loopback (server in the background,
# client once it listens); both must exit 0 and the client must print a
# numeric result line under perftest's header.
perf() {
	local tool=$1 srv rc_s rc_c
	shift
	timeout 200 "$tool" -d sroce0 -x "$GID" -F -p $port "$@" > /tmp/pf.srv 2>&1 &
	srv=$!
	if wait_for "tcp_listening $port || ! kill -0 $srv 2>/dev/null" 60 &&
		kill -0 $srv 2>/dev/null; then
		timeout 200 "$tool" -d sroce0 -x "$GID" -F -p $port "$@" "$(my_ip)" > /tmp/pf.cli 2>&1
		rc_c=$?
	else
		rc_c=99
		kill $srv 2>/dev/null
	fi
	wait $srv
	rc_s=$?
	sed 's/^/cli: /' /tmp/pf.cli 2>/dev/null | tail -n 4
	port=$((port + 1))
	echo "server exit $rc_s, client exit $rc_c"
	[ "$rc_s" = 0 ] && [ "$rc_c" = 0 ] &&
		awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { ok = 1 }
		     END { exit !ok }' /tmp/pf.cli
}

t_ok "ib_send_bw loopback" perf ib_send_bw -s 4096 -n 100
t_ok "ib_write_bw loopback" perf ib_write_bw -s 65536 -n 50
t_ok "ib_read_bw loopback" perf ib_read_bw -s 65536 -n 50
t_ok "ib_atomic_bw loopback" perf ib_atomic_bw -n 100
t_ok "ib_send_lat loopback" perf ib_send_lat -n 50
t_ok "ib_write_lat loopback" perf ib_write_lat -n 50
t_ok "ib_read_lat loopback" perf ib_read_lat -n 50
t_ok "ib_atomic_lat loopback" perf ib_atomic_lat -n 50
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
