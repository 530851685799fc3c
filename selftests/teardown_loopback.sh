#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 1
# timeout: 1500
# secs: 90
#
# Pulling the rug under running loopback traffic on one VM: `rdma link
# delete`, removal of the netdev below the device, and `rmmod sroce`, each
# while ib_send_bw (and ibv_rc_pingpong, busy-polling or waiting on events)
# move data (sent_pkts seen growing first). Every program must end by itself, the device must go
# away, the module must unload, and a new device must work afterwards.
# Hung tasks are reported after 10 s here, and the harness fails the test
# on any splat.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/lib/teardown.sh"

td_setup
IP=$(my_ip)

# traffic DEV GID IP PORT [PP-ARGS...]: an ib_send_bw pair on DEV, and an
# ibv_rc_pingpong pair with PP-ARGS if given, running. On a one-CPU TCG
# guest every busy poller slows the rest, so the cases share them out.
traffic() {
	local dev=$1 gid=$2 ip=$3 port=$4 pids
	shift 4
	PIDS=
	td_bw_start bw "$dev" "$gid" "$ip" "$port" || { PIDS=$TD_PIDS; return 1; }
	PIDS=$TD_PIDS
	if [ $# -gt 0 ]; then
		pids=$PIDS
		td_pp_start pp "$dev" "$gid" "$ip" $((port + 1)) "${@:2}" ||
			{ PIDS="$pids $TD_PIDS"; return 1; }
		PIDS="$pids $TD_PIDS"
	fi
	td_flowing "$dev"
}

# ---- 1: rdma link delete
t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "send_bw + busy-polling rc_pingpong on sroce0" traffic sroce0 "$GID" "$IP" 18515 pp
t_ok "rdma link delete sroce0 under traffic" timeout 60 rdma link delete sroce0
t_ok "sroce0 is gone" wait_for "td_gone sroce0" 30
# shellcheck disable=SC2086
t_ok "programs ended" td_ended 60 $PIDS
td_how
t_ok "no task in D state" td_no_d_state
t_ok "rmmod sroce (refcnt 0)" td_rmmod

# ---- 2: netdev removal (a dummy netdev with its own address)
t_ok "sroce0 back" sroce_up || { t_done; exit 1; }
t_ok "sroce0 works again" td_pingpong sroce0 "$GID" "$IP" 18520
t_ok "dummy netdev td0" sh -c "modprobe dummy && ip link add td0 type dummy &&
	ip addr add 10.88.0.1/24 dev td0 && ip link set td0 up"
t_ok "sroce1 on td0" add_sroce_link sroce1 td0
t_ok "sroce1 ACTIVE with a RoCE v2 GID" wait_for \
	"grep -q ACTIVE /sys/class/infiniband/sroce1/ports/1/state &&
	 roce_gid_index sroce1 10.88.0.1 > /dev/null" 60
GID1=$(roce_gid_index sroce1 10.88.0.1)
t_ok "send_bw on sroce1" traffic sroce1 "$GID1" 10.88.0.1 18530
t_ok "ip link del td0 under traffic" timeout 60 ip link del td0
t_ok "sroce1 followed its netdev" wait_for "td_gone sroce1" 60
# shellcheck disable=SC2086
t_ok "programs ended" td_ended 60 $PIDS
td_how
t_ok "no task in D state" td_no_d_state
t_ok "sroce0 unaffected" td_pingpong sroce0 "$GID" "$IP" 18535

# ---- 3: rmmod under traffic
t_ok "send_bw + rc_pingpong -e on sroce0" traffic sroce0 "$GID" "$IP" 18540 pp -e
# ib_uverbs holds no module reference for a driver that can disassociate,
# so the unload goes ahead: devices unregister, processes lose their
# objects.
t_ok "rmmod sroce under traffic" timeout 90 rmmod sroce
t_ok "sroce0 is gone" wait_for "td_gone sroce0" 30
# shellcheck disable=SC2086
t_ok "programs ended" td_ended 60 $PIDS
td_how
t_ok "no task in D state" td_no_d_state

# ---- 4: everything comes back
t_ok "sroce0 back after rmmod" sroce_up || { t_done; exit 1; }
t_ok "sroce0 works again" td_pingpong sroce0 "$GID" "$IP" 18545
t_ok "rdma link delete" rdma link delete sroce0
t_ok "rmmod sroce" td_rmmod
t_ok "no device freed with live objects" td_no_leftovers
t_done
