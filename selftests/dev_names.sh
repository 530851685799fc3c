#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 500
# secs: 150
#
# Device names are the administrator's: libsroce recognises sroce devices
# by driver id and a sysfs file, never by name. rdma_rxe first (sroce.ko
# is not loaded: both bind UDP 4791): with libsroce installed, its device
# is still opened by rxe's provider. Then sroce under rxe-style names,
# renamed while a QP runs (to "rxe7" too, a name rxe's provider would claim
# if libsroce were not tried first), bad names refused with nothing left
# behind, and one device per interface (veth pair, bridge), each working
# and each removable alone.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

PROV=$REPO/selftests/verbs/sroce_provider
devs() { ls /sys/class/infiniband 2>/dev/null | tr '\n' ' '; }
port=18600

# provider_is DEV LIB: libibverbs opens DEV with the provider file LIB*.
provider_is() {
	local out
	out=$("$PROV" -d "$1") || { echo "$out"; return 1; }
	echo "$out"
	[[ $out == "$1 $2"* ]]
}

# pingpong DEV [ARGS...]: loopback ibv_rc_pingpong on DEV, every buffer
# checked (-c).
pingpong() {
	local dev=$1 gid
	shift
	gid=$(roce_gid_index "$dev" "$(dev_ip "$dev")") || { echo "no GID on $dev"; return 1; }
	pingpong_pair "" "$dev" "$gid" "" "$dev" "$gid" "$(dev_ip "$dev")" "$@"
}

# dev_ip DEV: the IPv4 address of DEV's netdev (sysfs "parent").
dev_ip() {
	local nd
	nd=$(cat "/sys/class/infiniband/$1/parent" 2>/dev/null) || nd=eth0
	ip -4 -o addr show dev "$nd" | awk '{ split($4, a, "/"); print a[1]; exit }'
}

# netdev_link_is DEV NETDEV: DEV's sysfs device directory lists NETDEV,
# alone, in net/ (where pyverbs and other tools look, as on a NIC), and the
# link resolves to NETDEV's own sysfs directory.
netdev_link_is() {
	local d=/sys/class/infiniband/$1/device/net
	ls "$d" || return 1
	[ "$(ls "$d")" = "$2" ] &&
		[ "$(readlink -f "$d/$2")" = "$(readlink -f "/sys/class/net/$2")" ]
}

# dev_ready DEV: port ACTIVE and an IPv4 RoCE v2 GID.
dev_ready() {
	wait_for "grep -q ACTIVE /sys/class/infiniband/$1/ports/1/state" 30 &&
		wait_for "roce_gid_index $1 \$(dev_ip $1) > /dev/null" 30
}

# --- rdma_rxe, libsroce installed --------------------------------------
if t_ok "rdma_rxe: rdma link add eth0_rxe" add_rxe_link eth0_rxe eth0; then
	t_ok "eth0_rxe is ready" dev_ready eth0_rxe
	t_ok "eth0_rxe is opened by rxe's provider" provider_is eth0_rxe librxe-rdmav34.so
	t_ok "loopback rc_pingpong on eth0_rxe" pingpong eth0_rxe -n 20 -s 1024
	t_ok "rdma link delete eth0_rxe" rdma link delete eth0_rxe
fi
t_ok "rmmod rdma_rxe" modprobe -r rdma_rxe

# --- a rxe-style name ---------------------------------------------------
t_ok "load sroce" load_sroce || { t_done; exit 1; }
t_ok "rdma link add eth0_sroce type sroce netdev eth0" add_sroce_link eth0_sroce eth0 ||
	{ t_done; exit 1; }
t_ok "eth0_sroce is ready" dev_ready eth0_sroce
t_ok "sysfs: parent eth0, sroce_abi_version 1" \
	test "$(cat /sys/class/infiniband/eth0_sroce/parent) $(cat /sys/class/infiniband/eth0_sroce/sroce_abi_version)" = "eth0 1"
t_ok "sysfs: eth0_sroce/device/net/ holds eth0" netdev_link_is eth0_sroce eth0
# Debian's udev rule runs this on every new RDMA device: a PCI or onboard
# parent would get the device renamed; ours is neither.
# (exit 1: no rule applied; a missing binary would be 127)
t_ok "rdma_rename NAME_FALLBACK leaves eth0_sroce alone" sh -c \
	'/lib/udev/rdma_rename eth0_sroce NAME_FALLBACK; [ $? = 1 ] && [ -e /sys/class/infiniband/eth0_sroce ]'
t_ok "ibv_devices lists eth0_sroce" sh -c 'ibv_devices | grep -qw eth0_sroce'
t_ok "ibv_devinfo -d eth0_sroce: PORT_ACTIVE" sh -c 'ibv_devinfo -d eth0_sroce | grep -q PORT_ACTIVE'
t_ok "eth0_sroce is opened by libsroce" provider_is eth0_sroce libsroce-rdmav34.so
t_ok "loopback rc_pingpong on eth0_sroce" pingpong eth0_sroce -n 50 -s 4096
# rping_loop: rping -V server and client on this VM's own address, every
# ping compared and the client's printed copies checked against rping's
# pattern.
rping_loop() {
	local srv rc_s rc_c
	timeout 60 rping -s -a "$(my_ip)" -p 7200 -C 5 -S 100 -V -v > /tmp/rping.srv 2>&1 &
	srv=$!
	wait_for "cm_listening rping 7200 || ! kill -0 $srv 2>/dev/null" 30
	timeout 60 rping -c -a "$(my_ip)" -p 7200 -C 5 -S 100 -V -v > /tmp/rping.cli 2>&1
	rc_c=$?
	wait $srv
	rc_s=$?
	echo "server exit $rc_s, client exit $rc_c"
	[ $rc_s = 0 ] && [ $rc_c = 0 ] && rping_data_ok /tmp/rping.cli 5 100 'ping data: '
}
t_ok "rping -V loopback (rdma_cm picks eth0_sroce by address)" rping_loop

# --- rename while a QP runs ---------------------------------------------
# 1000 round trips (about 10 s in a TCG guest); the rename lands while
# both QPs exist.
rename_live() { # NEW
	local gid srv cli rc_s rc_c old
	old=$(devs)
	old=${old% }
	gid=$(roce_gid_index "$old") || return 1
	stdbuf -oL timeout 200 ibv_rc_pingpong -d "$old" -g "$gid" -p $port -c -n 1000 -s 64 > /tmp/rl.srv 2>&1 &
	srv=$!
	wait_for "tcp_listening $port" 30 || return 1
	stdbuf -oL timeout 200 ibv_rc_pingpong -d "$old" -g "$gid" -p $port -c -n 1000 -s 64 "$(my_ip)" > /tmp/rl.cli 2>&1 &
	cli=$!
	port=$((port + 1))
	wait_for "grep -q 'remote address' /tmp/rl.cli && grep -q 'remote address' /tmp/rl.srv" 30 || return 1
	rdma dev set "$old" name "$1" || return 1
	echo "renamed $old -> $1 while pingpong ran"
	kill -0 $srv && kill -0 $cli || { echo "pingpong ended before the rename"; return 1; }
	wait $cli; rc_c=$?
	wait $srv; rc_s=$?
	sed 's/^/srv: /' /tmp/rl.srv | tail -n 2
	sed 's/^/cli: /' /tmp/rl.cli | tail -n 2
	[ $rc_s = 0 ] && [ $rc_c = 0 ] && grep -q '1000 iters in' /tmp/rl.cli &&
		grep -q '1000 iters in' /tmp/rl.srv
}
t_ok "rename eth0_sroce -> roce7 while a pingpong runs: it completes" rename_live roce7
t_ok "roce7 listed, eth0_sroce gone" sh -c 'ibv_devices | grep -qw roce7 && ! ibv_devices | grep -qw eth0_sroce'
t_ok "roce7 is opened by libsroce" provider_is roce7 libsroce-rdmav34.so
t_ok "new pingpong on roce7" pingpong roce7 -n 20 -s 1024
t_ok "rename roce7 -> rxe7 while a pingpong runs: it completes" rename_live rxe7
t_ok "rxe7 is opened by libsroce, not rxe's provider" provider_is rxe7 libsroce-rdmav34.so
t_ok "new pingpong on rxe7" pingpong rxe7 -n 20 -s 1024
t_ok "rename back to eth0_sroce" rdma dev set rxe7 name eth0_sroce
t_ok "eth0_sroce/device/net/ still holds eth0" netdev_link_is eth0_sroce eth0

# --- bad names ----------------------------------------------------------
t_ok "dummy netdev bad0 up" sh -c 'ip link add bad0 type dummy && ip link set bad0 up'
# refused NAME MSG: rdma link add NAME on bad0 fails, dmesg says MSG (if
# given), and no device is left; bad0 is untouched.
refused() {
	local before
	before=$(devs)
	dmesg -C
	rdma link add "$1" type sroce netdev bad0 && { echo "accepted: $1"; return 1; }
	[ -z "$2" ] || dmesg | grep -F -- "$2" || { echo "no message '$2'"; dmesg | tail -n 3; return 1; }
	[ "$(devs)" = "$before" ] || { echo "left behind: $(devs)"; return 1; }
	ip link show bad0 | grep -q 'state UNKNOWN\|state UP'
}
t_ok "name with '/' refused" refused 'a/b' "no '/', blanks or control characters"
t_ok "name with a blank refused" refused 'a b' "no '/', blanks or control characters"
t_ok "name '.' refused" refused '.' "is not a valid device name"
t_ok "name '..' refused" refused '..' "is not a valid device name"
t_ok "name with a tab refused" refused "$(printf 'a\tb')" "no '/', blanks"
t_ok "duplicate name eth0_sroce refused" refused eth0_sroce "named eth0_sroce already exists"
t_ok "template roce%d refused (by ib_core, for every driver)" refused 'roce%d'
long=$(printf 'n%.0s' $(seq 70))
t_ok "a 70-character name is refused" refused "$long"
t_ok "second device on eth0 refused" sh -c \
	'dmesg -C; ! rdma link add other0 type sroce netdev eth0 && dmesg | grep -q "eth0 already has device eth0_sroce"'
t_ok "nothing left behind: eth0_sroce alone" test "$(devs)" = "eth0_sroce "
t_ok "eth0_sroce still works" pingpong eth0_sroce -n 20 -s 1024

# --- one device per interface ------------------------------------------
t_ok "veth pair va/vb and bridge br0 (port vc of pair vc/vd), addressed" sh -c '
	ip link add va type veth peer name vb && ip link add vc type veth peer name vd &&
	ip link add br0 type bridge && ip link set vc master br0 &&
	for d in va vb vc vd br0; do ip link set $d up || exit 1; done &&
	ip addr add 10.78.1.1/24 dev va && ip addr add 10.78.2.1/24 dev vb &&
	ip addr add 10.78.3.1/24 dev br0'
for nd in va vb br0; do
	t_ok "rdma link add ${nd}_sroce" add_sroce_link "${nd}_sroce" "$nd"
	t_ok "${nd}_sroce is ready" dev_ready "${nd}_sroce"
done
for d in va_sroce vb_sroce br0_sroce eth0_sroce; do
	t_ok "loopback rc_pingpong on $d" pingpong "$d" -n 20 -s 1024
done
# The net/ link follows a netdev rename, and the device keeps working.
t_ok "ip link set vb name vbx" sh -c 'ip link set vb down && ip link set vb name vbx && ip link set vbx up'
t_ok "vb_sroce: parent vbx, device/net/ holds vbx" eval \
	'[ "$(cat /sys/class/infiniband/vb_sroce/parent)" = vbx ] && netdev_link_is vb_sroce vbx'
t_ok "vb_sroce is ready after the rename" dev_ready vb_sroce
t_ok "ip link set vbx name vb" sh -c 'ip link set vbx down && ip link set vbx name vb && ip link set vb up'
t_ok "vb_sroce/device/net/ holds vb again" netdev_link_is vb_sroce vb
t_ok "vb_sroce is ready" dev_ready vb_sroce
t_ok "rdma link delete va_sroce alone" rdma link delete va_sroce
t_ok "vb_sroce, br0_sroce and eth0_sroce remain" test "$(devs)" = "br0_sroce eth0_sroce vb_sroce "
t_ok "vb_sroce still works" pingpong vb_sroce -n 20 -s 1024
t_ok "ip link del br0" ip link del br0
t_ok "br0_sroce goes with it" wait_for '[ ! -e /sys/class/infiniband/br0_sroce ]' 20
t_ok "eth0_sroce and vb_sroce remain" test "$(devs)" = "eth0_sroce vb_sroce "
t_ok "eth0_sroce still works" pingpong eth0_sroce -n 20 -s 1024
t_ok "rdma link delete vb_sroce" rdma link delete vb_sroce
t_ok "rdma link delete eth0_sroce" rdma link delete eth0_sroce
t_ok "no sroce parent left in /sys/devices" sh -c '! ls -d /sys/devices/sroce.* 2>/dev/null'
t_ok "rmmod sroce" rmmod sroce
t_done
