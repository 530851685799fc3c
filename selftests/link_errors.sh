#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 400
#
# Bad rdma link requests fail cleanly and leave nothing behind; a device on
# a netdev that is down reports its port DOWN and follows the netdev's
# state as it changes.
. "$REPO/selftests/lib/guest.sh"

state_sysfs() { cut -d' ' -f2 "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }
state_rdma() { rdma link show "$1/1" 2>/dev/null | sed -n 's/.* state \([A-Z_]*\) .*/\1/p'; }
devs() { ls /sys/class/infiniband 2>/dev/null | tr '\n' ' '; }

t_ok "load_sroce" load_sroce || { t_done; exit 1; }

t_fail "unknown netdev is refused" add_sroce_link sroce0 nosuchdev0
t_ok "no device left after unknown netdev" test -z "$(devs)"

t_fail "loopback (not Ethernet) is refused" add_sroce_link sroce0 lo
t_ok "no device left after lo" test -z "$(devs)"

# Without a working device the rest would only burn its wait timeouts.
t_ok "first sroce0 on eth0" add_sroce_link sroce0 eth0 || { t_done; exit 1; }
t_fail "duplicate name sroce0 is refused" add_sroce_link sroce0 eth0
t_ok "only one sroce0 exists" test "$(devs)" = "sroce0 "
t_ok "original sroce0 still works" \
	wait_for '[ "$(state_sysfs sroce0)" = ACTIVE ]' 20

t_ok "create dummy netdev sdown0, left down" sh -c "ip link add sdown0 type dummy"
t_ok "sroce1 on a netdev that is down" add_sroce_link sroce1 sdown0 || { t_done; exit 1; }
t_ok "sroce1 port is DOWN in sysfs" \
	wait_for '[ "$(state_sysfs sroce1)" = DOWN ]' 10
t_ok "sroce1 port is DOWN in rdma link show" \
	wait_for '[ "$(state_rdma sroce1)" = DOWN ]' 10
t_ok "bring sdown0 up" ip link set sdown0 up
t_ok "sroce1 port becomes ACTIVE" \
	wait_for '[ "$(state_sysfs sroce1)" = ACTIVE ]' 20
t_ok "rdma link show agrees: ACTIVE" \
	wait_for '[ "$(state_rdma sroce1)" = ACTIVE ]' 10
t_ok "take sdown0 down again" ip link set sdown0 down
t_ok "sroce1 port goes DOWN" \
	wait_for '[ "$(state_sysfs sroce1)" = DOWN ]' 20
t_ok "sroce0 unaffected" test "$(state_sysfs sroce0)" = ACTIVE

# Deleting the netdev under the device must take the device with it.
t_ok "delete sdown0 under sroce1" ip link del sdown0
t_ok "sroce1 goes away with its netdev" \
	wait_for '[ ! -e /sys/class/infiniband/sroce1 ]' 20
t_fail "rdma link delete of a missing device fails" rdma link delete nosuch0
t_ok "rdma link delete sroce0" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
