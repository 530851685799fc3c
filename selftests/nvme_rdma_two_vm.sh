#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 900
# slub: 0
#
# NVMe over RDMA, a kernel consumer end to end: VM 1 exports a 64 MiB RAM
# disk through nvmet-rdma, VM 2 connects with nvme-rdma (nvme-cli), both
# on devices named after their interface (eth0_sroce), as deployment
# scripts name them. VM 2 writes random data and reads it back byte for
# byte, runs fio with crc32c verification, disconnects, reconnects and
# finds the first write still there. Then both sides take everything down.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

DEV=eth0_sroce
NQN=nqn.2026-12.org.sroce:selftest
TGT=10.77.0.1
CFG=/sys/kernel/config/nvmet

dev_up() {
	load_sroce && add_sroce_link "$DEV" eth0 &&
		wait_for "grep -q ACTIVE /sys/class/infiniband/$DEV/ports/1/state" 60 &&
		wait_for "roce_gid_index $DEV > /dev/null" 60
}
t_ok "$DEV up with a RoCE v2 GID" dev_up || { t_done; exit 1; }

if [ "$VM_ID" = 1 ]; then
	target_up() {
		modprobe brd rd_nr=1 rd_size=65536 && modprobe -a nvmet nvmet-rdma &&
			{ mountpoint -q /sys/kernel/config ||
				mount -t configfs configfs /sys/kernel/config; } &&
			mkdir "$CFG/subsystems/$NQN" &&
			echo 1 > "$CFG/subsystems/$NQN/attr_allow_any_host" &&
			mkdir "$CFG/subsystems/$NQN/namespaces/1" &&
			echo /dev/ram0 > "$CFG/subsystems/$NQN/namespaces/1/device_path" &&
			echo 1 > "$CFG/subsystems/$NQN/namespaces/1/enable" &&
			mkdir "$CFG/ports/1" &&
			echo rdma > "$CFG/ports/1/addr_trtype" &&
			echo ipv4 > "$CFG/ports/1/addr_adrfam" &&
			echo "$TGT" > "$CFG/ports/1/addr_traddr" &&
			echo 4420 > "$CFG/ports/1/addr_trsvcid" &&
			ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN" &&
			wait_for listening 30
	}
	listening() { rdma resource show cm_id | grep 'state LISTEN' | grep -q ':4420 '; }
	if t_ok "nvmet-rdma target on $TGT:4420 over $DEV" target_up; then
		vm_put target ready
	else
		vm_put target failed
	fi
	rdma resource show cm_id | sed 's/^/# /'
	t_ok "host done" vm_barrier host_done 700
	target_down() {
		rm "$CFG/ports/1/subsystems/$NQN" && rmdir "$CFG/ports/1" &&
			echo 0 > "$CFG/subsystems/$NQN/namespaces/1/enable" &&
			rmdir "$CFG/subsystems/$NQN/namespaces/1" &&
			rmdir "$CFG/subsystems/$NQN" &&
			modprobe -r nvmet-rdma nvmet
	}
	t_ok "target taken down, nvmet-rdma unloaded" target_down
else
	modprobe nvme-rdma
	if [ "$(vm_get target 1 300)" != ready ]; then
		t_bad "target did not come up"
		vm_barrier host_done 700
		t_done
		exit 1
	fi

	# ns_dev: our namespace's block device (the multipath head's parent is
	# the subsystem, a plain disk's the controller: both name the NQN;
	# a head's hidden per-path disks, nvmeXcYn1, have no /dev node).
	ns_dev() {
		local b
		for b in /sys/block/nvme*n1; do
			[ -b "/dev/${b##*/}" ] || continue
			[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
			echo "/dev/${b##*/}"
			return 0
		done
		return 1
	}
	connect() {
		nvme connect -t rdma -a "$TGT" -s 4420 -n "$NQN" || return 1
		if ! wait_for "ns_dev > /dev/null && [ -b \$(ns_dev) ]" 60; then
			ls -l /sys/block/ /sys/class/nvme/ /sys/class/nvme-subsystem/
			grep . /sys/class/nvme/*/state /sys/block/nvme*/device/subsysnqn
			nvme list -v
			return 1
		fi
		BDEV=$(ns_dev)
		echo "namespace at $BDEV, $(cat /sys/block/"${BDEV#/dev/}"/size) sectors"
		[ "$(cat /sys/block/"${BDEV#/dev/}"/size)" = 131072 ]
	}
	disconnect() {
		nvme disconnect -n "$NQN" || return 1
		wait_for "! ns_dev > /dev/null" 60
	}
	t_ok "nvme connect -t rdma $TGT, 64 MiB namespace appears" connect
	head -c 16777216 /dev/urandom > /tmp/pattern
	t_ok "write 16 MiB of random data (O_DIRECT)" \
		dd if=/tmp/pattern of="$BDEV" bs=1M oflag=direct status=none
	t_ok "read it back (O_DIRECT): byte for byte equal" sh -c \
		"dd if='$BDEV' bs=1M count=16 iflag=direct status=none | cmp - /tmp/pattern"
	fio_verify() {
		fio --name=verify --filename="$BDEV" --offset=16M --size=32M \
			--rw=randwrite --bsrange=4k-64k --ioengine=libaio --direct=1 \
			--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
			--output=/tmp/fio.out || { cat /tmp/fio.out; return 1; }
		grep -E 'err= *0' /tmp/fio.out && ! grep -qi 'verify.*bad\|crc32c.*fail' /tmp/fio.out
	}
	t_ok "fio randwrite 4k-64k, iodepth 8, crc32c verified" fio_verify
	t_ok "nvme disconnect" disconnect
	t_ok "nvme connect again" connect
	t_ok "the first 16 MiB survived the reconnect" sh -c \
		"dd if='$BDEV' bs=1M count=16 iflag=direct status=none | cmp - /tmp/pattern"
	t_ok "nvme disconnect" disconnect
	t_ok "nvme-rdma unloads" modprobe -r nvme-rdma
	show_counters "$DEV"
	t_ok "no retransmits on the clean link" test "$(hw_counter retransmits "$DEV")" -eq 0
	vm_barrier host_done 700
fi
t_ok "rdma link delete $DEV" rdma link delete "$DEV"
t_ok "rmmod sroce" rmmod sroce
t_done
