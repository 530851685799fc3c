#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Builds the guest initramfs: static busybox, the few modules needed to reach
# the 9p shares and the NIC, and scripts/initramfs-init as /init. Everything
# else the guest runs comes from the host's root over 9p, so this stays tiny
# and only needs rebuilding when its inputs change.
# Usage: mkinitramfs.sh OUTPUT
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/versions.env"
KVER=${SROCE_KVER:-$KVER}
CACHE=${SROCE_CACHE:-$ROOT/.cache}
MODDIR=$CACHE/kernel/$KVER/lib/modules/$KVER
OUT=${1:?usage: mkinitramfs.sh OUTPUT}

[[ -f $MODDIR/modules.dep ]] || { echo "mkinitramfs: $MODDIR not prepared; run scripts/deps.sh" >&2; exit 1; }

# Load order matters: dependencies first, each module once.
WANT=(virtio_pci virtio_net 9pnet_virtio 9p overlay)

declare -A seen=()
order=()
modpath() {
	# modules.dep keys are paths; find the one whose basename matches.
	awk -F: -v m="$1" '{ n = $1; sub(".*/", "", n); sub("\\.ko.*$", "", n);
		gsub("-", "_", n); if (n == m) { print $1; exit } }' "$MODDIR/modules.dep"
}
add() {
	local path=$1 dep
	[[ -n ${seen[$path]:-} ]] && return
	seen[$path]=1
	for dep in $(awk -F: -v p="$path" '$1 == p { print $2 }' "$MODDIR/modules.dep"); do
		add "$dep"
	done
	order+=("$path")
}
for m in "${WANT[@]}"; do
	p=$(modpath "$m")
	if [[ -z $p ]]; then
		# Built into this kernel: nothing to load.
		grep -q "/$m.ko\$" "$MODDIR/modules.builtin" && continue
		echo "mkinitramfs: module $m not found for $KVER" >&2
		exit 1
	fi
	add "$p"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,mods,lower,kmods,rw,newroot}
cp /bin/busybox "$work/bin/busybox"
ln -s busybox "$work/bin/sh"
install -m 755 "$ROOT/scripts/initramfs-init" "$work/init"
: > "$work/mods/order"
# Debian's 6.12 ships its modules xz-compressed; busybox's insmod wants
# plain ELF, so they go in uncompressed.
for p in "${order[@]}"; do
	b=$(basename "$p")
	case $b in
	*.ko.xz) b=${b%.xz}; xz -dc "$MODDIR/$p" > "$work/mods/$b" ;;
	*.ko.zst) b=${b%.zst}; zstd -qdc "$MODDIR/$p" > "$work/mods/$b" ;;
	*.ko.gz) b=${b%.gz}; gzip -dc "$MODDIR/$p" > "$work/mods/$b" ;;
	*) cp "$MODDIR/$p" "$work/mods/" ;;
	esac
	echo "$b" >> "$work/mods/order"
done
# Several runs may build it at once; each renames its own complete copy.
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 > "$OUT.$$.tmp"
mv "$OUT.$$.tmp" "$OUT"
