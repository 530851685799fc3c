#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 420
# secs: 115
#
# A wire fuzzer against live QPs. sroce0 runs on veth0 (10.88.0.1); the far
# end veth1 sits in netns "peer" (10.88.0.2), where `sroce_inject fuzz`
# sends FUZZ_PACKETS (10000) random packets (see sroce_inject.c) while:
# - sroce_xfer transfers byte-verified data over sroce0's loopback, in a
#   loop; the fuzzer spoofs 10.88.0.1, the peer those QPs accept packets
#   from (veth0 has accept_local), and aims at their QPNs, PSNs and MR;
# - sroce_victim holds an RC QP towards 10.88.0.2 with receives posted and
#   a WRITE and a READ outstanding, so fuzzed requests, ACKs and responses
#   at its exact PSNs reach the responder and the requester.
# Fuzzed packets may legitimately kill those QPs (a NAK, a lost PSN): what
# happened to them is printed, not asserted. Asserted: the drop counters
# moved, the kernel logged no splat (the harness), a fresh transfer then
# verifies every byte, no QP or MR outlives its process, and the device
# goes away. FUZZ_PACKETS and FUZZ_SEED may come from $RESULTS/fuzz.env
# (make fuzz-wire).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

FUZZ_PACKETS=10000
FUZZ_SEED=
# shellcheck disable=SC1091
[ -f "$RESULTS/fuzz.env" ] && . "$RESULTS/fuzz.env"
[ -n "$FUZZ_SEED" ] || FUZZ_SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
ROUND=2000	# packets per fuzzer run; targets are read again between runs

INJ=$VERBS_BIN/sroce_inject
VIC=$VERBS_BIN/sroce_victim
XFER=$VERBS_BIN/sroce_xfer
XFER_ARGS=(-t rc -s "4096,65536,1048576")
CTRS=(icrc_errors malformed_pkts no_qp_drops bad_rkey duplicate_request
	out_of_seq_request naks_sent naks_rcvd ack_out_of_window rnr_naks_sent
	rcvd_pkts local_errors cq_overflows malformed_hdr malformed_opcode
	malformed_len malformed_pkey malformed_qp malformed_qkey)

declare -A C0
ctr_snap() { local c; for c in "${CTRS[@]}"; do C0[$c]=$(hw_counter "$c"); done; }
ctr_delta() { echo $(($(hw_counter "$1") - C0[$1])); }

# xfer_run N: one sroce_xfer pair over sroce0's loopback; "N SRV_RC CLI_RC"
# goes to /tmp/xfer.log. The pids go to /tmp/xfer.pids so a pair stuck on
# a QP the fuzzer killed can be ended.
xfer_run() {
	local n=$1 port=$((18900 + $1)) srv cli rc_s rc_c
	timeout 200 "$XFER" -d sroce0 -g "$GID" -p $port "${XFER_ARGS[@]}" \
		> "/tmp/xs.$n" 2>&1 &
	srv=$!
	echo $srv >> /tmp/xfer.pids
	if wait_for "tcp_listening $port || ! kill -0 $srv 2>/dev/null" 60 &&
		kill -0 $srv 2>/dev/null; then
		timeout 200 "$XFER" -d sroce0 -g "$GID" -p $port "${XFER_ARGS[@]}" \
			$VIP > "/tmp/xc.$n" 2>&1 &
		cli=$!
		echo $cli >> /tmp/xfer.pids
		wait $cli
		rc_c=$?
	else
		rc_c=99
		kill $srv 2>/dev/null
	fi
	wait $srv
	rc_s=$?
	echo "$n $rc_s $rc_c" >> /tmp/xfer.log
}
xfer_loop() {
	local n=0
	while [ ! -e /tmp/fuzz.stop ]; do
		xfer_run $n
		n=$((n + 1))
	done
}

# targets: fuzzer options for every RC QP on sroce0 (its PSNs as set up)
# and the MRs of the newest transfer and of the victim.
targets() {
	local f line
	TARGETS=(-k "$VIC_MR")
	# no process substitution: the guest has no /dev/fd
	for line in $(rdma res show qp link sroce0 | awk '{
		q = r = s = t = ""
		for (i = 1; i < NF; i++) {
			if ($i == "lqpn") q = $(i + 1)
			if ($i == "type") t = $(i + 1)
			if ($i == "rq-psn") r = $(i + 1)
			if ($i == "sq-psn") s = $(i + 1)
		}
		if (t == "RC" && q != "" && r != "" && s != "") print q ":" r ":" s }'); do
		TARGETS+=(-q "$line")
	done
	# shellcheck disable=SC2012 # names are ours
	for f in $(ls -t /tmp/xs.* /tmp/xc.* 2>/dev/null | head -n 2); do
		line=$(sed -n 's/^# mr rkey \(0x[0-9a-f]*\) addr \(0x[0-9a-f]*\) len \([0-9]*\)$/\1:\2:\3/p' "$f")
		[ -n "$line" ] && TARGETS+=(-k "$line")
	done
}

# vic CMD: one command to the victim; its answer in REPLY, success if "ok".
vic() {
	echo "$*" >&"${VICTIM[1]}" || return 1
	IFS= read -r -t 60 -u "${VICTIM[0]}" REPLY || { echo "# victim: no answer to $*"; return 1; }
	echo "# victim: $* -> $REPLY"
	[[ $REPLY == ok* ]]
}

# fuzz: FUZZ_PACKETS packets in runs of ROUND, seeds FUZZ_SEED, +1, ...
fuzz() {
	local left=$FUZZ_PACKETS seed=$FUZZ_SEED n
	SENT=0
	while ((left > 0)); do
		n=$((left < ROUND ? left : ROUND))
		targets
		echo "# sroce_inject -s $PIP -d $VIP fuzz -n $n -r $seed -w 8192 -a $VIP ${TARGETS[*]}"
		ip netns exec peer "$INJ" -s $PIP -d $VIP fuzz -n $n -r "$seed" -w 8192 \
			-a $VIP "${TARGETS[@]}" > /tmp/fuzz.out 2>&1 || {
			sed 's/^/# /' /tmp/fuzz.out
			return 1
		}
		sed 's/^/# /' /tmp/fuzz.out
		SENT=$((SENT + $(sed -n 's/^fuzz sent=\([0-9]*\) .*/\1/p' /tmp/fuzz.out)))
		left=$((left - n))
		seed=$((seed + 1))
	done
}

t_ok "veth pair with the far end in netns peer" veth_peer_up || { t_done; exit 1; }
t_ok "sroce0 on veth0" sroce_on_veth || { t_done; exit 1; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
echo "# set up at $(uptime_s) s; seed $FUZZ_SEED, $FUZZ_PACKETS packets"

# The victim: receives posted, a WRITE and a READ to a silent peer pending.
coproc VICTIM { "$VIC" -d sroce0 -g "$GID" -r $PIP -q 0x1234 -p 0x100 \
	-P 0x200 -s $((1 << 20)) 2>&1; }
VPID=$VICTIM_PID
IFS= read -r -t 60 -u "${VICTIM[0]}" INFO
echo "# victim: $INFO"
VIC_MR=$(sed -n 's/.*rkey=\(0x[0-9a-f]*\) va=\(0x[0-9a-f]*\) len=\([0-9]*\).*/\1:\2:\3/p' <<< "$INFO")
t_ok "victim QP in RTS" test -n "$VIC_MR"
for ((i = 0; i < 16; i++)); do vic "post_recv 4096 $((i * 4096))" > /dev/null; done
vic "post_write 65536 $((128 << 10))" > /dev/null
vic "post_read 65536 $((256 << 10))" > /dev/null

ctr_snap
rm -f /tmp/fuzz.stop /tmp/xfer.log /tmp/xfer.pids
xfer_loop &
LOOP=$!
t_ok "a transfer is running" wait_for "grep -q '^# mr rkey' /tmp/xc.0 2>/dev/null" 90
echo "# fuzzing from $(uptime_s) s"
fuzz
FUZZ_RC=$?
echo "# fuzzing done at $(uptime_s) s: $SENT packets sent"
t_ok "the fuzzer ran to its end" test $FUZZ_RC -eq 0
# a raw send may fail now and then (a full queue): 1% at most
t_ok "it sent at least 99% of $FUZZ_PACKETS packets" test $((SENT * 100)) -ge $((FUZZ_PACKETS * 99))
touch /tmp/fuzz.stop

# A transfer whose QP the fuzzer broke may wait long for a completion.
if ! wait_for "! kill -0 $LOOP 2>/dev/null" 30; then
	while read -r p; do kill "$p" 2>/dev/null; done < /tmp/xfer.pids
fi
wait $LOOP
while read -r n s c; do
	echo "# transfer $n under fuzzing: server exit $s, client exit $c"
	grep -hE '^not ok|verified in' "/tmp/xs.$n" "/tmp/xc.$n" | head -n 4 | sed 's/^/#   /'
done < /tmp/xfer.log
vic state
vic "poll 0"
echo quit >&"${VICTIM[1]}"
wait "$VPID"
echo "# victim exit $?"

for c in "${CTRS[@]}"; do echo "# $c +$(ctr_delta "$c")"; done
for c in icrc_errors malformed_pkts no_qp_drops; do
	t_ok "$c moved" test "$(ctr_delta $c)" -gt 0
done
causes() {
	local c sum=0
	for c in malformed_hdr malformed_opcode malformed_len malformed_pkey \
		malformed_qp malformed_qkey; do
		sum=$((sum + $(ctr_delta $c)))
	done
	echo "# causes $sum, malformed_pkts $(ctr_delta malformed_pkts)"
	[ $sum = "$(ctr_delta malformed_pkts)" ]
}
t_ok "every malformed packet counted under one cause" causes

fresh() {
	local n=999
	xfer_run $n
	grep -q "^$n 0 0\$" /tmp/xfer.log
}
t_ok "a fresh transfer verifies every byte" fresh
grep -hE '^not ok|verified in' /tmp/xs.999 /tmp/xc.999 | sed 's/^/# /'
t_ok "no QP but QP1 left" test -z "$(rdma res show qp link sroce0 | grep -v 'type GSI')"
t_ok "no MR left" test -z "$(rdma res show mr dev sroce0)"
show_counters sroce0
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
