#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 1500
#
# Pulling the rug under traffic between two VMs: bidirectional ib_write_bw
# over sroce0 (sent_pkts seen growing on both sides), then one side does
# `rdma link delete` (VM 1), `rmmod sroce` (VM 2), or removes the virtio NIC
# under eth0 from PCI (VM 2). The programs on both sides must end by
# themselves (EIO on the side pulled, retry exceeded on the other), the
# device must go, and after each round a new sroce0 must carry a checked
# ibv_rc_pingpong. Hung tasks are reported after 10 s; the harness fails on
# any splat.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/teardown.sh"

td_setup
SRV=10.77.0.1
t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# bw N: bidirectional ib_write_bw on port 18600+N, VM 1 serving; sets
# PIDS. Both sides send (ib_write_bw -b), so each side's QP notices a
# vanished peer through its retry limit.
bw() {
	local n=$1 port=$((18600 + $1)) pid st
	set -- timeout -k 5 400 ib_write_bw -d sroce0 -x "$GID" -F -p $port \
		-s 4096 -b "${TD_BW_LONG[@]}"
	if [ "$VM_ID" = 1 ]; then
		"$@" > "/tmp/bw$n.out" 2>&1 &
		pid=$!
		PIDS="bw$n=$pid"
		if wait_for "tcp_listening $port || ! kill -0 $pid 2>/dev/null" 120 &&
			kill -0 $pid 2> /dev/null; then
			vm_put "bw$n" ready
		else
			vm_put "bw$n" failed
			cat "/tmp/bw$n.out"
			return 1
		fi
	else
		st=$(vm_get "bw$n" 1 300) || return 1
		[ "$st" = ready ] || { echo "server did not start"; return 1; }
		"$@" $SRV > "/tmp/bw$n.out" 2>&1 &
		PIDS="bw$n=$!"
	fi
}

# round N PULLER DESC CMD...: traffic, then VM PULLER runs CMD (DESC), and
# then $RESTORE if set.
round() {
	local n=$1 puller=$2 desc=$3
	shift 3
	PIDS=
	t_ok "round $n: ib_write_bw -b started" bw "$n"
	t_ok "round $n: traffic flows" td_flowing sroce0
	t_ok "round $n: both sides see traffic" vm_barrier "flowing$n" 300
	if [ "$VM_ID" = "$puller" ]; then
		t_ok "round $n: $desc under traffic" "$@"
		t_ok "round $n: sroce0 is gone" wait_for "td_gone sroce0" 60
		[ -n "${RESTORE:-}" ] && t_ok "round $n: $RESTORE" "$RESTORE"
	fi
	# shellcheck disable=SC2086
	t_ok "round $n: programs ended" td_ended 90 $PIDS
	td_how
	t_ok "round $n: no task in D state" td_no_d_state
	t_ok "round $n: peers done" vm_barrier "ended$n" 300
}

# again N: the side that lost sroce0 brings it back, then a checked
# ibv_rc_pingpong across.
again() {
	local n=$1 port=$((18700 + $1))
	if [ ! -e /sys/class/infiniband/sroce0 ]; then
		t_ok "round $n: sroce0 back" sroce_up
	fi
	t_ok "round $n: peers ready" vm_barrier "again$n" 300
	local pp=(timeout 200 ibv_rc_pingpong -d sroce0 -g "$GID" -c -n 20 -s 4096 -p "$port")
	if [ "$VM_ID" = 1 ]; then
		t_ok "round $n: rc_pingpong after re-add (server)" serve "pp$n" \
			"tcp_listening $port" "${pp[@]}"
	else
		t_ok "round $n: rc_pingpong after re-add (client)" client "pp$n" \
			"${pp[@]}" $SRV
	fi
}

# pci_remove_nic: hot-unplug the PCI function under eth0.
pci_remove_nic() {
	local pci
	pci=$(basename "$(readlink -f /sys/class/net/eth0/device/..)") || return 1
	echo "# removing PCI $pci"
	echo "$pci" > /tmp/td-pci
	timeout 90 sh -c "echo 1 > /sys/bus/pci/devices/$pci/remove"
}

# nic_back: rescan PCI and configure the NIC as the harness did at boot.
nic_back() {
	echo 1 > /sys/bus/pci/rescan || return 1
	wait_for "ip link show eth0 > /dev/null 2>&1" 60 || return 1
	ip link set eth0 mtu "$MTU" && ip link set eth0 up &&
		ip addr add "$(my_ip)/24" dev eth0 &&
		ip -6 addr add "$(my_ip -6)/64" dev eth0 nodad
}

round 1 1 "rdma link delete sroce0" timeout 90 rdma link delete sroce0
[ "$VM_ID" = 1 ] && t_ok "round 1: rmmod sroce (refcnt 0)" td_rmmod
again 1

# ib_uverbs takes no module reference for a driver that can disassociate:
# the unload goes ahead and the processes lose their objects.
round 2 2 "rmmod sroce" timeout 90 rmmod sroce
again 2

# The NIC comes back as soon as sroce0 is gone, before the peer's programs
# end: a guest whose NIC takes nothing stops its qemu reading the Unix
# stream between the qemus, and the peer's qemu then blocks in the write
# (the whole peer VM stops, seen as a 285 s soft lockup). The peer's QPs
# still end through their retry limit: the new eth0 has no sroce0 behind it.
RESTORE=nic_back round 3 2 "PCI removal of the NIC" pci_remove_nic
again 3

show_counters
t_ok "peers finished" vm_barrier finished 300
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" td_rmmod
t_ok "no device freed with live objects" td_no_leftovers
t_done
