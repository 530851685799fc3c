#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 300
#
# sroce.ko from the staged install loads and unloads cleanly, repeatedly,
# and `rdma link add ... type sroce` loads it on demand. The host fails the
# test on any kernel splat in the guest.
. "$REPO/selftests/lib/guest.sh"

loaded() { grep -q '^sroce ' /proc/modules; }

t_ok "sroce.ko is staged for $KVER" test -f "/lib/modules/$KVER/updates/sroce.ko"
t_ok "modinfo resolves the staged module" \
	sh -c "modinfo -n sroce | grep -q '/updates/sroce.ko\$'"
t_ok "module license is dual BSD/GPL" \
	sh -c "modinfo -F license sroce | grep -qx 'Dual BSD/GPL'"
t_ok "load_sroce" load_sroce
t_ok "sroce is in /proc/modules" loaded
t_ok "rmmod sroce" rmmod sroce
t_fail "sroce is gone" loaded
for i in 1 2 3; do
	t_ok "load/unload cycle $i" sh -c "modprobe sroce && rmmod sroce"
done
t_ok "insmod by path" insmod "/lib/modules/$KVER/updates/sroce.ko"
t_fail "a second insmod is refused" insmod "/lib/modules/$KVER/updates/sroce.ko"
t_ok "rmmod after insmod" rmmod sroce
t_fail "sroce not loaded" loaded
# rdma link add must find the module by its link type, as for rxe.
t_ok "rdma link add loads sroce on demand" add_sroce_link sroce0 eth0
t_ok "sroce loaded by the link request" loaded
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod after delete" rmmod sroce
t_done
