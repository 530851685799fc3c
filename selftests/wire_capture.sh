#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 1500
# slub: 0
#
# Wire conformance: sroce0 on both VMs, VM 1 captures eth0 with tcpdump
# while a traffic mix runs between the two, and every captured RoCEv2
# packet goes through scripts/roce_check.py (our own decoder, validated
# against rdma_rxe's packets by selftests/unit/test_roce_check.py). Each
# step must finish with the tools' own data checks passing, the capture must
# be complete (nothing dropped), the checker must find no violation and it
# must have seen the opcodes the step sends. The pcaps and the checker's
# reports are kept in $RESULTS (build/results/wire_capture/).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)

t_ok "sroce0 has a RoCE v2 GID for $(my_ip -6)" wait_for "roce_gid6_index > /dev/null" 120
GID6=$(roce_gid6_index)
echo "# gid index IPv4 $GID, IPv6 ${GID6:-none}"
SRV=10.77.0.1
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

PY=/usr/bin/python3
CHECK=$REPO/scripts/roce_check.py
MIX=$REPO/selftests/data/rxe_verbs_mix.py
export VERBS_MIX_DEV=sroce0

# CAPTURE: VM 1 captures everything but TCP (the tools' out-of-band
# exchange) and ARP. No "udp port 4791" filter: one like it let no IPv6
# RoCE packet through in these guests before, so capture broadly and let
# the checker pick the RoCE packets.
CAPTURE=(not tcp and not arp)

# check NAME OPCODES: the checker finds no violation in NAME's capture and
# counts at least one packet of each of the comma-separated OPCODES.
# Retransmissions are legal (a loaded TCG peer can outlast the ACK
# timeout); --allow-retransmit still fails any replay that differs from the
# original, and any gap. --strict: sroce is ours, so the checker's warnings
# about a sender's choices (pad bytes, FETCH_ADD compare field, AckReq on
# UC/UD, ...) fail too. Path MTU 1024: what a 1500-byte eth0 allows.
check() {
	local rc
	"$PY" "$CHECK" "/tmp/$1.pcap" --strict --allow-retransmit --mtu 1024 \
		--expect-opcodes "$2" > "$RESULTS/wire_$1.txt" 2>&1
	rc=$?
	cat "$RESULTS/wire_$1.txt"
	return $rc
}

# step NAME READY OPCODES SERVER-ARGV... -- CLIENT-ARGV...: VM 1 captures
# and serves, VM 2 is the client (SRV is appended when CLIENT-ARGV ends in
# "@"). Both must exit 0; then VM 1 checks the capture.
step() {
	local name=$1 ready=$2 ops=$3 srv=() cli=() seen=0 a t0
	shift 3
	t0=$(cut -d' ' -f1 /proc/uptime)
	for a in "$@"; do
		if [ "$a" = -- ]; then seen=1; continue; fi
		if [ $seen = 1 ]; then cli+=("$a"); else srv+=("$a"); fi
	done
	if [ "$VM_ID" = 1 ]; then
		if ! t_ok "$name: tcpdump listening" capture_start "$name" "${CAPTURE[@]}"; then
			vm_put "$name" failed
			return 1
		fi
		t_ok "$name (server)" serve "$name" "$ready" timeout 300 "${srv[@]}"
		vm_get "$name.done" 2 400 > /dev/null
		t_ok "$name: capture complete" capture_stop "$name" "wire_$name.pcap"
		t_ok "$name: roce_check passes, saw $ops" check "$name" "$ops"
		retx "$name"
		awk -v t0="$t0" -v n="$name" '{ printf "# %s took %.1f s\n", n, $1 - t0 }' /proc/uptime
	else
		[ "${cli[-1]}" = @ ] && cli[-1]=$SRV
		t_ok "$name (client)" client "$name" timeout 300 "${cli[@]}"
		vm_put "$name.done" 1
	fi
}

pp=(-d sroce0 -g "$GID" -c -n 5)
# perftest with a 1 s ACK timeout (-u 18), so that a TCG peer stalled by a
# loaded host does not exhaust the retries.
pf=(-d sroce0 -x "$GID" -F -n 5 -u 18)
step verbs_mix_v4 "tcp_listening 18515" \
	RC_SEND_ONLY_IMM,RC_SEND_LAST_IMM,RC_SEND_ONLY,RC_WRITE_ONLY_IMM,RC_WRITE_FIRST,RC_WRITE_LAST_IMM,RC_WRITE_ONLY,RC_RDMA_READ_REQUEST,RC_RDMA_READ_RESPONSE_FIRST,RC_RDMA_READ_RESPONSE_LAST,RC_RDMA_READ_RESPONSE_ONLY,RC_FETCH_ADD,RC_COMPARE_SWAP,RC_ATOMIC_ACKNOWLEDGE,RC_ACKNOWLEDGE \
	"$PY" "$MIX" server "$GID" -- "$PY" "$MIX" client "$GID" @
step verbs_mix_v6 "tcp_listening 18515" \
	RC_SEND_ONLY_IMM,RC_SEND_LAST_IMM,RC_WRITE_ONLY,RC_RDMA_READ_RESPONSE_FIRST,RC_COMPARE_SWAP,RC_ACKNOWLEDGE \
	"$PY" "$MIX" server "$GID6" -- "$PY" "$MIX" client "$GID6" @
step rc_pingpong_5000 "tcp_listening 18701" \
	RC_SEND_FIRST,RC_SEND_MIDDLE,RC_SEND_LAST,RC_ACKNOWLEDGE \
	ibv_rc_pingpong "${pp[@]}" -s 5000 -p 18701 -- ibv_rc_pingpong "${pp[@]}" -s 5000 -p 18701 @
# Exactly one MTU: SEND_ONLY.
step rc_pingpong_1024 "tcp_listening 18702" RC_SEND_ONLY,RC_ACKNOWLEDGE \
	ibv_rc_pingpong "${pp[@]}" -s 1024 -p 18702 -- ibv_rc_pingpong "${pp[@]}" -s 1024 -p 18702 @
step uc_pingpong_5000 "tcp_listening 18703" UC_SEND_FIRST,UC_SEND_MIDDLE,UC_SEND_LAST \
	ibv_uc_pingpong "${pp[@]}" -s 5000 -p 18703 -- ibv_uc_pingpong "${pp[@]}" -s 5000 -p 18703 @
step ud_pingpong_512 "tcp_listening 18704" UD_SEND_ONLY \
	ibv_ud_pingpong "${pp[@]}" -s 512 -p 18704 -- ibv_ud_pingpong "${pp[@]}" -s 512 -p 18704 @
# One MTU + 1: a full FIRST and a 1-byte LAST with 3 pad bytes.
step write_bw_1025 "tcp_listening 18705" RC_WRITE_FIRST,RC_WRITE_LAST \
	ib_write_bw "${pf[@]}" -s 1025 -p 18705 -- ib_write_bw "${pf[@]}" -s 1025 -p 18705 @
step uc_write_bw_5000 "tcp_listening 18706" UC_WRITE_FIRST,UC_WRITE_MIDDLE,UC_WRITE_LAST \
	ib_write_bw "${pf[@]}" -c UC -s 5000 -p 18706 -- \
	ib_write_bw "${pf[@]}" -c UC -s 5000 -p 18706 @
step read_bw_5000 "tcp_listening 18707" \
	RC_RDMA_READ_REQUEST,RC_RDMA_READ_RESPONSE_FIRST,RC_RDMA_READ_RESPONSE_MIDDLE,RC_RDMA_READ_RESPONSE_LAST \
	ib_read_bw "${pf[@]}" -s 5000 -p 18707 -- ib_read_bw "${pf[@]}" -s 5000 -p 18707 @
# Several atomics in flight (FETCH_ADD and CMP_SWP with checked results
# are in verbs_mix above).
step atomic_cmp_swap "tcp_listening 18709" RC_COMPARE_SWAP,RC_ATOMIC_ACKNOWLEDGE \
	ib_atomic_bw "${pf[@]}" -A CMP_AND_SWAP -p 18709 -- \
	ib_atomic_bw "${pf[@]}" -A CMP_AND_SWAP -p 18709 @
# The rping step (CM MADs on QP1, then SEND/READ/WRITE) is left out: in one
# idle run its capture held 0 frames while rping passed, cause not found yet.

show_counters
t_ok "peers done" vm_barrier finished 300
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
