#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""
Raw packet QPs and flows under bad input, through pyverbs:
  raw_hostile.py DEV NETDEV checks   frames of bad length, refused flows,
                                     the flow limit, a flood into one WQE,
                                     a receive WQ through its states
  raw_hostile.py DEV NETDEV sink     a flow and receives, until killed
  raw_hostile.py DEV NETDEV flood N  N frames to the group the sink takes
  raw_hostile.py DEV NETDEV wire PEER
                                     frames sent into PEER (NETDEV's veth
                                     peer), one 802.1Q-tagged, arrive
                                     through a flow byte for byte
One "ok"/"not ok" line per check; exit 0 only if all passed.
"""
import errno
import socket
import sys
import time

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.flow import Flow, FlowAttr
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.spec import EthSpec, Ipv4ExtSpec, Ipv6Spec
from pyverbs.wq import WQ, WQAttr, WQInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.enums as e

GROUP = '01:50:56:19:20:a7'
FAILS = 0


def check(ok, what):
    global FAILS
    print(('ok' if ok else 'not ok') + ' - ' + what, flush=True)
    FAILS += 0 if ok else 1


def frame(n, dst=GROUP):
    head = bytes.fromhex(dst.replace(':', '')) + bytes(6) + b'\x08\x00'
    body = bytes(i & 0xff for i in range(max(n - len(head), 0)))
    return (head + body)[:n]


class Raw:
    def __init__(self, ctx, pd, qp_type=e.IBV_QPT_RAW_PACKET, nrecv=64):
        self.cq = CQ(ctx, 4096)
        cap = QPCap(max_send_wr=64, max_recv_wr=nrecv, max_send_sge=1,
                    max_recv_sge=1)
        self.qp = QP(pd, QPInitAttr(qp_type=qp_type, scq=self.cq,
                                    rcq=self.cq, cap=cap), QPAttr(port_num=1))

    def send(self, mr, n):
        mr.write(frame(n), n, 0)
        self.qp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                                 sg=[SGE(mr.buf, n, mr.lkey)],
                                 send_flags=e.IBV_SEND_SIGNALED))

    def recv(self, mr, off, n=2048):
        self.qp.post_recv(RecvWR(num_sge=1, sg=[SGE(mr.buf + off, n, mr.lkey)]))

    def poll(self, n, secs=20):
        wcs, end = [], time.time() + secs
        while len(wcs) < n and time.time() < end:
            got, more = self.cq.poll(n - len(wcs))
            wcs += more[:got]
        return wcs


def flow_err(qp, specs=(), **kw):
    attr = FlowAttr(num_of_specs=len(specs), **kw)
    for s in specs:
        attr.specs.append(s)
    try:
        Flow(qp, attr).close()
        return 0
    except PyverbsRDMAError as ex:
        return ex.error_code


def counter(dev, name):
    with open(f'/sys/class/infiniband/{dev}/ports/1/hw_counters/{name}') as f:
        return int(f.read())


def checks(dev, netdev, ctx, pd, mr):
    mtu = int(open(f'/sys/class/net/{netdev}/mtu').read())
    for n, want, what in ((13, e.IBV_WC_LOC_LEN_ERR, 'a 13-byte frame'),
                          (mtu + 19, e.IBV_WC_LOC_LEN_ERR,
                           f'a frame of MTU + 19 ({mtu + 19} B)'),
                          (mtu + 18, e.IBV_WC_SUCCESS,
                           f'a frame of MTU + 18 ({mtu + 18} B)')):
        r = Raw(ctx, pd)
        r.send(mr, n)
        wcs = r.poll(1)
        check(len(wcs) == 1 and wcs[0].status == want,
              f'{what}: completes with status {want} '
              f'({[w.status for w in wcs]})')
        r.qp.close()

    r = Raw(ctx, pd)
    eth = EthSpec(ether_type=0x0800, dst_mac=GROUP)
    check(flow_err(r.qp, [eth], port=2) == errno.EINVAL,
          'a flow on port 2 is refused (EINVAL)')
    check(flow_err(r.qp, [Ipv4ExtSpec(src_ip='1.1.1.1', dst_ip='2.2.2.2'),
                          Ipv6Spec(src_ip='a0a1::1', dst_ip='b0b1::1')],
                   port=1) ==
          errno.EINVAL, 'a flow of IPv4 and IPv6 at once is refused (EINVAL)')
    check(flow_err(r.qp, [], port=1, flow_type=e.IBV_FLOW_ATTR_ALL_DEFAULT) ==
          errno.EOPNOTSUPP, 'an ALL_DEFAULT flow is refused (EOPNOTSUPP)')
    ud = Raw(ctx, pd, e.IBV_QPT_UD)
    check(flow_err(ud.qp, [eth], port=1) == errno.EOPNOTSUPP,
          'a flow on a UD QP is refused (EOPNOTSUPP)')
    ud.qp.close()

    flows, err = [], 0
    while not err and len(flows) < 1100:
        attr = FlowAttr(num_of_specs=1, port=1)
        attr.specs.append(EthSpec(ether_type=0x0800, dst_mac=GROUP))
        try:
            flows.append(Flow(r.qp, attr))
        except PyverbsRDMAError as ex:
            err = ex.error_code
    check(len(flows) == 1024 and err == errno.ENOSPC,
          f'1024 flows per device, the next refused with ENOSPC '
          f'({len(flows)}, {err})')
    for f in flows:
        f.close()
    r.qp.close()

    # 100 frames at a QP with one receive posted: one completes, the rest
    # are lost and counted, nothing waits.
    rx, tx = Raw(ctx, pd, nrecv=4), Raw(ctx, pd)
    attr = FlowAttr(num_of_specs=1, port=1)
    attr.specs.append(EthSpec(ether_type=0x0800, dst_mac=GROUP))
    flow = Flow(rx.qp, attr)
    rx.recv(mr, 8192)
    lost0 = counter(dev, 'local_errors')
    for i in range(100):
        tx.send(mr, 200)
        tx.poll(1)
    got = rx.poll(2, 3)
    lost = counter(dev, 'local_errors') - lost0
    check(len(got) == 1 and got[0].status == e.IBV_WC_SUCCESS and
          got[0].byte_len == 200 and mr.read(200, 8192) == frame(200),
          f'one WQE, 100 frames: one completion, byte for byte ({len(got)})')
    check(lost == 99, f'... and 99 counted lost in local_errors ({lost})')
    flow.close()
    rx.qp.close()
    tx.qp.close()


def wq_checks(ctx, pd, mr):
    """Receive WQs: ERR flushes what is posted, also what is posted while
    in ERR; ERR -> RDY is refused; RESET drops what is posted; the ring
    stays consistent across all of it."""
    cq = CQ(ctx, 64)
    wq = WQ(ctx, WQInitAttr(wq_context=None, wq_pd=pd, wq_cq=cq,
                            wq_type=e.IBV_WQT_RQ, max_wr=8, max_sge=1))

    def move(state):
        wq.modify(WQAttr(attr_mask=e.IBV_WQ_ATTR_STATE, wq_state=state))

    def post(*ids):
        for i in ids:
            wq.post_recv(RecvWR(wr_id=i, num_sge=1,
                                sg=[SGE(mr.buf, 64, mr.lkey)]), None)

    def flushed(n, secs=5):
        wcs, end = [], time.time() + secs
        while len(wcs) < n + 1 and time.time() < end:
            got, more = cq.poll(8)
            wcs += more[:got]
        return [(w.wr_id, w.status, w.qp_num) for w in wcs]

    def want(*ids):
        return [(i, e.IBV_WC_WR_FLUSH_ERR, wq.wqn) for i in ids]

    move(e.IBV_WQS_RDY)
    post(1, 2, 3)
    move(e.IBV_WQS_ERR)
    got = flushed(3, 2)
    check(got == want(1, 2, 3),
          f'WQ RDY -> ERR: its 3 WQEs complete with FLUSH_ERR, in order ({got})')
    post(4, 5)
    got = flushed(2, 2)
    check(got == want(4, 5),
          f'WQEs posted to a WQ in ERR are flushed too ({got})')
    try:
        move(e.IBV_WQS_RDY)
        err = 0
    except PyverbsRDMAError as ex:
        err = ex.error_code
    check(err == errno.EINVAL, f'WQ ERR -> RDY is refused with EINVAL ({err})')
    move(e.IBV_WQS_RESET)
    move(e.IBV_WQS_RDY)
    post(6, 7)
    move(e.IBV_WQS_RESET)
    move(e.IBV_WQS_RDY)
    post(8)
    move(e.IBV_WQS_ERR)
    got = flushed(1, 2)
    check(got == want(8),
          f'WQ RDY -> RESET drops its WQEs: a later flush has only the '
          f'one posted since ({got})')
    # Twice round the 8-slot ring while in ERR: the drains hand every slot
    # back, or a post would find the ring full.
    ok = True
    for base in (100, 200):
        ids = list(range(base, base + 8))
        post(*ids)
        got = flushed(8, 5)
        ok = ok and got == want(*ids)
    check(ok, f'16 more WQEs posted in ERR, 8 at a time, all flushed ({got})')
    wq.close()
    cq.close()


def wire_checks(netdev, peer, ctx, pd, mr):
    """Frames from the wire reach a flow as they were sent: a tag the
    receiving netdev took out of the frame goes back in."""
    mac = open(f'/sys/class/net/{netdev}/address').read().strip()
    r = Raw(ctx, pd)
    attr = FlowAttr(num_of_specs=1, port=1)
    attr.specs.append(EthSpec(ether_type=0x0800, dst_mac=mac))
    flow = Flow(r.qp, attr)
    dst = bytes.fromhex(mac.replace(':', ''))
    src = bytes.fromhex('02aabbccddee')
    body = bytes((i * 7) & 0xff for i in range(300))
    plain = dst + src + b'\x08\x00' + body
    tagged = dst + src + b'\x81\x00' + (0x2005).to_bytes(2, 'big') + \
        b'\x08\x00' + body
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((peer, 0))
    for i, (f, what) in enumerate(((plain, 'an untagged frame'),
                                   (tagged, 'a frame tagged VLAN 5, PCP 1'))):
        r.recv(mr, 4096 * (i + 1))
        s.send(f)
        wcs = r.poll(1, 10)
        got = mr.read(len(f), 4096 * (i + 1)) if wcs else b''
        check(len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
              wcs[0].byte_len == len(f) and got == f,
              f'{what} from the wire arrives whole, byte for byte '
              f'({[(w.status, w.byte_len) for w in wcs]})')
    s.close()
    flow.close()
    r.qp.close()


def main():
    dev, netdev, mode = sys.argv[1:4]
    ctx = Context(name=dev)
    pd = PD(ctx)
    mr = MR(pd, 1 << 16, e.IBV_ACCESS_LOCAL_WRITE)
    if mode == 'checks':
        checks(dev, netdev, ctx, pd, mr)
        wq_checks(ctx, pd, mr)
    elif mode == 'sink':
        r = Raw(ctx, pd, nrecv=64)
        attr = FlowAttr(num_of_specs=1, port=1)
        attr.specs.append(EthSpec(ether_type=0x0800, dst_mac=GROUP))
        flow = Flow(r.qp, attr)
        for i in range(32):
            r.recv(mr, i * 2048)
        print('ready', flush=True)
        while True:
            for _ in r.poll(64, 1):
                r.recv(mr, 0)
    elif mode == 'wire':
        wire_checks(netdev, sys.argv[4], ctx, pd, mr)
    else:
        r = Raw(ctx, pd)
        for i in range(int(sys.argv[4])):
            r.send(mr, 1000)
            r.poll(1)
        check(True, f'{sys.argv[4]} frames sent')
    return 1 if FAILS else 0


sys.exit(main())
