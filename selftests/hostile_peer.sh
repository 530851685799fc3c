#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 400
# secs: 80
#
# A hostile peer on a veth pair: sroce0 runs on veth0, the far end veth1
# sits in the network namespace "peer", where sroce_inject plays the remote
# RC QP byte by byte. sroce_victim owns the local QP and is driven through
# a coprocess.
#
# ACK window: the victim posts a WRITE of many more PSNs than the requester
# keeps in flight, the injector stays silent, then spoofs an ACK for a PSN
# assigned but not sent (even the WQE's last PSN), a NAK beyond what was
# sent, and ACK/NAKs far away. None may complete or fail the WQE; each is
# counted in ack_out_of_window. A PSN sequence NAK inside the window makes
# the requester resend from its PSN. Then proper ACKs complete the WRITE.
#
# ATOMIC WRITE and FLUSH to the victim's responder: each answered with an
# empty READ response ONLY, the 8 bytes in place, a duplicate ATOMIC WRITE
# answered again without being executed again.
#
# Malformed packets: bad ICRC, truncated headers, bad pad, unknown opcode,
# a UD/UC opcode to the RC QP, wrong P_Key, a UDP length past the packet;
# each aimed at the QP's expected PSN with a receive posted, each dropped
# and counted, and after all of them a proper SEND arrives intact.
#
# XRC: a crafted XRC SEND lands in the XRC SRQ its XRCETH names and is
# ACKed in XRC's ACK opcode; RC opcodes are not for an XRC target, XRC
# opcodes not for an RC QP; an XRC SRQ destroyed in the middle of a
# message goes at once and the rest of the message is a Remote Access NAK.
#
# sroce's tracepoints are on throughout: the NAK received, the resend and
# its reason, each drop and its reason, the NAK sent must each show in the
# trace buffer with the device, the QPN and the PSN.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

INJ=$VERBS_BIN/sroce_inject
VIC=$VERBS_BIN/sroce_victim
PEER_QPN=0x1234
SQ_PSN=$((0xfffc00))	# the WRITE's PSNs wrap past 2^24
RQ_PSN=$((0x100))
MTU=1024
WRITE_LEN=$((2 << 20))	# 2048 PSNs, four times the requester's window
RX=/tmp/inject.rx

psn() { echo $(($1 & 0xffffff)); }

# inj_start: one injector in the peer namespace reads SPECs from a FIFO
# (fd 7) and answers each on another (fd 8): processes are slow to start
# under TCG.
inj_start() {
	rm -f /tmp/inj.in /tmp/inj.out
	mkfifo /tmp/inj.in /tmp/inj.out || return 1
	ip netns exec peer "$INJ" -s $PIP -d $VIP send - < /tmp/inj.in > /tmp/inj.out 2>&1 &
	INJ_PID=$!
	exec 7> /tmp/inj.in 8< /tmp/inj.out
}
# inj SPEC...: one packet from the peer namespace, sent when this returns.
inj() {
	local line
	echo "$*" >&7 || return 1
	IFS= read -r -t 30 -u 8 line || { echo "# injector: no answer to $*"; return 1; }
	[[ $line == sent* ]] || { echo "# injector: $line"; return 1; }
}

# vic CMD: one command to the victim; its answer in REPLY, success if "ok".
vic() {
	echo "$*" >&"${VICTIM[1]}" || return 1
	IFS= read -r -t 60 -u "${VICTIM[0]}" REPLY || { echo "# victim: no answer to $*"; return 1; }
	echo "# victim: $* -> $REPLY"
	[[ $REPLY == ok* ]]
}

# vic_none MS: no completion within MS.
vic_none() { vic "poll $1" && [ "$REPLY" = "ok none" ]; }
vic_rts() { vic state && [ "$REPLY" = "ok state=3" ]; }

# rx_count PATTERN: packets the injector got whose line matches PATTERN.
rx_count() { grep -c -- "$1" $RX; }
# rx_high: the highest WRITE PSN the injector saw, relative to SQ_PSN.
rx_high() {
	awk -v base=$SQ_PSN '/^rx RC_WRITE/ {
		sub("psn=", "", $4); d = ($4 - base + 16777216) % 16777216
		if (d > h) h = d } END { print h + 0 }' $RX
}

# ctr NAME: sroce0's port counter NAME in CTR, without a fork.
ctr() {
	CTR=missing
	read -r CTR < "/sys/class/infiniband/sroce0/ports/1/hw_counters/$1"
}
# counter_moved NAME BEFORE N: NAME reaches BEFORE + N within 10 s, and
# not more.
counter_moved() {
	local n
	for ((n = 0; n < 100; n++)); do
		ctr "$1" || return 1
		((CTR >= $2 + $3)) && break
		sleep 0.1
	done
	[ "$CTR" -eq $(($2 + $3)) ] || { echo "# $1 is $CTR, want $(($2 + $3))"; return 1; }
}

t_ok "veth pair with the far end in netns peer" veth_peer_up || { t_done; exit 1; }
t_ok "sroce0 on veth0" sroce_on_veth || { t_done; exit 1; }
TRACE=/sys/kernel/tracing
t_ok "sroce's tracepoints enabled" sh -c "echo 1 > $TRACE/events/sroce/enable && : > $TRACE/trace"
# traced PATTERN: a line of the trace buffer matches PATTERN (grep -E).
traced() { grep -Eq "$1" $TRACE/trace || { echo "no trace line matches: $1"; return 1; }; }

ip netns exec peer "$INJ" -s $PIP listen -t $((350 * TSCALE)) > $RX 2>&1 &
LISTEN=$!
t_ok "injector listening" wait_for "grep -q listening $RX" 30

coproc VICTIM { "$VIC" -d sroce0 -g "$GID" -r $PIP -q $PEER_QPN -p $SQ_PSN \
	-P $RQ_PSN -m $MTU -s $((4 << 20)) 2>&1; }
VPID=$VICTIM_PID
IFS= read -r -t 60 -u "${VICTIM[0]}" INFO
echo "# victim: $INFO"
VQPN=$(sed -n 's/.*qpn=\([0-9]*\).*/\1/p' <<< "$INFO")
t_ok "victim QP in RTS" test -n "$VQPN"
[ -n "$VQPN" ] || { kill $LISTEN; t_done; exit 1; }

uptime_s() { cut -d' ' -f1 /proc/uptime; }
echo "# setup done at $(uptime_s) s"

# ---- ACK window ------------------------------------------------------------
t_ok "injector started" inj_start
ctr ack_out_of_window
WIN_BEFORE=$CTR
t_ok "victim posts a $WRITE_LEN-byte WRITE" vic "post_write $WRITE_LEN"
# The requester sends a window's worth, then waits for an ACK.
t_ok "first PSNs of the WRITE on the wire" \
	wait_for "[ \$(rx_count '^rx RC_WRITE') -ge 512 ]" 60
SENT=$(($(rx_high) + 1))
t_ok "the injector saw every one of them" test "$(rx_count '^rx RC_WRITE')" -eq $SENT
echo "# $SENT PSNs sent of $((WRITE_LEN / MTU))"
t_ok "the window is smaller than the message" test $SENT -lt $((WRITE_LEN / MTU))

LAST=$(psn $((SQ_PSN + WRITE_LEN / MTU - 1)))
inj op=RC_ACK qpn="$VQPN" psn="$(psn $((SQ_PSN + SENT + 100)))" msn=0
inj op=RC_ACK qpn="$VQPN" psn="$LAST" msn=1
t_ok "(a) ACKs for PSNs assigned but not sent complete nothing" vic_none 1000
t_ok "(a) ... and are counted in ack_out_of_window" counter_moved ack_out_of_window "$WIN_BEFORE" 2
inj op=RC_ACK qpn="$VQPN" psn="$(psn $((SQ_PSN + SENT + 10)))" syn=0x62 msn=0
t_ok "(b) a NAK beyond the sent PSNs fails nothing" vic_none 1000
t_ok "(b) ... the QP is still in RTS" vic_rts
t_ok "(b) ... and it is counted" counter_moved ack_out_of_window "$WIN_BEFORE" 3
inj op=RC_ACK qpn="$VQPN" psn="$(psn $((SQ_PSN + 0x800000 + 7)))" msn=0
inj op=RC_ACK qpn="$VQPN" psn="$(psn $((SQ_PSN - 5000)))" syn=0x61 msn=0
inj op=RC_ACK qpn="$VQPN" psn="$(psn $((SQ_PSN + 0x400000)))" syn=0x63 msn=0
t_ok "(c) ACK/NAKs with PSNs far away change nothing" vic_none 1000
t_ok "(c) ... the QP is still in RTS" vic_rts
t_ok "(c) ... and they are counted" counter_moved ack_out_of_window "$WIN_BEFORE" 6
t_ok "no PSN beyond the window was sent meanwhile" test "$(($(rx_high) + 1))" -eq $SENT

# A PSN sequence NAK inside the window acknowledges what precedes it and
# makes the requester resend from its PSN.
SEQ=$(psn $((SQ_PSN + 10)))
inj op=RC_ACK qpn="$VQPN" psn="$SEQ" syn=0x60 msn=0
t_ok "(d) a PSN sequence NAK: the requester resends from its PSN" \
	wait_for "[ \$(rx_count '^rx RC_WRITE[A-Z_]* qpn=[0-9]* psn=$SEQ ') -ge 2 ]" 30
VQ=$(printf '%#x' "$VQPN")
t_ok "(d) ... traced: sroce_nak_rcvd" \
	traced "sroce_nak_rcvd: dev=sroce0 qpn=$VQ psn=$(printf '%#x' "$SEQ") nak code=0\$"
t_ok "(d) ... traced: sroce_retransmit, reason nak_seq" \
	traced "sroce_retransmit: dev=sroce0 qpn=$VQ from_psn=$(printf '%#x' "$SEQ") reason=nak_seq\$"

# Now acknowledge what was sent, window by window, until the WQE completes.
ack_all() {
	local n high done=
	for ((n = 0; n < 40; n++)); do
		high=$(rx_high)
		inj op=RC_ACK qpn="$VQPN" psn="$(psn $((SQ_PSN + high)))" msn=0
		vic "poll 300" || return 1
		if [ "$REPLY" != "ok none" ]; then
			done=1
			break
		fi
		wait_for "[ \$(rx_high) -gt $high ]" 30 || return 1
	done
	[ -n "$done" ] && [[ $REPLY == *"status=0 "*"opcode=1 "* ]]
}
echo "# spoofing done at $(uptime_s) s"
t_ok "proper ACKs complete the WRITE with success" ack_all
echo "# WRITE done at $(uptime_s) s"
t_ok "every PSN of the WRITE was sent" test "$(($(rx_high) + 1))" -eq $((WRITE_LEN / MTU))
t_ok "the QP is in RTS" vic_rts

# ---- malformed packets -------------------------------------------------------
t_ok "victim posts a receive" vic "post_recv 4096 $((3 << 20))"
t_ok "victim clears the receive buffer" vic "zero $((3 << 20)) 4096"

# bad NAME COUNTER SPEC... (NAME only labels the call): the SEND-shaped
# packet SPEC, aimed at the victim's next expected PSN, is dropped and
# counted in COUNTER once; a malformed_* cause also once in malformed_pkts.
bad() {
	local name=$2 before rcvd total
	shift 2
	ctr "$name" && before=$CTR
	ctr rcvd_pkts && rcvd=$CTR
	ctr malformed_pkts && total=$CTR
	inj qpn="$VQPN" psn=$RQ_PSN ackreq=1 "$@" || return 1
	counter_moved "$name" "$before" 1 || return 1
	if [[ $name == malformed_* ]]; then
		counter_moved malformed_pkts "$total" 1 || return 1
	fi
	counter_moved rcvd_pkts "$rcvd" 0 || return 1
	vic_none 0
}
t_ok "bad ICRC: dropped, icrc_errors" bad icrc icrc_errors op=RC_SEND_ONLY len=64 seed=1 icrc=bad
t_ok "truncated BTH: dropped, malformed_hdr" bad trunc malformed_hdr op=RC_SEND_ONLY cut=4
t_ok "truncated RETH: dropped, malformed_hdr" bad treth malformed_hdr \
	op=RC_WRITE_ONLY va=0 rkey=0 dmalen=8 cut=10
t_ok "bad pad: dropped, malformed_hdr" bad pad malformed_hdr \
	op=RC_SEND_ONLY len=5 seed=1 padbytes=0
t_ok "pad count larger than the payload: dropped, malformed_hdr" bad pad2 malformed_hdr \
	op=RC_SEND_ONLY len=0 pad=3 padbytes=0
t_ok "bad transport version: dropped, malformed_hdr" bad tver malformed_hdr \
	op=RC_SEND_ONLY len=8 seed=1 tver=1
t_ok "unknown opcode: dropped, malformed_opcode" bad unknown malformed_opcode \
	op=RC_SEND_ONLY len=8 seed=1 rawop=0x1f
t_ok "UD opcode to an RC QP: dropped, malformed_qp" bad ud malformed_qp \
	op=UD_SEND_ONLY len=8 seed=1 qkey=1 sqp=5
t_ok "UC opcode to an RC QP: dropped, malformed_qp" bad uc malformed_qp \
	op=UC_SEND_ONLY len=8 seed=1
t_ok "XRC opcode to an RC QP: dropped, malformed_qp" bad xrc malformed_qp \
	op=XRC_SEND_ONLY len=8 seed=1 srqn=1
t_ok "RC opcode to the multicast QPN: dropped, malformed_qp" bad mcrc malformed_qp \
	op=RC_SEND_ONLY len=8 seed=1 qpn=0xffffff
t_ok "UD datagram for QPN 0xFFFFFF to a unicast address: dropped, malformed_qp" \
	bad mcuni malformed_qp op=UD_SEND_ONLY len=8 seed=1 qkey=1 sqp=5 qpn=0xffffff
t_ok "wrong P_Key: dropped, malformed_pkey" bad pkey malformed_pkey \
	op=RC_SEND_ONLY len=8 seed=1 pkey=0x1234
# UDP length 4 short of the packet's: UDP trims it, the ICRC then fails.
t_ok "UDP length short of the packet: dropped, icrc_errors" bad udplen icrc_errors \
	op=RC_SEND_ONLY len=8 seed=1 udplen=28
t_ok "the QP is still in RTS" vic_rts
echo "# malformed done at $(uptime_s) s"
for r in icrc_errors malformed_hdr malformed_opcode malformed_pkey; do
	t_ok "traced: sroce_drop, reason $r" traced "sroce_drop: dev=sroce0 qpn=[0-9a-fx]+ reason=$r\$"
done
t_ok "traced: sroce_drop, reason malformed_qp, with the QPN" \
	traced "sroce_drop: dev=sroce0 qpn=$VQ reason=malformed_qp\$"
t_ok "no ACK or NAK answered any of them" test "$(rx_count "^rx RC_ACK qpn=$((PEER_QPN))")" -eq 0

t_ok "a proper SEND ONLY" inj op=RC_SEND_ONLY qpn="$VQPN" psn=$RQ_PSN ackreq=1 len=777 seed=7
# vic_wc MS PATTERN: a completion within MS that matches PATTERN.
# shellcheck disable=SC2053 # PATTERN is a glob
vic_wc() { vic "poll $1" && [[ $REPLY == $2 ]]; }
t_ok "... completes the receive with 777 bytes" vic_wc 10000 '*status=0 *len=777'
t_ok "... whose bytes are right" vic "check $((3 << 20)) 777 7"
t_ok "... and is ACKed at its PSN" \
	wait_for "grep -q '^rx RC_ACK qpn=$((PEER_QPN)) psn=$RQ_PSN .*kind=ACK' $RX" 10

VVA=$(sed -n 's/.*va=\(0x[0-9a-f]*\).*/\1/p' <<< "$INFO")
VRKEY=$(sed -n 's/.*rkey=\(0x[0-9a-f]*\).*/\1/p' <<< "$INFO")
# rx_resp PSN N: N empty READ responses ONLY, ACKs, at PSN came back.
rx_resp() {
	[ "$(rx_count "^rx RC_READ_RESP_ONLY qpn=$((PEER_QPN)) psn=$1 .*len=0 .*kind=ACK")" -eq "$2" ]
}

# ATOMIC WRITE and FLUSH (IBA annex A19): answered with an empty READ
# response ONLY; a duplicate is answered again but not executed again.
AW=$(((3 << 20) + 8192))
AWPSN=$(psn $((RQ_PSN + 1)))
t_ok "victim fills an ATOMIC WRITE target" vic "fill $AW 16 9"
t_ok "an ATOMIC WRITE of 8 bytes" inj op=RC_ATOMIC_WRITE qpn="$VQPN" \
	psn="$AWPSN" ackreq=1 va=$((VVA + AW)) rkey="$VRKEY" dmalen=8 len=8 seed=3
t_ok "... is answered by an empty READ response ONLY at its PSN" \
	wait_for "rx_resp $AWPSN 1" 10
t_ok "... and its 8 bytes are in place" vic "check $AW 8 3"
t_ok "... and the 8 after them untouched" vic "check $((AW + 8)) 8 9 8"
t_ok "the same ATOMIC WRITE again, other bytes" inj op=RC_ATOMIC_WRITE \
	qpn="$VQPN" psn="$AWPSN" ackreq=1 va=$((VVA + AW)) rkey="$VRKEY" \
	dmalen=8 len=8 seed=4
t_ok "... is answered again" wait_for "rx_resp $AWPSN 2" 10
t_ok "... but not executed again" vic "check $AW 8 3"
FLPSN=$(psn $((RQ_PSN + 2)))
t_ok "a FLUSH of no placement type (a no-op), range level" inj op=RC_FLUSH \
	qpn="$VQPN" psn="$FLPSN" ackreq=1 va="$VVA" rkey="$VRKEY" dmalen=4096 plt=0 sel=0
t_ok "... is answered by an empty READ response ONLY at its PSN" \
	wait_for "rx_resp $FLPSN 1" 10
t_ok "the QP is in RTS" vic_rts

# Last, as it ends the QP: a WRITE whose payload is shorter than its RETH
# says is an Invalid Request; the responder NAKs it (IBA 9.7.5.2.3).
NEXT=$(psn $((RQ_PSN + 3)))
t_ok "a WRITE ONLY shorter than its DMA length" inj op=RC_WRITE_ONLY qpn="$VQPN" \
	psn="$NEXT" ackreq=1 va="$VVA" rkey="$VRKEY" dmalen=64 len=32 seed=2
t_ok "... is NAKed Invalid Request at its PSN" \
	wait_for "grep -q '^rx RC_ACK qpn=$((PEER_QPN)) psn=$NEXT .*kind=NAK code=1 ' $RX" 10
t_ok "... traced: sroce_nak_sent" \
	traced "sroce_nak_sent: dev=sroce0 qpn=$VQ psn=$(printf '%#x' "$NEXT") nak code=1\$"
echo 0 > $TRACE/events/sroce/enable

echo quit >&"${VICTIM[1]}"
wait "$VPID"
t_ok "victim exits 0" test $? -eq 0

# ---- XRC target ------------------------------------------------------------
# An XRC_RECV QP with an XRC SRQ of its own domain (sroce_victim -x): a
# SEND naming the SRQ lands in its WQE and is ACKed with XRC's ACK; an RC
# opcode is not for it; an SRQ destroyed between a message's FIRST and
# LAST goes at once, and the LAST, naming it, is a remote access NAK.
coproc VICTIM { "$VIC" -x -d sroce0 -g "$GID" -r $PIP -q $PEER_QPN \
	-P $RQ_PSN -m $MTU 2>&1; }
VPID=$VICTIM_PID
IFS= read -r -t 60 -u "${VICTIM[0]}" INFO
echo "# victim: $INFO"
XQPN=$(sed -n 's/.*qpn=\([0-9]*\).*/\1/p' <<< "$INFO")
SRQN=$(sed -n 's/.*srqn=\([0-9]*\).*/\1/p' <<< "$INFO")
t_ok "XRC target QP $XQPN in RTR with XRC SRQ $SRQN" \
	test -n "$XQPN" -a -n "$SRQN"
t_ok "a receive on the SRQ" vic "post_recv 4096 0"
t_ok "an XRC SEND ONLY naming the SRQ" inj op=XRC_SEND_ONLY qpn="$XQPN" \
	psn=$RQ_PSN ackreq=1 srqn="$SRQN" len=1000 seed=5
t_ok "... completes the SRQ's receive with 1000 bytes" vic_wc 10000 '*status=0 *len=1000'
t_ok "... whose bytes are right" vic "check 0 1000 5"
t_ok "... and is ACKed at its PSN, in XRC's ACK" \
	wait_for "grep -q '^rx XRC_ACK qpn=$((PEER_QPN)) psn=$RQ_PSN .*kind=ACK' $RX" 10
ctr malformed_qp
t_ok "an RC SEND to the XRC target: dropped, malformed_qp" \
	inj op=RC_SEND_ONLY qpn="$XQPN" psn=$(psn $((RQ_PSN + 1))) ackreq=1 len=8 seed=1
t_ok "... counted" counter_moved malformed_qp "$CTR" 1
t_ok "another receive on the SRQ" vic "post_recv 4096 4096"
XF=$(psn $((RQ_PSN + 1)))
ctr rcvd_pkts
t_ok "an XRC SEND FIRST naming the SRQ" inj op=XRC_SEND_FIRST qpn="$XQPN" \
	psn="$XF" srqn="$SRQN" len=$MTU seed=6
# With one vCPU the receive softirq is over once its count shows.
t_ok "... received" counter_moved rcvd_pkts "$CTR" 1
destroy_now() { vic destroy_srq && [ "${REPLY#*destroy_ms=}" -lt 5000 ]; }
t_ok "the SRQ destroyed between the message's FIRST and LAST, at once" destroy_now
XL=$(psn $((RQ_PSN + 2)))
t_ok "the XRC SEND LAST naming the gone SRQ" inj op=XRC_SEND_LAST qpn="$XQPN" \
	psn="$XL" ackreq=1 srqn="$SRQN" len=100 seed=6 off=$MTU
t_ok "... is NAKed Remote Access at its PSN, in XRC's ACK" \
	wait_for "grep -q '^rx XRC_ACK qpn=$((PEER_QPN)) psn=$XL .*kind=NAK code=2 ' $RX" 10
vic_err() { vic state && [ "$REPLY" = "ok state=6" ]; }
t_ok "... the target QP is in error" vic_err
t_ok "... and the dropped message completed nothing" vic_none 200
echo quit >&"${VICTIM[1]}"
wait "$VPID"
t_ok "XRC victim exits 0" test $? -eq 0
exec 7>&-
wait $INJ_PID
t_ok "injector exits 0" test $? -eq 0
kill $LISTEN 2>/dev/null
wait $LISTEN
show_counters
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
