#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 300
#
# Harness self-test: two guests on one link see each other, and the
# barrier and value exchange between them work.
. "$REPO/selftests/lib/guest.sh"

t_ok "two VMs" test "$NVMS" = 2
t_ok "barrier before ping" vm_barrier up
t_ok "ping peer over IPv4" ping -c 3 -i 0.2 -W 5 "$(peer_ip)"
t_ok "ping peer over IPv6" ping -6 -c 3 -i 0.2 -W 5 "$(peer_ip -6)"
# A full-size frame must cross the link unfragmented.
t_ok "MTU-sized ping, DF set" ping -c 1 -W 5 -M "do" -s $((MTU - 28)) "$(peer_ip)"
t_ok "put a value for the peer" vm_put token "from-vm$VM_ID"
got=$(vm_get token)
t_ok "got the peer's value" test "$got" = "from-vm$(peer_id)"
# The same name twice is two barriers: the second must also wait for both.
t_ok "barrier reuse 1" vm_barrier again
t_ok "barrier reuse 2" vm_barrier again
t_ok "second use made its own generation" \
	test -e "$SYNC/again.2.vm1" -a -e "$SYNC/again.2.vm2"
t_ok "barrier at end" vm_barrier finish
t_done
