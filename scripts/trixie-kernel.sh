#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Debian 13's own kernel (KVER_TRIXIE / KDEBVER_TRIXIE in versions.env) and
# sroce built for it with Debian 13's compiler, the way a trixie user's
# DKMS would, without installing anything on the host:
#
#   scripts/trixie-kernel.sh OUT
#
# - fetches linux-image, linux-headers (and -common), linux-kbuild with the
#   trixie chroot's apt (scripts/rdma-core-56.sh chroot makes it);
# - unpacks the image into .cache/ktrixie, which vm.sh boots as
#   SROCE_KVER=$KVER_TRIXIE, and headers plus kbuild into the chroot at
#   their own paths, where gcc-14 and pahole build against them;
# - builds kernel/ (W=1, any warning fails) and selftests/kmod there and
#   copies sroce.ko to OUT/kernel/ and the test modules to
#   build/kmod-$KVER_TRIXIE/.
# Idempotent: downloads and unpacking happen once per pin.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=versions.env
. "$ROOT/scripts/versions.env"
CACHE=$ROOT/.cache
CHROOT=$CACHE/trixie-root
K=$CACHE/ktrixie
OUT=${1:?usage: $0 OUT_DIR}
V=$KVER_TRIXIE
ABI=${V%-amd64}
PKGS=("linux-image-$V" "linux-headers-$V" "linux-headers-$ABI-common" "linux-kbuild-$ABI")
stamp="$KDEBVER_TRIXIE ${PKGS[*]}"

die() { echo "trixie-kernel.sh: error: $*" >&2; exit 1; }
log() { echo "trixie-kernel.sh: $*" >&2; }
inchroot() {
	chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root DEBIAN_FRONTEND=noninteractive "$@"
}

"$ROOT/scripts/rdma-core-56.sh" chroot

# pahole for the modules' BTF, libelf and libssl for kbuild's tools, perl
# for W=1's kernel-doc
if ! inchroot sh -c 'command -v pahole && command -v bc && perl -MPod::Usage -e1' > /dev/null 2>&1; then
	inchroot sh -c 'apt-get -q update && apt-get -q -y --no-install-recommends install pahole libelf1t64 libssl3t64 bc perl' >&2 ||
		die "installing the build tools in $CHROOT failed"
fi
# The stamp covers the image in $K and the headers in the chroot, which
# may have been made anew since.
if [[ $(cat "$K/.done" 2>/dev/null) != "$stamp" || ! -d $CHROOT/usr/src/linux-headers-$V ]]; then
	rm -rf "$CHROOT/debs" && mkdir -p "$CHROOT/debs"
	need=("${PKGS[@]/%/=$KDEBVER_TRIXIE}")
	inchroot apt-get -q update >&2 || die "apt-get update in $CHROOT failed"
	inchroot sh -c 'cd /debs && apt-get -q download "$@"' sh "${need[@]}" >&2 ||
		die "apt-get download failed (is $KDEBVER_TRIXIE still in trixie?)"
	rm -rf "$K" && mkdir -p "$K"
	for deb in "$CHROOT"/debs/*.deb; do
		[[ $(dpkg-deb -f "$deb" Version) == "$KDEBVER_TRIXIE" ]] ||
			die "$deb is not version $KDEBVER_TRIXIE"
		case $(dpkg-deb -f "$deb" Package) in
		linux-image-*) dpkg-deb -x "$deb" "$K" ;;
		*) dpkg-deb -x "$deb" "$CHROOT" ;;
		esac
	done
	[[ -f $K/boot/vmlinuz-$V ]] || die "no vmlinuz-$V in the image package"
	# trixie ships modules under /usr/lib; vm.sh looks in lib/modules
	[[ -e $K/lib ]] || ln -s usr/lib "$K/lib"
	depmod -b "$K" "$V"
	mkdir -p "$CACHE/kernel"
	ln -sfn ../ktrixie "$CACHE/kernel/$V"
	echo "$stamp" > "$K/.done"
fi

# Sources only, as DKMS would copy them.
B=/src/sroce-mod
rm -rf "${CHROOT:?}$B" && mkdir -p "$CHROOT$B/kmod"
(cd "$ROOT" && cp -p --parents Kbuild kernel/Kbuild kernel/*.[ch] kernel/uapi/rdma/*.h "$CHROOT$B/")
rm -f "$CHROOT$B/kernel/sroce.mod.c"
cp -p "$ROOT"/selftests/kmod/Kbuild "$ROOT"/selftests/kmod/*.c "$CHROOT$B/kmod/"
log "building sroce.ko for $V with $(inchroot gcc --version | head -n1)"
inchroot make -C "/usr/src/linux-headers-$V" M=$B W=1 modules > "$CHROOT$B/build.log" 2>&1 ||
	{ cat "$CHROOT$B/build.log" >&2; die "module build failed"; }
inchroot make -C "/usr/src/linux-headers-$V" M=$B/kmod modules >> "$CHROOT$B/build.log" 2>&1 ||
	{ cat "$CHROOT$B/build.log" >&2; die "test module build failed"; }
cat "$CHROOT$B/build.log" >&2
! grep -iE 'warning:|error:' "$CHROOT$B/build.log" >&2 ||
	die "compiler warnings (above): the module must be W=1 clean"
mkdir -p "$OUT/kernel" "$ROOT/build/kmod-$V"
cp "$CHROOT$B/kernel/sroce.ko" "$OUT/kernel/"
cp "$CHROOT$B"/kmod/*.ko "$ROOT/build/kmod-$V/"
log "sroce.ko for $V in $OUT/kernel"
