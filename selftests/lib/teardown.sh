# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers for the teardown selftests (device, netdev or module pulled away
# while traffic runs). Source after selftests/lib/guest.sh and
# selftests/verbs/lib.sh.

# td_setup: make a task stuck in D state show up as a splat while the test
# still runs (the harness fails on "blocked for more than"), instead of
# after the default 120 s.
td_setup() {
	sysctl -qw kernel.hung_task_timeout_secs=10 kernel.hung_task_warnings=-1
}

# TD_BW_LONG: how the perftest runs under a teardown are told to last: a
# 300 s duration, which the pull cuts short, not --run_infinitely. On an
# error, perftest 4.5's infinite mode returns from main with its 2 s report
# thread still running, and that thread stores get_cycles() through the
# dead frame: once the exiting process jumped to such a value (segfault at
# ip 0x28d8546305, ~72 s of a 2.4 GHz TSC, the guest's uptime then).
TD_BW_LONG=(-D 300)

# td_flowing DEV [PKTS] [TIMEOUT]: DEV's sent_pkts grows by PKTS (500)
# within TIMEOUT (90) s, i.e. the traffic really runs right now.
td_flowing() {
	local dev=$1 n=${2:-500} base
	base=$(hw_counter sent_pkts "$dev") || return 1
	wait_for "[ \$(hw_counter sent_pkts $dev) -gt $((base + n)) ]" "${3:-90}" || return 1
	echo "# $dev sent_pkts $base -> $(hw_counter sent_pkts "$dev")"
}

# td_gone DEV: the RDMA device DEV no longer exists.
td_gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

# td_alive PID...: at least one of the PIDs still runs.
td_alive() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2> /dev/null && return 0
	done
	return 1
}

# td_ended TIMEOUT NAME=PID...: every program ends by itself within TIMEOUT
# s; prints each one's exit status and output. One that does not end is
# reported and killed, and the check fails. td_how shows, as TAP comments,
# how each ended (status and last line), even when the check passed.
td_ended() {
	local to=$1 a name pid rc bad=0 pids=()
	shift
	: > /tmp/td-how
	for a in "$@"; do
		pids+=("${a#*=}")
	done
	if ! wait_for "! td_alive ${pids[*]}" "$to"; then
		bad=1
		for a in "$@"; do
			kill -0 "${a#*=}" 2> /dev/null || continue
			echo "${a%%=*} still running after ${to}s:"
			cat "/proc/${a#*=}/stack" 2> /dev/null
			pkill -KILL -P "${a#*=}" 2> /dev/null
			kill -KILL "${a#*=}" 2> /dev/null
		done
	fi
	for a in "$@"; do
		name=${a%%=*} pid=${a#*=}
		wait "$pid"
		rc=$?
		echo "$name exit $rc"
		sed "s/^/$name: /" "/tmp/$name.out" 2> /dev/null | tail -n 8
		echo "# $name exit $rc: $(grep -v '^[[:space:]]*$' "/tmp/$name.out" |
			tail -n 1 | tr -s ' \t' ' ')" >> /tmp/td-how
	done
	return $bad
}
td_how() {
	cat /tmp/td-how 2> /dev/null
	return 0
}

# td_no_d_state: no task sits in uninterruptible sleep (kernel threads
# that idle in D, such as the hung-task watcher itself, are not tasks of
# ours; only processes with a user address space count).
td_no_d_state() {
	local s found=0
	for s in /proc/[0-9]*/stat; do
		read -r _ comm st _ < "$s" 2> /dev/null || continue
		[ "$st" = D ] || continue
		[ -s "${s%/stat}/cmdline" ] || continue
		echo "in D state: ${s%/stat} $comm"
		cat "${s%/stat}/stack" 2> /dev/null
		found=1
	done
	return $found
}

# td_rmmod: sroce's module reference count is back to 0 and it unloads.
td_rmmod() {
	local r
	r=$(cat /sys/module/sroce/refcnt) || return 1
	[ "$r" = 0 ] || { echo "sroce refcnt $r"; return 1; }
	timeout 60 rmmod sroce
}

# td_no_leftovers: sroce never reported a device freed with live objects.
td_no_leftovers() {
	! dmesg | grep -E 'sroce: .*(freed with objects|would not unregister)'
}

# td_pair_start NAME IP PORT CMD...: CMD as a server on this VM (NAME-s)
# and, once it listens on TCP PORT, as a client to IP (NAME-c), both in the
# background. Sets TD_PIDS.
# shellcheck disable=SC2034 # TD_PIDS is for the caller
td_pair_start() {
	local name=$1 ip=$2 port=$3 s c
	shift 3
	"$@" > "/tmp/$name-s.out" 2>&1 &
	s=$!
	if ! wait_for "tcp_listening $port || ! kill -0 $s 2>/dev/null" 120 ||
		! kill -0 $s 2> /dev/null; then
		TD_PIDS="$name-s=$s"
		cat "/tmp/$name-s.out"
		return 1
	fi
	"$@" "$ip" > "/tmp/$name-c.out" 2>&1 &
	c=$!
	TD_PIDS="$name-s=$s $name-c=$c"
}

# td_bw_start NAME DEV GID IP PORT [ARGS...]: ib_send_bw server on this VM
# (NAME-s) and a client (NAME-c) to IP, both on DEV, in the background,
# running until stopped (TD_BW_LONG). Sets TD_PIDS.
td_bw_start() {
	local name=$1 dev=$2 gid=$3 ip=$4 port=$5
	shift 5
	td_pair_start "$name" "$ip" "$port" timeout -k 5 400 ib_send_bw -d "$dev" \
		-x "$gid" -F -p "$port" -s 4096 "${TD_BW_LONG[@]}" "$@"
}

# td_pp_start NAME DEV GID IP PORT [ARGS...]: ibv_rc_pingpong server and
# client on this VM, in the background; busy-polling unless ARGS has -e.
# Sets TD_PIDS.
td_pp_start() {
	local name=$1 dev=$2 gid=$3 ip=$4 port=$5
	shift 5
	td_pair_start "$name" "$ip" "$port" timeout -k 5 400 ibv_rc_pingpong -d "$dev" \
		-g "$gid" -p "$port" -s 4096 -n 50000000 "$@"
}

# td_pingpong DEV GID IP PORT [ITERS]: a short checked ibv_rc_pingpong of
# ITERS (20) iterations in loopback on DEV: the device works (again).
td_pingpong() {
	local dev=$1 gid=$2 ip=$3 port=$4 n=${5:-20} s rc_s rc_c
	timeout 120 ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -c -n "$n" \
		> /tmp/td-pp.srv 2>&1 &
	s=$!
	if wait_for "tcp_listening $port || ! kill -0 $s 2>/dev/null" 60 &&
		kill -0 $s 2> /dev/null; then
		timeout 120 ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -c -n "$n" \
			"$ip" > /tmp/td-pp.cli 2>&1
		rc_c=$?
	else
		rc_c=99
	fi
	wait $s
	rc_s=$?
	sed 's/^/srv: /' /tmp/td-pp.srv
	sed 's/^/cli: /' /tmp/td-pp.cli 2> /dev/null
	[ "$rc_s" = 0 ] && [ "$rc_c" = 0 ] && grep -q ' iters in ' /tmp/td-pp.srv &&
		grep -q ' iters in ' /tmp/td-pp.cli
}
