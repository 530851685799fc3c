#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 900
# slub: 0
#
# NFS over RDMA, the other kernel storage consumer: VM 1 runs the kernel
# NFS server with an RDMA listener on port 20049 (svcrdma), VM 2 mounts
# with -o rdma (xprtrdma), NFS 4.2 and then NFS 3, both on devices named
# after their interface (eth0_sroce). Files of random data go both ways
# and their SHA-256 sums, taken on each side, must agree. The NFS tools
# come from Debian's packages, unpacked over the guest root only
# (scripts/deps.sh keeps them in .cache/guest-debs).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/nfs.sh"

DEV=eth0_sroce
SRV=10.77.0.1
EXP=$NFS_EXP
MIB=64

dev_up() {
	load_sroce && add_sroce_link "$DEV" eth0 &&
		wait_for "grep -q ACTIVE /sys/class/infiniband/$DEV/ports/1/state" 60 &&
		wait_for "roce_gid_index $DEV > /dev/null" 60
}
t_ok "$DEV up with a RoCE v2 GID" dev_up || { t_done; exit 1; }
t_ok "NFS tools unpacked over the guest root" nfs_tools || { t_done; exit 1; }

if [ "$VM_ID" = 1 ]; then
	if ! t_ok "NFS server with an RDMA listener on $SRV:20049" nfs_server_up $MIB; then
		vm_put server failed
		vm_barrier client_done 600
		t_done
		exit 1
	fi
	vm_put server ready
	# The server's side of each file the client checks.
	head -c ${MIB}M /dev/urandom > $EXP/from_server
	vm_put from_server "$(sha $EXP/from_server)"
	vm_barrier v42_copied 600
	vm_put to_server "$(sha $EXP/to_server 2>&1)"
	vm_barrier v3_copied 600
	vm_put to_server3 "$(sha $EXP/to_server3 2>&1)"
	t_ok "client done" vm_barrier client_done 600
	t_ok "NFS server stopped, nfsd and rpcrdma unloaded" nfs_server_down
else
	mnt() { nfs_mnt "$SRV" "$@"; }
	if ! nfs_client_modules || [ "$(vm_get server 1 300)" != ready ]; then
		t_bad "NFS server did not come up"
		vm_barrier client_done 600
		t_done
		exit 1
	fi
	head -c ${MIB}M /dev/urandom > /tmp/to_server
	want=$(vm_get from_server 1 300)
	# Every step needs the mount: without it cp would fill /mnt/nfs here.
	v42() {
		t_ok "mount -t nfs -o vers=4.2,proto=rdma,port=20049 $SRV:/" mnt 4.2 / || return
		t_ok "copy $MIB MiB to the server" cp /tmp/to_server /mnt/nfs/to_server
		t_ok "copy $MIB MiB from the server" cp /mnt/nfs/from_server /tmp/from_server
		t_ok "what came from the server is what it holds (SHA-256)" \
			test "$(sha /tmp/from_server)" = "$want"
		rm -f /tmp/from_server
		t_ok "umount" umount /mnt/nfs
	}
	v3() {
		t_ok "mount -t nfs -o vers=3,proto=rdma,port=20049,nolock $SRV:$EXP" \
			mnt 3 $EXP nolock,mountproto=tcp || return
		t_ok "NFS 3: copy 32 MiB to the server" \
			sh -c "head -c 32M /tmp/to_server > /tmp/to_server3 && cp /tmp/to_server3 /mnt/nfs/to_server3"
		t_ok "NFS 3: read back what NFS 4.2 wrote, equal" cmp /mnt/nfs/to_server /tmp/to_server
		t_ok "umount" umount /mnt/nfs
	}
	v42
	vm_barrier v42_copied 600
	t_ok "what the server holds is what was sent (SHA-256)" \
		test "$(vm_get to_server 1 300)" = "$(sha /tmp/to_server)"
	v3
	vm_barrier v3_copied 600
	t_ok "NFS 3: what the server holds is what was sent (SHA-256)" \
		test "$(vm_get to_server3 1 300)" = "$(sha /tmp/to_server3)"
	t_ok "nfs and rpcrdma unload" modprobe -r nfsv4 nfsv3 nfs rpcrdma
	show_counters "$DEV"
	vm_barrier client_done 600
fi
t_ok "rdma link delete $DEV" rdma link delete "$DEV"
t_ok "rmmod sroce" rmmod sroce
t_done
