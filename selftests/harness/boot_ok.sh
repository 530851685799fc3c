#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 300
#
# Harness self-test: a guest that just works. Also checks the environment
# the harness promises to every test.
. "$REPO/selftests/lib/guest.sh"

t_ok "VM_ID is 1 of 1" test "$VM_ID" = 1 -a "$NVMS" = 1
t_ok "running the pinned kernel" test "$(uname -r)" = "$KVER"
t_ok "eth0 has 10.77.0.1/24" sh -c "ip -4 -o addr show dev eth0 | grep -q ' 10.77.0.1/24 '"
t_ok "eth0 has fd77::1/64" sh -c "ip -6 -o addr show dev eth0 | grep -q ' fd77::1/64 '"
t_ok "eth0 MTU is $MTU" test "$(cat /sys/class/net/eth0/mtu)" = "$MTU"
t_ok "eth0 carrier is up" wait_for "[ \$(cat /sys/class/net/eth0/carrier) = 1 ]" 10
t_ok "no default route out of the VM" sh -c "! ip route show default | grep -q ."
t_ok "root filesystem is writable" sh -c "echo x > /etc/sroce-harness-probe"
t_ok "module directory is writable" touch "/lib/modules/$KVER/sroce-probe"
t_ok "modprobe from the image works" modprobe dummy
t_ok "host tools are present" sh -c "command -v rdma ibv_devices ib_send_bw ping"
t_ok "results share is writable" sh -c "echo ok > '$RESULTS/boot_ok.probe'"
t_ok "harness test module was built" test -f "$REPO/selftests/harness/warn_on_load.ko"
t_done
