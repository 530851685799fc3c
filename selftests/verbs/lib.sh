# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers shared by the verbs selftests; source after selftests/lib/guest.sh.

# shellcheck disable=SC2034 # used by the scripts sourcing this
VERBS_BIN=$REPO/selftests/verbs

# roce_gid_find DEV GID: print the index of DEV's RoCE v2 GID whose sysfs
# text (eight 4-digit groups) is GID, or fail if there is none.
roce_gid_find() {
	local p=/sys/class/infiniband/$1/ports/1 g t i
	for i in $(seq 0 31); do
		g=$(cat "$p/gids/$i" 2>/dev/null) || continue
		t=$(cat "$p/gid_attrs/types/$i" 2>/dev/null) || continue
		if [ "$g" = "$2" ] && [ "$t" = "RoCE v2" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# roce_gid_index [DEV] [IP]: print the index of DEV's (sroce0) RoCE v2 GID
# built from the IPv4 address IP (this VM's), or fail if there is none.
roce_gid_index() {
	local dev=${1:-sroce0} ip=${2:-$(my_ip)} a b c d
	IFS=. read -r a b c d <<< "$ip"
	roce_gid_find "$dev" \
		"$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")"
}

# roce_gid6_index [DEV] [IP6]: print the index of DEV's (sroce0) RoCE v2 GID
# for the IPv6 address IP6 (default this VM's fd77::<id>), or fail.
roce_gid6_index() {
	local dev=${1:-sroce0} ip=${2:-$(my_ip -6)}
	# sysfs prints all eight groups in full: expand "::" and pad each group
	roce_gid_find "$dev" "$(awk -v a="$ip" 'BEGIN {
		n = split(a, h, "::"); nl = split(h[1], l, ":"); nr = 0
		if (h[1] == "") nl = 0
		if (n == 2 && h[2] != "") nr = split(h[2], r, ":")
		for (i = 1; i <= nl; i++) g[++k] = l[i]
		for (i = 0; i < 8 - nl - nr; i++) g[++k] = "0"
		for (i = 1; i <= nr; i++) g[++k] = r[i]
		for (i = 1; i <= 8; i++)
			s = s (i > 1 ? ":" : "") substr("0000" tolower(g[i]), length(g[i]) + 1)
		print s }')"
}

# capture_start NAME FILTER...: tcpdump on eth0 into /tmp/NAME.pcap (its
# own report in /tmp/NAME.tcpdump), in the background; returns once it
# says it is listening. One capture at a time (CAP_PID). --immediate-mode:
# twice a whole step's pcap came back empty although its tools passed and
# the kernel dropped nothing; libpcap's default TPACKET_V3 ring hands
# packets over a block at a time, and the suspect is a block still open
# when SIGINT ends tcpdump.
capture_start() {
	local name=$1
	shift
	rm -f "/tmp/$name.pcap" "/tmp/$name.tcpdump"
	tcpdump -Z root -U --immediate-mode -i eth0 -s 0 -w "/tmp/$name.pcap" "$@" \
		2> "/tmp/$name.tcpdump" &
	CAP_PID=$!
	wait_for "grep -q 'listening on' /tmp/$name.tcpdump || ! kill -0 $CAP_PID" 120 &&
		kill -0 $CAP_PID 2>/dev/null
}

# capture_stop NAME [FILE]: stop the capture, print tcpdump's report and keep
# the pcap as $RESULTS/FILE (default NAME.pcap). Fails if tcpdump failed or
# the kernel dropped a packet (which would look like loss on the wire).
capture_stop() {
	local rc
	[ -n "${CAP_PID:-}" ] || return 1
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID"
	rc=$?
	CAP_PID=
	cat "/tmp/$1.tcpdump"
	cp "/tmp/$1.pcap" "$RESULTS/${2:-$1.pcap}"
	[ $rc = 0 ] && grep -q '^0 packets dropped by kernel' "/tmp/$1.tcpdump"
}

# sroce_up: load the module, add sroce0 on eth0, wait for an ACTIVE port and
# its RoCE v2 IPv4 GID; sets GID to that index.
sroce_up() {
	load_sroce || return 1
	add_sroce_link sroce0 eth0 || return 1
	wait_for "grep -q ACTIVE /sys/class/infiniband/sroce0/ports/1/state" 60 || return 1
	wait_for "roce_gid_index sroce0 > /dev/null" 60 || return 1
	GID=$(roce_gid_index sroce0) || return 1
	echo "# sroce0 RoCE v2 IPv4 gid index $GID"
}

# tcp_listening PORT: some socket listens on TCP PORT (IPv4 or IPv6).
tcp_listening() {
	local hex
	hex=$(printf ':%04X' "$1")
	awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# ns_pair NSA NSB DEVA DEVB IP4A IP4B [IP6A IP6B]: a veth pair DEVA in NSA,
# DEVB in NSB, addressed and up.
ns_pair() {
	ip netns add "$1" && ip netns add "$2" &&
		ip link add "$3" netns "$1" type veth peer name "$4" netns "$2" &&
		ip -n "$1" addr add "$5/24" dev "$3" &&
		ip -n "$2" addr add "$6/24" dev "$4" || return 1
	if [ -n "${7:-}" ]; then
		ip -n "$1" addr add "$7/64" dev "$3" nodad &&
			ip -n "$2" addr add "$8/64" dev "$4" nodad || return 1
	fi
	ip -n "$1" link set "$3" up && ip -n "$2" link set "$4" up &&
		ip -n "$1" link set lo up && ip -n "$2" link set lo up
}

# ready NS DEV IP: DEV is ACTIVE and has a RoCE v2 GID for IP (IPv4 or
# IPv6), both read inside NS (so the device is visible there).
ready() {
	wait_for "ip netns exec $1 grep -q ACTIVE /sys/class/infiniband/$2/ports/1/state" 60 &&
		wait_for "gid_in $1 $2 $3 > /dev/null" 60
}

# gid_in NS DEV IP: DEV's GID index for IP, read inside NS.
gid_in() {
	local gidf=roce_gid_index
	[[ $3 == *:* ]] && gidf=roce_gid6_index
	ip netns exec "$1" bash -c ". $REPO/selftests/lib/guest.sh; . $REPO/selftests/verbs/lib.sh; $gidf $2 $3"
}

# in_ns NS CMD...: CMD in network namespace NS, or here if NS is empty.
in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# ns_run_pair TAG SNS CNS SERVER-CMD... -- CLIENT-CMD...: the server in
# namespace SNS (empty: this one), then, once it listens on TCP $port, the
# client in CNS; their output goes to /tmp/TAG.srv and /tmp/TAG.cli.
# Succeeds if both exit 0. Moves $port on.
ns_run_pair() {
	local tag=$1 sns=$2 cns=$3 scmd=() srv rc_s rc_c
	shift 3
	while [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	in_ns "$sns" "${scmd[@]}" > "/tmp/$tag.srv" 2>&1 &
	srv=$!
	if wait_for "in_ns '$sns' ss -Htln 'sport = :$port' | grep -q . || ! kill -0 $srv 2> /dev/null" 30; then
		in_ns "$cns" "$@" > "/tmp/$tag.cli" 2>&1
		rc_c=$?
	else
		rc_c=99
	fi
	wait $srv
	rc_s=$?
	port=$((port + 1))
	echo "exit: server $rc_s, client $rc_c"
	[ $rc_s = 0 ] && [ $rc_c = 0 ]
}

# pingpong_pair SNS SDEV SGID CNS CDEV CGID ADDR [ARGS...]: ibv_rc_pingpong
# with every buffer checked (-c): the server on SDEV, GID index SGID, in
# namespace SNS; once it listens, the client on CDEV/CGID in CNS connects
# to ADDR (an empty namespace is this one). Both must exit 0 having run
# all iterations; their output is shown as srv:/cli: lines. Takes the TCP
# port from $port and moves it on.
pingpong_pair() {
	local sns=$1 sdev=$2 sgid=$3 cns=$4 cdev=$5 cgid=$6 addr=$7 rc
	shift 7
	ns_run_pair pp "$sns" "$cns" \
		timeout 120 ibv_rc_pingpong -d "$sdev" -g "$sgid" -p "$port" -c "$@" -- \
		timeout 120 ibv_rc_pingpong -d "$cdev" -g "$cgid" -p "$port" -c "$@" "$addr"
	rc=$?
	sed 's/^/srv: /' /tmp/pp.srv
	sed 's/^/cli: /' /tmp/pp.cli
	[ $rc = 0 ] && grep -q ' iters in ' /tmp/pp.srv && grep -q ' iters in ' /tmp/pp.cli
}

# perftest_noclock FILE: perftest's output in FILE says it could not
# calibrate its clock ("Correlation coefficient r^2 ... < 0.9"), as happens
# on a loaded TCG host: its figures are then 0.00 or missing, and a client
# may exit non-zero after a complete transfer.
perftest_noclock() { grep -qF 'Correlation coefficient r^2' "$1"; }

# hw_counter NAME [DEV]: one sroce port counter.
hw_counter() {
	cat "/sys/class/infiniband/${2:-sroce0}/ports/1/hw_counters/$1"
}

# show_counters [DEV]: the non-zero port counters, as TAP comments.
show_counters() {
	local f
	for f in /sys/class/infiniband/"${1:-sroce0}"/ports/1/hw_counters/*; do
		echo "# $(basename "$f") $(cat "$f")"
	done | grep -v ' 0$'
	return 0
}

# cm_listening COMM PORT: an rdma_cm id of COMM listens on PORT.
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' |
		grep "comm $1 " | grep -q ":$2 "
}

# serve NAME READY-CMD CMD...: VM 1 runs CMD in the background, announces it
# once READY-CMD holds, and reports CMD's exit status when it ends.
# NAME.out holds its output.
serve() {
	serve_start "$1" "$@"
	serve_end "$1"
}
# serve_start KEY NAME READY CMD...: serve's first half; tells the peer under
# KEY whether CMD got READY. SERVE_PID: CMD's pid.
serve_start() {
	local key=$1 name=$2 ready=$3
	shift 3
	"$@" > "/tmp/$name.out" 2>&1 &
	SERVE_PID=$!
	if wait_for "$ready || ! kill -0 $SERVE_PID 2>/dev/null" 120 &&
		kill -0 $SERVE_PID 2>/dev/null; then
		vm_put "$key" ready
	else
		vm_put "$key" failed
	fi
}
# serve_end NAME: serve's second half: CMD's exit status, after its output.
serve_end() {
	local rc
	wait "$SERVE_PID"
	rc=$?
	sed 's/^/srv: /' "/tmp/$1.out"
	echo "exit $rc"
	return $rc
}
# client NAME CMD...: the other VM runs CMD once the server of NAME is ready.
client() {
	local name=$1 st
	shift
	st=$(vm_get "$name" "$(peer_id)" 300) || return 1
	[ "$st" = ready ] || { echo "server did not start"; return 1; }
	"$@" > "/tmp/$name.out" 2>&1
	client_report "$name" $?
}
# client_report NAME RC: print the client's output and exit status RC.
client_report() {
	sed 's/^/cli: /' "/tmp/$1.out"
	echo "exit $2"
	return "$2"
}

# kill_tree PID: PID and every process below it killed (SIGKILL), the
# children first. A perftest server left waiting by a rejected client
# outlived the SIGTERM that timeout(1) passed on: it kept its port and its
# rxe0 context, and rxe0's 'rdma link delete' waited until timeout's 200 s
# were up (rxe cannot disassociate a context).
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null
}

# serve_cm NAME READY CMD... / client_cm NAME CMD...: serve and client for
# perftest over rdma_cm (-R), tried up to CM_TRIES times. perftest's
# server accepts its first connection (its parameter exchange), destroys
# its listening id and only then listens again for the test QP, so a
# client quick enough meets no listener and gets a REJ with reason 8
# (invalid service ID); that client then crashes and the server would wait
# forever (with sroce and rxe alike). Only that outcome is retried; each
# retry is logged, also to /tmp/cm_retries. One interop run needed three
# tries for one exchange. Each try listens on its own port (CM_PORT, the
# caller's, moved by 1000 per try), so that a late exit of the killed
# server cannot make the next one's rdma_bind_addr fail.
CM_TRIES=5
# cm_try_args TRY ARGS...: CM_ARGS is ARGS with every argument equal to
# CM_PORT replaced by try TRY's port, CM_TRY_PORT.
cm_try_args() {
	local a
	CM_TRY_PORT=$((CM_PORT + ($1 - 1) * 1000))
	shift
	CM_ARGS=()
	for a in "$@"; do
		if [ "$a" = "$CM_PORT" ]; then CM_ARGS+=("$CM_TRY_PORT"); else CM_ARGS+=("$a"); fi
	done
}
serve_cm() {
	local name=$1 ready=$2 try
	shift 2
	for try in $(seq "$CM_TRIES"); do
		cm_try_args "$try" "$@"
		serve_start "$name.$try" "$name" "${ready//$CM_PORT/$CM_TRY_PORT}" "${CM_ARGS[@]}"
		[ "$(vm_get "$name.$try.v" "$(peer_id)" 400)" = retry ] || break
		kill_tree "$SERVE_PID"
		wait "$SERVE_PID"
		echo "# $name: client rejected (perftest's re-listen race), try $((try + 1))" |
			tee -a /tmp/cm_retries
	done
	serve_end "$name"
}
client_cm() {
	local name=$1 try st rc
	shift
	for try in $(seq "$CM_TRIES"); do
		st=$(vm_get "$name.$try" "$(peer_id)" 300)
		if [ "$st" != ready ]; then
			vm_put "$name.$try.v" done
			echo "server did not start"
			return 1
		fi
		cm_try_args "$try" "$@"
		"${CM_ARGS[@]}" > "/tmp/$name.out" 2>&1
		rc=$?
		if [ $rc != 0 ] && [ "$try" -lt "$CM_TRIES" ] &&
			grep -q 'RDMA_CM_EVENT_REJECTED; error: 8' "/tmp/$name.out"; then
			vm_put "$name.$try.v" retry
			echo "# $name: rejected with reason 8 (perftest's re-listen race), try $((try + 1))" |
				tee -a /tmp/cm_retries
			continue
		fi
		vm_put "$name.$try.v" done
		client_report "$name" $rc
		return
	done
}

# sroce_down: sroce0's link deleted and the module unloaded, which both
# must work once the tools have exited.
sroce_down() {
	t_ok "rdma link delete" rdma link delete sroce0
	t_ok "rmmod sroce" rmmod sroce
}

# pair_done: the end of a two-VM sroce test: the counters shown and moved
# both ways, both VMs finished, sroce0 gone, the TAP plan printed.
pair_done() {
	show_counters
	t_ok "sent_pkts and rcvd_pkts > 0" \
		sh -c "[ $(hw_counter sent_pkts) -gt 0 ] && [ $(hw_counter rcvd_pkts) -gt 0 ]"
	t_ok "peers done" vm_barrier finished 300
	sroce_down
	t_done
}

# quiet_user_faults: perftest's client crashes after a rejected rdma_cm
# connect (see serve_cm); the kernel's report of that user-space fault
# would read as a kernel "general protection fault" to the harness. Kernel
# faults are still reported; a crashing tool still fails its exchange.
quiet_user_faults() { echo 0 > /proc/sys/debug/exception-trace; }

# rping_data_ok FILE COUNT SIZE PREFIX: FILE holds the COUNT pings rping
# sends: "rdma-ping-N: " then letters from 'A'+N cycling through 'A'..'z',
# SIZE-1 bytes in all.
rping_data_ok() {
	awk -v count="$2" -v size="$3" -v pfx="$4" '
	BEGIN { for (i = 65; i <= 122; i++) chr[i] = sprintf("%c", i); start = 65; n = 0 }
	index($0, pfx) == 1 {
		got = substr($0, length(pfx) + 1)
		want = "rdma-ping-" n ": "
		c = start
		while (length(want) < size - 1) {
			want = want chr[c]
			if (++c > 122) c = 65
		}
		if (got != want) { print "ping " n ": got  " got; print "ping " n ": want " want; bad = 1 }
		n++
		if (++start > 122) start = 65
	}
	END { if (n != count) print "saw " n " pings, want " count; exit bad || n != count }
	' "$1"
}

# retx STEP [DEV]: log sroce's retransmit counters after STEP.
# Retransmissions are legal (a loaded TCG host can outlast a 67 ms ACK
# timeout) but worth seeing.
retx() {
	local d=${2:-sroce0}
	echo "# after $1: retransmits $(hw_counter retransmits "$d")" \
		"duplicate_request $(hw_counter duplicate_request "$d")"
}

# The injector tests' setup: sroce0 on veth0 ($VIP) in this namespace, the
# far end veth1 ($PIP) in netns "peer", where injectors and sniffers run.
# Packets from our own address may arrive on veth0 (loopback QPs' traffic
# reflected by an injector), hence rp_filter off and accept_local.
VIP=10.88.0.1
PIP=10.88.0.2
veth_peer_up() {
	modprobe veth || return 1
	ip netns add peer || return 1
	ip link add veth0 type veth peer name veth1 netns peer || return 1
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.veth0.rp_filter=0 \
		net.ipv4.conf.veth0.accept_local=1 || return 1
	ip addr add $VIP/24 dev veth0 &&
		ip link set veth0 up &&
		ip -n peer addr add $PIP/24 dev veth1 &&
		ip -n peer link set veth1 up &&
		ip -n peer link set lo up
}
# sroce_on_veth: sroce0 on veth0, ACTIVE, its GID index for $VIP in GID.
sroce_on_veth() {
	load_sroce || return 1
	add_sroce_link sroce0 veth0 || return 1
	wait_for "grep -q ACTIVE /sys/class/infiniband/sroce0/ports/1/state" 60 || return 1
	wait_for "roce_gid_index sroce0 $VIP > /dev/null" 60 || return 1
	GID=$(roce_gid_index sroce0 $VIP)
}
