#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 600
# secs: 70
#
# XRC in loopback. selftests/verbs/sroce_xrc: one initiator QP sends
# through one target QP into whichever XRC SRQ of the target's domain a
# work request names (SEND of 0..8000 bytes, with immediate, RDMA WRITE,
# READ and FETCH_ADD, whose rkeys are checked in the named SRQ's PD), byte
# for byte; an SRQ of another domain, one that never was and a destroyed
# one are remote access errors, as is a region of the wrong PD; a target
# QP opened by number outlives its creator. The counters those refusals
# moved; then an SRQ destroyed while messages stream into it returns at
# once and fails what follows. Last, libibverbs' own ibv_xsrq_pingpong,
# a server with one client and with four, all sharing one XRC domain file.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)

t_ok "sroce_xrc (XRC data path and refusals)" \
	timeout 300 "$VERBS_BIN/sroce_xrc" -d sroce0 -g "$GID"
show_counters
t_ok "bad_rkey == 4 (other domain, no such SRQ, destroyed SRQ, wrong PD)" \
	test "$(hw_counter bad_rkey)" -eq 4
t_ok "naks_sent == naks_rcvd == 4" \
	sh -c "[ $(hw_counter naks_sent) -eq 4 ] && [ $(hw_counter naks_rcvd) -eq 4 ]"
t_ok "no retransmits on the lossless loopback" test "$(hw_counter retransmits)" -eq 0
t_ok "sroce_xrc -r (an SRQ destroyed while SENDs stream into it)" \
	timeout 300 "$VERBS_BIN/sroce_xrc" -d sroce0 -g "$GID" -r

# xsrq PORT CLIENTS ARGS...: an ibv_xsrq_pingpong server for CLIENTS
# clients (its -c), then that many client processes once it listens (a
# client serves one connection). All of them share one XRC domain through
# /tmp/xrc_domain, so the server's SENDs to one client's SRQ go through
# the QP of another: each process must finish and say so.
xsrq() {
	local port=$1 n=$2 srv rc_s rc_c=0 i pids=()
	shift 2
	rm -f /tmp/xrc_domain /tmp/xs.*
	timeout 200 ibv_xsrq_pingpong -d sroce0 -g "$GID" -p "$port" -c "$n" "$@" \
		> /tmp/xs.srv 2>&1 &
	srv=$!
	if wait_for "tcp_listening $port || ! kill -0 $srv 2>/dev/null" 60 &&
		kill -0 $srv 2>/dev/null; then
		for i in $(seq 1 "$n"); do
			timeout 200 ibv_xsrq_pingpong -d sroce0 -g "$GID" -p "$port" \
				"$@" "$(my_ip)" > /tmp/xs.cli$i 2>&1 &
			pids+=($!)
		done
		for i in "${pids[@]}"; do
			wait "$i" || rc_c=$?
		done
	else
		rc_c=99
		kill $srv 2>/dev/null
	fi
	wait $srv
	rc_s=$?
	sed 's/^/srv: /' /tmp/xs.srv
	for i in $(seq 1 "$n"); do
		sed "s/^/cli$i: /" /tmp/xs.cli$i 2>/dev/null
	done
	echo "server exit $rc_s, clients exit $rc_c"
	[ "$rc_s" = 0 ] && [ "$rc_c" = 0 ] || return 1
	grep -q '^success' /tmp/xs.srv || return 1
	for i in $(seq 1 "$n"); do
		grep -q '^success' /tmp/xs.cli$i || return 1
	done
}
t_ok "ibv_xsrq_pingpong, one client" xsrq 18560 1 -n 100 -s 4096
t_ok "ibv_xsrq_pingpong, four clients" xsrq 18561 4 -n 50 -s 1024

t_ok "no XRC object left: rdma resource shows no QP" \
	sh -c '[ -z "$(rdma resource show qp link sroce0 | grep -v GSI)" ]'
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
