#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# Round-trip latency probe: one boot of a VM pair runs
# selftests/bench/latency.sh (ICMP, UDP ping-pong, ibv_rc_pingpong busy and
# event mode, ib_write_lat / ib_send_lat, for sroce and rxe) so all figures
# share the host's load of that moment. Needs `make stage` first.
#
# Usage: scripts/latency.sh [RESULTS-DIR]   (default build/results/latency)
# Environment: LAT_DEVS, LAT_ITERS, LAT_NET, LAT_SIZES, LAT_MODES, LAT_PERF,
# LAT_PCAP_SIZE, LAT_PCAP_ITERS, LAT_PROFILE, LAT_ALT_KO (see the guest script); SROCE_VM_LINK=tcp
# runs over the old TCP link between the qemus for comparison; LAT_STAGE=DIR
# boots with another staged install (vm.sh --stage).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RES=${1:-$ROOT/build/results/latency}
mkdir -p "$RES" "$ROOT/build"
gcc -O2 -Wall -Wextra -Werror -o "$ROOT/build/udp_pp" "$ROOT/selftests/bench/udp_pp.c"
: > "$RES/lat.conf"
for v in LAT_ALT_KO LAT_DEVS LAT_ITERS LAT_NET LAT_SIZES LAT_MODES LAT_PERF LAT_PCAP_SIZE LAT_PCAP_ITERS LAT_PROFILE; do
	# Set, even to "" (LAT_SIZES= skips the rc_pingpong matrix).
	[[ -v $v ]] && printf '%s=%q\n' "$v" "${!v}" >> "$RES/lat.conf"
done
rc=0
"$ROOT/scripts/vm.sh" -n 2 --no-slub-debug -t 2400 -q -o "$RES" ${LAT_STAGE:+--stage "$LAT_STAGE"} \
	"$ROOT/selftests/bench/latency.sh" || rc=$?
for i in 1 2; do
	echo "--- vm$i (vm1 serves, vm2 is the client) ---"
	cat "$RES/latency.vm$i.txt" 2>/dev/null || echo "(no results)"
done
exit $rc
