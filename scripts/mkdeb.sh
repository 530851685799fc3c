#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Builds the two Debian packages (`make deb`) with plain dpkg-deb from
# staging trees laid out here, then checks them with lintian:
#   sroce-dkms  (all)    the module's source in /usr/src/sroce-VERSION with
#                        its dkms.conf; DKMS builds sroce.ko for every
#                        installed kernel and for kernels installed later.
#                        Also sroce(7): the page is about the device, which
#                        kernel consumers (NVMe, NFS over RDMA) use without
#                        the provider.
#   libsroce    (amd64)  the rdma-core provider and its sroce.driver,
#                        pinned to the libibverbs1 release it was built
#                        against (the provider's ABI is that release's).
# The version is VERSION's, with Debian revision 1.
# Usage: mkdeb.sh [OUTDIR]   (default build/deb)
# Environment: DEBFULLNAME, DEBEMAIL name the Maintainer; LINTIAN=0 skips
# the lintian run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build/deb}
PKG=$ROOT/packaging/deb
WORK=$OUT/tree

die() { echo "mkdeb.sh: error: $*" >&2; exit 1; }

UPVER=$(cat "$ROOT/VERSION")
[[ $UPVER =~ ^[0-9]+(\.[0-9]+)*$ ]] || die "VERSION holds '$UPVER', not a version"
DEBVER=$UPVER-1
# No mail address of the project's receives mail: whoever hands the
# packages out names themselves (the variables Debian's tools use).
MAINT="${DEBFULLNAME:-sroce developers} <${DEBEMAIL:-sroce@sroce.invalid}>"
# File dates and the changelog's date: the last commit's, so that two
# builds of one commit give the same packages.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
	SOURCE_DATE_EPOCH=$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
COMMIT=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)

for t in dpkg-deb dpkg-shlibdeps gzip strip; do
	command -v "$t" > /dev/null || die "$t missing (make deps installs it)"
done

rm -rf "$WORK" "$OUT"/*.deb
mkdir -p "$WORK"

# docs PKGROOT NAME: copyright and changelog.Debian.gz in /usr/share/doc,
# and the package's lintian overrides (each justified in that file).
docs() {
	local d=$1/usr/share/doc/$2
	install -d "$d"
	install -D -m 644 "$PKG/lintian-overrides" "$1/usr/share/lintian/overrides/$2"
	install -m 644 "$PKG/copyright" "$d/copyright"
	{
		echo "$2 ($DEBVER) unstable; urgency=medium"
		echo
		echo "  * Built from the sroce tree at $COMMIT."
		echo
		echo " -- $MAINT  $(date -R -u -d "@$SOURCE_DATE_EPOCH")"
	} | gzip -9n > "$d/changelog.Debian.gz"
	chmod 644 "$d/changelog.Debian.gz"
}

# subst FILE: the template with @VERSION@ filled in, on stdout.
subst() { sed -e "s/@VERSION@/$UPVER/g" "$1"; }

# build PKGROOT: md5sums and Installed-Size, then the .deb.
build() {
	local root=$1 size
	(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
		LC_ALL=C sort -z | xargs -0r md5sum) > "$root/DEBIAN/md5sums"
	chmod 644 "$root/DEBIAN/md5sums"
	size=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
	sed -i "s/@SIZE@/$size/" "$root/DEBIAN/control"
	find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	dpkg-deb --root-owner-group -Zxz --build "$root" "$OUT" > /dev/null
}

# --- sroce-dkms ----------------------------------------------------------
R=$WORK/sroce-dkms
SRC=$R/usr/src/sroce-$UPVER
install -d "$SRC/kernel" "$R/DEBIAN"
# The sources Kbuild needs and nothing it made: kernel/Kbuild builds every
# .c there, so a stray .mod.c or object must not come along.
install -m 644 "$ROOT/Kbuild" "$SRC/Kbuild"
install -m 644 "$ROOT/kernel/Kbuild" "$SRC/kernel/Kbuild"
(cd "$ROOT" && find kernel -name '*.[ch]' ! -name '*.mod.c') | LC_ALL=C sort |
	while read -r f; do
		install -D -m 644 "$ROOT/$f" "$SRC/$f"
	done
subst "$PKG/dkms.conf" > "$SRC/dkms.conf"
chmod 644 "$SRC/dkms.conf"
install -d "$R/usr/share/man/man7"
gzip -9n < "$ROOT/docs/sroce.7" > "$R/usr/share/man/man7/sroce.7.gz"
chmod 644 "$R/usr/share/man/man7/sroce.7.gz"
docs "$R" sroce-dkms
for s in postinst prerm; do
	subst "$PKG/sroce-dkms.$s" > "$R/DEBIAN/$s"
	chmod 755 "$R/DEBIAN/$s"
done
cat > "$R/DEBIAN/control" <<EOF
Package: sroce-dkms
Version: $DEBVER
Architecture: all
Maintainer: $MAINT
Installed-Size: @SIZE@
Depends: dkms
Recommends: libsroce
Section: kernel
Priority: optional
Description: software RoCEv2 RDMA device (DKMS kernel module)
 sroce turns an ordinary Ethernet network device into an RDMA device that
 speaks RoCEv2 (InfiniBand transport over UDP port 4791) on the wire, as
 RoCEv2 NICs and Linux's Soft-RoCE (rdma_rxe) do.
 .
 This package provides the source of the kernel module sroce.ko, an
 ib_core provider, which DKMS builds for every installed kernel that has
 its headers and for kernels installed later. "rdma link add NAME type
 sroce netdev DEV" loads it. Kernel consumers (rdma_cm, NVMe and NFS over
 RDMA) use the device like any other; verbs programs need libsroce too.
EOF

# --- libsroce ------------------------------------------------------------
R=$WORK/libsroce
install -d "$R/DEBIAN"
# The provider, built apart from the tree's own build with Debian's
# hardening flags, and bound at load time (BIND_NOW).
UB=$WORK/userspace-build
flags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CFLAGS)"
make -s -C "$ROOT/userspace" OUT="$UB" EXTRA_CFLAGS="$flags -ffile-prefix-map=$ROOT=." \
	LDFLAGS="$(dpkg-buildflags --get LDFLAGS) -Wl,-z,now" \
	install DESTDIR="$R" > "$WORK/userspace.log" 2>&1 ||
	{ cat "$WORK/userspace.log" >&2; die "building the provider failed"; }
so=$(find "$R" -name 'libsroce-rdmav*.so')
[[ -n $so ]] || die "no provider in $R"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$so"
[[ -f $R/etc/libibverbs.d/sroce.driver ]] || die "no sroce.driver in $R"
echo /etc/libibverbs.d/sroce.driver > "$R/DEBIAN/conffiles"
docs "$R" libsroce

# libc (and whatever else the provider links) from dpkg-shlibdeps; the
# libibverbs1 release by hand: the provider refuses any other (it checks
# the file name, libibverbs.so.1.14.<release>), so the dependency spans
# every Debian revision of exactly this upstream release.
ibv=$(dpkg-query -W -f='${Version}' libibverbs1) || die "libibverbs1 not installed"
ibv=${ibv#*:}
ibv=${ibv%-*}
[[ $ibv =~ ^([0-9]+)\.([0-9]+)$ ]] || die "cannot read libibverbs1's upstream version '$ibv'"
next=${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1))
# dpkg-shlibdeps wants to run from a source tree with debian/control.
mkdir -p "$WORK/shlibs/debian"
printf 'Source: sroce\n\nPackage: libsroce\nArchitecture: amd64\n' > "$WORK/shlibs/debian/control"
libs=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O -xlibibverbs1 "$so" 2> "$WORK/shlibdeps.log") ||
	{ cat "$WORK/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
libs=${libs#shlibs:Depends=}
deps="$libs, libibverbs1 (>= $ibv), libibverbs1 (<< $next~)"
deps=${deps#, }
cat > "$R/DEBIAN/control" <<EOF
Package: libsroce
Version: $DEBVER
Architecture: amd64
Maintainer: $MAINT
Installed-Size: @SIZE@
Depends: $deps
Recommends: sroce-dkms
Section: net
Priority: optional
Multi-Arch: same
Description: software RoCEv2 RDMA device (libibverbs provider)
 sroce turns an ordinary Ethernet network device into an RDMA device that
 speaks RoCEv2 (InfiniBand transport over UDP port 4791) on the wire, as
 RoCEv2 NICs and Linux's Soft-RoCE (rdma_rxe) do.
 .
 This package provides the rdma-core provider plugin for sroce devices, so
 that unmodified verbs programs (ibv_*_pingpong, perftest, rping, UCX, MPI)
 run on them. It is built for rdma-core $ibv only. The kernel module is in
 sroce-dkms.
EOF

build "$WORK/sroce-dkms"
build "$WORK/libsroce"

if [[ ${LINTIAN:-1} != 0 ]]; then
	command -v lintian > /dev/null || die "lintian missing (make deps installs it; LINTIAN=0 skips the check)"
	# Every tag at warning or worse fails.
	lintian --fail-on error,warning \
		"$OUT"/sroce-dkms_"$DEBVER"_all.deb "$OUT"/libsroce_"$DEBVER"_amd64.deb
fi
ls -l "$OUT"/*.deb
