#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Guest helper for the rdma_rxe reference captures: one RC connection that
issues the opcodes the ibverbs examples and perftest never send (immediate
data, zero-length messages, the solicited-event bit, odd sizes that need
pad bytes, several messages in flight) with a non-default traffic class
and hop limit, so that the capture exercises the ICRC masks too.

Usage: rxe_verbs_mix.py server|client GID_INDEX [SERVER_IPV4]
The device is rxe0, or $VERBS_MIX_DEV (selftests/wire_capture.sh runs it on
sroce0).
The out-of-band exchange runs over TCP port 18515. Exit status 0 only if
every work request completed successfully with the expected data.
"""

import json
import os
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

PORT = 18515
BUF = 65536
RECV_SLOT = 4096
NRECV = 16
TCLASS = 0x68
HOPS = 17


def fail(msg):
    print('rxe_verbs_mix: FAIL: %s' % msg, flush=True)
    sys.exit(1)


def poll(cq, n, what):
    got = []
    end = time.monotonic() + 30
    while len(got) < n:
        cnt, wcs = cq.poll(num_entries=n - len(got))
        for wc in wcs[:cnt]:
            if wc.status != e.IBV_WC_SUCCESS:
                fail('%s: completion status %d' % (what, wc.status))
            got.append(wc)
        if time.monotonic() > end:
            fail('%s: %d of %d completions after 30 s' % (what, len(got), n))
    return got


def exchange(chan, mine):
    chan.write(json.dumps(mine) + '\n')
    chan.flush()
    line = chan.readline()
    if not line:
        fail('peer closed the exchange')
    return json.loads(line)


def main():
    role, gidx = sys.argv[1], int(sys.argv[2])
    print('%s: started' % role, flush=True)
    ctx = Context(name=os.environ.get('VERBS_MIX_DEV', 'rxe0'))
    pd = PD(ctx)
    cq = CQ(ctx, 64)
    cap = QPCap(max_send_wr=16, max_recv_wr=NRECV, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
    mr = MR(pd, BUF, access)
    pattern = bytes(range(3, 256, 7)) * (BUF // 36 + 1)
    pattern = pattern[:BUF]
    mr.write(pattern, BUF)
    psn = 0x123456 if role == 'client' else 0xfedcb0
    gid = ctx.query_gid(1, gidx)
    mine = {'qpn': qp.qp_num, 'psn': psn, 'gid': str(gid), 'rkey': mr.rkey,
            'addr': mr.buf}

    if role == 'server':
        mr.write(bytes(8), 8, 8192)     # the atomic target
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(('0.0.0.0', PORT))
        ls.listen(1)
        ls.settimeout(600)
        sock, _ = ls.accept()
    else:
        end = time.monotonic() + 60
        while True:
            try:
                sock = socket.create_connection((sys.argv[3], PORT), timeout=5)
                break
            except OSError:
                if time.monotonic() > end:
                    fail('cannot reach the server')
                time.sleep(0.2)
    sock.settimeout(120)
    chan = sock.makefile('rw')
    peer = exchange(chan, mine)

    dgid = GID()
    dgid.gid = peer['gid']
    gr = GlobalRoute(dgid=dgid, sgid_index=gidx, hop_limit=HOPS, traffic_class=TCLASS)
    attr = QPAttr()
    attr.qp_access_flags = access
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = peer['qpn']
    attr.rq_psn = peer['psn']
    attr.max_dest_rd_atomic = 4
    attr.min_rnr_timer = 12
    attr.ah_attr = AHAttr(is_global=1, port_num=1, gr=gr)
    # No retransmit timer: the link is lossless, and rxe's timer (never
    # restarted by ACKs) replays messages spuriously when a TCG peer is
    # slow, which the pingpong captures already show.
    attr.timeout = 0
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    attr.sq_psn = psn
    attr.max_rd_atomic = 4
    qp.to_init(attr)
    if role == 'server':
        # Receives are posted before the "ready" exchange below, so no
        # send meets an empty queue (that would draw RNR NAKs).
        for i in range(NRECV):
            sge = SGE(mr.buf + 16384 + i * RECV_SLOT, RECV_SLOT, mr.lkey)
            qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[sge]))
    qp.to_rtr(attr)
    qp.to_rts(attr)
    # Both sides ready before the first packet flies.
    exchange(chan, {'ready': 1})

    if role == 'server':
        want = [(101, 0x11), (3002, 0x12), (0, None), (77, None),
                (101, 0x15), (3002, 0x16), (2048, None), (2048, None),
                (2048, None), (2048, None)]
        wcs = poll(cq, len(want), 'receives')
        for wc, (length, imm) in zip(wcs, want):
            if imm is not None:
                if not wc.wc_flags & e.IBV_WC_WITH_IMM:
                    fail('receive %d: no immediate data' % wc.wr_id)
                if socket.ntohl(wc.imm_data) != imm:
                    fail('receive %d: imm 0x%x, want 0x%x' %
                         (wc.wr_id, socket.ntohl(wc.imm_data), imm))
            elif wc.byte_len != length:
                fail('receive %d: %d bytes, want %d' % (wc.wr_id, wc.byte_len, length))
        got = mr.read(3002, 4096)
        if got != pattern[:3002]:
            fail('WRITE_WITH_IMM data differs')
        exchange(chan, {'done': 1})
        print('server: all receives checked', flush=True)
        return 0

    rkey, raddr = peer['rkey'], peer['addr']
    n = 0

    def post(opcode, length, offset=0, imm=None, flags=0, remote=None, atomic=None):
        nonlocal n
        n += 1
        # pyverbs wants an SGE even for a zero-length message; one of
        # length 0 describes the same thing.
        wr = SendWR(wr_id=n, opcode=opcode, num_sge=1,
                    sg=[SGE(mr.buf + offset, length, mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED | flags)
        if imm is not None:
            wr.imm_data = socket.htonl(imm)
        if remote is not None:
            wr.set_wr_rdma(rkey, raddr + remote)
        if atomic is not None:
            wr.set_wr_atomic(rkey, raddr + 8192, atomic[0], atomic[1])
        qp.post_send(wr)

    steps = [
        ('SEND_WITH_IMM 101', e.IBV_WR_SEND_WITH_IMM, 101, dict(imm=0x11)),
        ('SEND_WITH_IMM 3002', e.IBV_WR_SEND_WITH_IMM, 3002, dict(imm=0x12)),
        ('SEND 0', e.IBV_WR_SEND, 0, {}),
        ('SEND 77 solicited', e.IBV_WR_SEND, 77, dict(flags=e.IBV_SEND_SOLICITED)),
        ('WRITE_WITH_IMM 101', e.IBV_WR_RDMA_WRITE_WITH_IMM, 101,
         dict(imm=0x15, remote=0)),
        ('WRITE_WITH_IMM 3002', e.IBV_WR_RDMA_WRITE_WITH_IMM, 3002,
         dict(imm=0x16, remote=4096)),
        ('WRITE 0', e.IBV_WR_RDMA_WRITE, 0, dict(remote=0)),
        ('READ 2050', e.IBV_WR_RDMA_READ, 2050, dict(offset=32768, remote=0)),
        ('READ 0', e.IBV_WR_RDMA_READ, 0, dict(offset=32768, remote=0)),
        ('FETCH_ADD 5', e.IBV_WR_ATOMIC_FETCH_AND_ADD, 8,
         dict(offset=40960, atomic=(5, 0))),
        ('CMP_SWP 5->7', e.IBV_WR_ATOMIC_CMP_AND_SWP, 8,
         dict(offset=40968, atomic=(5, 7))),
    ]
    for what, opcode, length, kw in steps:
        post(opcode, length, **kw)
        poll(cq, 1, what)
        print('client: %s done' % what, flush=True)
    if mr.read(2050, 32768) != pattern[:2050]:
        fail('READ returned different data')
    if mr.read(8, 40960) != bytes(8):
        fail('FETCH_ADD original value not 0')
    if int.from_bytes(mr.read(8, 40968), sys.byteorder) != 5:
        fail('CMP_SWP original value not 5')
    # Four sends in flight at once, to see how the responder acknowledges.
    for _ in range(4):
        post(e.IBV_WR_SEND, 2048)
    poll(cq, 4, 'send burst')
    print('client: send burst done', flush=True)
    exchange(chan, {'done': 1})
    return 0


if __name__ == '__main__':
    sys.exit(main())
