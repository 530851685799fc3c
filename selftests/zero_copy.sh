#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 900
# secs: 240
#
# Zero-copy transmit. Two namespaces joined by a veth pair, which gathers
# (NETIF_F_SG), so with zero_copy 1 an RC packet's payload leaves as page
# fragments of the MR and is read by the receiving device straight from
# the sender's pages.
#
# - The sysfs knob: 0 by default, 0..2 accepted, anything else refused
#   and the value kept.
# - RC sends, writes and reads both ways from 0 B to 1 MiB, every byte
#   checked, with tx_zcopy_pkts moving on both devices; then "recycle":
#   1 MiB written from four slots, each overwritten the moment its WR
#   completes: a packet read from a slot after its WR's completion would
#   carry another WR's bytes and fail the ICRC (on a clean link none
#   may), or land them; then "gather": writes whose WRs take up to 24
#   pieces from two MRs, so a packet may need more fragments than an skb
#   holds (it is copied then). All of it again on a link that loses,
#   duplicates (netem clones, sharing the pages) and reorders:
#   retransmissions are rebuilt from memory as it is then.
# - zero_copy 0 and a netdev without scatter-gather (1) copy; 2 sends
#   fragments anyway, which the stack linearizes, bytes still right.
# - A process killed while its zero-copy packets sit in a delaying qdisc:
#   its MR is gone, the packets still go out and are freed when sent, and
#   the device works on and is removed.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

A4=10.93.0.1
B4=10.93.0.2
XFER=$VERBS_BIN/sroce_xfer
ZC_A=/sys/class/infiniband/sa/zero_copy
port=18900

zc() { hw_counter tx_zcopy_pkts "$1"; }
grew() { [ "$2" -gt "$1" ] || { echo "did not grow: $1 -> $2"; return 1; }; }

# xfer OPS SIZES: sroce_xfer RC, server on sa in na, client on sb in nb;
# both directions, every byte and completion checked.
xfer() {
	local rc
	ns_run_pair zc na nb timeout 400 "$XFER" -d sa -g "$GA" -p $port -- \
		timeout 400 "$XFER" -d sb -g "$GB" -p $port -t rc -o "$1" -s "$2" $A4
	rc=$?
	grep -v '^ok ' /tmp/zc.srv | sed 's/^/srv: /'
	grep -v '^ok ' /tmp/zc.cli | sed 's/^/cli: /'
	echo "$(grep -c '^ok ' /tmp/zc.cli) transfers ok"
	[ $rc = 0 ] && grep -q '^ok ' /tmp/zc.cli
}

t_ok "modprobe veth" modprobe veth
t_ok "namespaces na, nb joined by veth va/vb" ns_pair na nb va vb $A4 $B4 ||
	{ t_done; exit 1; }
t_ok "load sroce" load_sroce || { t_done; exit 1; }
t_ok "rdma link add sa (va, in na)" ip netns exec na rdma link add sa type sroce netdev va
t_ok "rdma link add sb (vb, in nb)" ip netns exec nb rdma link add sb type sroce netdev vb
t_ok "sa ready" ready na sa $A4
t_ok "sb ready" ready nb sb $B4
GA=$(gid_in na sa $A4)
GB=$(gid_in nb sb $B4)
t_ok "va gathers (scatter-gather on)" sh -c "ip netns exec na ethtool -k va | grep -qx 'scatter-gather: on'"

# --- the knob ----------------------------------------------------------
t_ok "zero_copy is 0 by default" grep -qx 0 $ZC_A
t_ok "zero_copy 1 on sa and sb" sh -c "echo 1 > $ZC_A && echo 1 > /sys/class/infiniband/sb/zero_copy"
for bad in 3 255 -1 abc; do
	t_fail "zero_copy refuses '$bad'" sh -c "printf '%s' '$bad' > $ZC_A"
done
t_ok "zero_copy still 1" grep -qx 1 $ZC_A

# --- zero-copy on a gathering netdev -----------------------------------
icrc() { echo $(($(hw_counter icrc_errors sa) + $(hw_counter icrc_errors sb))); }
I0=$(icrc)
ZA=$(zc sa)
ZB=$(zc sb)
t_ok "RC send, write, read 0 B .. 1 MiB both ways, every byte checked" \
	xfer send,send_imm,write,write_imm,read 0,1,255,256,1023,1024,1025,4096,4097,65536,1048576
t_ok "sa sent zero-copy packets (tx_zcopy_pkts)" grew "$ZA" "$(zc sa)"
t_ok "sb sent zero-copy packets" grew "$ZB" "$(zc sb)"
ZA=$(zc sa)
t_ok "recycle: 1 MiB from four slots rewritten at each completion, both ways" \
	xfer recycle 65536,1048576
t_ok "recycle went zero-copy" grew "$ZA" "$(zc sa)"
ZA=$(zc sa)
t_ok "gather: writes of up to 24 pieces (1 B .. 1500 B, two MRs), both ways" \
	xfer gather 1,4097,65536,1048576
t_ok "gather went zero-copy where a packet needs at most 16 fragments" \
	grew "$ZA" "$(zc sa)"
t_ok "no packet was read after its bytes changed (icrc_errors)" test "$(icrc)" -eq "$I0"

# --- loss, duplicates (clones sharing the pages), reordering ------------
impair() {
	tc -n "$1" qdisc replace dev "$2" root netem delay 1ms loss 2% \
		duplicate 2% reorder 5% 50%
}
R0=$(($(hw_counter retransmits sa) + $(hw_counter retransmits sb)))
D0=$(($(hw_counter duplicate_request sa) + $(hw_counter duplicate_request sb)))
ZA=$(zc sa)
impair_both() { impair na va && impair nb vb; }
t_ok "netem on va and vb: 2% loss, 2% duplicates, 5% reordered" impair_both
t_ok "under impairment: send, write, read, recycle at 1 MiB, every byte checked" \
	xfer send,write,read,recycle,gather 4097,1048576
t_ok "packets were retransmitted (copied)" \
	grew "$R0" $(($(hw_counter retransmits sa) + $(hw_counter retransmits sb)))
t_ok "duplicates were answered, not executed again" \
	grew "$D0" $(($(hw_counter duplicate_request sa) + $(hw_counter duplicate_request sb)))
t_ok "and went zero-copy" grew "$ZA" "$(zc sa)"
t_ok "netem off" sh -c "tc -n na qdisc del dev va root && tc -n nb qdisc del dev vb root"

# --- copy when asked, or when the netdev cannot gather ------------------
t_ok "zero_copy 0 on sa and sb" sh -c "echo 0 > $ZC_A && echo 0 > /sys/class/infiniband/sb/zero_copy"
ZA=$(zc sa)
ZB=$(zc sb)
t_ok "zero_copy 0: 1 MiB write and send both ways" xfer write,send 1048576
t_ok "no zero-copy packet on sa" test "$(zc sa)" -eq "$ZA"
t_ok "no zero-copy packet on sb" test "$(zc sb)" -eq "$ZB"
t_ok "zero_copy 1, scatter-gather off on va and vb" sh -c \
	"echo 1 > $ZC_A && echo 1 > /sys/class/infiniband/sb/zero_copy &&
	 ip netns exec na ethtool -K va sg off && ip netns exec nb ethtool -K vb sg off"
t_ok "no scatter-gather: 1 MiB write both ways" xfer write 1048576
t_ok "still no zero-copy packet on sa" test "$(zc sa)" -eq "$ZA"
t_ok "zero_copy 2 on sa" sh -c "echo 2 > $ZC_A"
t_ok "zero_copy 2 without scatter-gather: linearized by the stack, bytes right" \
	xfer write,send,recycle 1048576
t_ok "sa sent fragments anyway" grew "$ZA" "$(zc sa)"
t_ok "back to 1, scatter-gather on" sh -c \
	"echo 1 > $ZC_A && ip netns exec na ethtool -K va sg on && ip netns exec nb ethtool -K vb sg on &&
	 ip netns exec nb ethtool -k vb | grep -qx 'scatter-gather: on'"

# --- a process killed with its pages in flight ---------------------------
# ib_write_bw from sa to sb; once it streams, every packet of sa's waits
# 3 s in va's qdisc, and the writer is killed while they wait.
bw_srv() {
	ip netns exec nb timeout 120 ib_write_bw -d sb -x "$GB" -s 65536 \
		-n 100000 -p 18990 > /tmp/zc.bws 2>&1 &
	BWS=$!
	wait_for "ip netns exec nb ss -Htln 'sport = :18990' | grep -q ." 30
}
backlog() { tc -n na -s qdisc show dev va | awk '/backlog/ { print $3 + 0; exit }'; }
t_ok "ib_write_bw server on sb" bw_srv
ZA=$(zc sa)
ip netns exec na timeout 120 ib_write_bw -d sa -x "$GA" -s 65536 -n 100000 \
	-p 18990 $B4 > /tmp/zc.bwc 2>&1 &
BWC=$!
t_ok "the writer streams zero-copy" wait_for "[ \$(zc sa) -gt $((ZA + 200)) ]" 60
t_ok "netem delay 3s on va" tc -n na qdisc replace dev va root netem delay 3s limit 100000
t_ok "packets wait in va's qdisc" wait_for '[ "$(backlog)" -gt 0 ]' 20
echo "# backlog $(backlog) packets"
# (timeout runs ib_write_bw as its child: kill the tree)
writer_gone() { ! pgrep -f 'ib_write_bw -d sa' > /dev/null; }
kill_writer() { kill_tree "$BWC" && wait_for writer_gone 20; }
t_ok "writer killed with its packets queued" kill_writer
t_ok "its QP is gone" wait_for "! rdma res show qp | grep -q 'link sa/.*type RC'" 20
t_ok "the queued packets went out (backlog 0)" wait_for '[ "$(backlog)" -eq 0 ]' 60
kill_tree "$BWS"
wait $BWS $BWC 2> /dev/null
t_ok "netem off" tc -n na qdisc del dev va root
t_ok "sa still works: 1 MiB write, send and recycle both ways" xfer write,send,recycle 1048576

show_counters sa
t_ok "rdma link delete sa, sb" sh -c "rdma link delete sa && rdma link delete sb"
t_ok "rmmod sroce" rmmod sroce
t_done
