#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Zero-copy transmit against the copy, side by side (scripts/bench.sh,
# `make bench-zc`; never `make check`). One guest: the VM link between
# two guests cannot gather (QEMU's stream netdev has no offloads, so
# virtio-net has no NETIF_F_SG and the stack would linearize a fragmented
# packet again), a veth pair can. sa (in namespace na) sends to sb (in nb)
# over the veth pair; both share the guest's vCPUs, so each figure pays
# for both sides. For each repetition, test and size, the two modes run
# back to back: zero_copy 0 (copy) and 1 (page fragments). TCP (iperf3,
# same veth) is there for scale only: it sends 64 KiB GSO packets where
# RoCE sends one packet per path MTU.
#
# Output: $RESULTS/raw/zc.tsv, one line per run:
#   mode test size rep MiB/s guest-cpu-seconds tx_zcopy_pkts sent_pkts rc
# (mode "tcp" for iperf3), plus each tool's output as raw/zc_*.out. The
# first repetition's 64 KiB writes are also profiled (perf, call graphs):
# raw/zc_MODE_write.prof lists each symbol's share of the samples with
# and without what it calls.
. "$REPO/selftests/bench/lib.sh"
. "$REPO/selftests/bench/perf.sh"
TSV=$RAW/zc.tsv
: > "$TSV"
A4=10.94.0.1
B4=10.94.0.2
PORT=21000
# path MTU 1024 below a 1500-byte netdev MTU, as in the two-VM bench
IBMTU=1024

# cpu_busy: the guest's non-idle CPU time so far, in USER_HZ ticks.
cpu_busy() {
	local u n s i io irq sirq st
	read -r _ u n s i io irq sirq st _ < /proc/stat
	echo $((u + n + s + irq + sirq + st))
}

counter() { cat "/sys/class/infiniband/sa/ports/1/hw_counters/$1"; }

# measure ID MODE TEST SIZE REP SERVER-CMD... -- CLIENT-CMD...: the server
# in nb, the client in na once the server listens; one zc.tsv line.
measure() {
	local id=$1 mode=$2 test=$3 size=$4 rep=$5 scmd=() srv c0 c1 z0 s0 rc bw
	shift 5
	while [[ $1 != -- ]]; do scmd+=("$1"); shift; done
	shift
	PORT=$((PORT + 1))
	ip netns exec nb timeout $((BENCH_DUR + 60)) "${scmd[@]}" -p $PORT \
		> "$RAW/$id.srv" 2>&1 &
	srv=$!
	wait_for "ip netns exec nb ss -Htln 'sport = :$PORT' | grep -q . || ! kill -0 $srv 2> /dev/null" 30 > /dev/null
	[[ -n ${PROF:-} ]] && perf_start "$PROF" "$RAW/$PROF.perf.log" -g
	z0=$(counter tx_zcopy_pkts)
	s0=$(counter sent_pkts)
	c0=$(cpu_busy)
	ip netns exec na timeout $((BENCH_DUR + 60)) "$@" -p $PORT \
		> "$RAW/$id.out" 2>&1
	rc=$?
	c1=$(cpu_busy)
	wait $srv
	if [[ -n ${PROF:-} ]]; then
		perf_stop
		perf report -i "/tmp/$PROF.perf" --stdio --children --sort sym \
			-g none --percent-limit 0.5 2>> "$RAW/$PROF.perf.log" |
			grep -v '^#' | grep -v '^$' > "$RAW/$PROF.prof"
		rm -f "/tmp/$PROF.perf"
	fi
	if [[ $mode == tcp ]]; then
		bw=$(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.1f" % (j["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' "$RAW/$id.out" 2> /dev/null) || bw=0
	else
		bw=$(awk '/BW average/ { getline; print $4; exit }' "$RAW/$id.out")
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$test" "$size" \
		"$rep" "${bw:-0}" \
		"$(awk -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }')" \
		$(($(counter tx_zcopy_pkts) - z0)) $(($(counter sent_pkts) - s0)) \
		"$rc" >> "$TSV"
	log "$id: $bw MiB/s rc $rc"
}

modprobe veth && ns_pair na nb va vb $A4 $B4 && load_sroce &&
	ip netns exec na rdma link add sa type sroce netdev va &&
	ip netns exec nb rdma link add sb type sroce netdev vb &&
	ready na sa $A4 && ready nb sb $B4 || { echo "bench: setup failed"; exit 1; }
GA=$(gid_in na sa $A4)
GB=$(gid_in nb sb $B4)
ip netns exec na ethtool -k va | grep -E '^(scatter-gather|tx-checksumming):'

for rep in $(seq "$BENCH_REPS"); do
	for test in $BENCH_ZC_TESTS; do
		for size in $BENCH_ZC_SIZES; do
			for mode in 0 1; do
				echo "$mode" > /sys/class/infiniband/sa/zero_copy
				echo "$mode" > /sys/class/infiniband/sb/zero_copy
				common=(-s "$size" -m $IBMTU -D "$BENCH_DUR" -f "$BENCH_MARGIN" -F
					-u "$BENCH_QP_TIMEOUT")
				PROF=
				[[ $rep == 1 && $test == write && $size == 65536 ]] &&
					PROF=zc_${mode}_write
				measure "zc_${mode}_${test}_s${size}_r$rep" "$mode" "$test" "$size" "$rep" \
					"ib_${test}_bw" -d sb -x "$GB" "${common[@]}" -- \
					"ib_${test}_bw" -d sa -x "$GA" "${common[@]}" $B4
			done
		done
	done
	PROF=
	measure "zc_tcp_r$rep" tcp tcp 131072 "$rep" iperf3 -s -1 -- \
		iperf3 -c $B4 -t $((BENCH_DUR - 2 * BENCH_MARGIN)) -O "$BENCH_MARGIN" -J
done
echo 1 > /sys/class/infiniband/sa/zero_copy
rdma link delete sa && rdma link delete sb && rmmod sroce
