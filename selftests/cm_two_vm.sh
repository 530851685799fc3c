#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 600
#
# sroce0 on each of two VMs: ibv_rc_pingpong across the wire (-c checks
# every buffer), then rdma_cm through the kernel CM over our GSI QP: rping
# with -V (client compares what came back) and -v (both print each ping,
# checked here against rping's pattern), ucmatose (RC) and udaddy (UD).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)
SRV=10.77.0.1
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# cm_listening COMM PORT: an rdma_cm id of COMM listens on PORT.
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' |
		grep "comm $1 " | grep -q ":$2 "
}

# serve NAME READY-CMD CMD...: VM 1 runs CMD in the background, announces it
# once READY-CMD holds, and reports CMD's exit status when it ends.
# NAME.out holds its output.
serve() {
	local name=$1 ready=$2 pid rc
	shift 2
	"$@" > "/tmp/$name.out" 2>&1 &
	pid=$!
	if wait_for "$ready || ! kill -0 $pid 2>/dev/null" 120 && kill -0 $pid 2>/dev/null; then
		vm_put "$name" ready
	else
		vm_put "$name" failed
	fi
	wait $pid
	rc=$?
	sed 's/^/srv: /' "/tmp/$name.out"
	echo "exit $rc"
	return $rc
}
# client NAME CMD...: VM 2 runs CMD once the server of NAME is ready.
client() {
	local name=$1 st rc
	shift
	st=$(vm_get "$name" 1 300) || return 1
	[ "$st" = ready ] || { echo "server did not start"; return 1; }
	"$@" > "/tmp/$name.out" 2>&1
	rc=$?
	sed 's/^/cli: /' "/tmp/$name.out"
	echo "exit $rc"
	return $rc
}

# rping_data_ok FILE COUNT SIZE PREFIX: FILE holds the COUNT pings rping
# sends: "rdma-ping-N: " then letters from 'A'+N cycling through 'A'..'z',
# SIZE-1 bytes in all.
rping_data_ok() {
	awk -v count="$2" -v size="$3" -v pfx="$4" '
	BEGIN { for (i = 65; i <= 122; i++) chr[i] = sprintf("%c", i); start = 65; n = 0 }
	index($0, pfx) == 1 {
		got = substr($0, length(pfx) + 1)
		want = "rdma-ping-" n ": "
		c = start
		while (length(want) < size - 1) {
			want = want chr[c]
			if (++c > 122) c = 65
		}
		if (got != want) { print "ping " n ": got  " got; print "ping " n ": want " want; bad = 1 }
		n++
		if (++start > 122) start = 65
	}
	END { if (n != count) print "saw " n " pings, want " count; exit bad || n != count }
	' "$1"
}

# Retransmissions are legal (a loaded TCG host can outlast a 67 ms ACK
# timeout) but worth seeing: log them after every step.
retx() { echo "# after $1: retransmits $(hw_counter retransmits) duplicate_request $(hw_counter duplicate_request)"; }

pp=(ibv_rc_pingpong -d sroce0 -g "$GID" -c)
if [ "$VM_ID" = 1 ]; then
	t_ok "rc_pingpong 1 byte (server)" serve pp1 "tcp_listening 18515" \
		timeout 200 "${pp[@]}" -n 100 -s 1
	retx rc_pingpong-1
	t_ok "rc_pingpong 65536 bytes (server)" serve pp2 "tcp_listening 18516" \
		timeout 200 "${pp[@]}" -n 50 -s 65536 -p 18516
	retx rc_pingpong-65536
	t_ok "rping (server)" serve rping "cm_listening rping 7174" \
		timeout 200 rping -s -a $SRV -C 10 -S 100 -v
	t_ok "rping server saw the pattern" rping_data_ok /tmp/rping.out 10 100 "server ping data: "
	retx rping
	t_ok "ucmatose (server)" serve ucma "cm_listening ucmatose 7471" \
		timeout 200 ucmatose -b $SRV -c 2 -C 10
	retx ucmatose
	t_ok "udaddy (server)" serve udaddy "cm_listening udaddy 7174" \
		timeout 200 udaddy -b $SRV -c 2 -C 10
	retx udaddy
else
	t_ok "rc_pingpong 1 byte (client)" client pp1 \
		timeout 200 "${pp[@]}" -n 100 -s 1 $SRV
	retx rc_pingpong-1
	t_ok "rc_pingpong 65536 bytes (client)" client pp2 \
		timeout 200 "${pp[@]}" -n 50 -s 65536 -p 18516 $SRV
	retx rc_pingpong-65536
	t_ok "rping -V (client)" client rping timeout 200 rping -c -a $SRV -C 10 -S 100 -v -V
	t_ok "rping client saw the pattern" rping_data_ok /tmp/rping.out 10 100 "ping data: "
	retx rping
	t_ok "ucmatose (client)" client ucma timeout 200 ucmatose -s $SRV -c 2 -C 10
	retx ucmatose
	t_ok "udaddy (client)" client udaddy timeout 200 udaddy -s $SRV -c 2 -C 10
	retx udaddy
fi
show_counters
t_ok "sent_pkts and rcvd_pkts > 0" \
	sh -c "[ $(hw_counter sent_pkts) -gt 0 ] && [ $(hw_counter rcvd_pkts) -gt 0 ]"
t_ok "peers done" vm_barrier finished 300
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
