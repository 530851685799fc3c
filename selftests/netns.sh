#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 900
# secs: 200
#
# Network namespaces. A sroce device sends and receives in its netdev's
# namespace, through that namespace's own UDP 4791 sockets, opened with
# its first device and closed with its last. Shared mode (the default):
# two namespaces joined by a veth pair talk RC over IPv4 and IPv6 and
# rdma_cm, every byte checked, and the packets cross the veth; a port
# taken in one namespace refuses only that namespace's device; a netdev
# moved out takes its device with it; a namespace deleted under traffic
# takes its devices, and nothing blocks. Exclusive mode: devices moved
# into namespaces are seen only there and still work; deleting the
# namespace removes them.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

A4=10.91.0.1
B4=10.91.0.2
A6=fd00:91::1
B6=fd00:91::2
port=18700
devs() { ls /sys/class/infiniband 2> /dev/null | tr '\n' ' '; }

# bound NS: a UDP socket is bound to port 4791 in namespace NS.
bound() { ip netns exec "$1" ss -Huln 'sport = :4791' | grep -q .; }

# pingpong NSA DEVA IPA NSB DEVB IPB ARGS...: ibv_rc_pingpong, every
# buffer checked, server on DEVA in NSA, client on DEVB in NSB, each on
# its GID for its IP. The TCP exchange runs in the namespaces too, to
# IPA, or to TCP_TO (the server listens on IPv4 only).
pingpong() {
	local ga gb nsa=$1 da=$2 ipa=$3 nsb=$4 db=$5 ipb=$6
	shift 6
	ga=$(gid_in "$nsa" "$da" "$ipa") && gb=$(gid_in "$nsb" "$db" "$ipb") ||
		{ echo "no GID"; return 1; }
	pingpong_pair "$nsa" "$da" "$ga" "$nsb" "$db" "$gb" "${TCP_TO:-$ipa}" "$@"
}

# grew_by BEFORE NOW MIN: NOW - BEFORE >= MIN.
grew_by() { [ $(($2 - $1)) -ge "$3" ] || { echo "grew by $(($2 - $1)), want >= $3"; return 1; }; }

ns_tx() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }

# --- shared mode ---------------------------------------------------------
t_ok "modprobe veth" modprobe veth
t_ok "namespaces na, nb joined by veth va/vb" ns_pair na nb va vb $A4 $B4 $A6 $B6 ||
	{ t_done; exit 1; }
t_ok "load sroce" load_sroce || { t_done; exit 1; }
t_ok "init_net's socket is bound (at modprobe)" sh -c 'ss -Huln "sport = :4791" | grep -q .'
t_fail "no socket in na before its first device" bound na
t_ok "rdma link add sa (netdev va, in na)" ip netns exec na rdma link add sa type sroce netdev va
t_ok "rdma link add sb (netdev vb, in nb)" ip netns exec nb rdma link add sb type sroce netdev vb
t_ok "sa ready, seen from na" ready na sa $A4
t_ok "sb ready, seen from nb" ready nb sb $B4
t_ok "sa has the IPv6 GID" ready na sa $A6
t_ok "sb has the IPv6 GID" ready nb sb $B6
t_ok "na has its own socket on 4791" bound na
t_ok "nb has its own socket on 4791" bound nb
t_ok "sa's parent is va" grep -qx va /sys/class/infiniband/sa/parent

S0=$(hw_counter sent_pkts sa)
R0=$(hw_counter rcvd_pkts sb)
T0=$(ns_tx na va)
t_ok "RC pingpong na <-> nb over IPv4, 200 x 1 KiB checked" \
	pingpong na sa $A4 nb sb $B4 -n 200 -s 1024
t_ok "sa sent >= 200 packets" grew_by "$S0" "$(hw_counter sent_pkts sa)" 200
t_ok "sb received >= 200 packets" grew_by "$R0" "$(hw_counter rcvd_pkts sb)" 200
t_ok "they crossed va (in na)" grew_by "$T0" "$(ns_tx na va)" 200
pingpong6() { TCP_TO=$A4 pingpong na sa $A6 nb sb $B6 "$@"; }
S0=$(hw_counter sent_pkts sa)
t_ok "RC pingpong na <-> nb over IPv6, 200 x 4 KiB checked" pingpong6 -n 200 -s 4096
t_ok "sa sent >= 200 more packets" grew_by "$S0" "$(hw_counter sent_pkts sa)" 200
t_ok "no retransmissions on sa" test "$(hw_counter retransmits sa)" -eq 0
t_ok "no retransmissions on sb" test "$(hw_counter retransmits sb)" -eq 0

# A VLAN on va moved to namespace nz (which has a device, so a socket on
# 4791) is not sa's: packets reaching nz through it must not be served
# by sa. Five go there, then five to va itself as the control, all to
# QPN 0x4242 (none): sa counts the control only.
vlan_setup() {
	ip netns add nz &&
		ip link add vz0 netns nz type veth peer name vz1 netns nz &&
		ip -n nz link set vz0 up && ip -n nz link set vz1 up &&
		ip netns exec nz rdma link add sz type sroce netdev vz0 &&
		ip -n na link add link va name va.5 type vlan id 5 &&
		ip -n na link set va.5 netns nz &&
		ip -n nz addr add 10.91.5.1/24 dev va.5 && ip -n nz link set va.5 up &&
		ip -n nb link add link vb name vb.5 type vlan id 5 &&
		ip -n nb addr add 10.91.5.2/24 dev vb.5 && ip -n nb link set vb.5 up
}
inject_nb() {
	ip netns exec nb "$VERBS_BIN/sroce_inject" -s "$1" -d "$2" send \
		op=RC_SEND_ONLY qpn=0x4242 psn=7 len=16 count=5 > /dev/null
}
t_ok "VLAN va.5 moved to nz (device sz on vz0 there), vb.5 in nb" vlan_setup
t_ok "nz has its socket" bound nz
N0=$(hw_counter no_qp_drops sa)
RX0=$(ip netns exec nz cat /sys/class/net/va.5/statistics/rx_packets)
t_ok "inject 5 packets to va.5 (in nz)" inject_nb 10.91.5.2 10.91.5.1
t_ok "they reached va.5" wait_for \
	"[ \$(ip netns exec nz cat /sys/class/net/va.5/statistics/rx_packets) -ge $((RX0 + 5)) ]" 10
t_ok "inject 5 packets to va (control)" inject_nb $B4 $A4
t_ok "sa counted the control" wait_for "[ \$(hw_counter no_qp_drops sa) -ge $((N0 + 5)) ]" 10
t_ok "and only the control" test "$(hw_counter no_qp_drops sa)" -eq $((N0 + 5))
t_ok "sz counted nothing" test "$(hw_counter no_qp_drops sz)" -eq 0
t_ok "delete nz (sz goes)" sh -c 'ip netns del nz && ip -n nb link del vb.5'
t_ok "sz removed" wait_for '[ ! -e /sys/class/infiniband/sz ]' 30

rping_ns() {
	local srv rc_s rc_c
	ip netns exec na timeout 60 rping -s -a $A4 -C 20 -S 100 -v > /tmp/rping.srv 2>&1 &
	srv=$!
	wait_for "cm_listening rping 7174 || ! kill -0 $srv 2> /dev/null" 30
	ip netns exec nb timeout 60 rping -c -a $A4 -C 20 -S 100 -v > /tmp/rping.cli 2>&1
	rc_c=$?
	wait $srv
	rc_s=$?
	sed 's/^/srv: /' /tmp/rping.srv | tail -3
	sed 's/^/cli: /' /tmp/rping.cli | tail -3
	[ $rc_s = 0 ] && [ $rc_c = 0 ] &&
		rping_data_ok /tmp/rping.cli 20 100 'ping data: ' &&
		rping_data_ok /tmp/rping.srv 20 100 'server ping data: '
}
t_ok "rdma_cm: rping na <-> nb, 20 pings checked both sides" rping_ns

# A port taken in one namespace refuses only that namespace's device.
t_ok "namespace nc with veth vc/vd (vd in nd)" ns_pair nc nd vc vd 10.91.1.1 10.91.1.2
ip netns exec nc python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 4791))
print("bound", flush=True)
time.sleep(300)' > /tmp/hold.out 2>&1 &
HOLD=$!
t_ok "a process in nc holds UDP 4791" wait_for "grep -q bound /tmp/hold.out" 30
taken_refused() {
	dmesg -C
	ip netns exec nc rdma link add sc type sroce netdev vc && return 1
	dmesg | grep "cannot bind UDP port 4791 (IPv4) in the netdev's network namespace" &&
		[ ! -e /sys/class/infiniband/sc ]
}
t_ok "rdma link add sc refused, with a clear reason" taken_refused
t_ok "sa and sb unharmed" test "$(devs)" = "sa sb "
kill $HOLD
wait $HOLD 2> /dev/null
t_ok "port free: rdma link add sc works" wait_for \
	"ip netns exec nc rdma link add sc type sroce netdev vc" 10
t_ok "nc has its socket" bound nc
t_ok "vc moved to init_net" ip -n nc link set vc netns 1
t_ok "sc goes with it" wait_for '[ ! -e /sys/class/infiniband/sc ]' 30
t_ok "nc's socket closed with its last device" wait_for '! bound nc' 30
t_ok "vc can carry a device in init_net" add_sroce_link sc vc
t_ok "rdma link delete sc" rdma link delete sc
t_ok "ip link del vc" ip link del vc
t_ok "delete nc, nd" sh -c 'ip netns del nc && ip netns del nd'

# A namespace deleted under traffic: the processes run in init_net (the
# devices are shared), RC traffic crosses va/vb, then na goes away with
# va and its veth peer vb.
t_ok "rdma link delete sb, then add it back" sh -c \
	'rdma link delete sb && ip netns exec nb rdma link add sb type sroce netdev vb'
t_ok "sb ready again" ready nb sb $B4
die_under_traffic() {
	local ga gb srv cli s0
	ga=$(gid_in na sa $A4) && gb=$(gid_in nb sb $B4) || return 1
	timeout 300 ibv_rc_pingpong -d sa -g "$ga" -p $port -n 100000000 -s 4096 > /tmp/die.srv 2>&1 &
	srv=$!
	wait_for "tcp_listening $port" 30 || return 1
	timeout 300 ibv_rc_pingpong -d sb -g "$gb" -p $port -n 100000000 -s 4096 127.0.0.1 > /tmp/die.cli 2>&1 &
	cli=$!
	port=$((port + 1))
	s0=$(hw_counter sent_pkts sa)
	wait_for "[ \$(hw_counter sent_pkts sa) -gt $((s0 + 500)) ]" 60 || return 1
	echo "# traffic: sa sent $(($(hw_counter sent_pkts sa) - s0)) packets"
	ip netns del na || return 1
	wait_for '[ ! -e /sys/class/infiniband/sa ] && [ ! -e /sys/class/infiniband/sb ]' 60 || {
		echo "devices left: $(devs)"
		return 1
	}
	# Disassociated, the processes get errors or block; either way, kill works.
	kill -9 $srv $cli 2> /dev/null
	wait_for "! kill -0 $srv 2> /dev/null && ! kill -0 $cli 2> /dev/null" 30 || return 1
	wait $srv $cli 2> /dev/null
	return 0
}
t_ok "na deleted under RC traffic: sa and sb removed, processes end" die_under_traffic
t_ok "nb's socket closed" wait_for '! bound nb' 30
t_ok "delete nb" ip netns del nb
t_ok "no device left" test -z "$(devs)"

# rdma link add racing a move of its netdev to another namespace, ten
# times: whichever wins, once both namespaces are deleted no device is
# left, and (below) their teardown completed.
race_move() {
	local i
	for i in $(seq 10); do
		ip netns add r1 && ip netns add r2 &&
			ip link add rv netns r1 type veth peer name rw netns r1 || return 1
		ip netns exec r1 rdma link add rs type sroce netdev rv 2> /dev/null &
		ip -n r1 link set rv netns r2
		wait $!
		ip netns del r1 && ip netns del r2 || return 1
		wait_for '[ ! -e /sys/class/infiniband/rs ]' 30 || return 1
	done
}
t_ok "rdma link add racing its netdev's move, 10 rounds: nothing left" race_move

# --- exclusive mode -------------------------------------------------------
# ib_core refuses the switch while any other namespace exists: the deleted
# ones are torn down in the background.
t_ok "rdma system set netns exclusive" wait_for "rdma system set netns exclusive" 60
t_ok "rdma system shows exclusive" sh -c 'rdma system show | grep -q "netns exclusive"'
t_ok "namespaces nx, ny joined by veth xa/xb" ns_pair nx ny xa xb 10.92.0.1 10.92.0.2
t_ok "rdma link add sx (netdev xa, in nx)" ip netns exec nx rdma link add sx type sroce netdev xa
t_ok "rdma link add sy (netdev xb, in ny)" ip netns exec ny rdma link add sy type sroce netdev xb
t_ok "rdma dev set sx netns nx" rdma dev set sx netns nx
t_ok "rdma dev set sy netns ny" rdma dev set sy netns ny
t_ok "neither is seen from init_net" test -z "$(devs)"
t_ok "nx sees sx alone" test "$(ip netns exec nx ls /sys/class/infiniband | tr '\n' ' ')" = "sx "
t_ok "ny sees sy alone" test "$(ip netns exec ny ls /sys/class/infiniband | tr '\n' ' ')" = "sy "
t_ok "sx ready in nx" ready nx sx 10.92.0.1
t_ok "sy ready in ny" ready ny sy 10.92.0.2
t_ok "RC pingpong nx <-> ny, 200 x 1 KiB checked" \
	pingpong nx sx 10.92.0.1 ny sy 10.92.0.2 -n 200 -s 1024
t_ok "delete nx and ny" sh -c 'ip netns del nx && ip netns del ny'
t_ok "sx and sy removed" wait_for \
	'[ -z "$(devs)" ] && ! rdma dev show sx > /dev/null 2>&1 && ! rdma dev show sy > /dev/null 2>&1' 60
t_ok "rdma system set netns shared" wait_for "rdma system set netns shared" 60
t_ok "rmmod sroce" timeout 60 rmmod sroce
t_done
