# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
#
# NFS over RDMA helpers: the kernel NFS server with an RDMA listener on
# port 20049 (svcrdma) and mounts with proto=rdma (xprtrdma). The NFS tools
# come from Debian's packages, unpacked over the guest root only
# (scripts/deps.sh keeps them in .cache/guest-debs). Source after
# selftests/lib/guest.sh.

NFS_EXP=/srv/nfs

# nfs_tools: unpack the NFS packages over the guest root.
nfs_tools() {
	local d
	# Keep the root's /lib, /sbin -> usr/... links (merged /usr).
	for d in "$REPO"/.cache/guest-debs/*.deb; do
		dpkg-deb --fsys-tarfile "$d" | tar -x -C / --keep-directory-symlink ||
			return 1
	done
	[ -x /usr/sbin/rpc.nfsd ] && [ -x /sbin/mount.nfs ]
}

# nfs_server_up MIB: export a tmpfs of 3 x MIB MiB at $NFS_EXP (NFSv4's
# root) over TCP and RDMA (port 20049).
nfs_server_up() {
	# rpcbind and the kernel's registrations with it need lo.
	ip link set lo up && modprobe -a nfsd rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p $NFS_EXP && mount -t tmpfs -o size=$((3 * $1))M tmpfs $NFS_EXP || return 1
	# fsid=0: the export is NFSv4's root; the pseudo root NFSv4 would
	# otherwise build would start at /, an overlay nfsd cannot export.
	echo "$NFS_EXP *(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" > /etc/exports
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

nfs_server_down() {
	rpc.nfsd 0 && exportfs -ua && pkill rpc.mountd
	pkill rpcbind
	umount $NFS_EXP && umount /proc/fs/nfsd && modprobe -r nfsd rpcrdma
}

# nfs_client_modules: what a client needs loaded.
nfs_client_modules() {
	ip link set lo up && modprobe -a rpcrdma nfs nfsv3 nfsv4
}

# nfs_mnt SERVER VERS PATH [OPTS]: mount SERVER:PATH on /mnt/nfs over RDMA.
nfs_mnt() {
	mkdir -p /mnt/nfs
	mount -t nfs -o "vers=$2,proto=rdma,port=20049${4:+,$4}" "$1:$3" /mnt/nfs || return 1
	grep " /mnt/nfs " /proc/mounts
	grep " /mnt/nfs " /proc/mounts | grep -q "vers=$2.*proto=rdma"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }
