#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 1500
# slub: 0
#
# Stock tools, unmodified, against sroce0 on two VMs: ibv_devices and
# ibv_devinfo -v (sane attributes), the perftest latency tools over the TCP
# exchange, perftest over rdma_cm (-R), UCX's ucx_perftest over rc and ud,
# and librdmacm's rdma_server / rdma_client example. Each tool must exit 0 and print its result; the
# port counters must move.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "user-space faults not logged as kernel faults" quiet_user_faults
GID=$(roce_gid_index sroce0)
SRV=10.77.0.1

# devices_ok: ibv_devices lists sroce0 with a 16-digit node GUID.
devices_ok() {
	ibv_devices > /tmp/devices.out 2>&1 || { cat /tmp/devices.out; return 1; }
	cat /tmp/devices.out
	grep -Eq '^[[:space:]]*sroce0[[:space:]]+[0-9a-f]{16}[[:space:]]*$' /tmp/devices.out
}

# devinfo_ok: ibv_devinfo -v describes an active RoCE port and a device
# with usable limits.
devinfo_ok() {
	local f=/tmp/devinfo.out v k bad=0
	ibv_devinfo -v -d sroce0 > $f 2>&1 || { cat $f; return 1; }
	cat $f
	field() { awk -F: -v k="$1" '{ gsub(/^[ \t]+/, "", $1) } $1 == k {
		sub(/^[ \t]+/, "", $2); print $2; exit }' $f; }
	[ "$(field hca_id)" = sroce0 ] || { echo "hca_id wrong"; bad=1; }
	[ "$(field transport)" = "InfiniBand (0)" ] || { echo "transport wrong"; bad=1; }
	[ "$(field phys_port_cnt)" = 1 ] || { echo "phys_port_cnt wrong"; bad=1; }
	[ "$(field state)" = "PORT_ACTIVE (4)" ] || { echo "port not active"; bad=1; }
	[ "$(field link_layer)" = Ethernet ] || { echo "link_layer not Ethernet"; bad=1; }
	case "$(field active_mtu)" in
	"1024 (3)" | "2048 (4)" | "4096 (5)") ;;
	*) echo "active_mtu $(field active_mtu) not what a 1500-byte link allows"; bad=1 ;;
	esac
	for k in max_qp max_qp_wr max_cq max_cqe max_mr max_pd max_sge \
		max_qp_rd_atom max_qp_init_rd_atom max_srq max_srq_wr max_mr_size; do
		v=$(field $k)
		v=${v%% *}
		# Decimal or 0x-prefixed hex, and not zero.
		if ! [[ $v =~ ^(0x[0-9a-fA-F]+|[0-9]+)$ ]] || ((v == 0)); then
			echo "$k '$v' not a positive number"
			bad=1
		fi
	done
	[ "$(field atomic_cap)" != "ATOMIC_NONE (0)" ] || { echo "no atomics"; bad=1; }
	grep -Eq 'GID\[ *[0-9]+\]:[[:space:]]+::ffff:'"$(my_ip)"', RoCE v2' $f ||
		{ echo "no RoCE v2 GID for $(my_ip)"; bad=1; }
	return $bad
}
t_ok "ibv_devices lists sroce0" devices_ok
t_ok "ibv_devinfo -v: sane sroce0 attributes" devinfo_ok
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

# lat_ok FILE: the line after perftest's latency header ("#bytes
# #iterations t_min ... t_avg ...") has a positive t_avg (6th column).
lat_ok() {
	awk '/#bytes.*t_avg/ { h = 1; next }
	     h && NF >= 6 && $1 ~ /^[0-9]+$/ { if ($6 + 0 > 0) ok = 1; h = 0 }
	     END { exit !ok }' "$1"
}
# bw_ok FILE: the line after the "BW average" header has a positive
# average (4th column).
# When perftest could not calibrate its clock (perftest_noclock) it prints
# 0.00 for any bandwidth; then the row must still count the iterations done.
bw_ok() {
	local noclock=0
	perftest_noclock "$1" && noclock=1
	awk -v noclock="$noclock" '/#bytes.*BW average/ { h = 1; next }
	     h && NF >= 4 && $1 ~ /^[0-9]+$/ {
		if ($4 + 0 > 0 || (noclock && $2 + 0 > 0)) ok = 1; h = 0 }
	     END { exit !ok }' "$1"
}

# cm_ready COMM PORT: COMM's rdma_cm id listens on PORT and COMM waits for
# its next CM event. rdma_cm shows LISTEN before the listen reaches the IB
# CM, and a REQ in between is rejected (reason 8, invalid service ID: seen
# with ib_write_bw -R on a host loaded to 20 runnable threads per core,
# and perftest then segfaults); waiting in ucma_get_event comes after. If
# the kernel does not show that wait, go on after 30 s of LISTEN.
cm_ready() {
	local p now
	cm_listening "$1" "$2" || { CM_SINCE=; return 1; }
	for p in $(pgrep -x "$1"); do
		grep -qx ucma_get_event "/proc/$p/wchan" 2>/dev/null && return 0
	done
	now=$(cut -d. -f1 /proc/uptime)
	: "${CM_SINCE:=$now}"
	((now - CM_SINCE < 30)) && return 1
	echo "# $1 listens but its wait for CM events is not visible; going on"
	return 0
}

# pkts: sroce0's sent_pkts and rcvd_pkts counters.
pkts() { echo "$(hw_counter sent_pkts) $(hw_counter rcvd_pkts)"; }

# perf N KIND TEST ARGS...: perftest TEST on port 18800+N, VM 1 serves; KIND
# lat or bw says which result line the client must print, and the client's
# port counters must have moved. With -R among
# ARGS the server is ready once its rdma_cm id listens, else once it
# listens on TCP.
perf() {
	local n=$1 kind=$2 test=$3 port=$((18800 + $1)) ready rc s0 r0 s1 r1
	local srv=serve cli=client
	shift 3
	ready="tcp_listening $port"
	CM_PORT=$port
	CM_SINCE=
	case " $* " in *" -R "*) ready="cm_ready $test $port" srv=serve_cm cli=client_cm ;; esac
	# -u 18: a 1 s ACK timeout (perftest's default is 67 ms), so that 7
	# retries outlast a TCG peer stalled by a loaded host (retry count
	# exceeded was seen at a load of 15 runnable threads per core).
	set -- timeout 300 "$test" -d sroce0 -x "$GID" -F -u 18 -p $port "$@"
	if [ "$VM_ID" = 1 ]; then
		$srv "perf$n" "$ready" "$@"
		return
	fi
	read -r s0 r0 <<< "$(pkts)"
	$cli "perf$n" "$@" $SRV || return 1
	read -r s1 r1 <<< "$(pkts)"
	rc=0
	if ((s1 <= s0 || r1 <= r0)); then
		echo "port counters did not move: sent_pkts $s0 -> $s1, rcvd_pkts $r0 -> $r1"
		rc=1
	fi
	if [ "$kind" = lat ]; then
		lat_ok "/tmp/perf$n.out" || { echo "no latency result line"; rc=1; }
		awk '/#bytes.*t_avg/ { getline; print "# " $0 }' "/tmp/perf$n.out"
	else
		bw_ok "/tmp/perf$n.out" || { echo "no bandwidth result line"; rc=1; }
		awk '/#bytes.*BW average/ { getline; print "# " $0 }' "/tmp/perf$n.out"
	fi
	return $rc
}

t_ok "ib_send_lat 2 KiB x 100" perf 1 lat ib_send_lat -s 2048 -n 100
t_ok "ib_write_lat 2 KiB x 100" perf 2 lat ib_write_lat -s 2048 -n 100
t_ok "ib_read_lat 2 KiB x 100" perf 3 lat ib_read_lat -s 2048 -n 100
t_ok "ib_atomic_lat x 100" perf 4 lat ib_atomic_lat -n 100
retx "lat tools"
t_ok "ib_send_lat -R x 100" perf 5 lat ib_send_lat -R -s 64 -n 100
t_ok "ib_write_lat -R x 100" perf 6 lat ib_write_lat -R -s 64 -n 100
t_ok "ib_write_bw -R 64 KiB x 20" perf 7 bw ib_write_bw -R -s 65536 -n 20
t_ok "ib_read_bw -R 64 KiB x 20" perf 8 bw ib_read_bw -R -s 65536 -n 20
t_ok "ib_send_bw -R 64 KiB x 20" perf 9 bw ib_send_bw -R -s 65536 -n 20
[ -s /tmp/cm_retries ] && cat /tmp/cm_retries
retx "perftest -R"

# UCX (Debian's 1.13) over sroce0: ucx_perftest tag_lat and tag_bw with
# UCX_TLS=rc (UD for its wire-up) and UCX_TLS=ud. UCX 1.13's UD transport
# drops every datagram from sroce and from rdma_rxe alike at its
# destination-GID check (UD endpoints time out, both VMs abort; seen on
# rxe0 the same way, so the cause is on UCX's side), hence
# UCX_UD_VERBS_ETH_DGID_CHECK=n, which users of soft-RoCE need too.
# ucx N TLS TEST: the client must exit 0 with UCX's "Final:" line and move
# the port counters.
ucx() {
	local n=$1 tls=$2 test=$3 port=$((13300 + $1)) s0 r0 s1 r1
	set -- env UCX_NET_DEVICES=sroce0:1 UCX_IB_GID_INDEX="$GID" \
		UCX_TLS="$tls,self" UCX_UD_VERBS_ETH_DGID_CHECK=n \
		timeout 120 ucx_perftest -p $port
	if [ "$VM_ID" = 1 ]; then
		serve "ucx$n" "tcp_listening $port" "$@"
		return
	fi
	read -r s0 r0 <<< "$(pkts)"
	client "ucx$n" "$@" -t "$test" -n 200 -s 4096 $SRV || return 1
	read -r s1 r1 <<< "$(pkts)"
	grep '^Final:' "/tmp/ucx$n.out" | sed 's/^/# /'
	grep -q '^Final:' "/tmp/ucx$n.out" && ((s1 > s0 && r1 > r0))
}
t_ok "ucx_perftest tag_lat, UCX_TLS=rc" ucx 1 rc tag_lat
t_ok "ucx_perftest tag_bw, UCX_TLS=rc" ucx 2 rc tag_bw
t_ok "ucx_perftest tag_lat, UCX_TLS=ud" ucx 3 ud tag_lat
t_ok "ucx_perftest tag_bw, UCX_TLS=ud" ucx 4 ud tag_bw
retx ucx_perftest

# rdma_server / rdma_client (librdmacm examples, port 7471): the client
# sends 16 bytes, the server echoes them; each says "end 0" on success.
end_ok() { grep -q "^rdma_$1: end 0\$" /tmp/rdma_ex.out; }
if [ "$VM_ID" = 1 ]; then
	CM_SINCE=
	t_ok "rdma_server" serve rdma_ex "cm_ready rdma_server 7471" \
		timeout 200 rdma_server
	t_ok "rdma_server ended with 0" end_ok server
else
	read -r s0 r0 <<< "$(pkts)"
	t_ok "rdma_client" client rdma_ex timeout 200 rdma_client -s $SRV
	t_ok "rdma_client ended with 0" end_ok client
	read -r s1 r1 <<< "$(pkts)"
	t_ok "rdma_client moved the port counters" test "$s1" -gt "$s0" -a "$r1" -gt "$r0"
fi
retx rdma_client

pair_done
