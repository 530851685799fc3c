#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 300
#
# rdma link add/delete of a sroce device on eth0: the device appears to the
# RDMA core (rdma tool, sysfs), gets RoCE v2 GIDs from eth0's addresses,
# appears to verbs users through the staged provider, and goes away on
# delete or on module unload.
. "$REPO/selftests/lib/guest.sh"

sysdev=/sys/class/infiniband/sroce0
port_state() { cut -d' ' -f2 "$sysdev/ports/1/state" 2>/dev/null; }
# GIDs are listed by sysfs as 8 groups of 4 hex digits.
has_gid() { cat "$sysdev"/ports/1/gids/* 2>/dev/null | grep -qx "$1"; }
gid_v4=0000:0000:0000:0000:0000:ffff:0a4d:000$VM_ID
gid_v6=fd77:0000:0000:0000:0000:0000:0000:000$VM_ID

t_ok "load_sroce" load_sroce || { t_done; exit 1; }
t_ok "rdma link add sroce0 on eth0" add_sroce_link sroce0 eth0 || { t_done; exit 1; }
t_ok "rdma link show lists sroce0/1 on eth0" \
	sh -c "rdma link show sroce0/1 | grep -q 'netdev eth0'"
t_ok "sroce0 in sysfs" test -d "$sysdev"
t_ok "rdma dev show lists sroce0" sh -c "rdma dev show sroce0 | grep -q sroce0"
t_ok "port 1 becomes ACTIVE" wait_for '[ "$(port_state)" = ACTIVE ]' 20
t_ok "link layer is Ethernet" grep -qx Ethernet "$sysdev/ports/1/link_layer"
t_ok "RoCE GID for 10.77.0.$VM_ID" wait_for "has_gid $gid_v4" 20
t_ok "RoCE GID for fd77::$VM_ID" wait_for "has_gid $gid_v6" 20
t_ok "a RoCE v2 GID type is present" \
	sh -c "cat $sysdev/ports/1/gid_attrs/types/* 2>/dev/null | grep -q 'RoCE v2'"
t_ok "uverbs char device exists" sh -c "ls /dev/infiniband/ | grep -q uverbs"

# Verbs-level checks need libsroce from userspace/ in the stage; kept apart
# so the kernel part above is judged on its own.
t_ok "ibv_devices lists sroce0" sh -c "ibv_devices | grep -qw sroce0"
t_ok "ibv_devinfo -d sroce0 reports PORT_ACTIVE on Ethernet" \
	sh -c "ibv_devinfo -d sroce0 > /tmp/devinfo && grep -q 'PORT_ACTIVE' /tmp/devinfo && grep -q 'link_layer:.*Ethernet' /tmp/devinfo"

t_ok "rdma link delete sroce0" rdma link delete sroce0
t_ok "sroce0 gone from rdma link show" sh -c "! rdma link show | grep -q sroce0"
t_ok "sroce0 gone from sysfs" wait_for "[ ! -e $sysdev ]" 10
t_ok "re-add after delete" add_sroce_link sroce0 eth0
t_ok "port ACTIVE again" wait_for '[ "$(port_state)" = ACTIVE ]' 20
t_ok "rmmod with the device present" rmmod sroce
t_ok "device removed by rmmod" test ! -e "$sysdev"
t_ok "eth0 still works after rmmod" sh -c "ip link show eth0 | grep -q UP"
t_done
