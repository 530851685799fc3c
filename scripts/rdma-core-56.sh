#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Build libsroce against rdma-core 56 (Debian 13 "trixie") and run its
# device-less unit test, without touching the host's rdma-core 44.
#
#   scripts/rdma-core-56.sh debs     download trixie's rdma-core 56 packages
#                                    with a private apt config and unpack
#                                    them under .cache/rdma-core-56/
#   scripts/rdma-core-56.sh chroot   make .cache/trixie-root (debootstrap
#                                    minbase + gcc, make, libibverbs-dev,
#                                    ibverbs-utils, pkg-config)
#   scripts/rdma-core-56.sh check    copy userspace/ and kernel/uapi/ into
#                                    the chroot and run `make -C userspace
#                                    check` there (the default)
#   scripts/rdma-core-56.sh guest DIR
#                                    check, then install what a test guest
#                                    runs into the chroot (make
#                                    check-trixie boots guests on it) and
#                                    the provider built there into DIR
#
# Every step is idempotent: it redoes only what is missing.  Needs root
# (chroot, debootstrap) and the Debian mirror.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=$ROOT/.cache
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
APTDIR=$CACHE/apt-trixie
DEBS=$CACHE/rdma-core-56
CHROOT=$CACHE/trixie-root
PKGS="libibverbs-dev libibverbs1 ibverbs-providers rdma-core"

log() { printf 'rdma-core-56: %s\n' "$*" >&2; }

apt_private() {
	apt-get -q -o Dir::Etc::sourcelist="$APTDIR/sources.list" \
		-o Dir::Etc::sourceparts=- \
		-o Dir::State="$APTDIR/state" \
		-o Dir::State::status="$APTDIR/state/status" \
		-o Dir::Cache="$APTDIR/cache" \
		-o APT::Sandbox::User=root \
		"$@"
}

step_debs() {
	local p
	mkdir -p "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial" \
		"$APTDIR/debs" "$DEBS"
	echo "deb $MIRROR $SUITE main" > "$APTDIR/sources.list"
	touch "$APTDIR/state/status"
	if [ -z "$(ls "$APTDIR"/state/lists/*_Packages* 2>/dev/null)" ]; then
		apt_private update
	fi
	for p in $PKGS; do
		if ! ls "$APTDIR/debs/${p}_"*.deb >/dev/null 2>&1; then
			# an old package list may name a version the mirror dropped
			(cd "$APTDIR/debs" && apt_private download "$p") ||
				{ apt_private update &&
				  (cd "$APTDIR/debs" && apt_private download "$p"); }
		fi
	done
	if [ ! -e "$DEBS/.unpacked" ]; then
		for p in "$APTDIR"/debs/*.deb; do
			dpkg-deb -x "$p" "$DEBS"
		done
		touch "$DEBS/.unpacked"
	fi
	log "rdma-core 56 unpacked in $DEBS:"
	ls "$DEBS"/usr/lib/x86_64-linux-gnu/libibverbs.so.1.* >&2
}

step_chroot() {
	if [ ! -x "$CHROOT/usr/bin/apt-get" ] || [ ! -e "$CHROOT/.sroce-ready" ]; then
		command -v debootstrap >/dev/null || {
			apt-get -q update && apt-get -q -y install debootstrap
		}
		if [ ! -e "$CHROOT/debootstrap.done" ]; then
			rm -rf "$CHROOT"
			debootstrap --variant=minbase "$SUITE" "$CHROOT" "$MIRROR"
			touch "$CHROOT/debootstrap.done"
		fi
		chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive sh -c \
			'apt-get -q update && apt-get -q -y --no-install-recommends install gcc libc6-dev make pkg-config libibverbs-dev ibverbs-utils'
		touch "$CHROOT/.sroce-ready"
	fi
	log "chroot ready: $CHROOT, $(chroot "$CHROOT" pkg-config --modversion libibverbs)"
}

step_check() {
	step_chroot
	rm -rf "$CHROOT/src" && mkdir -p "$CHROOT/src"
	# the sources only: the host's build/ holds 44 objects
	tar -C "$ROOT" --exclude=userspace/build -cf - userspace kernel/uapi |
		tar -C "$CHROOT/src" -xf -
	if ! mountpoint -q "$CHROOT/proc"; then
		mount -t proc proc "$CHROOT/proc"
		trap 'umount "$CHROOT/proc" 2>/dev/null || true' EXIT
	fi
	chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root make -C /src/userspace check
}

# What scripts/guest-boot.sh, selftests/lib and the pyverbs test call,
# beyond minbase: the guest has nothing but this root.
GUEST_PKGS="busybox iproute2 kmod procps hostname iputils-ping python3-pyverbs
rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest"

step_guest() {
	local stage=${1:?usage: $0 guest STAGE_DIR}
	step_check
	# The marker holds the list, so a longer list installs what is new.
	if [ "$(cat "$CHROOT/.sroce-guest" 2>/dev/null)" != "$GUEST_PKGS" ]; then
		chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive sh -c \
			"apt-get -q update && apt-get -q -y --no-install-recommends install $(echo $GUEST_PKGS)"
		echo "$GUEST_PKGS" > "$CHROOT/.sroce-guest"
	fi
	rm -rf "$CHROOT/stage" "$stage"
	chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root make -C /src/userspace install DESTDIR=/stage
	mkdir -p "$stage"
	cp -a "$CHROOT/stage/." "$stage/"
	log "provider for rdma-core 56 staged in $stage:"
	find "$stage" -type f >&2
}

case "${1:-check}" in
debs) step_debs ;;
chroot) step_chroot ;;
check) step_check ;;
guest) step_guest "${2:-}" ;;
*) echo "usage: $0 [debs|chroot|check|guest STAGE_DIR]" >&2; exit 2 ;;
esac
