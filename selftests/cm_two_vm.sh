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
pair_done
