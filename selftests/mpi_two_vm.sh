#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# vms: 2
# timeout: 900
# slub: 0
#
# Open MPI (Debian's 4.1) with its UCX PML over sroce0, one rank per VM:
# selftests/verbs/sroce_mpi sends messages of 1 byte to 4 MiB each way,
# checked byte for byte, then MPI_Allreduce and MPI_Bcast of 2 MiB arrays
# with known results. UCX may use rc (and ud to wire it up) only, so the
# job cannot fall back to TCP; both ports' counters must show the traffic.
# mpirun on VM 1 starts VM 2's daemon through selftests/lib/rexec.py, as
# the guests have no sshd. UCX_UD_VERBS_ETH_DGID_CHECK=n as in
# tools_two_vm: without it UCX 1.13's UD wire-up times out on any soft-RoCE
# device (rdma_rxe too).
. "$REPO/selftests/lib/guest.sh"
. "$REPO/selftests/verbs/lib.sh"

export REXEC_PORT=18999
t_ok "sroce0 up with a RoCE v2 GID" sroce_up || { t_done; exit 1; }
t_ok "mpirun and sroce_mpi present" \
	test -x /usr/bin/mpirun -a -x "$VERBS_BIN/sroce_mpi"
GID=$(roce_gid_index sroce0)
vm_put gid "$GID"
s0=$(hw_counter sent_pkts)
r0=$(hw_counter rcvd_pkts)

if [ "$VM_ID" = 2 ]; then
	/usr/bin/python3 "$REPO/selftests/lib/rexec.py" --serve $REXEC_PORT \
		> /tmp/rexec.log 2>&1 &
	RX=$!
	t_ok "rexec listening" wait_for "tcp_listening $REXEC_PORT" 60
	vm_put rexec up
	t_ok "VM 1's job done" vm_get job 1 700
	kill $RX
else
	t_ok "VM 2's rexec up" vm_get rexec 2 120
	t_ok "both VMs use the same GID index" test "$(vm_get gid 2)" = "$GID"
	mpi() {
		timeout 600 env OMPI_ALLOW_RUN_AS_ROOT=1 \
			OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 \
			--host "$(my_ip):1,$(peer_ip):1" \
			--mca plm_rsh_agent "$REPO/selftests/lib/rexec.py" \
			--mca plm_rsh_no_tree_spawn 1 \
			--mca oob_tcp_if_include eth0 --mca btl self \
			--mca pml ucx --mca osc ucx \
			-x REXEC_PORT -x UCX_NET_DEVICES=sroce0:1 \
			-x UCX_IB_GID_INDEX="$GID" -x UCX_TLS=rc,self \
			-x UCX_UD_VERBS_ETH_DGID_CHECK=n \
			"$VERBS_BIN/sroce_mpi" > /tmp/mpi.out 2>&1
		local rc=$?
		sed 's/^/# /' /tmp/mpi.out
		[ $rc = 0 ] && grep -q '^sroce_mpi: [0-9]* checks passed' /tmp/mpi.out
	}
	t_ok "mpirun -np 2 sroce_mpi over UCX rc on sroce0" mpi
	grep '^sroce_mpi:' /tmp/mpi.out | sed 's/^/# /'
	vm_put job done
fi
echo "# sroce0 sent $(($(hw_counter sent_pkts) - s0)), received $(($(hw_counter rcvd_pkts) - r0)) packets"
t_ok "sroce0 sent and received the job's traffic (> 4000 packets each way)" \
	test $(($(hw_counter sent_pkts) - s0)) -gt 4000 \
	-a $(($(hw_counter rcvd_pkts) - r0)) -gt 4000
t_ok "no retransmits" test "$(hw_counter retransmits)" -eq 0
t_ok "rdma link delete sroce0" rdma link delete sroce0
t_ok "rmmod sroce" rmmod sroce
t_done
