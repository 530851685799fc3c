#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# cpus: 2
# stage: none
# timeout: 3600
# secs: 520
#
# The Debian packages of make deb, as a user gets them: the guest starts
# without the staged build (no sroce.ko, no provider), installs
# build/deb/*.deb and dkms (.cache/dkms-debs, from scripts/deps.sh) with apt
# and no network, DKMS builds sroce.ko for the running kernel, `rdma link
# add` loads it by its rdma-link-sroce alias, the packaged provider serves
# ibv_devices and an ibv_rc_pingpong loopback; then remove and purge leave
# nothing of sroce behind. Everything apt does lands in the guest's tmpfs
# overlay, not on the host.
#
# Slow: DKMS compiles sroce.ko under TCG (two vCPUs; sroce's dkms.conf
# runs make with a job per CPU), and depmod reads every module of the
# image twice (install, remove). Alone on the host on 2026-12-06 the test
# took 505 s on 6.1 (apt-get install 378 s of it) and 889 s on 6.12 (712).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/teardown.sh"

# The links udev or systemd make on a real system; the guest's devtmpfs
# lacks them, and dkms is written with <(...) throughout.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${i#*:}" ] || ln -s "/proc/self/fd/${i%%:*}" "/dev/${i#*:}"
done

# The guest's /lib/modules/$KVER is the kernel image's (vm.sh), which hides
# the build link the host's linux-headers-$KVER put there: put it back, as
# a host with the headers installed has it, or DKMS finds no headers.
# 6.12's headers are not installed on the host but unpacked into .cache
# by scripts/deps-6.12.sh, their Makefile pointed at that copy.
HDR=/usr/src/linux-headers-$KVER
[ -d "$HDR" ] || HDR=$REPO/.cache/k612/usr/src/linux-headers-$KVER
t_ok "linux-headers-$KVER on the host" test -d "$HDR" || { t_done; exit 1; }
# 6.12's image ships the link, dangling here: replace it.
[ -d "/lib/modules/$KVER/build/" ] || ln -sfn "$HDR" "/lib/modules/$KVER/build"

PROVIDER_DIR=/usr/lib/x86_64-linux-gnu/libibverbs
DRIVER=/etc/libibverbs.d/sroce.driver
export DEBIAN_FRONTEND=noninteractive

shopt -s nullglob
debs=("$REPO"/build/deb/*.deb "$REPO"/.cache/dkms-debs/*.deb)
shopt -u nullglob
echo "# packages: ${debs[*]##*/}"
have_debs() {
	printf '%s\n' "${debs[@]##*/}" | grep -q '^sroce-dkms_.*_all\.deb$' &&
		printf '%s\n' "${debs[@]##*/}" | grep -q '^libsroce_.*_amd64\.deb$' &&
		printf '%s\n' "${debs[@]##*/}" | grep -q '^dkms_.*\.deb$'
}
t_ok "sroce-dkms, libsroce (make deb) and dkms (make deps) debs present" have_debs ||
	{ t_done; exit 1; }

# sroce_files: every sroce.ko, provider and sroce.driver on the system.
sroce_files() {
	{
		find "/lib/modules/$KVER" -name 'sroce.ko*'
		find "$PROVIDER_DIR" -name 'libsroce*'
		[ -e $DRIVER ] && echo $DRIVER
	} 2>/dev/null | grep .
}
sroce_loaded() { grep -q '^sroce ' /proc/modules; }

t_fail "no sroce module, provider or driver file before the install" sroce_files
t_fail "modprobe knows no sroce before the install" modinfo sroce
t_fail "sroce not loaded" sroce_loaded

# The man-db trigger would rebuild the whole manual database over 9p.
rm -f /var/lib/man-db/auto-update

# apt_run ARGS...: apt-get without sources: it knows only the installed
# packages and the local .debs, so it has nothing to download (with the
# host's lists it would take dkms for the archive's and try to fetch it).
nosrc=$(mktemp -d)
apt_run() {
	timeout 3000 apt-get -y -q --no-install-recommends \
		-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$nosrc" \
		-o APT::Sandbox::User=root -o Dpkg::Use-Pty=0 "$@"
}
if ! t_ok "apt-get install the packages and dkms offline" apt_run install "${debs[@]}"; then
	cat /var/lib/dkms/sroce/*/build/make.log 2>/dev/null | tail -n 40 | sed 's/^/# /'
	t_done
	exit 1
fi
dpkg -l sroce-dkms libsroce dkms | tail -n 3 | sed 's/^/# /'

dkms_installed() {
	local st
	st=$(dkms status -m sroce -k "$KVER")
	echo "$st"
	# A pattern, not a regex: 6.12's release has a "+" in it.
	[[ $'\n'$st == *$'\n'"sroce/"*", $KVER, "*": installed"* ]]
}
t_ok "dkms status: sroce installed for $KVER" dkms_installed
t_ok "sroce.ko in /lib/modules/$KVER/updates/dkms" \
	sh -c "modinfo -n sroce | grep -q '^/lib/modules/$KVER/updates/dkms/sroce\.ko'"
t_ok "its vermagic is the running kernel's" \
	sh -c "modinfo -F vermagic sroce | grep -q '^$(uname -r) '"
t_ok "rdma-link-sroce resolves to sroce" \
	sh -c "modprobe -R rdma-link-sroce | grep -qx sroce"
t_fail "sroce not loaded after the install" sroce_loaded

t_ok "rdma link add sroce0 type sroce netdev eth0 (module autoloaded)" \
	rdma link add sroce0 type sroce netdev eth0
t_ok "sroce loaded" sroce_loaded
t_ok "sroce0 port ACTIVE" \
	wait_for "grep -q ACTIVE /sys/class/infiniband/sroce0/ports/1/state" 60
t_ok "the provider is libsroce's" dpkg -S "$PROVIDER_DIR/libsroce-rdmav34.so"
MAN=/usr/share/man/man7/sroce.7.gz
t_ok "sroce(7) installed by libsroce" dpkg -S $MAN
t_ok "... and it is the sroce page" sh -c "zcat $MAN | grep -q '^\.TH SROCE 7'"
ibv_lists_sroce0() {
	local d
	d=$(ibv_devices) || return 1
	echo "$d"
	grep -qw sroce0 <<< "$d"
}
t_ok "ibv_devices lists sroce0" ibv_lists_sroce0
t_ok "ibv_devinfo opens sroce0" sh -c 'ibv_devinfo -d sroce0 | grep -q PORT_ACTIVE'
t_ok "sroce0 has a RoCE v2 IPv4 GID" wait_for "roce_gid_index sroce0 > /dev/null" 60
GID=$(roce_gid_index sroce0)

# A checked 100-iteration ibv_rc_pingpong pair on sroce0 (lib/teardown.sh).
t_ok "ibv_rc_pingpong -c loopback (gid $GID)" td_pingpong sroce0 "$GID" "$(my_ip)" 18515 100

t_ok "rdma link delete sroce0" rdma link delete sroce0
t_ok "sroce0 gone" wait_for "[ ! -e /sys/class/infiniband/sroce0 ]" 60

# sroce stays loaded through remove and purge (as on a real host): what is
# checked is the files and module index, then that it unloads.
t_ok "apt-get remove sroce-dkms libsroce" apt_run remove sroce-dkms libsroce
t_fail "dkms status: no sroce" sh -c 'dkms status -m sroce | grep .'
t_fail "no sroce.ko left for $KVER" sh -c "find /lib/modules/$KVER -name 'sroce.ko*' | grep ."
t_fail "modules.dep names no sroce" grep -q sroce "/lib/modules/$KVER/modules.dep"
t_fail "rdma-link-sroce resolves to nothing" modprobe -R rdma-link-sroce
t_fail "no provider left" sh -c "find $PROVIDER_DIR -name 'libsroce*' | grep ."
t_ok "sroce.driver kept until purge (conffile)" test -e $DRIVER
t_ok "apt-get purge sroce-dkms libsroce" apt_run purge sroce-dkms libsroce
t_fail "no sroce module, provider or driver file after the purge" sroce_files
t_fail "no sroce(7) after the purge" test -e $MAN
t_fail "no DKMS tree or source left" \
	sh -c 'ls -d /var/lib/dkms/sroce /usr/src/sroce-* 2>/dev/null | grep .'
# Purged packages dpkg still lists are "un" or "pn".
t_fail "neither package installed or configured" \
	sh -c "dpkg-query -W -f='\${db:Status-Abbrev}\n' sroce-dkms libsroce 2>/dev/null | grep -Ev '^([up]n |\$)'"
t_ok "sroce unloads" rmmod sroce
t_fail "sroce not loaded" sroce_loaded
t_fail "modprobe sroce finds nothing to load" modprobe sroce
t_done
