#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Guest side of the rdma_rxe reference captures in this folder. Run on the
# host as:
#   scripts/vm.sh -n 2 --stage none -t 2400 -o DIR selftests/data/make_rxe_captures.sh
# (DIR/only, if present, lists the capture names to make, one per line.)
# VM 1 serves and captures on eth0, VM 2 is the client. Each run's pcap lands
# in $RESULTS/rxe_<name>.pcap; copy the ones wanted into selftests/data/.
# Full snap length on purpose: the ICRC covers the whole packet.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

log() { echo "vm$VM_ID $(cut -d' ' -f1 /proc/uptime): $*"; }

# Deadlines are wall-clock: under TCG on a loaded host one poll round can
# take far longer than its sleep.
wait_file() { # path seconds
	local end=$(($(date +%s) + $2))
	until [[ -e $1 ]]; do
		(($(date +%s) < end)) || { log "timeout waiting for $1"; return 1; }
		sleep 0.2
	done
}

wait_listen() { # tcp-port seconds pid
	local end=$(($(date +%s) + $2))
	until ss -Hltn "sport = :$1" | grep -q .; do
		kill -0 "$3" 2>/dev/null || { log "server exited before listening"; return 1; }
		(($(date +%s) < end)) || { log "timeout waiting for a listener on $1"; return 1; }
		sleep 0.2
	done
}

modprobe rdma_rxe || exit 1
rdma link add rxe0 type rxe netdev eth0 || exit 1

# Index of the RoCE v2 GID holding this address, read from sysfs.
gid_index() { # pattern
	local d=/sys/class/infiniband/rxe0/ports/1 f i
	for f in "$d"/gids/*; do
		i=${f##*/}
		[[ $(cat "$d/gid_attrs/types/$i" 2>/dev/null) == "RoCE v2" ]] || continue
		grep -qi "$1" "$f" && { echo "$i"; return 0; }
	done
	return 1
}
v4=
v6=
gend=$(($(date +%s) + 60))
while (($(date +%s) < gend)); do
	v4=$(gid_index "0000:0000:0000:0000:0000:ffff:0a4d:000$VM_ID")
	v6=$(gid_index "fd77:0000:0000:0000:0000:0000:0000:000$VM_ID")
	[[ -n $v4 && -n $v6 ]] && break
	sleep 0.2
done
[[ -n $v4 && -n $v6 ]] || { log "GIDs not found"; ls -l /sys/class/infiniband/rxe0/ports/1/gids; exit 1; }
log "v4 gid index $v4, v6 gid index $v6"
ibv_devinfo -v -d rxe0 | grep -E 'mtu|GID' | head -20

PORT=18515
rc=0
step=0
# Optional subset: a file "only" in the results folder listing capture
# names (shell patterns), one per line.
ONLY=$(cat "$RESULTS/only" 2>/dev/null)
# One test: NAME, then server argv ... -- client argv (the client gets the
# server address appended).
run() {
	local name=$1 srv=() cli=() seen=0 a
	shift
	if [[ -n $ONLY ]]; then
		local pat hit=0
		for pat in $ONLY; do
			# shellcheck disable=SC2053
			[[ $name == $pat ]] && hit=1
		done
		((hit)) || return 0
	fi
	for a in "$@"; do
		if [[ $a == -- ]]; then seen=1; continue; fi
		((seen)) && cli+=("$a") || srv+=("$a")
	done
	step=$((step + 1))
	if [[ $VM_ID == 1 ]]; then
		local pcap=/tmp/rxe_$name.pcap tlog=/tmp/tcpdump_$name.log
		# The in-kernel filter "udp port 4791" dropped every IPv6 RoCE
		# packet in this guest (offline it matches), so capture broadly
		# and filter in user space afterwards.
		tcpdump -Z root -U -i eth0 -s 0 -w "$pcap.raw" not tcp and not arp 2> "$tlog" &
		local tpid=$!
		local end=$(($(date +%s) + 120))
		until grep -q listening "$tlog"; do
			(($(date +%s) < end)) || { log "tcpdump did not start"; cat "$tlog"; return 1; }
			sleep 0.2
		done
		timeout 600 "${srv[@]}" > "/tmp/srv_$name.log" 2>&1 &
		local spid=$!
		# Release the client even on failure: it then fails fast too.
		wait_listen "$PORT" 600 "$spid"
		touch "$SYNC/ready$step"
		wait "$spid"
		local st=$?
		log "$name server exit $st"
		cat "/tmp/srv_$name.log"
		wait_file "$SYNC/done$step" 600
		kill -INT "$tpid"
		wait "$tpid"
		cat "$tlog"
		tcpdump -r "$pcap.raw" -w "$pcap" udp port 4791 || rc=1
		cp "$pcap" "$RESULTS/"
		((st == 0)) || rc=1
	else
		wait_file "$SYNC/ready$step" 700 || { rc=1; touch "$SYNC/done$step"; return; }
		timeout 600 "${cli[@]}" 10.77.0.1 > "/tmp/cli_$name.log" 2>&1
		local st=$?
		log "$name client exit $st"
		cat "/tmp/cli_$name.log"
		((st == 0)) || rc=1
		touch "$SYNC/done$step"
	fi
}

rcpp() { # name size gid-index
	run "$1" ibv_rc_pingpong -d rxe0 -g "$3" -n 5 -s "$2" -- \
		ibv_rc_pingpong -d rxe0 -g "$3" -n 5 -s "$2"
}
rcpp rc_pingpong_1 1 "$v4"
rcpp rc_pingpong_1024 1024 "$v4"
rcpp rc_pingpong_4096 4096 "$v4"
rcpp rc_pingpong_5000 5000 "$v4"
rcpp rc_pingpong_v6_5000 5000 "$v6"
run uc_pingpong_5000 ibv_uc_pingpong -d rxe0 -g "$v4" -n 5 -s 5000 -- \
	ibv_uc_pingpong -d rxe0 -g "$v4" -n 5 -s 5000
run ud_pingpong_512 ibv_ud_pingpong -d rxe0 -g "$v4" -n 5 -s 512 -- \
	ibv_ud_pingpong -d rxe0 -g "$v4" -n 5 -s 512
for t in write read send; do
	run "${t}_bw_8192" "ib_${t}_bw" -d rxe0 -x "$v4" -n 5 -s 8192 -F -- \
		"ib_${t}_bw" -d rxe0 -x "$v4" -n 5 -s 8192 -F
done
run uc_write_bw_8192 ib_write_bw -d rxe0 -x "$v4" -c UC -n 5 -s 8192 -F -- \
	ib_write_bw -d rxe0 -x "$v4" -c UC -n 5 -s 8192 -F
run ud_send_bw_1024 ib_send_bw -d rxe0 -x "$v4" -c UD -n 5 -s 1024 -F -- \
	ib_send_bw -d rxe0 -x "$v4" -c UD -n 5 -s 1024 -F
run atomic_cmp_swap ib_atomic_bw -d rxe0 -x "$v4" -A CMP_AND_SWAP -n 5 -F -- \
	ib_atomic_bw -d rxe0 -x "$v4" -A CMP_AND_SWAP -n 5 -F
run atomic_fetch_add ib_atomic_bw -d rxe0 -x "$v4" -A FETCH_AND_ADD -n 5 -F -- \
	ib_atomic_bw -d rxe0 -x "$v4" -A FETCH_AND_ADD -n 5 -F
mix=$(dirname "$(realpath "$0")")/rxe_verbs_mix.py
run verbs_mix_v4 /usr/bin/python3 "$mix" server "$v4" -- /usr/bin/python3 "$mix" client "$v4"
run verbs_mix_v6 /usr/bin/python3 "$mix" server "$v6" -- /usr/bin/python3 "$mix" client "$v6"
log "all done rc=$rc"
exit $rc
