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

# roce_gid6_index [DEV] [IP6]: print the index of DEV's (sroce0) RoCE v2 GID
# for the IPv6 address IP6 (default this VM's fd77::<id>), or fail.
roce_gid6_index() {
	local dev=${1:-sroce0} ip=${2:-$(my_ip -6)} want g t i
	local p=/sys/class/infiniband/$dev/ports/1
	# sysfs prints all eight groups in full: expand "::" and pad each group
	want=$(awk -v a="$ip" 'BEGIN {
		n = split(a, h, "::"); nl = split(h[1], l, ":"); nr = 0
		if (h[1] == "") nl = 0
		if (n == 2 && h[2] != "") nr = split(h[2], r, ":")
		for (i = 1; i <= nl; i++) g[++k] = l[i]
		for (i = 0; i < 8 - nl - nr; i++) g[++k] = "0"
		for (i = 1; i <= nr; i++) g[++k] = r[i]
		for (i = 1; i <= 8; i++)
			s = s (i > 1 ? ":" : "") substr("0000" tolower(g[i]), length(g[i]) + 1)
		print s }')
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

# cm_listening COMM PORT: an rdma_cm id of COMM listens on PORT.
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' |
		grep "comm $1 " | grep -q ":$2 "
}

# serve NAME READY-CMD CMD...: VM 1 runs CMD in the background, announces it
# once READY-CMD holds, and reports CMD's exit status when it ends.
# NAME.out holds its output.
serve() {
	local name=$1 ready=$2 pid rc
	shift 2
	"$@" > "/tmp/$name.out" 2>&1 &
	pid=$!
	if wait_for "$ready || ! kill -0 $pid 2>/dev/null" 120 && kill -0 $pid 2>/dev/null; then
		vm_put "$name" ready
	else
		vm_put "$name" failed
	fi
	wait $pid
	rc=$?
	sed 's/^/srv: /' "/tmp/$name.out"
	echo "exit $rc"
	return $rc
}
# client NAME CMD...: the other VM runs CMD once the server of NAME is ready.
client() {
	local name=$1 st rc
	shift
	st=$(vm_get "$name" "$(peer_id)" 300) || return 1
	[ "$st" = ready ] || { echo "server did not start"; return 1; }
	"$@" > "/tmp/$name.out" 2>&1
	rc=$?
	sed 's/^/cli: /' "/tmp/$name.out"
	echo "exit $rc"
	return $rc
}

# rping_data_ok FILE COUNT SIZE PREFIX: FILE holds the COUNT pings rping
# sends: "rdma-ping-N: " then letters from 'A'+N cycling through 'A'..'z',
# SIZE-1 bytes in all.
rping_data_ok() {
	awk -v count="$2" -v size="$3" -v pfx="$4" '
	BEGIN { for (i = 65; i <= 122; i++) chr[i] = sprintf("%c", i); start = 65; n = 0 }
	index($0, pfx) == 1 {
		got = substr($0, length(pfx) + 1)
		want = "rdma-ping-" n ": "
		c = start
		while (length(want) < size - 1) {
			want = want chr[c]
			if (++c > 122) c = 65
		}
		if (got != want) { print "ping " n ": got  " got; print "ping " n ": want " want; bad = 1 }
		n++
		if (++start > 122) start = 65
	}
	END { if (n != count) print "saw " n " pings, want " count; exit bad || n != count }
	' "$1"
}

# retx STEP [DEV]: log sroce's retransmit counters after STEP.
# Retransmissions are legal (a loaded TCG host can outlast a 67 ms ACK
# timeout) but worth seeing.
retx() {
	local d=${2:-sroce0}
	echo "# after $1: retransmits $(hw_counter retransmits "$d")" \
		"duplicate_request $(hw_counter duplicate_request "$d")"
}
