#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Benchmark guest script, run in both VMs of a pair by scripts/bench.sh
# (never by `make check`). Measures, in one boot, each device listed in
# BENCH_DEVS in turn: "tcp" (iperf3 + ping), "rxe" (rdma_rxe, rxe0) and
# "sroce" (sroce0). rxe and sroce both bind UDP 4791, so each RDMA section
# deletes its link and unloads its module before the next one starts.
# The matrix comes from $RESULTS/bench.conf, written by the host.
. "$REPO/selftests/bench/lib.sh"

PEER=$(peer_ip "")
# Path MTU the RDMA tools should use: the largest IB MTU under the netdev's.
if ((MTU >= 4096 + 100)); then IBMTU=4096; elif ((MTU >= 2048 + 100)); then IBMTU=2048; else IBMTU=1024; fi

tcp_section() {
	local rep size p id
	log "== tcp =="
	vm_barrier start.tcp 300 || return 1
	for rep in $(seq "$BENCH_REPS"); do
		for p in $BENCH_TCP_P; do
			for size in $BENCH_TCP_SIZES; do
				id=tcp_m${MTU}_iperf_s${size}_p${p}_r$rep
				next_port
				run "$id" $((BENCH_DUR + 90)) "$PORT" \
					iperf3 -s -1 -p "$PORT" -- \
					iperf3 -c "$PEER" -p "$PORT" -t $((BENCH_DUR - 2 * BENCH_MARGIN)) \
					-O "$BENCH_MARGIN" \
					-l "$size" -P "$p" -J || { abandon tcp $?; return; }
			done
		done
		# The link's ceiling for RoCE's frames: UDP datagrams of a
		# RoCE data frame's UDP payload (BTH 12 + SIZE + ICRC 4) at an
		# unlimited rate, counted where they arrive. "ibmtu" is a full
		# frame of the path MTU.
		for size in $BENCH_UDP_SIZES; do
			[[ $size == ibmtu ]] && size=$IBMTU
			id=tcp_m${MTU}_udp_s${size}_p1_r$rep
			next_port
			run "$id" $((BENCH_DUR + 90)) "$PORT" \
				iperf3 -s -1 -p "$PORT" -- \
				iperf3 -c "$PEER" -p "$PORT" -u -b 0 -l $((size + 16)) \
				-t $((BENCH_DUR - 2 * BENCH_MARGIN)) -O "$BENCH_MARGIN" -J || { abandon tcp $?; return; }
		done
		for size in $BENCH_UDP_SIZES; do
			[[ $size == ibmtu ]] && size=$IBMTU
			pktgen_run "tcp_m${MTU}_pktgen_s${size}_p1_r$rep" "$size" || { abandon tcp $?; return; }
		done
		for size in $BENCH_PING_SIZES; do
			id=icmp_m${MTU}_ping_s${size}_r$rep
			run "$id" 120 0 -- \
				ping -n -c "$BENCH_PING_COUNT" -i 0.05 -W 5 -s "$size" "$PEER" || { abandon tcp $?; return; }
		done
	done
	: > "$RAW/tcp.vm$VM_ID.done"
}

# rx_sample: "uptime rx_packets rx_bytes" of eth0, with builtins only.
rx_sample() {
	local up p b
	read -r up _ < /proc/uptime
	read -r p < /sys/class/net/eth0/statistics/rx_packets
	read -r b < /sys/class/net/eth0/statistics/rx_bytes
	echo "$up $p $b"
}

rx_above() { local p; read -r p < /sys/class/net/eth0/statistics/rx_packets; ((p > $1)); }

# pktgen_run ID SIZE: the link's frame ceiling for RoCE data frames of
# SIZE bytes of payload (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + SIZE +
# ICRC 4). vm2 sends with the kernel's packet generator for BENCH_DUR
# seconds; vm1 counts what its NIC receives in the middle of that time,
# once frames are seen arriving, as perftest's -D/-f window does.
pktgen_run() {
	local id=$1 size=$2 t=$((BENCH_DUR + 90)) a b st rc m
	if ((VM_ID == 1)); then
		{ echo role=server; echo "cmd=count eth0 rx"; snap pre; } > "$RAW/$id.vm1.meta"
		a=$(rx_sample)
		vm_put "ready.$id" ok
		rc=0
		read -r _ a _ <<< "$a"
		if wait_for "rx_above $((a + 1000))" 60; then
			sleep "$BENCH_MARGIN"
			a=$(rx_sample)
			sleep $((BENCH_DUR - 2 * BENCH_MARGIN))
			b=$(rx_sample)
			echo "pktgen_rx size $size start $a end $b" > "$RAW/$id.vm1.out"
		else
			echo "no pktgen frames arrived" > "$RAW/$id.vm1.out"
			rc=1
		fi
		{ snap post; echo "rc=$rc"; } >> "$RAW/$id.vm1.meta"
	else
		st=$(vm_get "ready.$id" 1 90) || st=fail
		if [[ $st == ok ]]; then
			one_side "$id" "$t" client "$REPO/selftests/bench/pktgen_tx.sh" "$PEER" \
				$((size + 58)) "$BENCH_DUR"
		else
			echo "receiver did not start" > "$RAW/$id.vm2.out"
			printf 'role=client\nrc=126\n' > "$RAW/$id.vm2.meta"
		fi
	fi
	vm_barrier "end.$id" $((t + 120)) || return 99
	for m in "$RAW/$id".vm*.meta; do
		grep -qx 'rc=0' "$m" || { log "$id: FAILED"; return 0; }
	done
	return 0
}

# stop_section KIND DEV RC: after a run's failure streak, tear down and go
# on with the next device; if the peer is gone there is nothing left to do.
stop_section() {
	abandon "$1" "$3" || return 1
	section_end "$1" "$2"
}

# rdma_section KIND DEV
rdma_section() {
	local kind=$1 dev=$2 rep t size q id common
	section_start "$kind" "$dev" || return 0
	for rep in $(seq "$BENCH_REPS"); do
		for t in $BENCH_BW_TESTS; do
			for q in $BENCH_BW_QPS; do
				for size in $BENCH_BW_SIZES; do
					id=${kind}_m${MTU}_${t}bw_s${size}_q${q}_r$rep
					next_port
					common=(-d "$dev" -x "$GID" -p "$PORT" -u "$BENCH_QP_TIMEOUT" -s "$size" -q "$q"
						-D "$BENCH_DUR" -f "$BENCH_MARGIN" -F)
					run "$id" $((BENCH_DUR + 120)) "$PORT" \
						"ib_${t}_bw" "${common[@]}" -- \
						"ib_${t}_bw" "${common[@]}" "$PEER" || { stop_section "$kind" "$dev" $?; return; }
				done
			done
		done
		if [[ -n $BENCH_MSGRATE ]]; then
			id=${kind}_m${MTU}_msgrate_s8_q4_r$rep
			next_port
			common=(-d "$dev" -x "$GID" -p "$PORT" -u "$BENCH_QP_TIMEOUT" -s 8 -q 4
				-D "$BENCH_DUR" -f "$BENCH_MARGIN" -F)
			run "$id" $((BENCH_DUR + 120)) "$PORT" \
				ib_write_bw "${common[@]}" -- ib_write_bw "${common[@]}" "$PEER" || { stop_section "$kind" "$dev" $?; return; }
		fi
		for t in $BENCH_LAT_TESTS; do
			for size in $BENCH_LAT_SIZES; do
				id=${kind}_m${MTU}_${t}lat_s${size}_r$rep
				next_port
				common=(-d "$dev" -x "$GID" -p "$PORT" -u "$BENCH_QP_TIMEOUT" -s "$size"
					-n "$BENCH_LAT_ITERS" -F)
				run "$id" "$BENCH_LAT_TIMEOUT" "$PORT" \
					"ib_${t}_lat" "${common[@]}" -- \
					"ib_${t}_lat" "${common[@]}" "$PEER" || { stop_section "$kind" "$dev" $?; return; }
			done
		done
		# Polled, then with completion events (-e: ibv_req_notify_cq and
		# ibv_get_cq_event on both sides), as many programs run.
		for size in $BENCH_PP_SIZES; do
			for ev in "" -e; do
				id=${kind}_m${MTU}_pingpong${ev:+ev}_s${size}_r$rep
				next_port
				common=(-d "$dev" -g "$GID" -p "$PORT" -s "$size" -m "$IBMTU"
					-n "$BENCH_PP_ITERS" ${ev:+"$ev"})
				run "$id" "$BENCH_LAT_TIMEOUT" "$PORT" \
					ibv_rc_pingpong "${common[@]}" -- \
					ibv_rc_pingpong "${common[@]}" "$PEER" || { stop_section "$kind" "$dev" $?; return; }
			done
		done
	done
	if [[ " $BENCH_SCALE_MTU " == *" $MTU "* ]]; then
		scale_runs "$kind" "$dev" || { stop_section "$kind" "$dev" $?; return; }
	fi
	section_end "$kind" "$dev"
}

meminfo_snap() { # FILE
	{
		echo "Uptime: $(cut -d' ' -f1 /proc/uptime)"
		grep -E '^(MemFree|Slab|SReclaimable|SUnreclaim|VmallocUsed|KernelStack|PageTables|Percpu):' /proc/meminfo
		cat /proc/slabinfo 2>/dev/null
	} > "$1"
}

# scale_runs KIND DEV: N RC QPs at once in one ib_write_bw; kernel memory
# is sampled once the tool has printed the peer's address for all N QPs
# (every QP exists by then) and compared with the idle device. The report
# drops a sample taken after the tool ended.
peers_listed() { # OUTFILE N: the tool has printed N remote QP addresses
	local c
	c=$(grep -c 'remote address' "$1" 2>/dev/null)
	((${c:-0} >= $2))
}

scale_runs() {
	local kind=$1 dev=$2 n id pid base common out
	for n in $BENCH_SCALE_QPS; do
		id=${kind}_m${MTU}_scale_q${n}
		next_port
		base=$RAW/$id.vm$VM_ID.mem
		meminfo_snap "$base.pre"
		# One CQ serves all QPs and rxe caps a CQ at 32767 entries, so the
		# send queue depth is kept small enough for 1024 QPs.
		common=(-d "$dev" -x "$GID" -p "$PORT" -u "$BENCH_QP_TIMEOUT" -s "$BENCH_SCALE_SIZE" -q "$n"
			-t "$BENCH_SCALE_DEPTH" -D "$BENCH_SCALE_DUR" -f "$BENCH_MARGIN" -F)
		pair "$id" $((BENCH_SCALE_DUR + 600)) "$PORT" \
			ib_write_bw "${common[@]}" -- ib_write_bw "${common[@]}" "$PEER" &
		pid=$!
		out=$RAW/$id.vm$VM_ID.out
		if wait_for "peers_listed '$out' $n || ! kill -0 $pid 2>/dev/null" \
			$((BENCH_SCALE_DUR + 600)) && kill -0 "$pid" 2>/dev/null; then
			meminfo_snap "$base.during"
		fi
		wait "$pid"
		case $? in
		0) ;;
		99) return 99 ;;
		*) echo "$id failed" >> "$RAW/$kind.scale_failed"
			link_dead "$id" && return 97 ;;
		esac
		meminfo_snap "$base.post"
	done
}

for d in $BENCH_DEVS; do
	case $d in
	tcp) tcp_section || exit 1 ;;
	rxe) rdma_section rxe rxe0 || exit 1 ;;
	sroce) rdma_section sroce sroce0 || exit 1 ;;
	*) echo "unknown device $d" >&2; exit 2 ;;
	esac
done
vm_barrier all-done 600
log "bench done"
