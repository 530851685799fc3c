#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 600
#
# perftest between two VMs over sroce0: write, send, read and atomic
# bandwidth tests with a few iterations each. Both sides must exit 0 and the
# client must print a result line with a non-zero average bandwidth.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)
SRV=10.77.0.1
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# bw_ok FILE: the line after perftest's "#bytes ... BW average" header has a
# positive average (4th column).
bw_ok() {
	awk '/#bytes.*BW average/ { h = 1; next }
	     h && NF >= 4 && $1 ~ /^[0-9]+$/ { if ($4 + 0 > 0) ok = 1; h = 0 }
	     END { exit !ok }' "$1"
}

# perf N TEST ARGS...: run perftest TEST on port 18600+N; VM 1 serves.
perf() {
	local n=$1 test=$2 port=$((18600 + $1)) pid rc st
	shift 2
	set -- timeout 200 "$test" -d sroce0 -x "$GID" -F -p $port "$@"
	if [ "$VM_ID" = 1 ]; then
		"$@" > /tmp/perf.out 2>&1 &
		pid=$!
		if wait_for "tcp_listening $port || ! kill -0 $pid 2>/dev/null" 120 &&
			kill -0 $pid 2>/dev/null; then
			vm_put "perf$n" ready
		else
			vm_put "perf$n" failed
		fi
		wait $pid
		rc=$?
	else
		st=$(vm_get "perf$n" 1 300) || return 1
		[ "$st" = ready ] || { echo "server did not start"; return 1; }
		"$@" $SRV > /tmp/perf.out 2>&1
		rc=$?
	fi
	sed 's/^/  /' /tmp/perf.out
	echo "exit $rc"
	[ $rc = 0 ] || return 1
	[ "$VM_ID" = 1 ] || bw_ok /tmp/perf.out
}

# result: the client's bandwidth line and the retransmissions so far (legal
# when a loaded TCG host outlasts the 67 ms ACK timeout, but worth seeing)
result() {
	[ "$VM_ID" = 2 ] && awk '/#bytes.*BW average/ { getline; print "# " $0 }' /tmp/perf.out
	echo "# retransmits $(hw_counter retransmits)"
}

t_ok "ib_write_bw 64 KiB x 200" perf 1 ib_write_bw -s 65536 -n 200
result
t_ok "ib_send_bw 64 KiB x 200" perf 2 ib_send_bw -s 65536 -n 200
result
t_ok "ib_read_bw 64 KiB x 200" perf 3 ib_read_bw -s 65536 -n 200
result
t_ok "ib_atomic_bw x 500" perf 4 ib_atomic_bw -n 500
result
show_counters
t_ok "sent_pkts and rcvd_pkts > 0" \
	sh -c "[ $(hw_counter sent_pkts) -gt 0 ] && [ $(hw_counter rcvd_pkts) -gt 0 ]"
t_ok "peers done" vm_barrier finished 300
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
