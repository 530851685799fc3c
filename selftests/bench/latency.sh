#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Latency probe (not a selftest; run-tests.sh does not collect bench/),
# started by scripts/latency.sh. Measures in ONE boot of a VM pair, so the
# figures share the host's load of that moment: ICMP ping, a UDP ping-pong
# (one reply, and an ACK-like small reply + echo), then for each device
# (sroce, rxe): ibv_rc_pingpong busy-polling and with completion events at
# 1 B, 64 B and 4 KiB, ib_write_lat and ib_send_lat, and a packet capture
# of a few rc_pingpong round trips on both sides. vm1 serves, vm2 measures.
# Results: $RESULTS/latency.vmN.txt ("name value unit" lines), raw tool
# output in $RESULTS/lat/. Needs build/udp_pp (scripts/latency.sh builds
# it). $RESULTS/lat.conf may override the LAT_* settings below;
# LAT_DEVS may name "sroce_alt": sroce.ko from the host path LAT_ALT_KO
# (e.g. a patched build), measured in the same boot as the staged one.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/bench/perf.sh"

LAT_DEVS="sroce rxe"
LAT_ITERS=200
LAT_NET=1
LAT_SIZES="1 64 4096"
LAT_MODES="busy -e"
LAT_PERF=1
LAT_PCAP_SIZE=64
LAT_PCAP_ITERS=10
LAT_PROFILE=0
# shellcheck disable=SC1091
[ -f "$RESULTS/lat.conf" ] && . "$RESULTS/lat.conf"
OUT=$RESULTS/lat
SUM=$RESULTS/latency.vm$VM_ID.txt
mkdir -p "$OUT"
PEER=$(peer_ip "")
UDP_PP=$REPO/build/udp_pp
N=0

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
rec() { echo "$*" >> "$SUM"; log "$*"; }

# ksoftirqd's context switches: did softirq work leave the interrupted task?
ksi() { awk '/^(voluntary|nonvoluntary)_ctxt_switches/ { s += $2 } END { print s }' \
	"/proc/$(pgrep -x ksoftirqd/0)/status"; }

# pair NAME READY-CMD CMD...: vm1 runs CMD in the background until it is
# ready, vm2 then runs CMD followed by the server's address. Output of both
# in $OUT/NAME.vmN; returns the local exit status.
pair() {
	local name=$1 ready=$2 pid rc st k0
	shift 2
	N=$((N + 1))
	k0=$(ksi)
	if [ "$VM_ID" = 1 ]; then
		timeout 300 "$@" > "$OUT/$name.vm1" 2>&1 &
		pid=$!
		if wait_for "$ready || ! kill -0 $pid 2>/dev/null" 120 && kill -0 $pid 2>/dev/null; then
			vm_put "run$N" ready
		else
			vm_put "run$N" failed
		fi
		wait $pid
		rc=$?
	else
		st=$(vm_get "run$N" 1 300) || return 1
		[ "$st" = ready ] || { log "$name: server failed"; return 1; }
		timeout 300 "$@" "$PEER" > "$OUT/$name.vm2" 2>&1
		rc=$?
	fi
	echo "ksoftirqd_switches $(($(ksi) - k0))" >> "$OUT/$name.vm$VM_ID"
	vm_barrier "done$N" 400 || return 1
	return $rc
}

# shellcheck disable=SC2317 # called through wait_for's eval
udp_ready() { ss -Hlun "sport = :$1" | grep -q .; }

net_section() {
	local s id two
	ping -c 3 -W 5 "$PEER" > /dev/null
	for s in 56 4000; do
		if [ "$VM_ID" = 2 ]; then
			ping -n -c 50 -i 0.05 -W 5 -s $s "$PEER" > "$OUT/ping_s$s" 2>&1
			rec "icmp_rtt_s$s $(awk -F/ '/^rtt/ { print $5 }' "$OUT/ping_s$s") ms median" \
				"$(sed -n 's/.*time=\([0-9.]*\) ms/\1/p' "$OUT/ping_s$s" | sort -n |
					awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
		fi
		vm_barrier "ping$s" 300 || return 1
	done
	for id in 1 2; do
		for s in 1 64 4096; do
			two=()
			[ $id = 2 ] && two=(-2)
			# vm1 serves until killed; vm2's client ends the run.
			if [ "$VM_ID" = 1 ]; then
				"$UDP_PP" -s 7000 "${two[@]}" &
				wait_for "udp_ready 7000" 60 && vm_put "udp$id.$s" ready
				vm_barrier "udpdone$id.$s" 300
				kill $!
				wait $! 2>/dev/null || :
			else
				vm_get "udp$id.$s" 1 120 > /dev/null || return 1
				"$UDP_PP" -c "$PEER" 7000 "$s" "$LAT_ITERS" "${two[@]}" \
					> "$OUT/udp$id.s$s" 2>&1
				rec "udp_pp${id}_s$s $(awk '{ print $NF, "us/iter median", $(NF - 2) }' "$OUT/udp$id.s$s")"
				vm_barrier "udpdone$id.$s" 300
			fi
		done
	done
}

dev_up() { # KIND DEV
	case $1 in
	sroce) load_sroce && add_sroce_link sroce0 eth0 ;;
	sroce_alt) modprobe -a ib_core ib_uverbs rdma_ucm && insmod "$LAT_ALT_KO" &&
		add_sroce_link sroce0 eth0 ;;
	rxe) add_rxe_link rxe0 eth0 ;;
	esac || return 1
	wait_for "grep -q ACTIVE /sys/class/infiniband/$2/ports/1/state" 60 &&
		wait_for "roce_gid_index $2 > /dev/null" 60
}

# cnt DEV NAME: one port counter, 0 if the device has no such counter.
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }

counters() { # DEV FILE
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/hw_counters/*; do
		[ -e "$f" ] && echo "$(basename "$f") $(cat "$f")"
	done > "$2"
}

# profile_pair NAME READY-CMD CMD...: pair, with perf sampling the whole
# guest on both sides (selftests/bench/perf.sh). The symbols above 1% of
# the samples go to $OUT/NAME.profile.vmN, each task's share of all
# samples to $OUT/NAME.comm.vmN.
profile_pair() {
	local name=$1 rc
	perf_start "$name" "$OUT/$name.perf.vm$VM_ID.log"
	pair "$@"
	rc=$?
	perf_stop
	perf report -i "/tmp/$name.perf" --stdio --no-children --sort comm,dso,sym \
		--percent-limit 1 2>> "$PERF_LOG" | grep -v '^#' | grep -v '^$' \
		> "$OUT/$name.profile.vm$VM_ID"
	perf report -i "/tmp/$name.perf" --stdio --no-children --sort comm \
		2>> "$PERF_LOG" | grep -v '^#' | grep -v '^$' > "$OUT/$name.comm.vm$VM_ID"
	rm -f "/tmp/$name.perf"
	return $rc
}

# profile_section KIND DEV GID PORT: where the CPU goes during 64 KiB
# write, send and read streams and during 4 KiB round trips
# (LAT_PROFILE=1); uses ports PORT to PORT+3.
profile_section() {
	local t p=$4
	for t in write send read; do
		profile_pair "${1}_prof_${t}bw" "tcp_listening $p" "ib_${t}_bw" -d "$2" \
			-x "$3" -F -p "$p" -s 65536 -D 8 -u 17
		p=$((p + 1))
	done
	profile_pair "${1}_prof_rcpp4k" "tcp_listening $p" ibv_rc_pingpong -d "$2" \
		-g "$3" -p "$p" -s 4096 -n "$LAT_ITERS" -m 1024
}

rdma_section() { # KIND DEV
	local kind=$1 dev=$2 s gid port=19000 id ev tpid r0 d0
	dev_up "$kind" "$dev" || { log "$kind: device did not come up"; return 1; }
	gid=$(roce_gid_index "$dev")
	vm_barrier "up.$kind" 300 || return 1
	counters "$dev" "$OUT/$kind.counters.pre.vm$VM_ID"
	for ev in $LAT_MODES; do
		[ "$ev" = busy ] && ev=
		for s in $LAT_SIZES; do
			port=$((port + 1))
			id=${kind}_rcpp${ev}_s$s
			r0=$(cnt "$dev" retransmits) d0=$(cnt "$dev" duplicate_request)
			pair "$id" "tcp_listening $port" ibv_rc_pingpong -d "$dev" -g "$gid" \
				-p $port -s "$s" -n "$LAT_ITERS" -m 1024 ${ev:+"$ev"}
			rec "$id $(awk '/usec\/iter/ { print $(NF - 1) }' "$OUT/$id.vm$VM_ID") us/iter" \
				"ksoftirqd_switches $(awk '/^ksoftirqd/ { print $2 }' "$OUT/$id.vm$VM_ID")" \
				"retransmits $(($(cnt "$dev" retransmits) - r0))" \
				"duplicate_request $(($(cnt "$dev" duplicate_request) - d0))"
		done
	done
	for t in write send; do
		[ "$LAT_PERF" = 1 ] || break
		for s in 2 4096; do
			port=$((port + 1))
			id=${kind}_${t}lat_s$s
			pair "$id" "tcp_listening $port" "ib_${t}_lat" -d "$dev" -x "$gid" -F \
				-p $port -s $s -n "$LAT_ITERS"
			# t_avg and t_typical (median) of perftest's result line:
			# one way, usec
			rec "$id $(awk '/#bytes.*t_avg/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $6, "us_one_way median", $5; h = 0 }' \
				"$OUT/$id.vm$VM_ID")"
		done
	done
	if [ "$LAT_PROFILE" = 1 ]; then
		profile_section "$kind" "$dev" "$gid" $((port + 1))
		port=$((port + 4))
	fi
	# A timeline of a few round trips, captured on both sides.
	port=$((port + 1))
	id=${kind}_rcpp_pcap
	if [ "$LAT_PCAP_ITERS" -gt 0 ]; then
		tcpdump -i eth0 -n -U -w "$OUT/$id.vm$VM_ID.pcap" udp port 4791 \
			> "$OUT/$id.vm$VM_ID.tcpdump" 2>&1 &
		tpid=$!
		wait_for "grep -q 'listening on' '$OUT/$id.vm$VM_ID.tcpdump'" 60
		pair "$id" "tcp_listening $port" ibv_rc_pingpong -d "$dev" -g "$gid" -p $port \
			-s "$LAT_PCAP_SIZE" -n "$LAT_PCAP_ITERS" -m 1024
		kill "$tpid"
		wait "$tpid" 2>/dev/null
	fi
	counters "$dev" "$OUT/$kind.counters.post.vm$VM_ID"
	rec "${kind}_counters_vm$VM_ID $(join "$OUT/$kind.counters.pre.vm$VM_ID" "$OUT/$kind.counters.post.vm$VM_ID" |
		awk '$3 != $2 && $1 ~ /retrans|drop|dup|nak|seq_err|timeout|rnr/ { printf "%s=%d ", $1, $3 - $2 }')"
	vm_barrier "down.$kind" 300
	rdma link delete "$dev"
	case $kind in
	sroce | sroce_alt) rmmod sroce ;;
	rxe) rmmod rdma_rxe ;;
	esac
}

: > "$SUM"
vm_barrier start 300 || exit 1
if [ "$LAT_NET" = 1 ]; then net_section || exit 1; fi
for d in $LAT_DEVS; do
	case $d in
	sroce) rdma_section sroce sroce0 ;;
	sroce_alt) rdma_section sroce_alt sroce0 ;;
	rxe) rdma_section rxe rxe0 ;;
	esac || exit 1
done
vm_barrier finished 300
cat "$SUM" 2>/dev/null
exit 0
