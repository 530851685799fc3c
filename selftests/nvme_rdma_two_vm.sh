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
. "$REPO/selftests/lib/nvme.sh"

DEV=eth0_sroce
TGT=10.77.0.1

dev_up() {
	load_sroce && add_sroce_link "$DEV" eth0 &&
		wait_for "grep -q ACTIVE /sys/class/infiniband/$DEV/ports/1/state" 60 &&
		wait_for "roce_gid_index $DEV > /dev/null" 60
}
t_ok "$DEV up with a RoCE v2 GID" dev_up || { t_done; exit 1; }

if [ "$VM_ID" = 1 ]; then
	if t_ok "nvmet-rdma target on $TGT:4420 over $DEV" nvme_target_up "$TGT"; then
		vm_put target ready
	else
		vm_put target failed
	fi
	rdma resource show cm_id | sed 's/^/# /'
	t_ok "host done" vm_barrier host_done 700
	t_ok "target taken down, nvmet-rdma unloaded" nvme_target_down
else
	modprobe nvme-rdma
	if [ "$(vm_get target 1 300)" != ready ]; then
		t_bad "target did not come up"
		vm_barrier host_done 700
		t_done
		exit 1
	fi
	t_ok "nvme connect -t rdma $TGT, 64 MiB namespace appears" nvme_connect "$TGT"
	head -c 16777216 /dev/urandom > /tmp/pattern
	t_ok "write 16 MiB of random data (O_DIRECT)" \
		dd if=/tmp/pattern of="$BDEV" bs=1M oflag=direct status=none
	t_ok "read it back (O_DIRECT): byte for byte equal" nvme_same 16 /tmp/pattern
	fio_verify() {
		fio --name=verify --filename="$BDEV" --offset=16M --size=32M \
			--rw=randwrite --bsrange=4k-64k --ioengine=libaio --direct=1 \
			--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
			--output=/tmp/fio.out || { cat /tmp/fio.out; return 1; }
		grep -E 'err= *0' /tmp/fio.out && ! grep -qi 'verify.*bad\|crc32c.*fail' /tmp/fio.out
	}
	t_ok "fio randwrite 4k-64k, iodepth 8, crc32c verified" fio_verify
	t_ok "nvme disconnect" nvme_disconnect
	t_ok "nvme connect again" nvme_connect "$TGT"
	t_ok "the first 16 MiB survived the reconnect" nvme_same 16 /tmp/pattern
	t_ok "nvme disconnect" nvme_disconnect
	t_ok "nvme-rdma unloads" modprobe -r nvme-rdma
	show_counters "$DEV"
	t_ok "no retransmits on the clean link" test "$(hw_counter retransmits "$DEV")" -eq 0
	vm_barrier host_done 700
fi
t_ok "rdma link delete $DEV" rdma link delete "$DEV"
t_ok "rmmod sroce" rmmod sroce
t_done
