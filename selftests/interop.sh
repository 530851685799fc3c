#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 2700
# slub: 0
#
# sroce0 (VM 1) against Debian's rdma_rxe (rxe0, VM 2) on a 1500-byte link
# (path MTU 1024), every exchange once with sroce serving and once with rxe
# serving:
# - sroce_xfer RC and UC (every op) at 0, 1, MTU, MTU + 1 and several MTUs,
#   UD at 0, 1 and MTU, every byte and completion field checked; on kernels
#   whose rdma_rxe has it (6.2 on), RC ATOMIC WRITE too;
# - ibv_{rc,uc,srq}_pingpong -c at 5000 bytes, ibv_ud_pingpong -c at 0 and
#   MTU (-c checks one byte per page), and rping -V/-v at 5000 bytes, every
#   byte compared (by rping itself on the client, by rping_data_ok on both
#   printed copies);
# - perftest bandwidth and latency tools, each over rdma_cm (-R) in one
#   direction and over perftest's TCP exchange in the other:
#   perftest checks no data, so each side's packet counters must have moved
#   by what the transfer needs (and not twenty times more);
# - ucmatose, paired with the packet counters the same way;
# - RC over the IPv6 RoCE v2 GIDs: sroce_xfer, rc_pingpong -c and rping -V;
# - NVMe over RDMA: an nvmet-rdma target on each VM, the other VM's
#   nvme-rdma host writes 8 MiB and reads them back byte for byte;
# - NFS 4.2 over RDMA: a server on each VM, the other VM's client sends
#   and fetches 8 MiB, SHA-256 sums agree on both sides.
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"
. "$REPO/selftests/verbs/interop_lib.sh"
. "$REPO/selftests/lib/nvme.sh"
. "$REPO/selftests/lib/nfs.sh"

t_ok "sroce0 / rxe0 up with RoCE v2 GIDs" interop_up || { t_done; exit 1; }
t_ok "capturing CM MADs" cm_capture_start
t_ok "peers up" vm_barrier up 300 || { t_done; exit 1; }

MTU_B=1024

# pp S TYPE SIZE [ARGS...]: ibv_TYPE_pingpong -c, server on VM S.
pp() {
	local s=$1 type=$2 size=$3
	shift 3
	t_ok "ibv_${type}_pingpong -c -s $size $* ($DEV $(role "$s"))" \
		xrun "$type-$size" "$s" "tcp_listening @PORT@" \
		timeout 120 "ibv_${type}_pingpong" -d "$DEV" -g "$GID" -c -n 10 \
		-s "$size" -p @PORT@ "$@"
}

# perf_ok FILE: a perftest result line (numeric size and iterations, then
# positive figures) follows the column header. perftest calibrates its
# clock against gettimeofday and, on a host so loaded that the fit's r^2
# falls under 0.9, says so and prints zero figures (with -F it goes on
# rather than fail): then the line must still be there, its figures zero.
perf_ok() {
	awk '/^ *#bytes/ { h = 1; next }
	     /^Correlation coefficient r\^2: / { noclock = 1 }
	     h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $2 > 0 {
		if ($NF + 0 > 0) ok = 1; else if ($NF + 0 == 0) zero = 1
	     }
	     END { if (!ok && zero && noclock)
			print "# perftest could not calibrate its clock: figures 0"
		   exit !(ok || (zero && noclock)) }' "$1" || { cat "$1"; return 1; }
}

# perf S MINPKTS TOOL ARGS...: perftest TOOL between the VMs, server on VM
# S; -R anywhere in ARGS means rdma_cm, else perftest's TCP exchange. The
# client must print a result and each side's device must have moved at
# least MINPKTS packets, at most twenty times that plus 1000 (a loaded TCG
# host makes both devices retransmit, so the ceiling only catches runaway
# traffic).
perf() {
	local s=$1 min=$2 tool=$3 before ready=tcp_listening cm='' run=xrun
	shift 3
	[[ " $* " == *" -R "* ]] && { cm=" -R"; ready="cm_listening ${tool:0:15}"; run=xrun_cm; }
	before=$(pkts)
	t_ok "$tool $* ($DEV $(role "$s"))" \
		$run "$tool" "$s" "$ready @PORT@" \
		timeout 200 "$tool" -d "$DEV" -x "$GID" -F -p @PORT@ "$@"
	if [ -s /tmp/cm_retries ]; then
		cat /tmp/cm_retries
		rm -f /tmp/cm_retries
	fi
	if [ "$(role "$s")" = client ]; then
		t_ok "$tool$cm printed a result" perf_ok "$(xout)"
	fi
	t_ok "$tool$cm: $DEV packet counters moved" pkts_moved "$before" "$min" $((20 * min + 1000))
}

# rp S SIZE: rping of SIZE bytes, 10 pings, every byte compared.
rp() {
	local s=$1 size=$2 a
	if [ "$(role "$s")" = server ]; then a=(-s -a @SRV@); else a=(-c -a @SRV@ -V); fi
	t_ok "rping -S $size ($DEV $(role "$s"))" \
		xrun "rping-$size" "$s" "cm_listening rping @PORT@" \
		timeout 200 "${RPING[@]}" "${a[@]}" -p @PORT@ -C 10 -S "$size" -v
	if [ "$(role "$s")" = server ]; then
		t_ok "rping -S $size: server saw the pattern" rping_data_ok "$(xout)" 10 "$size" "server ping data: "
	else
		t_ok "rping -S $size: client saw the pattern" rping_data_ok "$(xout)" 10 "$size" "ping data: "
	fi
}

for S in 1 2; do
	echo "# ---- server on VM $S: $([ "$S" = 1 ] && echo sroce0 || echo rxe0) serves"
	# sroce_xfer covers every size boundary, 1 byte included; the
	# pingpongs take one multi-packet size. No 0: a 0-byte pingpong buffer
	# means a 0-byte MR, which ib_core refuses for every device (and
	# srq_pingpong rejects -s 0 itself).
	pp $S rc 5000
	pp $S uc 5000
	pp $S srq 5000
	for size in 0 $MTU_B; do
		pp $S ud "$size"
	done
	log_retx "pingpongs (server VM $S)"

	xfer $S rc 0,1,$MTU_B,$((MTU_B + 1)),5000,65536 -m $MTU_B
	xfer $S uc 0,1,$MTU_B,$((MTU_B + 1)),5000 -m $MTU_B
	xfer $S ud 0,1,$MTU_B
	case $(uname -r) in
	6.1.*) ;;
	*) xfer $S rc 8 -o aw,cas -m $MTU_B ;;
	esac
	log_retx "sroce_xfer (server VM $S)"

	# Every tool runs in both directions, once over rdma_cm and once over
	# perftest's TCP exchange: with sroce serving the bandwidth tools use
	# -R, with rxe serving the latency tools do (halves the run time).
	if [ "$S" = 1 ]; then bwr=-R latr=; else bwr= latr=-R; fi
	perf $S 400 ib_send_bw -s 4096 -n 100 $bwr
	perf $S 400 ib_write_bw -s 4096 -n 100 $bwr
	perf $S 400 ib_read_bw -s 4096 -n 100 $bwr
	perf $S 100 ib_atomic_bw -A CMP_AND_SWAP -n 100 $bwr
	perf $S 100 ib_atomic_bw -A FETCH_AND_ADD -n 100 $bwr
	perf $S 50 ib_send_lat -n 25 $latr
	perf $S 50 ib_write_lat -n 25 $latr
	perf $S 50 ib_read_lat -n 25 $latr
	perf $S 50 ib_atomic_lat -n 25 $latr
	log_retx "perftest (server VM $S)"

	rp $S 5000
	if [ "$(role $S)" = server ]; then a=(-b @SRV@); else a=(-s @SRV@); fi
	before=$(pkts)
	t_ok "ucmatose 2 x 10 ($DEV $(role $S))" \
		xrun ucmatose $S "cm_listening ucmatose @PORT@" \
		timeout 200 ucmatose "${a[@]}" -p @PORT@ -c 2 -C 10
	t_ok "ucmatose: $DEV packet counters moved" pkts_moved "$before" 40 900
	log_retx "rping, ucmatose (server VM $S)"
done

echo "# ---- IPv6 RoCE v2 GIDs"
GID4=$GID
GID=$GID6
for S in 1 2; do
	# ibv_rc_pingpong's server listens on IPv4 only: its TCP exchange
	# stays IPv4, the RoCE traffic uses the IPv6 GID all the same.
	pp $S rc 5000
	XR_V6=1
	xfer $S rc 0,1,$MTU_B,$((MTU_B + 1)),5000 -m $MTU_B
	rp $S 5000
	XR_V6=0
done
GID=$GID4
log_retx "IPv6"

cm_capture_stop

# NVMe over RDMA across the two implementations: each VM's nvmet-rdma
# target (a 64 MiB RAM disk) takes 8 MiB of random data from the other
# VM's nvme-rdma host and gives it back byte for byte.
other_dev() { [ "$VM_ID" = 1 ] && echo rxe0 || echo sroce0; }
nvme_rw() {
	head -c 8M /dev/urandom > /tmp/nvme-pattern &&
		dd if=/tmp/nvme-pattern of="$BDEV" bs=1M oflag=direct status=none &&
		nvme_same 8 /tmp/nvme-pattern
}
for S in 1 2; do
	if [ "$VM_ID" = "$S" ]; then
		if t_ok "nvmet-rdma target on $DEV" nvme_target_up "$(my_ip)"; then
			vm_put "nvme$S" ready
		else
			vm_put "nvme$S" failed
		fi
		t_ok "... the $(other_dev) host is done" vm_barrier "nvme-done$S" 300
		t_ok "... target taken down" nvme_target_down
		continue
	fi
	modprobe nvme-rdma
	if [ "$(vm_get "nvme$S" "$S" 300)" = ready ] &&
		t_ok "nvme connect over $DEV to the $(other_dev) target" nvme_connect "$(peer_ip)"; then
		t_ok "... 8 MiB written and read back byte for byte (O_DIRECT)" nvme_rw
		t_ok "... nvme disconnect" nvme_disconnect
	else
		t_bad "nvme connect over $DEV to the $(other_dev) target"
	fi
	t_ok "... nvme-rdma unloads" modprobe -r nvme-rdma
	vm_barrier "nvme-done$S" 300
done

# NFS 4.2 over RDMA the same way: each VM in turn serves an export, the
# other mounts it with proto=rdma, sends 8 MiB and fetches the server's
# 8 MiB; the SHA-256 sums taken on both sides agree.
t_ok "NFS tools unpacked over the guest root" nfs_tools
for S in 1 2; do
	if [ "$VM_ID" = "$S" ]; then
		if t_ok "NFS server with an RDMA listener over $DEV" nfs_server_up 8; then
			head -c 8M /dev/urandom > $NFS_EXP/from_server
			vm_put "nfs$S" "$(sha $NFS_EXP/from_server)"
		else
			vm_put "nfs$S" failed
		fi
		vm_barrier "nfs-copied$S" 300
		vm_put "nfs-to$S" "$(sha $NFS_EXP/to_server 2>&1)"
		t_ok "... the $(other_dev) client is done" vm_barrier "nfs-done$S" 300
		t_ok "... NFS server stopped" nfs_server_down
		continue
	fi
	want=$(vm_get "nfs$S" "$S" 300)
	head -c 8M /dev/urandom > /tmp/to_server
	if [ "$want" != failed ] && nfs_client_modules &&
		t_ok "mount -o vers=4.2,proto=rdma over $DEV from the $(other_dev) server" \
			nfs_mnt "$(peer_ip)" 4.2 /; then
		t_ok "... 8 MiB to the server and 8 MiB from it" sh -c \
			"cp /tmp/to_server /mnt/nfs/to_server && cp /mnt/nfs/from_server /tmp/from_server"
		t_ok "... what came from the server is what it holds (SHA-256)" \
			test "$(sha /tmp/from_server)" = "$want"
		t_ok "... umount" umount /mnt/nfs
	else
		t_bad "mount over $DEV from the $(other_dev) server"
	fi
	vm_barrier "nfs-copied$S" 300
	t_ok "... what the server holds is what was sent (SHA-256)" \
		test "$(vm_get "nfs-to$S" "$S" 300)" = "$(sha /tmp/to_server)"
	t_ok "... nfs and rpcrdma unload" modprobe -r nfsv4 nfsv3 nfs rpcrdma
	vm_barrier "nfs-done$S" 300
done
interop_done
