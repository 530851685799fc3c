#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Brings a fresh Debian 12 machine to the point where `make check` can run:
# host packages, the pinned guest kernel image (unpacked into .cache, never
# installed on the host) and the few kernel-tree files the build uses.
# Idempotent and fast when everything is already in place, because `make
# check` calls it every time.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=versions.env
. "$ROOT/scripts/versions.env"
CACHE=${SROCE_CACHE:-$ROOT/.cache}

die() { echo "deps.sh: error: $*" >&2; exit 1; }
log() { echo "deps.sh: $*" >&2; }

# apt_download DIR PKG...: apt-get download into DIR; if that fails (stale
# package lists), once more after an apt-get update.
apt_download() {
	local dir=$1
	shift
	(cd "$dir" && apt-get download -q -o APT::Sandbox::User=root "$@") >&2 && return 0
	apt-get update -qq || true
	(cd "$dir" && apt-get download -q -o APT::Sandbox::User=root "$@") >&2
}

# fetch_debs DIR WHAT PKG...: the .debs of PKG... in DIR, downloaded once.
fetch_debs() {
	local dir=$1 what=$2
	shift 2
	[[ -f $dir/.done ]] && return 0
	rm -rf "$dir"
	mkdir -p "$dir"
	log "downloading $what: $*"
	apt_download "$dir" "$@" || die "cannot download $*"
	touch "$dir/.done"
}

PKGS=(
	"linux-headers-$KVER" linux-source-6.1
	gcc make clang sparse perl pkg-config
	qemu-system-x86 busybox-static kmod cpio xz-utils zstd rsync
	iproute2 iputils-ping procps ethtool tcpdump iperf3
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest qperf
	python3 python3-pyverbs libibverbs-dev librdmacm-dev
	gnuplot-nox nvme-cli fio ucx-utils
	# Open MPI over UCX between two guests (selftests/mpi_two_vm.sh)
	openmpi-bin libopenmpi-dev
	# make deb; and what dkms needs besides itself, for the guest that
	# installs the packages (selftests/deb_install.sh) offline.
	dpkg-dev lintian patch lsb-release
)

# One dpkg-query for all: this runs on every `make check`.
declare -A have=()
while read -r st name; do
	[[ $st == ii ]] && have[${name%%:*}]=1
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${PKGS[@]}" 2>/dev/null)
missing=()
for p in "${PKGS[@]}"; do
	[[ -n ${have[$p]:-} ]] || missing+=("$p")
done

if ((${#missing[@]})); then
	[[ $(id -u) == 0 ]] || die "need root to install: ${missing[*]}"
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		die "apt-get install failed for: ${missing[*]}"
fi

# The module is built against these headers and loaded into the image
# below; both must be the same upload or vermagic/symbol CRCs may differ.
hver=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER")
[[ $hver == "$KDEBVER" ]] ||
	die "linux-headers-$KVER is version $hver, scripts/versions.env pins $KDEBVER"
[[ -d /usr/src/linux-headers-$KVER ]] || die "/usr/src/linux-headers-$KVER missing"

# --- guest kernel image -------------------------------------------------
KDIR=$CACHE/kernel/$KVER
if [[ ! -f $KDIR/.done ]]; then
	rm -rf "$KDIR"
	mkdir -p "$KDIR"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	deb=${SROCE_KERNEL_DEB:-}
	if [[ -z $deb ]]; then
		log "downloading linux-image-$KVER=$KDEBVER"
		apt_download "$tmp" "linux-image-$KVER=$KDEBVER" ||
			die "cannot download linux-image-$KVER version $KDEBVER (set SROCE_KERNEL_DEB=/path/to.deb to use a local copy)"
		deb=$(echo "$tmp"/linux-image-*.deb)
	fi
	[[ -f $deb ]] || die "kernel package $deb not found"
	dver=$(dpkg-deb -f "$deb" Version)
	dpkg_name=$(dpkg-deb -f "$deb" Package)
	[[ $dver == "$KDEBVER" && $dpkg_name == "linux-image-$KVER" ]] ||
		die "$deb is $dpkg_name $dver, want linux-image-$KVER $KDEBVER"
	log "unpacking $(basename "$deb") into $KDIR"
	dpkg-deb -x "$deb" "$KDIR"
	[[ -f $KDIR/boot/vmlinuz-$KVER ]] || die "no vmlinuz in $deb"
	depmod -b "$KDIR" "$KVER"
	echo "$KDEBVER" > "$KDIR/.done"
fi

# --- guest-only packages -----------------------------------------------
# The NFS server and client tools run only inside the guests, which lay
# these packages' files over their root; installing them on the host would
# start an NFS server and rpcbind there.
GDEBS=(nfs-kernel-server nfs-common libnfsidmap1 rpcbind libwrap0 keyutils)
fetch_debs "$CACHE/guest-debs" "guest-only packages" "${GDEBS[@]}"

# --- dkms, for the package test ----------------------------------------
# selftests/deb_install.sh installs sroce-dkms in a guest without network;
# dkms itself comes from here (the rest it needs is on the host, above).
# Not installed on the host: there it would build and install modules.
fetch_debs "$CACHE/dkms-debs" "dkms for the package test" dkms

# --- bits of the kernel source tree -------------------------------------
SDIR=$CACHE/linux-src
if [[ ! -f $SDIR/.done ]]; then
	tarball=/usr/src/linux-source-6.1.tar.xz
	[[ -f $tarball ]] || die "$tarball missing (package linux-source-6.1)"
	log "extracting kselftest headers and checkpatch from $tarball"
	rm -rf "$SDIR"
	mkdir -p "$SDIR"
	tar -xJf "$tarball" -C "$SDIR" --strip-components=1 \
		linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	touch "$SDIR/.done"
fi
exit 0
