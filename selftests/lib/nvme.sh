# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# NVMe over RDMA helpers: an nvmet-rdma target exporting a RAM disk and an
# nvme-rdma host (nvme-cli). Source after selftests/lib/guest.sh.

NQN=nqn.2026-12.org.sroce:selftest
NVME_CFG=/sys/kernel/config/nvmet

nvme_listening() {
	rdma resource show cm_id | grep 'state LISTEN' | grep -q ':4420 '
}

# nvme_target_up ADDR: export a 64 MiB RAM disk as namespace 1 of $NQN on
# ADDR:4420 over RDMA; returns once rdma_cm listens.
nvme_target_up() {
	modprobe brd rd_nr=1 rd_size=65536 && modprobe -a nvmet nvmet-rdma &&
		{ mountpoint -q /sys/kernel/config ||
			mount -t configfs configfs /sys/kernel/config; } &&
		mkdir "$NVME_CFG/subsystems/$NQN" &&
		echo 1 > "$NVME_CFG/subsystems/$NQN/attr_allow_any_host" &&
		mkdir "$NVME_CFG/subsystems/$NQN/namespaces/1" &&
		echo /dev/ram0 > "$NVME_CFG/subsystems/$NQN/namespaces/1/device_path" &&
		echo 1 > "$NVME_CFG/subsystems/$NQN/namespaces/1/enable" &&
		mkdir "$NVME_CFG/ports/1" &&
		echo rdma > "$NVME_CFG/ports/1/addr_trtype" &&
		echo ipv4 > "$NVME_CFG/ports/1/addr_adrfam" &&
		echo "$1" > "$NVME_CFG/ports/1/addr_traddr" &&
		echo 4420 > "$NVME_CFG/ports/1/addr_trsvcid" &&
		ln -s "$NVME_CFG/subsystems/$NQN" "$NVME_CFG/ports/1/subsystems/$NQN" &&
		wait_for nvme_listening 30
}

# nvme_target_down: undo nvme_target_up, unload nvmet and the RAM disk.
nvme_target_down() {
	rm "$NVME_CFG/ports/1/subsystems/$NQN" && rmdir "$NVME_CFG/ports/1" &&
		echo 0 > "$NVME_CFG/subsystems/$NQN/namespaces/1/enable" &&
		rmdir "$NVME_CFG/subsystems/$NQN/namespaces/1" &&
		rmdir "$NVME_CFG/subsystems/$NQN" &&
		modprobe -r nvmet-rdma nvmet brd
}

# nvme_ns_dev: our namespace's block device (the multipath head's parent is
# the subsystem, a plain disk's the controller: both name the NQN; a head's
# hidden per-path disks, nvmeXcYn1, have no /dev node).
nvme_ns_dev() {
	local b
	for b in /sys/block/nvme*n1; do
		[ -b "/dev/${b##*/}" ] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# nvme_connect ADDR: connect to $NQN at ADDR; BDEV is the 64 MiB namespace.
nvme_connect() {
	nvme connect -t rdma -a "$1" -s 4420 -n "$NQN" || return 1
	if ! wait_for "nvme_ns_dev > /dev/null && [ -b \$(nvme_ns_dev) ]" 60; then
		ls -l /sys/block/ /sys/class/nvme/ /sys/class/nvme-subsystem/
		grep . /sys/class/nvme/*/state /sys/block/nvme*/device/subsysnqn
		nvme list -v
		return 1
	fi
	BDEV=$(nvme_ns_dev)
	echo "namespace at $BDEV, $(cat /sys/block/"${BDEV#/dev/}"/size) sectors"
	[ "$(cat /sys/block/"${BDEV#/dev/}"/size)" = 131072 ]
}

nvme_disconnect() {
	nvme disconnect -n "$NQN" || return 1
	wait_for "! nvme_ns_dev > /dev/null" 60
}

# nvme_same MIB FILE: the first MIB MiB of BDEV, read with O_DIRECT, are
# FILE byte for byte.
nvme_same() {
	dd if="$BDEV" bs=1M count="$1" iflag=direct status=none | cmp - "$2"
}
