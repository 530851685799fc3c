#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 600
# secs: 110
#
# selftests/verbs/sroce_verbs in loopback: RC SEND/WRITE/READ at sizes
# around the path MTU up to 8 MiB and atomics, checked byte for byte; bad
# rkey, out-of-bounds and missing-permission accesses (REM_ACCESS_ERR) with
# every WR behind them flushed; RNR with rnr_retry 0; UD through an SRQ,
# the SRQ resized with WQEs posted; SQD with SQ_DRAINED; object limits and
# rereg; UD multicast (IPv4 and IPv6 groups, attach/detach, refusals).
# Then the error counters must have moved.
# Per-QP counters (auto and manual binding) bound, counting, released by
# a kill, by unbind and by the device's removal, and freed under readers.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/teardown.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)

verbs() {
	timeout 400 "$VERBS_BIN/sroce_verbs" -d sroce0 -g "$GID" "$@"
}
t_ok "sroce_verbs (loopback data path and error completions)" verbs

show_counters
# Fresh module: exactly the three remote access errors and the one RNR.
t_ok "bad_rkey == 4 (bad rkey, out of bounds, no permission twice)" \
	test "$(hw_counter bad_rkey)" -eq 4
t_ok "naks_sent == naks_rcvd == 4" \
	sh -c "[ $(hw_counter naks_sent) -eq 4 ] && [ $(hw_counter naks_rcvd) -eq 4 ]"
t_ok "rnr_naks_sent == rnr_naks_rcvd == 1" \
	sh -c "[ $(hw_counter rnr_naks_sent) -eq 1 ] && [ $(hw_counter rnr_naks_rcvd) -eq 1 ]"
t_ok "rnr_retry_exceeded_err == 1" test "$(hw_counter rnr_retry_exceeded_err)" -eq 1
t_ok "packets counted both ways" \
	sh -c "[ $(hw_counter sent_pkts) -gt 0 ] && [ $(hw_counter rcvd_pkts) -gt 0 ]"
t_ok "no retransmits on the lossless loopback" test "$(hw_counter retransmits)" -eq 0

# SQD after the counter checks: its drain waits on RNR NAKs on purpose.
rnr0=$(hw_counter rnr_naks_rcvd)
t_ok "sroce_verbs -s: SQD drains what began, SQ_DRAINED, then RTS" verbs -s
t_ok "the drain waited behind RNR NAKs" test "$(hw_counter rnr_naks_rcvd)" -gt "$rnr0"

# UD multicast within one host: every datagram comes back through IP's
# multicast loopback, once per attached QP.
mc() { timeout 120 "$VERBS_BIN/sroce_mcast" -d sroce0 "$@"; }
t_ok "multicast to 239.1.2.3 (sroce_mcast -l)" mc -g "$GID" -m 239.1.2.3 -l
t_ok "an IPv6 GID" wait_for "roce_gid6_index sroce0 > /dev/null" 60
t_ok "multicast to ff0e::1:2:3 (sroce_mcast -l)" mc -g "$(roce_gid6_index sroce0)" -m ff0e::1:2:3 -l
mc -g "$GID" -m 239.1.2.4 -r -n 20 > /tmp/mcr.out 2>&1 &
MCR=$!
t_ok "a receiver attached to 239.1.2.4" wait_for "grep -q '^ready' /tmp/mcr.out" 60
t_ok "... made eth0 join 239.1.2.4" sh -c "ip maddr show dev eth0 | grep -qw 239.1.2.4"
t_ok "20 datagrams sent by another process" mc -g "$GID" -m 239.1.2.4 -s -n 20
t_ok "... reach both its QPs, byte for byte" wait "$MCR"
cat /tmp/mcr.out
t_ok "eth0 left 239.1.2.4 and 239.1.2.3" \
	sh -c "! ip maddr show dev eth0 | grep -qw '239.1.2.[34]'"

# Per-QP counters (`rdma statistic qp`): a bound QP counts in its counter
# instead of the device's slots. ib_core adds the device's, the running
# counters' and the released counters' figures into the port's, so the
# port's sent_pkts for the same pingpong must neither drop nor double.
IP=$(my_ip)
# qpc KEY: KEY's value in every per-QP counter of sroce0, one per line.
qpc() {
	rdma -j statistic qp show link sroce0/1 | /usr/bin/python3 -c '
import json, sys
for c in json.load(sys.stdin):
    v = c.get(sys.argv[1], c.get("hwcounters", {}).get(sys.argv[1]))
    print(" ".join(map(str, v)) if isinstance(v, list) else v)' "$1"
}
# pp_sent PORT: sent_pkts added to the port by a checked 300-iteration
# pingpong pair on PORT.
pp_sent() {
	local s0
	s0=$(hw_counter sent_pkts)
	td_pingpong sroce0 "$GID" "$IP" "$1" 300 > /tmp/pp.log 2>&1 ||
		{ cat /tmp/pp.log; return 1; }
	echo $(($(hw_counter sent_pkts) - s0))
}
SENT0=$(pp_sent 18600) && t_pass "pingpong without counters: $SENT0 packets" ||
	t_bad "pingpong without counters"
t_ok "rdma statistic qp set link sroce0/1 auto type on" \
	rdma statistic qp set link sroce0/1 auto type on
td_pp_start qpc sroce0 "$GID" "$IP" 18601
t_ok "a running pingpong's two QPs are bound to one counter" \
	wait_for '[ "$(qpc lqpn | wc -w)" = 2 ]' 60
t_ok "... which counts their packets" \
	wait_for '[ "$(qpc sent_pkts | head -1)" -gt 100 ]' 60
rdma statistic qp show link sroce0/1
for p in $TD_PIDS; do kill_tree "${p#*=}"; done
t_ok "pingpong killed: its counter is released" \
	wait_for '[ -z "$(qpc cntn)" ]' 60
SENT1=$(pp_sent 18602) && t_pass "pingpong with auto counters: $SENT1 packets" ||
	t_bad "pingpong with auto counters"
t_ok "the port counted it as often as without counters (+-1/3)" \
	test $((SENT1 * 4)) -ge $((SENT0 * 3)) -a $((SENT1 * 3)) -le $((SENT0 * 4))
t_ok "... and the counter went with the QPs" test -z "$(qpc cntn)"

# Readers against release: a counter's slots are freed when its last QP
# goes, while `rdma statistic` and the port's sysfs files may be summing
# them. Eight short pingpongs come and go (a counter each) under two
# readers that never pause; make check-debug's KASAN sees any read of a
# freed counter.
read_loop() {
	local n=0
	while [ ! -e /tmp/qpc.stop ]; do
		"$@" > /dev/null 2>&1
		n=$((n + 1))
	done
	echo $n
}
rm -f /tmp/qpc.stop
read_loop rdma -j statistic qp show link sroce0/1 > /tmp/qpc.r1 &
R1=$!
read_loop cat /sys/class/infiniband/sroce0/ports/1/hw_counters/sent_pkts > /tmp/qpc.r2 &
R2=$!
ok=0
for i in 1 2 3 4 5 6 7 8; do
	td_pingpong sroce0 "$GID" "$IP" $((18610 + i)) 10 > /tmp/pp.log 2>&1 &&
		ok=$((ok + 1))
done
touch /tmp/qpc.stop
wait $R1 $R2
t_ok "8 of 8 pingpongs with counters coming and going under readers" test $ok -eq 8
t_ok "... while both readers kept reading ($(cat /tmp/qpc.r1), $(cat /tmp/qpc.r2) reads)" \
	test "$(cat /tmp/qpc.r1)" -gt 8 -a "$(cat /tmp/qpc.r2)" -gt 8
t_ok "... and every counter went with its QPs" wait_for '[ -z "$(qpc cntn)" ]' 30

# Manual mode: one QP of a running pingpong bound by QPN mid-traffic,
# unbound (the counter goes), bound again; then the device goes away
# under it.
t_ok "auto mode off" rdma statistic qp set link sroce0/1 auto off
# pp_qpns: QPNs of the pingpong's QPs in RTS.
pp_qpns() {
	rdma -j resource show qp link sroce0/1 | /usr/bin/python3 -c '
import json, sys
for q in json.load(sys.stdin):
    if q.get("comm") == "ibv_rc_pingpong" and q.get("state") == "RTS":
        print(q["lqpn"])'
}
td_pp_start qpd sroce0 "$GID" "$IP" 18603
t_ok "a pingpong's two QPs in RTS" wait_for '[ "$(pp_qpns | wc -w)" = 2 ]' 60
Q=$(pp_qpns | head -1)
t_ok "rdma statistic qp bind link sroce0/1 lqpn $Q" \
	rdma statistic qp bind link sroce0/1 lqpn "$Q"
t_ok "... a counter of its own, which counts its packets" \
	wait_for '[ "$(qpc lqpn)" = "$Q" ] && [ "$(qpc sent_pkts)" -gt 10 ]' 60
C=$(qpc cntn)
t_ok "rdma statistic qp unbind cntn $C lqpn $Q" \
	rdma statistic qp unbind link sroce0/1 cntn "$C" lqpn "$Q"
t_ok "... releases the counter" test -z "$(qpc cntn)"
t_ok "bound again" rdma statistic qp bind link sroce0/1 lqpn "$Q"
t_ok "rdma link delete under it" timeout 60 rdma link delete sroce0
# shellcheck disable=SC2086 # one NAME=PID word each
t_ok "... the pingpong ends by itself" td_ended 60 $TD_PIDS
t_ok "rmmod sroce" rmmod sroce
t_done
