#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Runs as PID 1 in a test guest (started by initramfs-init). Finishes the
# system setup, installs the staged build, configures eth0, runs the test
# script and leaves its exit status in the results share for the host.
# Usage (from initramfs-init only): guest-boot.sh SHARE VM_ID
SHARE=$1
VMID=$2
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

say() { echo "sroce-vm$VMID: $*" > /dev/console; }
finish() {
	sync
	# Power off rather than exit: PID 1 exiting is a kernel panic.
	busybox poweroff -f
	echo o > /proc/sysrq-trigger
	sleep 60
}
# Without a status file the host fails the run, so setup errors need no
# separate reporting beyond the console line.
die() { say "setup FAILED: $*"; finish; }

mount -t proc proc /proc
mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# /tmp is left alone: the root overlay already makes it writable, and the
# repo or results may live under the host's /tmp at the same path.
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

ENV=$SHARE/vm$VMID.env
[ -r "$ENV" ] || die "no $ENV"
# shellcheck disable=SC1090
. "$ENV"
# TSCALE too: make check-debug's slower kernel stretches every wait_for
export VM_ID NVMS MTU REPO STAGE RESULTS SYNC KVER SROCE_TEST TSCALE
hostname "vm$VM_ID"
say "boot done at $(cut -d' ' -f1 /proc/uptime)s"

# The stage is laid over the root as-is; --keep-directory-symlink keeps
# Debian's merged-/usr links (lib -> usr/lib) instead of replacing them.
if [ -n "$STAGE" ] && [ -d "$STAGE" ]; then
	tar -C "$STAGE" -cf - . | tar -C / --keep-directory-symlink -xf - ||
		die "installing stage $STAGE"
	say "stage copied at $(cut -d' ' -f1 /proc/uptime)s"
	# Index built by vm.sh on the host for image + staged modules.
	if [ -d "$RESULTS/modindex" ]; then
		cp "$RESULTS"/modindex/modules.* "/lib/modules/$KVER/" || die "module index"
	fi
	# ldconfig reads every library over 9p (a minute on TCG); providers are
	# dlopen()ed by path and need no cache, so run it only for other libs.
	if find "$STAGE" -name '*.so*' ! -path '*/libibverbs/*' | grep -q .; then
		ldconfig
	fi
	say "stage installed at $(cut -d' ' -f1 /proc/uptime)s"
fi

# Keep the kernel log complete on the console for the host's splat scan.
dmesg -n 8 2>/dev/null
# A kmemleak kernel (make check-debug): forget what boot left unreferenced,
# so that the scan after the test reports only what the test leaked.
KMEMLEAK=/sys/kernel/debug/kmemleak
[ -w $KMEMLEAK ] && echo clear > $KMEMLEAK

ip link set lo up
if ip link show eth0 >/dev/null 2>&1; then
	sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.eth0.accept_dad=0
	ip link set eth0 mtu "$MTU" || die "mtu $MTU"
	ip link set eth0 up || die "eth0 up"
	ip addr add "10.77.0.$VM_ID/24" dev eth0 || die "ipv4 address"
	ip -6 addr add "fd77::$VM_ID/64" dev eth0 nodad || die "ipv6 address"
fi
say "setup done at $(cut -d' ' -f1 /proc/uptime)s"

cd "$REPO" || die "cd $REPO"
say "running $SROCE_TEST"
# The test's own output goes to its log only, so that nothing it prints can
# look like a kernel splat on the console.
bash "$SROCE_TEST" > "$RESULTS/vm$VM_ID.log" 2>&1 < /dev/null
rc=$?
say "test exited $rc at $(cut -d' ' -f1 /proc/uptime)s"
if [ -w $KMEMLEAK ]; then
	# Whatever sroce allocated must be freed by the time it is unloaded.
	# kmemleak reports only objects older than 5 s, hence the wait; its
	# "suspected memory leaks" line lands in the dmesg the host scans.
	timeout 60 rmmod sroce 2>/dev/null
	sleep 6
	echo scan > $KMEMLEAK
	echo scan > $KMEMLEAK
	cat $KMEMLEAK > "$RESULTS/vm$VM_ID.kmemleak" 2>&1
	say "kmemleak scan done at $(cut -d' ' -f1 /proc/uptime)s"
fi
dmesg > "$RESULTS/vm$VM_ID.dmesg" 2>&1
echo "$rc" > "$RESULTS/vm$VM_ID.status.tmp"
mv "$RESULTS/vm$VM_ID.status.tmp" "$RESULTS/vm$VM_ID.status"
finish
