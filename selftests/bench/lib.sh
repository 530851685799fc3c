# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# Guest-side helpers for the benchmark (scripts/bench.sh). Not a selftest:
# run-tests.sh only collects selftests/*.sh and selftests/harness/*.sh.
#
# The guests only run tools and record raw output; all parsing happens on
# the host in scripts/bench_report.py. Per run ID, in $RAW:
#   ID.vmN.out    the tool's stdout+stderr
#   ID.vmN.meta   key=value: cmd, rc, /proc/stat and eth0 counters before
#                 and after the tool, uptime before/after, and in device
#                 sections the device's hw_counters before/after
# Per device section: DEV.vmN.counters.{pre,post} (hw_counters dumps),
# DEV.na (why the device could not be measured), DEV.vmN.mem.* (scale).
# vm1 is always the server, vm2 the client.

. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

# The host writes the run's configuration next to the VM logs.
# shellcheck disable=SC1091
. "$RESULTS/bench.conf" || { echo "bench: no $RESULTS/bench.conf" >&2; exit 2; }
RAW=$RESULTS/raw
mkdir -p "$RAW"
RUN_N=0
# Ports come from one counter both guests advance in lock step, so a
# straggling server of one run can never take the next run's connection.
PORT_BASE=20000

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }

# bounded T CMD...: CMD under timeout(1); if even SIGKILL cannot end it
# (stuck in the kernel), give up on it after a grace period instead of
# hanging the benchmark. A watchdog signal interrupts `wait`, which costs no
# CPU while the tool runs (a polling loop would skew the CPU figures).
bounded() {
	local t=$1 pid wd rc me=$BASHPID
	shift
	# Set here, not globally: a background subshell does not keep traps.
	_bounded_fired=0
	trap '_bounded_fired=1' USR1
	timeout -k 5 "$t" "$@" &
	pid=$!
	(
		trap 'kill $s 2>/dev/null; exit 0' TERM
		sleep $((t + 30)) &
		s=$!
		wait $s && kill -USR1 "$me" 2>/dev/null
	) &
	wd=$!
	wait "$pid"
	rc=$?
	if ((_bounded_fired)) && kill -0 "$pid" 2>/dev/null; then
		echo "bench: '$*' is stuck and unkillable; abandoned" >&2
		rc=125
	fi
	kill -TERM "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	return $rc
}

# snap PREFIX: CPU and eth0 counters, read with builtins only so that
# taking the sample costs (almost) no CPU of its own.
snap() {
	local p=$1 u n s i io irq sirq st up tx rx txp rxp
	read -r _ u n s i io irq sirq st _ < /proc/stat
	read -r up _ < /proc/uptime
	read -r tx < /sys/class/net/eth0/statistics/tx_bytes
	read -r rx < /sys/class/net/eth0/statistics/rx_bytes
	read -r txp < /sys/class/net/eth0/statistics/tx_packets
	read -r rxp < /sys/class/net/eth0/statistics/rx_packets
	printf '%s_cpu=%s %s %s %s %s %s %s %s\n%s_up=%s\n%s_net=%s %s %s %s\n' \
		"$p" "$u" "$n" "$s" "$i" "$io" "$irq" "$sirq" "$st" "$p" "$up" \
		"$p" "$tx" "$rx" "$txp" "$rxp"
}

# hw_snap PREFIX: the RDMA device's hw_counters (RDEV, set for the length
# of a device section), so each run's retransmissions can be told apart.
hw_snap() {
	local f v out=
	[[ -n ${RDEV:-} ]] || return 0
	for f in /sys/class/infiniband/"$RDEV"/ports/1/hw_counters/*; do
		read -r v 2> /dev/null < "$f" || continue
		out+=" ${f##*/}=$v"
	done
	printf '%s_hw=%s\n' "$1" "${out# }"
}

# Output lines that say the server was not there yet (worth a retry).
CONNECT_ERR='Couldn.t connect|Unable to connect|Connection refused|unable to connect'

# one_side ID TIMEOUT ROLE CMD...: run the tool once on this VM and record
# it. The client retries (bounded) only if it could not reach the server.
one_side() {
	local id=$1 t=$2 role=$3 out meta rc try
	shift 3
	out=$RAW/$id.vm$VM_ID.out
	meta=$RAW/$id.vm$VM_ID.meta
	{
		echo "role=$role"
		echo "cmd=$*"
		snap pre
		hw_snap pre
	} > "$meta"
	for try in 1 2 3 4 5; do
		# Line-buffered, so progress shows in the file while the tool
		# runs (the scaling run watches it).
		bounded "$t" stdbuf -oL -eL "$@" > "$out" 2>&1
		rc=$?
		if [[ $role != client || $rc == 0 ]] || ! grep -Eq "$CONNECT_ERR" "$out"; then
			break
		fi
		log "$id: server not reachable yet (try $try)"
		# The server announced it listens, so this is rare; back off a bit.
		sleep 1
	done
	{
		snap post
		hw_snap post
		echo "rc=$rc"
		echo "tries=$try"
	} >> "$meta"
	return $rc
}

# pair ID TIMEOUT PORT SERVER-CMD... -- CLIENT-CMD...: start the server on
# vm1, tell vm2 once it listens on PORT, run the client on vm2, meet again.
# PORT=0: no server (client-only tool such as ping).
pair() {
	local id=$1 t=$2 port=$3 scmd=() ccmd=() rc=0 pid st m
	shift 3
	while (($#)) && [[ $1 != -- ]]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	if ((VM_ID == 1)); then
		if ((port)); then
			one_side "$id" "$t" server "${scmd[@]}" &
			pid=$!
			if wait_for "tcp_listening $port || ! kill -0 $pid 2>/dev/null" 60 &&
				tcp_listening "$port"; then
				vm_put "ready.$id" ok
			else
				vm_put "ready.$id" fail
			fi
			wait "$pid"
			rc=$?
		fi
	else
		if ((port)); then
			st=$(vm_get "ready.$id" 1 90) || st=fail
		else
			st=ok
		fi
		if [[ $st == ok ]]; then
			one_side "$id" "$t" client "${ccmd[@]}"
			rc=$?
		else
			echo "server did not start" > "$RAW/$id.vm2.out"
			printf 'role=client\nrc=126\n' > "$RAW/$id.vm2.meta"
			rc=126
		fi
	fi
	vm_barrier "end.$id" $((t + 120)) || return 99
	# Both guests judge the run from the same shared files, so they take
	# the same decision without another exchange.
	rc=0
	for m in "$RAW/$id".vm*.meta; do
		grep -qx 'rc=0' "$m" || rc=1
	done
	((rc == 0)) || log "$id: FAILED"
	return $rc
}

# link_dead ID: after a failed run, has the VM link itself stopped? qemu
# 7.2's virtio-net has stalled for good under load (bench/PROFILE.md,
# "Harness finding"): from then on every run fails, so the section ends at
# once and the host reruns the device in a fresh boot. vm1 decides and
# tells vm2, so both take the same branch.
link_dead() {
	local v=alive
	if ((VM_ID == 1)); then
		bounded 30 ping -n -q -c 3 -i 0.5 -w 10 "$(peer_ip "")" > /dev/null 2>&1 || v=dead
		vm_put "link.$1" "$v"
		[[ $v == dead ]] && {
			echo "after $1"
			dmesg | grep -m1 'NETDEV WATCHDOG'
		} > "$RESULTS/link.dead"
	else
		v=$(vm_get "link.$1" 1 90) || v=alive
	fi
	[[ $v == dead ]]
}

# run ARGS (as pair): a failed run is recorded and the matrix goes on, but
# after BENCH_MAX_FAILS failures in a row the section is abandoned (return
# 98) so that a broken device cannot eat the whole time budget; a dead
# link abandons it at once (return 97).
CONSEC=0
run() {
	pair "$@"
	case $? in
	0) CONSEC=0 ;;
	99) return 99 ;;
	*) link_dead "$1" && return 97
		CONSEC=$((CONSEC + 1))
		((CONSEC >= ${BENCH_MAX_FAILS:-3})) && { CONSEC=0; return 98; } ;;
	esac
	return 0
}

# abandon KIND RC: record why a section stopped early; succeeds if the
# peer guest is still there to end the section with.
abandon() {
	((VM_ID == 1)) && case $2 in
	98) echo "stopped after ${BENCH_MAX_FAILS:-3} failed runs in a row (see raw/*.out)" ;;
	97) echo "stopped: the VM link carries no more frames (cause not determined; see the consoles)" ;;
	*) echo "lost contact with the peer VM" ;;
	esac >> "$RAW/$1.aborted"
	(($2 == 98 || $2 == 97))
}

# PORT is used by the caller.
# shellcheck disable=SC2034
next_port() { RUN_N=$((RUN_N + 1)); PORT=$((PORT_BASE + RUN_N)); }

# ---- RDMA device sections ------------------------------------------------

dump_counters() { # DEV FILE
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/hw_counters/* \
		/sys/class/infiniband/"$1"/ports/1/counters/*; do
		[[ -f $f ]] && echo "${f#/sys/class/infiniband/"$1"/ports/1/} $(cat "$f" 2>/dev/null)"
	done > "$2"
	bounded 20 rdma statistic show link "$1/1" >> "$2.rdma" 2>&1
}

# dev_up KIND DEV: load the provider and create the link; on failure print
# why. Both guests then agree: a device is measured only if both have it.
dev_up() {
	local kind=$1 dev=$2 out
	case $kind in
	rxe)
		out=$(bounded 60 modprobe -a ib_core ib_uverbs rdma_ucm rdma_rxe 2>&1) ||
			{ echo "modprobe rdma_rxe failed: $out"; return 1; }
		out=$(bounded 30 rdma link add "$dev" type rxe netdev eth0 2>&1) ||
			{ echo "rdma link add $dev type rxe failed: $out"; return 1; }
		;;
	sroce)
		out=$(bounded 60 modprobe -a ib_core ib_uverbs rdma_ucm 2>&1) ||
			{ echo "modprobe ib_core failed: $out"; return 1; }
		out=$(bounded 60 modprobe sroce 2>&1) ||
			{ echo "modprobe sroce failed: $out"; return 1; }
		out=$(bounded 30 rdma link add "$dev" type sroce netdev eth0 2>&1) ||
			{ echo "rdma link add $dev type sroce failed: $out"; return 1; }
		;;
	esac
	wait_for "grep -q ACTIVE /sys/class/infiniband/$dev/ports/1/state" 30 2>/dev/null ||
		{ echo "$dev port 1 never became ACTIVE"; return 1; }
	wait_for "roce_gid_index $dev >/dev/null" 30 2>/dev/null ||
		{ echo "$dev has no RoCE v2 GID for $(my_ip "")"; return 1; }
	# The userspace provider must open it, or every tool fails later.
	out=$(bounded 30 ibv_devinfo -d "$dev" 2>&1) ||
		{ echo "ibv_devinfo -d $dev failed (provider missing?): $(echo "$out" | tail -n 2 | tr '\n' ' ')"; return 1; }
	return 0
}

dev_down() { # KIND DEV
	bounded 30 rdma link delete "$2" || echo "rdma link delete $2 failed"
	case $1 in
	rxe) bounded 60 modprobe -r rdma_rxe || echo "modprobe -r rdma_rxe failed" ;;
	sroce) bounded 60 modprobe -r sroce || echo "modprobe -r sroce failed" ;;
	esac
}

# section_start KIND DEV: returns 0 if both guests brought the device up.
section_start() {
	local kind=$1 dev=$2 why peer
	log "== $kind ($dev) =="
	if why=$(dev_up "$kind" "$dev"); then
		vm_put "up.$kind" ok
	else
		log "$kind: $why"
		vm_put "up.$kind" "vm$VM_ID: $why"
	fi
	peer=$(vm_get "up.$kind" "$(peer_id)" 300) || peer="vm$(peer_id): did not answer"
	why=$(cat "$SYNC/val.up.$kind.vm$VM_ID")
	if [[ $why != ok || $peer != ok ]]; then
		((VM_ID == 1)) && { [[ $why != ok ]] && echo "$why"; [[ $peer != ok ]] && echo "$peer"; } \
			> "$RAW/$kind.na"
		dev_down "$kind" "$dev" > /dev/null 2>&1
		vm_barrier "skip.$kind" 300
		return 1
	fi
	# GID is used by the callers.
	# shellcheck disable=SC2034
	GID=$(roce_gid_index "$dev")
	RDEV=$dev
	dump_counters "$dev" "$RAW/$kind.vm$VM_ID.counters.pre"
	vm_barrier "start.$kind" 300
}

section_end() { # KIND DEV
	dump_counters "$2" "$RAW/$1.vm$VM_ID.counters.post"
	RDEV=
	vm_barrier "stop.$1" 600
	dev_down "$1" "$2" | tee -a "$RAW/$1.vm$VM_ID.down"
	: > "$RAW/$1.vm$VM_ID.done"
}
