#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# cpus: 2
# timeout: 500
#
# CPU 1 goes offline and online again, over and over, while loopback RC
# traffic runs on sroce0 (ibv_rc_pingpong -c and sroce_xfer, every byte
# checked, and ib_read_bw): the traffic completes, its QPs are destroyed
# when the programs exit (no reference may be left on a dead CPU's list),
# and the device and module go away.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

ONLINE=/sys/devices/system/cpu/cpu1/online
t_ok "two CPUs, CPU 1 can go offline" test "$(nproc)" = 2 -a -w $ONLINE || { t_done; exit 1; }
t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }

# toggle PID...: CPU 1 off and on until every PID has exited; counts rounds.
toggle() {
	local rounds=0 p alive
	while :; do
		alive=
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -n "$alive" ] || break
		echo 0 > $ONLINE || return 1
		sleep 0.3
		echo 1 > $ONLINE || return 1
		sleep 0.3
		rounds=$((rounds + 1))
	done
	echo "$rounds offline/online rounds"
	TOGGLES=$rounds
}

# xfer_loop: verified sroce_xfer pairs (READ and WRITE of 256 KiB and 1 MiB,
# each side requester and responder) one after another until /tmp/hp.stop
# appears, so QPs are created and destroyed while CPUs come and go.
xfer_loop() {
	local n=0 port srv
	while [ ! -e /tmp/hp.stop ]; do
		port=$((18960 + n))
		timeout 120 "$VERBS_BIN/sroce_xfer" -d sroce0 -g "$GID" -p $port \
			> /tmp/xs.log 2>&1 &
		srv=$!
		wait_for "tcp_listening $port" 60 || { kill $srv; return 1; }
		timeout 120 "$VERBS_BIN/sroce_xfer" -d sroce0 -g "$GID" -p $port \
			-o read,write -s 262144,1048576 "$(my_ip)" > /tmp/xc.log 2>&1 ||
			{ wait $srv; tail -n 5 /tmp/xs.log /tmp/xc.log; return 1; }
		wait $srv || { tail -n 5 /tmp/xs.log; return 1; }
		n=$((n + 1))
	done
	echo "$n verified sroce_xfer runs"
	[ $n -ge 1 ]
}

# traffic: an rc_pingpong pair (-c: every buffer checked), the sroce_xfer
# loop and an ib_read_bw pair in loopback, CPU 1 toggled until the pingpong
# and perftest pairs have exited. ib_read_bw's 256 KiB READs are longer than
# one softirq pass sends, so their responses keep the responder's per-CPU
# deferred-work tasklet pending while CPUs go away: before the fix this hung
# destroy_qp. ib_read_bw is load only: under hotplug its clock calibration
# fails (see perftest_noclock) and it printed 0.00 or no report and exited
# 1; it must still end by itself (124 is timeout's kill).
traffic() {
	local pids=() p rc=0 xl
	rm -f /tmp/hp.stop
	timeout 300 ibv_rc_pingpong -d sroce0 -g "$GID" -p 18950 -c -n 3000 -s 4096 > /tmp/pp.srv 2>&1 &
	pids+=($!)
	timeout 300 ib_read_bw -d sroce0 -x "$GID" -F -p 18952 -s 262144 -n 400 > /tmp/rd.srv 2>&1 &
	pids+=($!)
	wait_for "tcp_listening 18950 && tcp_listening 18952" 60 || return 1
	timeout 300 ibv_rc_pingpong -d sroce0 -g "$GID" -p 18950 -c -n 3000 -s 4096 "$(my_ip)" > /tmp/pp.cli 2>&1 &
	pids+=($!)
	timeout 300 ib_read_bw -d sroce0 -x "$GID" -F -p 18952 -s 262144 -n 400 "$(my_ip)" > /tmp/rd.cli 2>&1 &
	pids+=($!)
	xfer_loop > /tmp/xl.log 2>&1 &
	xl=$!
	toggle "${pids[@]}" || rc=1
	touch /tmp/hp.stop
	wait $xl || rc=1
	cat /tmp/xl.log
	for p in "${pids[@]}"; do
		wait "$p"
		case $? in 124) echo "pid $p timed out"; rc=1 ;; esac
	done
	tail -n 2 /tmp/pp.cli /tmp/rd.cli
	[ $rc = 0 ] && grep -q '3000 iters in' /tmp/pp.cli && grep -q '3000 iters in' /tmp/pp.srv
}
t_ok "rc_pingpong, sroce_xfer and ib_read_bw complete while CPU 1 goes off and on" traffic
t_ok "CPU 1 went offline and online at least 3 times meanwhile" test "${TOGGLES:-0}" -ge 3
XRUNS=$(awk '/verified sroce_xfer runs/ { print $1 }' /tmp/xl.log)
t_ok "${XRUNS:-no} sroce_xfer runs verified meanwhile (at least 2)" test "${XRUNS:-0}" -ge 2
t_ok "CPU 1 back online" test "$(cat $ONLINE)" = 1
nqp() { rdma resource show qp 2>/dev/null | grep -c 'comm \(ibv_rc_pingpong\|sroce_xfer\|ib_read_bw\)'; }
t_ok "their QPs are gone" wait_for '[ $(nqp) = 0 ]' 30
t_ok "rdma link delete sroce0" timeout 60 rdma link delete sroce0
t_ok "rmmod sroce" timeout 60 rmmod sroce
t_done
