#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 2400
# slub: 0
# mtu: 9000
#
# sroce0 (VM 1) against rdma_rxe (rxe0, VM 2) on a 9000-byte link, path MTU
# 4096, both directions: data at 0 and 1 byte, one MTU, one MTU + 1 and
# several MTUs through sroce_xfer RC/UC (every op; UD up to 4096), then
# ibv_{rc,uc,srq}_pingpong -c -m 4096 and rping -V/-v at MTU + 1 and several
# MTUs (every byte compared),
# and an ib_write_bw at path MTU 4096 paired with the packet counters.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/verbs/interop_lib.sh"

t_ok "sroce0 / rxe0 up with RoCE v2 GIDs" interop_up || { t_done; exit 1; }
t_ok "$DEV active_mtu is 4096" sh -c "ibv_devinfo -d $DEV | grep -q 'active_mtu:.*4096'"
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

pp() { # S TYPE SIZE
	# shellcheck disable=SC2046 # UD takes no -m: nothing to pass then
	t_ok "ibv_$2_pingpong -c -m 4096 -s $3 ($DEV $(role "$1"))" \
		xrun "$2-$3" "$1" "tcp_listening @PORT@" \
		timeout 120 "ibv_$2_pingpong" -d "$DEV" -g "$GID" -c -n 10 \
		-s "$3" -p @PORT@ $([ "$2" = ud ] || echo -m 4096)
}

for S in 1 2; do
	echo "# ---- server on VM $S: $([ "$S" = 1 ] && echo sroce0 || echo rxe0) serves"
	# sroce_xfer below covers 0, 1 and one MTU byte for byte
	for size in 4097 20000; do
		pp $S rc $size
		pp $S uc $size
		pp $S srq $size
	done
	pp $S ud 4096
	log_retx "pingpongs (server VM $S)"
	xfer $S rc 0,1,4096,4097,20000 -m 4096
	xfer $S uc 0,1,4096,4097,20000 -m 4096
	xfer $S ud 0,1,4096
	log_retx "sroce_xfer (server VM $S)"

	for size in 4097 20000; do
		if [ "$(role $S)" = server ]; then a=(-s -a @SRV@); else a=(-c -a @SRV@ -V); fi
		t_ok "rping -S $size ($DEV $(role $S))" \
			xrun "rping-$size" $S "cm_listening rping @PORT@" \
			timeout 200 "${RPING[@]}" "${a[@]}" -p @PORT@ -C 5 -S $size -v
		if [ "$(role $S)" = server ]; then
			t_ok "rping -S $size: server saw the pattern" rping_data_ok "$(xout)" 5 $size "server ping data: "
		else
			t_ok "rping -S $size: client saw the pattern" rping_data_ok "$(xout)" 5 $size "ping data: "
		fi
	done

	# 50 x 64 KiB is at least 800 packets of 4096 bytes. No upper bound:
	# retransmissions on a loaded TCG host inflate the count. At most 8
	# writes (128 packets) in flight: with perftest's default of 50, sroce
	# as the writer once ran out of retries (IB_WC_RETRY_EXC_ERR) while the
	# rxe VM worked through 800 packets and their go-back-N copies.
	before=$(pkts)
	t_ok "ib_write_bw -m 4096 64 KiB x 50 ($DEV $(role $S))" \
		xrun write_bw $S "tcp_listening @PORT@" \
		timeout 200 ib_write_bw -d "$DEV" -x "$GID" -F -m 4096 -t 8 \
		-p @PORT@ -s 65536 -n 50
	t_ok "ib_write_bw ran at path MTU 4096" grep -q 'Mtu *: 4096\[B\]' "$(xout)"
	t_ok "ib_write_bw: $DEV packet counters moved" pkts_moved "$before" 800 1000000
	log_retx "rping, ib_write_bw (server VM $S)"
done

interop_done
