#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# pktgen_tx.sh PEER PKT_SIZE SECONDS: send UDP frames of PKT_SIZE bytes
# (Ethernet header included, FCS not) from eth0 to PEER's discard port at
# the highest rate the kernel's packet generator reaches, for SECONDS.
# Run by pair.sh in the benchmark's sending guest; the receiving guest
# counts what arrives. pktgen builds each frame once and hands it to the
# driver 32 times with xmit_more (one doorbell per 32, as sroce's batches),
# bypassing sockets, IP output and the qdisc: no sender is cheaper, so
# what arrives is the link's (and the receiving guest's) ceiling.
set -u
peer=$1 size=$2 secs=$3
PG=/proc/net/pktgen

modprobe pktgen || exit 1
ping -n -q -c 1 -W 5 "$peer" > /dev/null || { echo "pktgen_tx: $peer does not answer"; exit 1; }
mac=$(ip neigh show "$peer" dev eth0 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
[[ -n $mac ]] || { echo "pktgen_tx: no neighbour entry for $peer"; exit 1; }

pg() { # FILE CMD: pktgen answers each command in its file's Result line
	echo "$2" > "$PG/$1" || { echo "pktgen_tx: '$2' > $1 failed"; exit 1; }
}
pg kpktgend_0 rem_device_all
pg kpktgend_0 "add_device eth0"
for c in "count 0" "clone_skb 0" "burst 32" "delay 0" "pkt_size $size" \
	"dst $peer" "dst_mac $mac" "udp_src_min 9" "udp_src_max 9" \
	"udp_dst_min 9" "udp_dst_max 9"; do
	pg eth0 "$c"
done
# "start" returns when the threads stop; a signal stops them.
timeout -s INT "$secs" sh -c "echo start > $PG/pgctrl"
pg pgctrl stop
grep -A2 '^Result' "$PG/eth0"
grep -q '^Result: OK' "$PG/eth0" || exit 1
pg kpktgend_0 rem_device_all
modprobe -r pktgen
