#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 300
#
# Fast-register MRs from a kernel consumer, the way NVMe, NFS and iSER use
# them (selftests/kmod/sroce_frmr.c, run when loaded): REG_MR of four
# separate pages, RDMA WRITE and READ through the key checked byte for
# byte, LOCAL_INV, REG_MR under a new key, SEND_WITH_INV reported with
# IB_WC_WITH_INVALIDATE; a WRITE through each dead key fails with a remote
# access error and changes no byte.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
GID=$(roce_gid_index sroce0)
rkey0=$(hw_counter bad_rkey)
# Built for the make check kernel in selftests/kmod, for any other (make
# check-debug's) in build/kmod-<its release>.
KO=$REPO/build/kmod-$(uname -r)/sroce_frmr.ko
[ -f "$KO" ] || KO=$REPO/selftests/kmod/sroce_frmr.ko
t_ok "insmod sroce_frmr.ko dev=sroce0 gid=$GID: every check passes" \
	insmod "$KO" dev=sroce0 gid="$GID"
dmesg | sed -n 's/^.*sroce_frmr: /# /p'
t_ok "all of its 16 checks ran" \
	test "$(dmesg | grep -c 'sroce_frmr: ok ')" -eq 16
t_fail "none failed" sh -c "dmesg | grep 'sroce_frmr: not ok'"
# At least 3: a slow host may make a dead-key WRITE arrive twice.
t_ok "bad_rkey counted the three WRITEs through dead keys" \
	test $(($(hw_counter bad_rkey) - rkey0)) -ge 3
t_ok "rmmod sroce_frmr" rmmod sroce_frmr
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
