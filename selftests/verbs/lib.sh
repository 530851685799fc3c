# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers shared by the verbs selftests; source after selftests/lib/guest.sh.

# shellcheck disable=SC2034 # used by the scripts sourcing this
VERBS_BIN=$REPO/selftests/verbs

# roce_gid_index [DEV] [IP]: print the index of DEV's (sroce0) RoCE v2 GID
# built from the IPv4 address IP (this VM's), or fail if there is none.
roce_gid_index() {
	local dev=${1:-sroce0} ip=${2:-$(my_ip)} want g t i a b c d
	local p=/sys/class/infiniband/$dev/ports/1
	IFS=. read -r a b c d <<< "$ip"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
	for i in $(seq 0 31); do
		g=$(cat "$p/gids/$i" 2>/dev/null) || continue
		t=$(cat "$p/gid_attrs/types/$i" 2>/dev/null) || continue
		if [ "$g" = "$want" ] && [ "$t" = "RoCE v2" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# sroce_up: load the module, add sroce0 on eth0, wait for an ACTIVE port and
# its RoCE v2 IPv4 GID; sets GID to that index.
sroce_up() {
	load_sroce || return 1
	add_sroce_link sroce0 eth0 || return 1
	wait_for "grep -q ACTIVE /sys/class/infiniband/sroce0/ports/1/state" 60 || return 1
	wait_for "roce_gid_index sroce0 > /dev/null" 60 || return 1
	GID=$(roce_gid_index sroce0) || return 1
	echo "# sroce0 RoCE v2 IPv4 gid index $GID"
}

# tcp_listening PORT: some socket listens on TCP PORT (IPv4 or IPv6).
tcp_listening() {
	local hex
	hex=$(printf ':%04X' "$1")
	awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# hw_counter NAME [DEV]: one sroce port counter.
hw_counter() {
	cat "/sys/class/infiniband/${2:-sroce0}/ports/1/hw_counters/$1"
}

# show_counters [DEV]: the non-zero port counters, as TAP comments.
show_counters() {
	local f
	for f in /sys/class/infiniband/"${1:-sroce0}"/ports/1/hw_counters/*; do
		echo "# $(basename "$f") $(cat "$f")"
	done | grep -v ' 0$'
	return 0
}
