#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 900
#
# QPs destroyed while they answer long READs with the transmit budget
# spent, in a loop. VM 1, the responder, sends through a token bucket at
# 8 Mbit/s (as in tx_budget_two_vm), so its READ responses wait for budget
# on dev->tx_waiters. Once they do (tx_budget_waits moves), ib_read_bw's
# server is killed: its 8 QPs are destroyed with responses waiting and
# more READs arriving, and the netdev frees the queued packets afterwards
# (sock_wfree -> the budget's wake-up, which walks the waiters). A QP that
# anything listed again after its teardown began would be walked freed
# (slub_debug poisons it). The client is killed too; the budget must drain
# and a new sroce QP must still work. SROCE_TD_ROUNDS (2) rounds.
#
# Not deterministic for the old defect (defect 3): its window is from
# sroce_net_tx_unwait() to sroce_resp_stop() in one destroy, and on a
# one-CPU guest only the responder's 10 ms retry timer can fire into it.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/teardown.sh"

ROUNDS=${SROCE_TD_ROUNDS:-2}
td_setup
t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }
if [ "$VM_ID" = 1 ]; then
	t_ok "eth0 egress: token bucket, 8 Mbit/s, 600 KB" \
		tc qdisc replace dev eth0 root tbf rate 8mbit burst 16kb limit 600kb
fi

# throttled N: the responder's READ responses waited for budget N more
# times than at the start of the round.
throttled() { [ "$(hw_counter tx_budget_waits)" -gt "$1" ]; }

for n in $(seq "$ROUNDS"); do
	port=$((18900 + n))
	RD=(ib_read_bw -d sroce0 -x "$GID" -F -q 8 -s 65536 -D 300 -u 18 -p "$port")
	if [ "$VM_ID" = 1 ]; then
		w0=$(hw_counter tx_budget_waits)
		"${RD[@]}" > "/tmp/rd$n.out" 2>&1 &
		pid=$!
		t_ok "round $n: ib_read_bw server listens" \
			wait_for "tcp_listening $port" 120
		vm_put "rd$n" ready
		t_ok "round $n: READ responses wait for budget" \
			wait_for "throttled $((w0 + 50))" 120
		t_ok "round $n: server killed mid-response" kill -KILL "$pid"
		t_ok "round $n: server gone" td_ended 60 "rd$n=$pid"
		t_ok "round $n: no task in D state" td_no_d_state
		vm_put "rd$n.killed" yes
	else
		st=$(vm_get "rd$n" 1 300)
		"${RD[@]}" "$(peer_ip)" > "/tmp/rd$n.out" 2>&1 &
		pid=$!
		t_ok "round $n: server ready" test "$st" = ready
		t_ok "round $n: server killed" vm_get "rd$n.killed" 1 300
		kill -KILL "$pid" 2>/dev/null
		t_ok "round $n: client gone" td_ended 60 "rd$n=$pid"
	fi
	t_ok "round $n: peers done" vm_barrier "round$n" 300
done

if [ "$VM_ID" = 1 ]; then
	t_ok "eth0's qdisc restored" tc qdisc del dev eth0 root
fi
# Every QP is gone and the qdisc flushed: a new QP must carry traffic.
PP=(timeout 200 ibv_rc_pingpong -d sroce0 -g "$GID" -n 20 -s 4096 -p 18999)
if [ "$VM_ID" = 1 ]; then
	t_ok "ibv_rc_pingpong after the rounds (server)" \
		serve pp "tcp_listening 18999" "${PP[@]}"
else
	t_ok "ibv_rc_pingpong after the rounds (client)" \
		client pp "${PP[@]}" "$(peer_ip)"
fi
pair_done
