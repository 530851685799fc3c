# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers for the sroce <-> rdma_rxe interop tests; source after
# selftests/lib/guest.sh and selftests/verbs/lib.sh. VM 1 runs sroce0,
# VM 2 Debian's rdma_rxe (rxe0): the two modules both bind UDP 4791, so
# they can never share a guest.

# interop_up: sroce0 on VM 1, rxe0 on VM 2; sets DEV, GID (IPv4 RoCE v2
# index) and GID6 (IPv6 RoCE v2 index) for this VM's device.
interop_up() {
	quiet_user_faults || return 1
	if [ "$VM_ID" = 1 ]; then
		DEV=sroce0
		sroce_up || return 1
	else
		DEV=rxe0
		add_rxe_link rxe0 eth0 || return 1
		wait_for "grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state" 60 || return 1
	fi
	wait_for "roce_gid_index $DEV > /dev/null" 60 || return 1
	wait_for "roce_gid6_index $DEV > /dev/null" 60 || return 1
	GID=$(roce_gid_index "$DEV")
	GID6=$(roce_gid6_index "$DEV")
	echo "# $DEV: RoCE v2 gid index $GID (IPv4), $GID6 (IPv6), active_mtu" \
		"$(ibv_devinfo -d "$DEV" | awk '/active_mtu/ { print $2 }')"
}

# Each exchange gets a fresh name (the values vm_put leaves behind would
# otherwise announce a server that is gone) and its own TCP/rdma_cm port.
# Both VMs run the same sequence of exchanges, so the counters agree.
_xn=0
XPORT=19000

# xrun LABEL SRV_VM READY CMD...: run CMD on both VMs, as the server on VM
# SRV_VM (announced once READY holds) and as the client on the other. In
# CMD, @SRV@ stands for the server's address (fd77::N when XR_V6=1) and
# @PORT@ for this exchange's port; a client CMD without @SRV@ gets the
# address appended. READY may use @PORT@ too. XR_CM=1 runs the pair
# through serve_cm/client_cm (perftest over rdma_cm).
xrun() {
	local label=$1 s=$2 ready=$3 addr a args=() hasaddr=0 srv=serve cli=client
	shift 3
	_xn=$((_xn + 1))
	XPORT=$((19000 + _xn))
	CM_PORT=$XPORT
	if [ "${XR_V6:-0}" = 1 ]; then addr=fd77::$s; else addr=10.77.0.$s; fi
	for a in "$@"; do
		[[ $a == *@SRV@* ]] && hasaddr=1
		a=${a//@SRV@/$addr}
		args+=("${a//@PORT@/$XPORT}")
	done
	ready=${ready//@PORT@/$XPORT}
	XNAME=x$_xn
	[ "${XR_CM:-0}" = 1 ] && srv=serve_cm cli=client_cm
	if [ "$VM_ID" = "$s" ]; then
		$srv "$XNAME" "$ready" "${args[@]}"
	else
		[ $hasaddr = 1 ] || args+=("$addr")
		$cli "$XNAME" "${args[@]}"
	fi
}

# xout: output file of the last exchange on this VM.
xout() { echo "/tmp/$XNAME.out"; }

# role SRV_VM: "server" or "client" for this VM.
role() { if [ "$VM_ID" = "$1" ]; then echo server; else echo client; fi; }

# pkts: packets sent plus received by this VM's device so far.
pkts() { echo $(($(hw_counter sent_pkts "$DEV") + $(hw_counter rcvd_pkts "$DEV"))); }

# pkts_moved BEFORE MIN MAX: the device's packet count moved by at least
# MIN and at most MAX since BEFORE (a pkts value).
pkts_moved() {
	local d=$(($(pkts) - $1))
	echo "# $DEV packets moved by $d (want $2..$3)"
	[ "$d" -ge "$2" ] && [ "$d" -le "$3" ]
}

# log_retx STEP: retransmission-type counters of this VM's device.
log_retx() {
	local f out=
	for f in retransmits duplicate_request out_of_seq_request completer_retry_err \
		rcvd_seq_err retry_exceeded_err; do
		[ -e "/sys/class/infiniband/$DEV/ports/1/hw_counters/$f" ] &&
			out+=" $f $(hw_counter $f "$DEV")"
	done
	echo "# $DEV after $1:$out"
}

# cm_capture_start / cm_capture_stop: record the CM MADs (RoCE v2 over
# IPv4 to QP 1) this VM sees into $RESULTS/cm-vmN.pcap, so that a refused
# or lost connection can be explained afterwards.
cm_capture_start() {
	capture_start cm 'udp dst port 4791 and udp[13:2] = 0 and udp[15] = 1'
}
cm_capture_stop() {
	capture_stop cm "cm-vm$VM_ID.pcap" || echo "# the CM capture was incomplete"
}

# RPING...: rping with its stderr kept apart in /tmp/rping.err. rping
# prints the pings on buffered stdout and its connection events on stderr;
# in one file an event can land inside a long ping line.
# shellcheck disable=SC2034 # used by the scripts sourcing this
RPING=(sh -c 'exec rping "$@" 2>> /tmp/rping.err' rping)

# xfer S TYPE SIZES [ARGS...]: sroce_xfer (every byte and completion field
# checked, each side requester and responder in turn) over a TYPE QP, the
# server on VM S.
xfer() {
	local s=$1 type=$2 sizes=$3 rc
	shift 3
	t_ok "sroce_xfer -t $type -s $sizes $* ($DEV $(role "$s"))" \
		xrun "xfer-$type" "$s" "tcp_listening @PORT@" \
		timeout 600 "$VERBS_BIN/sroce_xfer" -d "$DEV" -g "$GID" -p @PORT@ \
		-t "$type" -s "$sizes" "$@"
	rc=$?
	echo "# sroce_xfer -t $type: $(grep -c '^ok' "$(xout)") transfers verified here"
	return $rc
}

# xrun_cm LABEL SRV_VM READY CMD...: xrun for perftest over rdma_cm (-R).
xrun_cm() { XR_CM=1 xrun "$@"; }

# no_holders: no process has an RDMA device open any more; each one that
# has is named. (A leftover tool keeps rxe0's removal waiting.)
no_holders() {
	local p bad=0
	for p in $(find /proc/[0-9]*/fd -lname '/dev/infiniband/*' 2>/dev/null |
		cut -d/ -f3 | sort -u); do
		echo "still open by pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline")"
		bad=1
	done
	return $bad
}

# interop_done: the end of an interop test: the counters shown, both VMs
# finished, then each removes its device (and VM 1 the module).
interop_done() {
	show_counters "$DEV"
	t_ok "peers done" vm_barrier finished 300
	t_ok "no tool left with an RDMA device open" no_holders
	if [ "$VM_ID" = 1 ]; then
		sroce_down
	else
		t_ok "rdma link delete" rdma link delete rxe0
	fi
	t_done
}
