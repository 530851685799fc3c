#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Fetches Debian's 6.12 kernel from bookworm-backports (pinned as KVER_612 /
# KDEBVER_612 in versions.env) and unpacks headers, kbuild and image into
# .cache/k612, so the module can be built for 6.12 without adding
# backports to the host's apt sources or installing anything. apt runs on a
# private configuration under .cache/apt-bpo for the same reason.
# Idempotent: a second run with the same pin does nothing.
#
# Prints the headers directory to pass as KHDR= on stdout; all else goes to
# stderr.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=versions.env
. "$ROOT/scripts/versions.env"
CACHE=${SROCE_CACHE:-$ROOT/.cache}
SUITE=${SROCE_612_SUITE:-bookworm-backports}

die() { echo "deps-6.12.sh: error: $*" >&2; exit 1; }
log() { echo "deps-6.12.sh: $*" >&2; }

[[ -n ${KVER_612:-} && -n ${KDEBVER_612:-} ]] ||
	die "KVER_612 / KDEBVER_612 not set in versions.env"

# 6.12.95+deb12-amd64 -> 6.12.95+deb12, the name the -common and kbuild
# packages carry.
ABI=${KVER_612%-amd64}
KHDR=$CACHE/k612/usr/src/linux-headers-$KVER_612
PKGS=(
	"linux-headers-$KVER_612"
	"linux-headers-$ABI-common"
	"linux-kbuild-$ABI"
	"linux-image-$KVER_612"
)
stamp="$KDEBVER_612 ${PKGS[*]}"

# linux-kbuild-6.12 depends on pahole: with the vmlinux these headers ship,
# every module build ends in a BTF step that runs it.
if ! command -v pahole >/dev/null; then
	[[ $(id -u) == 0 ]] || die "pahole missing; need root to install it"
	log "installing pahole (the 6.12 module build runs it for BTF)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pahole >&2 ||
		die "apt-get install pahole failed"
fi

K=$CACHE/k612
if [[ -f $K/.done && $(cat "$K/.done") == "$stamp" ]]; then
	log "$KVER_612 ($KDEBVER_612) already unpacked in $K"
	echo "$KHDR"
	exit 0
fi

A=$CACHE/apt-bpo
mkdir -p "$A/etc" "$A/state/lists/partial" "$A/cache/archives/partial" "$A/debs"
echo "deb http://deb.debian.org/debian $SUITE main" > "$A/etc/sources.list"
APT=(
	-o "Dir::Etc::sourcelist=$A/etc/sources.list"
	-o Dir::Etc::sourceparts=-
	-o "Dir::State=$A/state"
	-o "Dir::State::status=$A/state/status"
	-o "Dir::Cache=$A/cache"
	-o APT::Sandbox::User=root
)
touch "$A/state/status"

# Only the .debs not already in debs/ at the pinned version are fetched;
# those of an earlier pin are dropped.
find "$A/debs" -name '*.deb' ! -name "*_${KDEBVER_612/:/%3a}_*" -delete
need=()
for p in "${PKGS[@]}"; do
	compgen -G "$A/debs/${p}_${KDEBVER_612/:/%3a}_*.deb" >/dev/null ||
		need+=("$p=$KDEBVER_612")
done
if ((${#need[@]})); then
	log "apt-get update ($SUITE, private lists in $A)"
	apt-get -q "${APT[@]}" update >&2 || die "apt-get update failed"
	log "downloading: ${need[*]}"
	(cd "$A/debs" && apt-get -q "${APT[@]}" download "${need[@]}") >&2 ||
		die "apt-get download failed for: ${need[*]}"
fi

rm -rf "$K"
mkdir -p "$K"
for p in "${PKGS[@]}"; do
	deb=$(compgen -G "$A/debs/${p}_${KDEBVER_612/:/%3a}_*.deb" | head -n1)
	[[ -f $deb ]] || die "no .deb for $p $KDEBVER_612 in $A/debs"
	[[ $(dpkg-deb -f "$deb" Package) == "$p" &&
	   $(dpkg-deb -f "$deb" Version) == "$KDEBVER_612" ]] ||
		die "$deb is not $p $KDEBVER_612"
	log "unpacking $(basename "$deb")"
	dpkg-deb -x "$deb" "$K"
done

# The arch headers include the -common tree's Makefile by absolute path;
# point it into the unpacked tree. The scripts/ and tools/ links are
# relative (../../lib/linux-kbuild-*) and already resolve inside $K.
mk=$KHDR/Makefile
[[ -f $mk ]] || die "$mk missing"
sed -i "s|^include /usr/src/|include $K/usr/src/|" "$mk"
grep -q "^include $K/" "$mk" || die "$mk: unexpected content"
[[ -x $KHDR/scripts/basic/fixdep || -f $KHDR/scripts/Makefile.build ]] ||
	die "$KHDR/scripts does not resolve into the unpacked kbuild"
[[ -f $K/boot/vmlinuz-$KVER_612 ]] || die "no vmlinuz-$KVER_612 in the image package"
depmod -b "$K" "$KVER_612"

echo "$stamp" > "$K/.done"
# Where vm.sh looks for a guest kernel, so SROCE_KVER=$KVER_612 can boot it.
mkdir -p "$CACHE/kernel"
ln -sfn ../k612 "$CACHE/kernel/$KVER_612"
log "ready in $K: ${PKGS[*]} at $KDEBVER_612"
echo "$KHDR"
