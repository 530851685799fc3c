#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 900
# slub: 0
#
# A link that reorders, duplicates and corrupts packets, in both
# directions: RC sends, writes and reads (sroce_xfer, every byte and every
# completion checked) must come through at 1% and at 5% of each, and the
# counters must say how: corrupted frames fail the ICRC, duplicates and
# reordered requests are answered from the responder's state, and lost
# or damaged ones are retransmitted.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
SRV=10.77.0.1
XFER=$VERBS_BIN/sroce_xfer
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# impair PCT: netem on eth0 for what this VM sends (both VMs do it, so
# both directions suffer); reordering needs a delay to reorder against.
impair() {
	tc qdisc replace dev eth0 root netem delay 2ms reorder "$1%" 50% \
		duplicate "$1%" corrupt "$1%"
}
# xfer NAME PORT ARGS...: sroce_xfer with VM 1 serving on PORT.
xfer() {
	local name=$1 port=$2
	shift 2
	set -- timeout 400 "$XFER" -d sroce0 -g "$GID" -p "$port" "$@"
	if [ "$VM_ID" = 1 ]; then
		serve "$name" "tcp_listening $port" "$@"
	else
		client "$name" "$@" $SRV
	fi
}
c() { hw_counter "$1"; }
port=18900
icrc_start=$(c icrc_errors)
for pct in 1 5; do
	t_ok "netem: reorder, duplicate and corrupt $pct% of what this VM sends" impair $pct
	tc qdisc show dev eth0 | sed 's/^/# /'
	icrc0=$(c icrc_errors) dup0=$(($(c duplicate_request) + $(c out_of_seq_request)))
	retx0=$(c retransmits)
	# At 1% one pass may meet no impairment at all on either VM (seen
	# once: ~3400 packets each way, batched into far fewer skbs, which
	# netem decides on): four times the MiB traffic there.
	sizes=4096,65537,1048576
	[ "$pct" = 1 ] && sizes=$sizes,1048576,1048576,1048576
	t_ok "$pct%: RC send, write, read at 4 KiB .. 1 MiB, every byte verified" \
		xfer "rc$pct" $port -t rc -o send,write,read -s "$sizes"
	port=$((port + 1))
	grep -E '^# .*verified in' "/tmp/rc$pct.out" | sed 's/^/# /'
	tc -s qdisc show dev eth0 | sed 's/^/# /'
	echo "# $pct%: icrc_errors +$(($(c icrc_errors) - icrc0))," \
		"duplicate/out-of-sequence requests +$(($(c duplicate_request) + $(c out_of_seq_request) - dup0))," \
		"retransmits +$(($(c retransmits) - retx0))"
	vm_put "recovery$pct" $(($(c duplicate_request) + $(c out_of_seq_request) - dup0 + $(c retransmits) - retx0))
	t_ok "$pct%: the two VMs answered duplicates, reordering or loss (responder and requester counters)" \
		test $(($(vm_get "recovery$pct") + $(vm_get "recovery$pct" "$VM_ID"))) -gt 0
	vm_barrier "done$pct" 300
done
tc qdisc del dev eth0 root
# A VM may take no hit in the payload at 1% (a corrupted header fails the
# IP checksum instead), so the ICRC check counts both VMs and both levels.
vm_put icrc $(($(c icrc_errors) - icrc_start))
t_ok "corrupted frames were caught by the ICRC (both VMs, both levels)" \
	test $(($(vm_get icrc) + $(vm_get icrc "$VM_ID"))) -gt 0
show_counters
t_ok "peers done" vm_barrier finished 300
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
