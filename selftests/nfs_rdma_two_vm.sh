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

DEV=eth0_sroce
SRV=10.77.0.1
EXP=/srv/nfs
MIB=64

dev_up() {
	load_sroce && add_sroce_link "$DEV" eth0 &&
		wait_for "grep -q ACTIVE /sys/class/infiniband/$DEV/ports/1/state" 60 &&
		wait_for "roce_gid_index $DEV > /dev/null" 60
}
nfs_tools() {
	local d
	# Keep the root's /lib, /sbin -> usr/... links (merged /usr).
	for d in "$REPO"/.cache/guest-debs/*.deb; do
		dpkg-deb --fsys-tarfile "$d" | tar -x -C / --keep-directory-symlink ||
			return 1
	done
	[ -x /usr/sbin/rpc.nfsd ] && [ -x /sbin/mount.nfs ]
}
t_ok "$DEV up with a RoCE v2 GID" dev_up || { t_done; exit 1; }
t_ok "NFS tools unpacked over the guest root" nfs_tools || { t_done; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ "$VM_ID" = 1 ]; then
	server_up() {
		# rpcbind and the kernel's registrations with it need lo.
		ip link set lo up && modprobe -a nfsd rpcrdma || return 1
		mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
		mkdir -p $EXP && mount -t tmpfs -o size=$((3 * MIB))M tmpfs $EXP || return 1
		# fsid=0: the export is NFSv4's root; the pseudo root NFSv4 would
		# otherwise build would start at /, an overlay nfsd cannot export.
		echo "$EXP *(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" > /etc/exports
		mkdir -p /run/rpcbind /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
		# The user rpcbind drops to; the packages' scripts did not run.
		id _rpc > /dev/null 2>&1 || useradd -r -M -d /run/rpcbind -s /usr/sbin/nologin _rpc
		rpcbind -w || return 1
		wait_for "rpcinfo -p > /dev/null 2>&1" 30 || return 1
		exportfs -ra && rpc.mountd && rpc.nfsd 4 || return 1
		rpcinfo -p
		echo "rdma 20049" > /proc/fs/nfsd/portlist || return 1
		grep rdma /proc/fs/nfsd/portlist
	}
	if ! t_ok "NFS server with an RDMA listener on $SRV:20049" server_up; then
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
	server_down() {
		rpc.nfsd 0 && exportfs -ua && pkill rpc.mountd; pkill rpcbind
		umount $EXP && umount /proc/fs/nfsd && modprobe -r nfsd rpcrdma
	}
	t_ok "NFS server stopped, nfsd and rpcrdma unloaded" server_down
else
	mnt() { # VERS PATH OPTS
		mkdir -p /mnt/nfs
		mount -t nfs -o "vers=$1,proto=rdma,port=20049${3:+,$3}" "$SRV:$2" /mnt/nfs || return 1
		grep " /mnt/nfs " /proc/mounts
		grep " /mnt/nfs " /proc/mounts | grep -q "vers=$1.*proto=rdma"
	}
	if ! ip link set lo up || ! modprobe -a rpcrdma nfs nfsv3 nfsv4 || [ "$(vm_get server 1 300)" != ready ]; then
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
