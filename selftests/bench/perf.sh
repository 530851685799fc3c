# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# perf sampling of the whole guest for the benchmark scripts: cpu-clock
# (TCG emulates no PMU) at a fixed period of 2 ms. perf starts with its
# events disabled and perf_start returns only once it has acknowledged
# "enable": its start-up in an emulated guest took longer than the 8 s
# runs, and recordings held 1 to 5 samples.

# perf_start NAME LOG [PERF-RECORD-ARGS...]: record into /tmp/NAME.perf,
# perf's own output in LOG.
perf_start() {
	local name=$1 ack
	PERF_LOG=$2
	shift 2
	PERF_CTL=/tmp/$name.ctl
	PERF_ACK=/tmp/$name.ack
	echo 0 > /proc/sys/kernel/kptr_restrict
	rm -f "$PERF_CTL" "$PERF_ACK"
	mkfifo "$PERF_CTL" "$PERF_ACK" || return 1
	perf record -a -e cpu-clock -c 2000000 -D -1 "$@" \
		--control "fifo:$PERF_CTL,$PERF_ACK" -o "/tmp/$name.perf" \
		> "$PERF_LOG" 2>&1 &
	PERF_PID=$!
	exec 7<> "$PERF_CTL" 8<> "$PERF_ACK"
	echo enable >&7
	if ! read -r -t 120 ack <&8 || [ "$ack" != ack ]; then
		echo "perf did not start" >> "$PERF_LOG"
		kill "$PERF_PID" 2> /dev/null
	fi
}

# perf_stop: end the recording perf_start began.
perf_stop() {
	kill -INT "$PERF_PID" 2> /dev/null
	wait "$PERF_PID"
	exec 7>&- 8>&-
	rm -f "$PERF_CTL" "$PERF_ACK"
}
