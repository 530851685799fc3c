#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Boots one VM, or two joined by a private lossless Ethernet link, runs a
# guest script in each and decides pass/fail from the status each guest
# wrote to the results share plus a scan of the guest kernel logs.
#
# Usage: vm.sh [options] SCRIPT
#   -n N            number of VMs, 1 or 2 (default 1)
#   -o DIR          results folder (default build/results/<script name>)
#   -t SECONDS      wall-clock limit per run; qemu is killed after it (300)
#   -m MB           memory per VM (default 1024)
#   -c N            vCPUs per VM (default 1)
#   --mtu N         eth0 MTU in the guests (default 1500)
#   --stage DIR     staged install laid over the guest root (default build/stage;
#                   "none" for no stage)
#   --no-slub-debug boot without slub_debug (for benchmarks)
#   -q              do not print the guests' logs
# SCRIPT is a path inside the host tree; it runs in every guest with VM_ID,
# NVMS, MTU, SYNC, RESULTS, REPO, STAGE, KVER in its environment.
# Environment (make check-debug sets these): SROCE_KVER boots another kernel
# from .cache/kernel, SROCE_STAGE is the default stage, SROCE_SLUB=0 drops
# slub_debug, SROCE_TIMEOUT_SCALE=N multiplies -t, SROCE_CPU is QEMU's -cpu
# (default max), SROCE_ROOTFS a host folder to use as the guests' root
# instead of / (make check-trixie).
# Exit status: 0 all guests exited 0 and no kernel splat, 1 otherwise,
# 2 usage or host-side setup error.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/versions.env"
# make check-debug boots its own kernel, stage and slower timeouts.
KVER=${SROCE_KVER:-$KVER}
CACHE=${SROCE_CACHE:-$ROOT/.cache}
KDIR=$CACHE/kernel/$KVER

NVMS=1 RES='' TIMEOUT=300 MEM=1024 CPUS=1 MTU=1500 QUIET=0
STAGE=${SROCE_STAGE:-$ROOT/build/stage} SLUB=${SROCE_SLUB:-1}
# Another root for the guests (make check-trixie): an absolute folder of
# the host's, one word of the kernel command line.
ROOTFS=
if [[ -n ${SROCE_ROOTFS:-} ]]; then
	ROOTFS=$(realpath -e "$SROCE_ROOTFS") || exit 2
	if [[ $ROOTFS == *[[:space:],]* ]]; then
		echo "vm.sh: SROCE_ROOTFS '$ROOTFS' has a space or comma" >&2
		exit 2
	fi
fi
usage() { sed -n '/^# Usage/,/^# 2 usage/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while (($#)); do
	case $1 in
	-n) NVMS=$2; shift 2 ;;
	-o) RES=$2; shift 2 ;;
	-t) TIMEOUT=$2; shift 2 ;;
	-m) MEM=$2; shift 2 ;;
	-c) CPUS=$2; shift 2 ;;
	--mtu) MTU=$2; shift 2 ;;
	--stage) STAGE=$2; shift 2 ;;
	--no-slub-debug) SLUB=0; shift ;;
	-q) QUIET=1; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
(($# == 1)) || usage
SCRIPT=$(realpath "$1") || exit 2
[[ -f $SCRIPT ]] || { echo "vm.sh: no such script $1" >&2; exit 2; }
[[ $NVMS == 1 || $NVMS == 2 ]] || { echo "vm.sh: -n must be 1 or 2" >&2; exit 2; }
[[ $MTU =~ ^[0-9]+$ && $TIMEOUT =~ ^[0-9]+$ && $MEM =~ ^[0-9]+$ && $CPUS =~ ^[1-8]$ ]] || usage
scale=${SROCE_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9]$ ]] || { echo "vm.sh: SROCE_TIMEOUT_SCALE must be 1-9" >&2; exit 2; }
TIMEOUT=$((TIMEOUT * scale))
[[ -f $KDIR/.done ]] || { echo "vm.sh: $KDIR missing; run make deps" >&2; exit 2; }
if [[ $STAGE == none ]]; then
	STAGE=
else
	STAGE=$(realpath -m "$STAGE")
fi
[[ -n $RES ]] || RES=$ROOT/build/results/$(basename "$SCRIPT" .sh)
mkdir -p "$RES" && RES=$(realpath "$RES") || exit 2

# A fresh results folder per run: stale status files would fake a pass.
rm -rf "$RES"/vm* "$RES/sync" "$RES/verdict"
mkdir -p "$RES/sync"

INITRD=$CACHE/initramfs-$KVER.cpio.gz
newer=$(find "$ROOT/scripts/mkinitramfs.sh" "$ROOT/scripts/initramfs-init" \
	"$KDIR/.done" -newer "$INITRD" 2>/dev/null)
if [[ ! -f $INITRD || -n $newer ]]; then
	"$ROOT/scripts/mkinitramfs.sh" "$INITRD" || exit 2
fi

# The kernel as an ELF image booted through its PVH entry when it has one:
# no decompression under TCG (scripts/pvh-kernel.sh). SROCE_PVH=0 boots
# the bzImage.
KIMG=$KDIR/boot/vmlinuz-$KVER
PVH=$KDIR/boot/vmlinux-pvh-$KVER
if [[ ${SROCE_PVH:-1} == 1 ]]; then
	# Unpack once per kernel image; $PVH.none remembers a failure.
	if [[ ! $PVH -nt $KIMG && ! $PVH.none -nt $KIMG ]]; then
		"$ROOT/scripts/pvh-kernel.sh" "$KIMG" "$PVH" || : > "$PVH.none"
	fi
	[[ $PVH -nt $KIMG ]] && KIMG=$PVH
fi

# depmod over the whole image inside a TCG guest takes minutes, so the
# module index for image + staged modules is built here and the guest only
# copies the resulting modules.* files.
rm -rf "$RES/modindex"
smods=
for d in "$STAGE/lib/modules/$KVER" "$STAGE/usr/lib/modules/$KVER"; do
	[[ -n $STAGE && -d $d ]] && smods=$d
done
if [[ -n $smods ]]; then
	tmp=$(mktemp -d "$CACHE/modindex.XXXXXX") || exit 2
	m=$tmp/lib/modules/$KVER
	mkdir -p "$m"
	# Hard links: same filesystem as the cache, nothing copied.
	cp -al "$KDIR/lib/modules/$KVER/kernel" "$m/kernel" &&
		cp "$KDIR/lib/modules/$KVER"/modules.{builtin,builtin.modinfo,order} "$m/" &&
		cp -a "$smods/." "$m/" &&
		depmod -b "$tmp" "$KVER" &&
		mkdir -p "$RES/modindex" && cp "$m"/modules.* "$RES/modindex/"
	st=$?
	rm -rf "$tmp"
	((st == 0)) || { echo "vm.sh: building the module index failed" >&2; exit 2; }
fi

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pids=()
linkdir=
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -n $linkdir ]] && rm -rf "$linkdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_vm() { # id netdev-args
	local id=$1 net=$2 append
	cat > "$RES/vm$id.env" <<-ENV
		VM_ID=$id
		NVMS=$NVMS
		MTU=$MTU
		REPO='$ROOT'
		STAGE='$STAGE'
		RESULTS='$RES'
		SYNC='$RES/sync'
		KVER=$KVER
		TSCALE=$scale
		SROCE_TEST='$SCRIPT'
	ENV
	# no_timer_check: on a busy host a TCG guest can miss the early timer
	# IRQ check and panic with "IO-APIC + timer doesn't work".
	append="console=ttyS0 panic_on_warn=1 oops=panic panic=-1 no_timer_check"
	((SLUB)) && append+=" slub_debug=FZPU"
	append+=" srvm_share=$RES srvm_repo=$ROOT srvm_kver=$KVER srvm_id=$id"
	[[ -n $ROOTFS ]] && append+=" srvm_root=$ROOTFS"
	# timeout(1) turns a hung guest into a clean kill; the guest's missing
	# status file then fails the run.
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
		-nodefaults -no-user-config -nographic -no-reboot \
		-machine q35 -cpu "${SROCE_CPU:-max}" -accel tcg -smp "$CPUS" -m "$MEM" \
		-kernel "$KIMG" -initrd "$INITRD" \
		-append "$append" \
		-serial "file:$RES/vm$id.console" -monitor none \
		-fsdev "local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot \
		-fsdev "local,id=fsmods,path=$KDIR/lib/modules/$KVER,security_model=none,readonly=on" \
		-device virtio-9p-pci,fsdev=fsmods,mount_tag=kmods \
		-fsdev "local,id=fswork,path=$RES,security_model=none" \
		-device virtio-9p-pci,fsdev=fswork,mount_tag=work \
		$net \
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:77:00:0$id" \
		> "$RES/vm$id.qemu" 2>&1 &
	pids+=($!)
	echo $! > "$RES/vm$id.pid"
}

listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
unix_listening() { ss -Hlx 2>/dev/null | grep -qF " $1 "; }

t0=$(date +%s.%N)
if ((NVMS == 1)); then
	# A hub gives eth0 a carrier and goes nowhere. Its second port, with
	# no peer, drops every frame: with eth0's the only port, qemu would
	# hold the first frame forever and the guest's transmit ring would
	# never drain (6.12's virtio_net then stops the queue for BQL and the
	# netdev watchdog reports a transmit timeout every few seconds).
	start_vm 1 "-netdev hubport,id=n0,hubid=0 -netdev hubport,id=n0sink,hubid=0"
elif [[ ${SROCE_VM_LINK:-unix} == unix ]]; then
	# A Unix stream socket between the two qemus: lossless and in order,
	# unlike UDP, and without Nagle. qemu 7.2 leaves Nagle on for the TCP
	# socket its "socket" backend accepts, and the host's delayed ACK then
	# holds a second small frame from vm1 for ~40 ms: every RDMA round
	# trip (ACK + reply from vm1) took ~44 ms instead of ~2 (bench/PROFILE.md,
	# "Round trip between two TCG VMs"). SROCE_VM_LINK=tcp restores that link.
	linkdir=$(mktemp -d "${TMPDIR:-/tmp}/sroce-link.XXXXXX") || exit 2
	sock=$linkdir/sock
	start_vm 1 "-netdev stream,id=n0,server=on,addr.type=unix,addr.path=$sock"
	for _ in $(seq 100); do
		unix_listening "$sock" && break
		kill -0 "${pids[0]}" 2>/dev/null || break
		sleep 0.1
	done
	unix_listening "$sock" || { echo "vm.sh: vm1 never listened for the link" >&2; exit 2; }
	start_vm 2 "-netdev stream,id=n0,server=off,addr.type=unix,addr.path=$sock"
else
	# TCP stream between the two qemus: lossless and in order, unlike UDP
	# multicast. Retry if another process takes the port first.
	ok=0
	for _ in 1 2 3 4 5; do
		port=$(free_port)
		start_vm 1 "-netdev socket,id=n0,listen=127.0.0.1:$port"
		for _ in $(seq 100); do
			listening "$port" && break
			kill -0 "${pids[0]}" 2>/dev/null || break
			sleep 0.1
		done
		if listening "$port"; then ok=1; break; fi
		kill "${pids[0]}" 2>/dev/null; wait "${pids[0]}" 2>/dev/null
		pids=()
	done
	((ok)) || { echo "vm.sh: vm1 never listened for the link" >&2; exit 2; }
	start_vm 2 "-netdev socket,id=n0,connect=127.0.0.1:$port"
fi

fail=0
verdict() { echo "$*" >> "$RES/verdict"; }
declare -A alive=()
for i in $(seq "$NVMS"); do alive[${pids[$((i - 1))]}]=$i; done
while ((${#alive[@]})); do
	wait -n -p done_pid "${!alive[@]}"
	qrc=$?
	i=${alive[$done_pid]}
	unset "alive[$done_pid]"
	if ((qrc == 124 || qrc == 137)); then
		verdict "vm$i: TIMEOUT after ${TIMEOUT}s (qemu killed)"
		fail=1
	elif ((qrc != 0)); then
		verdict "vm$i: qemu exited $qrc: $(tail -n 3 "$RES/vm$i.qemu" | tr '\n' ' ')"
		fail=1
	fi
	# A guest gone without a status (panic, crash) fails the run; do not
	# make the peer wait for it until its barriers time out.
	if [[ ! -f $RES/vm$i.status ]] && ((${#alive[@]})); then
		verdict "vm$i: ended without a status; stopping the other VM"
		for p in "${!alive[@]}"; do kill "$p" 2>/dev/null; done
	fi
done
pids=()
t1=$(date +%s.%N)

for i in $(seq "$NVMS"); do
	if [[ -f $RES/vm$i.status ]]; then
		st=$(cat "$RES/vm$i.status")
		if [[ $st == 0 ]]; then
			verdict "vm$i: test exited 0"
		else
			verdict "vm$i: test FAILED, exit status $st"
			fail=1
		fi
	else
		verdict "vm$i: no status written (guest crashed, panicked or timed out)"
		fail=1
	fi
	if grep -aq 'Kernel panic' "$RES/vm$i.console" 2>/dev/null; then
		verdict "vm$i: kernel PANIC"
		fail=1
	fi
	if splats=$("$ROOT/scripts/splat-check.sh" "$RES/vm$i.console" "$RES/vm$i.dmesg" "$RES/vm$i.kmemleak"); then
		:
	else
		verdict "vm$i: kernel SPLAT detected:"
		verdict "$splats"
		fail=1
	fi
	b=$(grep -ao 'boot done at [0-9.]*s' "$RES/vm$i.console" | head -n1)
	[[ -n $b ]] && verdict "vm$i: $b (guest uptime)"
done
verdict "wall time $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s"
((fail)) && verdict "RESULT: FAIL" || verdict "RESULT: PASS"

if ((!QUIET)); then
	for i in $(seq "$NVMS"); do
		[[ -s $RES/vm$i.log ]] || continue
		echo "--- vm$i output ---"
		cat "$RES/vm$i.log"
	done
fi
cat "$RES/verdict"
exit $fail
