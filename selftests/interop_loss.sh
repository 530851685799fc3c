#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 900
# slub: 0
#
# sroce0 (VM 1) against rdma_rxe (rxe0, VM 2) with netem dropping 1% of
# the packets sroce's VM sends (CM MADs excepted, see lossy_but_qp1): an RC
# ib_write_bw and a verified rping must still complete in both directions,
# and sroce must have retransmitted.
# Both devices' retransmission-type counters are logged: rxe retransmits
# even on a clean link between these VMs, so its figures are evidence of
# how it behaves here, not something this test holds it to.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/verbs/interop_lib.sh"

# lossy_but_qp1: netem drops 1% of eth0's output except RoCE packets to QP 1
# (CM MADs), which a prio band without netem takes. ib_cm stops resending
# a DREQ as soon as the disconnecting side destroys its id (rping does so
# at once), so one lost DREQ leaves the peer's rping waiting for
# DISCONNECTED forever: a property of rdma_cm, not of either transport.
# BTH's destination QP is bytes 5-7 after IPv4's 20 and UDP's 8.
lossy_but_qp1() {
	tc qdisc add dev eth0 root handle 1: prio bands 2 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc qdisc add dev eth0 parent 1:2 handle 20: netem loss 1% &&
		tc filter add dev eth0 parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u32 0x00000001 0x00ffffff at 32 flowid 1:1
}

t_ok "sroce0 / rxe0 up with RoCE v2 GIDs" interop_up || { t_done; exit 1; }
if [ "$VM_ID" = 1 ]; then
	t_ok "netem: drop 1% of what VM 1 sends, CM MADs aside" lossy_but_qp1
	tc qdisc show dev eth0 | sed 's/^/# /'
	tc filter show dev eth0 | sed 's/^/# /'
fi
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }
retx0=$( [ "$VM_ID" = 1 ] && hw_counter retransmits sroce0)
log_retx "setup"

for S in 1 2; do
	# 400 x 16 KiB: ~6400 requests, so 1% loss drops dozens of them (or
	# their ACKs) and sroce's retransmit path must recover each.
	before=$(pkts)
	t_ok "ib_write_bw RC 16 KiB x 400 under loss ($DEV $(role $S))" \
		xrun write_bw $S "tcp_listening @PORT@" \
		timeout 400 ib_write_bw -d "$DEV" -x "$GID" -F -p @PORT@ -s 16384 -n 400
	t_ok "ib_write_bw: $DEV packet counters moved" pkts_moved "$before" 6400 100000
	log_retx "ib_write_bw (server VM $S)"
	if [ "$(role $S)" = server ]; then a=(-s -a @SRV@); else a=(-c -a @SRV@ -V); fi
	t_ok "rping -V 40 x 5000 bytes under loss ($DEV $(role $S))" \
		xrun rping $S "cm_listening rping @PORT@" \
		timeout 400 "${RPING[@]}" "${a[@]}" -p @PORT@ -C 40 -S 5000 -v
	if [ "$(role $S)" = server ]; then
		t_ok "rping: server saw the pattern" rping_data_ok "$(xout)" 40 5000 "server ping data: "
	else
		t_ok "rping: client saw the pattern" rping_data_ok "$(xout)" 40 5000 "ping data: "
	fi
	log_retx "rping (server VM $S)"
done

if [ "$VM_ID" = 1 ]; then
	tc -s qdisc show dev eth0 | sed 's/^/# /'
	tc -s class show dev eth0 | sed 's/^/# /'
	t_ok "sroce retransmitted under loss" \
		sh -c "[ $(hw_counter retransmits sroce0) -gt $retx0 ]"
fi
show_counters "$DEV"
t_ok "peers done" vm_barrier finished 300
if [ "$VM_ID" = 1 ]; then
	tc qdisc del dev eth0 root
	t_ok "rdma link delete" rdma link delete sroce0
	t_ok "rmmod sroce" rmmod sroce
else
	t_ok "rdma link delete" rdma link delete rxe0
fi
t_done
