#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Builds the make check-debug guest kernel from Debian's linux-source-6.1:
# x86_64 defconfig + kvm_guest.config + scripts/debug-kernel.config (KASAN,
# lockdep, kmemleak, UBSAN, debug objects, and what the selftests need).
# The result is laid out like an unpacked Debian image, so vm.sh boots it
# unchanged: .cache/kernel/$DKVER/{boot/vmlinuz-$DKVER,lib/modules/$DKVER}.
# The build tree .cache/debug/src is kept: sroce.ko is built against it.
# Rebuilt only when the source package or the config fragment changes.
# Usage: debug-kernel.sh   (prints nothing else on success but the KVER)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/versions.env"
CACHE=${SROCE_CACHE:-$ROOT/.cache}
TAR=/usr/src/linux-source-6.1.tar.xz
FRAG=$ROOT/scripts/debug-kernel.config
SRC=$CACHE/debug/src
DKVER=$DEBUG_KVER
OUT=$CACHE/kernel/$DKVER

[[ -f $TAR ]] || { echo "debug-kernel: $TAR missing (apt install linux-source-6.1)" >&2; exit 1; }
stamp="$(stat -c %Y "$TAR") $(sha256sum < "$FRAG" | cut -c1-16)"
if [[ -f $OUT/.done && $(cat "$OUT/.done") == "$stamp" ]]; then
	echo "$DKVER"
	exit 0
fi

log() { echo "debug-kernel: $*" >&2; }
# Kernel build tools make check itself does not need.
need=()
for p in flex bison libelf-dev libssl-dev bc cpio; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || need+=("$p")
done
if ((${#need[@]})); then
	log "installing ${need[*]}"
	apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
if [[ ! -f $SRC/Makefile ]]; then
	log "unpacking $TAR"
	rm -rf "$CACHE/debug"
	mkdir -p "$CACHE/debug"
	tar -C "$CACHE/debug" -xJf "$TAR"
	mv "$CACHE/debug/linux-source-6.1" "$SRC"
fi

cd "$SRC"
local_version=${DKVER#"$(make -s kernelversion)"}
log "configuring $DKVER"
make -s x86_64_defconfig kvm_guest.config >&2
scripts/kconfig/merge_config.sh -m .config "$FRAG" >&2
scripts/config --set-str LOCALVERSION "$local_version" -d LOCALVERSION_AUTO
make -s olddefconfig >&2
# A symbol whose dependencies are missing is dropped silently by kconfig;
# say which, so the fragment gets fixed rather than a checker going missing.
miss=0
while IFS='=' read -r sym val; do
	[[ $sym == CONFIG_* ]] || continue
	got=$(grep -E "^$sym=|^# $sym is not set" .config || true)
	if [[ $val == n ]]; then
		[[ -z $got || $got == "# $sym is not set" ]] && continue
	elif [[ $got == "$sym=$val" ]]; then
		continue
	fi
	log "config: wanted $sym=$val, got '${got:-absent}'"
	miss=1
done < "$FRAG"
((miss == 0)) || { log "fix scripts/debug-kernel.config"; exit 1; }

log "building (about 30 min on 2 cores)"
make -j"$(nproc)" bzImage modules >&2
# kernelrelease reads the config only once the build has synced it.
[[ $(make -s kernelrelease) == "$DKVER" ]] ||
	{ log "kernelrelease $(make -s kernelrelease) is not $DKVER"; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/boot"
make -s INSTALL_MOD_PATH="$OUT" INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >&2
# The image tree layout vm.sh expects: usr/lib/modules is lib/modules here.
rm -f "$OUT/lib/modules/$DKVER/build" "$OUT/lib/modules/$DKVER/source"
cp arch/x86/boot/bzImage "$OUT/boot/vmlinuz-$DKVER"
echo "$stamp" > "$OUT/.done"
echo "$DKVER"
