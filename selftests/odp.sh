#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 600
# secs: 60
#
# On-demand paging in loopback (selftests/verbs/sroce_odp): ODP regions
# over memory not yet touched, WRITE, READ, SEND and FETCH_ADD into and
# out of missing and dropped (MADV_DONTNEED) pages, byte for byte;
# ibv_advise_mr; pages dropped under a streaming WRITE; a region
# deregistered while a WRITE faults into it; an unmapped range fails the
# access rather than hang. Then an implicit region (the whole address
# space) used across a 16 MiB boundary of untouched memory.
# The responder's page faults show as RNR NAKs.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)
odp_run() {
	timeout 300 "$VERBS_BIN/sroce_odp" -d sroce0 -g "$GID" > /tmp/odp.out 2>&1
	local rc=$?
	cat /tmp/odp.out
	return $rc
}
t_ok "sroce_odp (explicit and implicit ODP data path)" odp_run
grep '^# [0-9]* checks' /tmp/odp.out
show_counters
t_ok "the responder's page faults were RNR NAKs, and retried" \
	sh -c "[ $(hw_counter rnr_naks_sent) -gt 0 ] && [ $(hw_counter rnr_naks_rcvd) -gt 0 ]"
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
