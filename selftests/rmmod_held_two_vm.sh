#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 600
#
# rmmod while the netdev still holds our packets. VM 1 writes to VM 2
# (ib_write_bw), then its eth0 gets a token bucket at 8 kbit/s, where a
# packet waits minutes; once packets sit in it the writer is killed and
# sroce unloaded. (A netem delay does not do: netem orphans a packet it
# delays, so our charge is gone before the delay.)
# Unloading waits 5 s for them and then lets go (dmesg says so). Deleting
# the qdisc frees them afterwards, each through sock_wfree and the budget
# socket's sk_write_space: that must no longer be module text. The old
# module took a module reference there, which does not stop an rmmod
# already under way, and the freed packets jumped into unmapped text (an
# oops). Then sroce loads again and carries a checked ibv_rc_pingpong.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/teardown.sh"

td_setup
t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# backlog: packets queued in eth0's root qdisc.
backlog() {
	tc -s qdisc show dev eth0 | sed -n 's/.*backlog [0-9]*b \([0-9]*\)p.*/\1/p' | head -1
}

BW=(timeout -k 5 300 ib_write_bw -d sroce0 -x "$GID" -F -p 18950 -s 4096 -D 300)
if [ "$VM_ID" = 2 ]; then
	"${BW[@]}" > /tmp/bw.out 2>&1 &
	pid=$!
	t_ok "ib_write_bw server listens" wait_for "tcp_listening 18950" 120
	vm_put bw ready
	t_ok "VM 1 unloaded sroce" vm_get unloaded 1 300
	kill -KILL "$pid" 2>/dev/null
	t_ok "server gone" td_ended 30 "bw=$pid"
else
	st=$(vm_get bw 2 300)
	t_ok "server ready" test "$st" = ready
	"${BW[@]}" "$(peer_ip)" > /tmp/bw.out 2>&1 &
	pid=$!
	t_ok "traffic flows" td_flowing sroce0
	t_ok "eth0 egress: token bucket, 8 kbit/s" \
		tc qdisc replace dev eth0 root tbf rate 8kbit burst 1600 limit 10mb
	t_ok "packets held in the qdisc" wait_for '[ "$(backlog)" -gt 0 ]' 30
	kill -KILL "$pid"
	t_ok "writer gone" td_ended 30 "bw=$pid"
	echo "# qdisc backlog before rmmod: $(backlog) packets"
	t_ok "rmmod sroce with packets held" timeout 60 rmmod sroce
	t_ok "sroce let go of the held packets" \
		sh -c "dmesg | grep -q 'still holds .* released without us'"
	t_ok "packets still held after the unload" test "$(backlog)" -gt 0
	# Frees them now, each through sock_wfree.
	t_ok "token bucket deleted" tc qdisc del dev eth0 root
	# More traffic makes virtio reclaim what its TX ring still held.
	t_ok "ping across" ping -c 3 -i 0.2 -W 5 "$(peer_ip)"
	vm_put unloaded yes
	t_ok "sroce0 back" sroce_up
fi
t_ok "peers ready for pingpong" vm_barrier again 300
PP=(timeout 200 ibv_rc_pingpong -d sroce0 -g "$GID" -c -n 20 -s 4096 -p 18951)
if [ "$VM_ID" = 1 ]; then
	t_ok "ibv_rc_pingpong (server)" serve pp "tcp_listening 18951" "${PP[@]}"
else
	t_ok "ibv_rc_pingpong (client)" client pp "${PP[@]}" "$(peer_ip)"
fi
pair_done
