#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 0
# timeout: 900
# secs: 55
#
# Kernel style gates, run on the host: checkpatch (from the pinned
# linux-source) must report nothing on any module file, sparse (C=2) must
# add no warning, and every source file carries the project's SPDX line.
set -u
cd "$ROOT" || exit 1
. scripts/versions.env
VM_ID=0 . selftests/lib/guest.sh	# only for the TAP helpers

# sroce_compat.h is the one file allowed to test LINUX_VERSION_CODE.
mapfile -t ksrc < <(git ls-files -- "kernel/*.[ch]" ":!kernel/sroce_compat.h")
t_ok "checkpatch clean" perl .cache/linux-src/scripts/checkpatch.pl \
	--no-tree --quiet --show-types -f "${ksrc[@]}"
t_ok "checkpatch clean: sroce_compat.h, version tests allowed" \
	perl .cache/linux-src/scripts/checkpatch.pl --no-tree --quiet \
	--show-types --ignore LINUX_VERSION_CODE -f kernel/sroce_compat.h

# A private copy so this never races the tree's own build products.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r Kbuild kernel "$tmp/"
make -s -C "/usr/src/linux-headers-$KVER" M="$tmp" C=2 modules \
	> "$RESULTS/sparse.log" 2>&1
t_ok "sparse build succeeded" test $? = 0
t_fail "sparse reports nothing" grep -E 'warning:|error:' "$RESULTS/sparse.log"

spdx_missing() {
	git ls-files -- '*.c' '*.h' '*.sh' '*.py' 'Makefile' '*/Makefile' \
		'Kbuild' '*/Kbuild' '*.map' |
		while read -r f; do
			head -n 3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause' ||
				echo "$f"
		done | grep .
}
t_fail "every source file has the SPDX line" spdx_missing

# sroce(7): renders without a warning and explains every port counter.
t_fail "sroce(7) renders without warnings" sh -c \
	'groff -t -man -ww -z docs/sroce.7 2>&1 | grep .'
counter_names() {
	sed -n 's/^\t\[SROCE_CNT_[A-Z_]*\]\.name = "\([a-z_]*\)",$/\1/p' \
		kernel/sroce_stats.c
}
undocumented() {
	counter_names | while read -r c; do
		grep -qw -- "$c" docs/sroce.7 || echo "$c"
	done | grep .
}
t_ok "every counter name of sroce_stats.c read ($(counter_names | wc -l))" \
	test "$(counter_names | wc -l)" -eq "$(grep -c 'SROCE_CNT_.*name = ' kernel/sroce_stats.c)" \
	-a "$(counter_names | wc -l)" -gt 20
t_fail "sroce(7) describes every counter" undocumented
t_done
