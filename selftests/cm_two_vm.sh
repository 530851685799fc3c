#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 600
# slub: 0
#
# sroce0 on each of two VMs: ibv_rc_pingpong across the wire (-c checks
# every buffer), then rdma_cm through the kernel CM over our GSI QP: rping
# with -V (client compares what came back) and -v (both print each ping,
# checked here against rping's pattern), ucmatose (RC) and udaddy (UD).
# Then UD multicast: sroce_mcast (two QPs attached on one side, every
# datagram checked) and mckey (rdma_cm's join).
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
	t_ok "multicast: two QPs attached to 239.7.7.7 get 50 datagrams each" \
		serve mc "grep -q '^ready' /tmp/mc.out" \
		timeout 200 "$VERBS_BIN/sroce_mcast" -d sroce0 -g "$GID" -m 239.7.7.7 -r -n 50
	t_ok "eth0 left 239.7.7.7 with the last QP" sh -c "! ip maddr show dev eth0 | grep -qw 239.7.7.7"
	t_ok "mckey receives 10 (rdma_cm join, 239.8.8.8)" \
		serve mckey "grep -q 'joined' /tmp/mckey.out" \
		timeout 200 stdbuf -oL mckey -m 239.8.8.8 -b $SRV -C 10
	t_ok "mckey: all 10 datagrams" grep -q 'data transfers complete' /tmp/mckey.out
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
	t_ok "multicast: 50 datagrams to 239.7.7.7" client mc \
		timeout 200 "$VERBS_BIN/sroce_mcast" -d sroce0 -g "$GID" -m 239.7.7.7 -s -n 50
	t_ok "mckey sends 10 to 239.8.8.8" client mckey \
		timeout 200 mckey -m 239.8.8.8 -s -b 10.77.0.2 -C 10
fi
pair_done
