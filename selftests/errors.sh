#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 600
#
# selftests/verbs/sroce_verbs in loopback: RC SEND/WRITE/READ at sizes
# around the path MTU up to 8 MiB and atomics, checked byte for byte; bad
# rkey, out-of-bounds and missing-permission accesses (REM_ACCESS_ERR) with
# every WR behind them flushed; RNR with rnr_retry 0; UD through an SRQ;
# SQD with SQ_DRAINED; object limits and rereg. Then the error counters must have moved.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)

verbs() {
	timeout 400 "$VERBS_BIN/sroce_verbs" -d sroce0 -g "$GID" "$@"
}
t_ok "sroce_verbs (loopback data path and error completions)" verbs

show_counters
# Fresh module: exactly the three remote access errors and the one RNR.
t_ok "bad_rkey == 3 (bad rkey, out of bounds, no permission)" \
	test "$(hw_counter bad_rkey)" -eq 3
t_ok "naks_sent == naks_rcvd == 3" \
	sh -c "[ $(hw_counter naks_sent) -eq 3 ] && [ $(hw_counter naks_rcvd) -eq 3 ]"
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
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
