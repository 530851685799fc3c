#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 400
#
# Raw packet QPs and flows (pyverbs' test_qp, test_flow and
# test_rss_traffic show the well-formed cases): frames too short and too
# long, refused flows, the per-device flow limit, a flood into a single
# receive; then a process receiving through a flow is killed under a
# flood, and the device and module still go away cleanly. A veth
# deleted under a process receiving through a flow takes its device.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

RH="/usr/bin/python3 $REPO/selftests/verbs/raw_hostile.py"
t_ok "sroce0 up" sroce_up || { t_done; exit 1; }
t_ok "bad frames, refused flows, flow limit, flood into one WQE, WQ states" \
	timeout 200 $RH sroce0 eth0 checks

# Frames that come in through a netdev's receive path, where the stack has
# taken any VLAN tag out of the frame: a veth pair, the device on one end.
t_ok "a veth pair vraw0/vraw1 up" sh -c 'ip link add vraw0 type veth peer name vraw1 &&
	ip link set vraw0 up && ip link set vraw1 up'
t_ok "rdma link add sroce_v on a veth" rdma link add sroce_v type sroce netdev vraw0
t_ok "frames from the wire, one tagged, reach a flow whole" \
	timeout 100 $RH sroce_v vraw0 wire vraw1
# The netdev deleted under a process receiving through a flow: the
# flow's tap on the netdev must go with the device, before the netdev
# does, and the process is left with a dead context, not a hang.
$RH sroce_v vraw0 sink > /tmp/sinkv.out 2>&1 &
SINKV=$!
t_ok "a receiver with a flow on sroce_v is ready" wait_for "grep -q '^ready' /tmp/sinkv.out" 60
t_ok "ip link del vraw0 under it" ip link del vraw0
t_ok "sroce_v went with its netdev" wait_for '[ ! -e /sys/class/infiniband/sroce_v ]' 30
# (a zombie has exited: its files, the context among them, are closed)
gone() { [ ! -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status"; }
# Its poll may fail on the dead context and end it first.
reap() { kill -9 "$1" 2> /dev/null; wait_for "gone $1" 30; }
t_ok "the receiver exits (on its dead context, or on SIGKILL)" reap $SINKV
wait $SINKV 2> /dev/null

$RH sroce0 eth0 sink > /tmp/sink.out 2>&1 &
SINK=$!
t_ok "a receiver with a flow is ready" wait_for "grep -q '^ready' /tmp/sink.out" 60
$RH sroce0 eth0 flood 3000 > /tmp/flood.out 2>&1 &
FLOOD=$!
t_ok "receives arrive" wait_for \
	"[ \$(cat /sys/class/infiniband/sroce0/ports/1/hw_counters/rcvd_pkts) -gt 100 ]" 60
t_ok "the receiver is killed under the flood" kill -9 $SINK
wait $SINK 2>/dev/null
t_ok "the flood ends by itself" wait_for "! kill -0 $FLOOD 2>/dev/null" 120
t_ok "rdma link delete sroce0" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
