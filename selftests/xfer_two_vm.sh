#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 1200
# slub: 0
#
# sroce0 on each of two VMs, data verified across the wire in both
# directions with sroce_xfer: RC (send, send_imm, write, write_imm, read,
# cas, faa at 0 B .. 1 MiB, then send, write and read of 8 MiB, then
# bursts of small writes posted without doorbells, then sends and writes
# with zero-copy forced on, then ATOMIC WRITE beside cas), UC (send,
# write, write_imm), UD (send, send_imm up to the path MTU) over the IPv4
# RoCE v2 GIDs, RC once more over the IPv6 GIDs of fd77::<id>, and RC and
# rping over the GIDs sroce0 gets for VLAN 100 on eth0 (tagged by eth0.100:
# both VLAN devices must count the traffic). Then the
# rdma-core example programs between the VMs: ibv_uc_pingpong,
# ibv_ud_pingpong, ibv_srq_pingpong and ibv_rc_pingpong -e, all with -c
# (they only print a mismatch, so their output is checked here).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)
t_ok "IPv6 RoCE v2 GID of $(my_ip -6)" \
	wait_for "roce_gid6_index sroce0 > /dev/null" 60
GID6=$(roce_gid6_index sroce0)
echo "# IPv4 gid index $GID, IPv6 gid index $GID6"
SRV=10.77.0.1
SRV6=fd77::1
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }
sent0=$(hw_counter sent_pkts)
rcvd0=$(hw_counter rcvd_pkts)

XFER=$VERBS_BIN/sroce_xfer

# xfer NAME PORT [GID] ARGS...: sroce_xfer with VM 1 serving on PORT.
xfer() {
	local name=$1 port=$2 gid=${XFER_GID:-$GID}
	shift 2
	if [ "${1:-}" = -6 ]; then
		gid=$GID6
		shift
	fi
	set -- timeout 400 "$XFER" -d sroce0 -g "$gid" -p "$port" "$@"
	if [ "$VM_ID" = 1 ]; then
		serve "$name" "tcp_listening $port" "$@"
	else
		client "$name" "$@" "$XFER_SRV"
	fi
}

# xfer_log NAME: the run's totals and its largest transfers, for the log.
xfer_log() {
	grep -E '^# .*verified in|^(not )?ok .* (8388608|1048576) B' "/tmp/$1.out" |
		sed 's/^/# /'
	retx "xfer-$1"
}

XFER_SRV=$SRV
t_ok "sroce_xfer rc, IPv4: all ops, 0 B .. 1 MiB" xfer rc 18801 -t rc \
	-s 0,1,1023,1024,1025,4096,4097,65536,1048576
xfer_log rc
t_ok "sroce_xfer rc, IPv4: send, write, read of 8 MiB" xfer rc8m 18805 -t rc \
	-o send,write,read -s 8388608
xfer_log rc8m
# Bursts: 64 + 512 + 512 signaled WRITEs per side, 56 in flight. A post
# that finds an earlier one unacknowledged needs no system call (uapi
# SROCE_RING_F_NO_DOORBELL), so most of them ring no doorbell.
db0=$(hw_counter sq_doorbells)
t_ok "sroce_xfer rc, IPv4: bursts of small writes, data verified" xfer burst 18806 -t rc \
	-o burst -s 4096,65536,1048576
xfer_log burst
db=$(($(hw_counter sq_doorbells) - db0))
echo "# burst: $db doorbells for 1091 posted send WRs"
t_ok "bursts rang a doorbell for under half of their 1091 send WRs" test "$db" -lt 545
# Zero-copy forced on eth0, which cannot gather (sroce(7), "Zero-copy
# transmit"): RC packets of page fragments, which the requester chains
# into fraglist batches (on 6.1 and 6.12) and the stack splits and
# linearizes one by one.
zc0=$(hw_counter tx_zcopy_pkts)
zc_mode() { echo "$1" > /sys/class/infiniband/sroce0/zero_copy; }
t_ok "zero_copy 2" zc_mode 2
t_ok "sroce_xfer rc, zero_copy 2: send, write, recycle to 8 MiB, data verified" \
	xfer zc 18808 -t rc -o send,write,recycle -s 4097,1048576,8388608
xfer_log zc
t_ok "packets went as page fragments (tx_zcopy_pkts)" \
	test "$(hw_counter tx_zcopy_pkts)" -gt "$zc0"
t_ok "zero_copy 0 again" zc_mode 0
t_ok "sroce_xfer rc, IPv4: atomic write, beside cas" xfer aw 18807 -t rc \
	-o aw,cas -s 8
xfer_log aw
t_ok "sroce_xfer uc, IPv4: send, write, write_imm" xfer uc 18802 -t uc \
	-o send,write,write_imm -s 0,1,1023,1024,1025,4097,65536,1048576
xfer_log uc
t_ok "sroce_xfer ud, IPv4: send, send_imm up to the MTU" xfer ud 18803 -t ud
xfer_log ud
XFER_SRV=$SRV6
t_ok "sroce_xfer rc, IPv6: all ops" xfer rc6 18804 -6 -t rc \
	-s 0,1,1025,4097,65536
xfer_log rc6

# RoCE over VLAN 100: ib_core gives sroce0 the GIDs of eth0.100, and what
# is sent from them goes out through eth0.100, tagged.
VIP=10.79.0.$VM_ID
vlan_up() {
	ip link add link eth0 name eth0.100 type vlan id 100 &&
		ip addr add "$VIP/24" dev eth0.100 && ip link set eth0.100 up
}
vlan_pkts() { # rx|tx
	cat "/sys/class/net/eth0.100/statistics/${1}_packets"
}
t_ok "eth0.100 (VLAN 100) up with $VIP" vlan_up
t_ok "sroce0 has a RoCE v2 GID for $VIP" 	wait_for "roce_gid_index sroce0 $VIP > /dev/null" 60
GIDV=$(roce_gid_index sroce0 "$VIP")
echo "# VLAN gid index $GIDV"
t_ok "peers' VLANs up" vm_barrier vlan 300
vtx0=$(vlan_pkts tx)
vrx0=$(vlan_pkts rx)
XFER_SRV=10.79.0.1
xfer_vlan() { XFER_GID=$GIDV xfer "$@"; }
t_ok "sroce_xfer rc over VLAN 100: send, write, read to 1 MiB" \
	xfer_vlan rcvlan 18807 -t rc -o send,write,read -s 1,4097,1048576
xfer_log rcvlan
# rdma_cm resolves the VLAN address to its GID; its MADs come in on
# eth0.100, and ib_core finds the reply's GID by that VLAN.
rping_vlan() {
	set -- timeout 120 rping -a 10.79.0.1 -p 7301 -C 5 -S 100 -V -v
	if [ "$VM_ID" = 1 ]; then
		serve rping_vlan "cm_listening rping 7301" "$@" -s
	else
		client rping_vlan "$@" -c &&
			rping_data_ok /tmp/rping_vlan.out 5 100 'ping data: '
	fi
}
t_ok "rping -V over VLAN 100 (rdma_cm)" rping_vlan
vtx=$(($(vlan_pkts tx) - vtx0))
vrx=$(($(vlan_pkts rx) - vrx0))
echo "# eth0.100: $vtx packets sent, $vrx received"
t_ok "eth0.100 carried the traffic both ways (over 1000 packets each)" \
	test "$vtx" -gt 1000 -a "$vrx" -gt 1000
vlan_del() {
	ip link del eth0.100 &&
		wait_for "! roce_gid_index sroce0 $VIP > /dev/null" 30
}
t_ok "ip link del eth0.100: its GID leaves sroce0" vlan_del

# The rdma-core examples: the UD one needs the IPv4 GID for its AH, the
# others go by GID too (-g); -c compares every received buffer.
pp() { # NAME PORT TOOL ARGS...
	local name=$1 port=$2 tool=$3
	shift 3
	set -- timeout 200 "$tool" -d sroce0 -g "$GID" -p "$port" "$@"
	if [ "$VM_ID" = 1 ]; then
		serve "$name" "tcp_listening $port" "$@" || return 1
	else
		client "$name" "$@" $SRV || return 1
	fi
	# -c only prints "invalid data in page N"; the totals must be there
	! grep -qi 'invalid data' "/tmp/$name.out" &&
		grep -qE '^[0-9]+ iters in' "/tmp/$name.out"
}
# The UC and UD tools wait forever for a lost packet: few, one-packet
# messages keep that unlikely on a loaded host's virtual wire.
t_ok "ibv_uc_pingpong 1 KiB x 20" pp uc_pp 18811 ibv_uc_pingpong -c -n 20 -s 1024
t_ok "ibv_ud_pingpong 1 KiB x 20" pp ud_pp 18812 ibv_ud_pingpong -c -n 20 -s 1024
retx ud_pingpong
t_ok "ibv_srq_pingpong 4 QPs 4 KiB x 50" pp srq_pp 18813 ibv_srq_pingpong -c -q 4 -n 50 -s 4096
retx srq_pingpong
# rc_pingpong has a fixed 67 ms ACK timeout and 7 retries: small messages
# keep a loaded host from exhausting them.
t_ok "ibv_rc_pingpong -e 4 KiB x 50" pp rc_e_pp 18814 ibv_rc_pingpong -e -c -n 50 -s 4096
retx rc_pingpong-e

show_counters
t_ok "sent_pkts and rcvd_pkts moved" \
	sh -c "[ $(hw_counter sent_pkts) -gt $sent0 ] && [ $(hw_counter rcvd_pkts) -gt $rcvd0 ]"
# vm2's requester (8 MiB sends and writes) and vm1's READ responses both
# go out as fraglist batches (docs/transmit.md, "Transmit batching").
# Batching is compiled in for 6.1.161+ and 6.12.95+ (Kbuild), so for
# Debian's 6.1.192 and 6.12.95 (whose uname says 6.1.0 and 6.12.95); on
# any other kernel every packet is its own skb.
case $(uname -r) in
6.1.* | 6.12.*)
	t_ok "multi-packet transmit batches sent (tx_batches > 0)" \
		test "$(hw_counter tx_batches)" -gt 0 ;;
*)
	t_ok "no transmit batches on $(uname -r) (tx_batches = 0)" \
		test "$(hw_counter tx_batches)" -eq 0 ;;
esac
t_ok "peers done" vm_barrier finished 300
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
