#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""RoCEv2 wire conformance checker for pcap captures.

Decodes every UDP/4791 packet of a classic pcap file down to the IB
transport headers and checks it against the RoCEv2 rules that matter for
interoperability with rdma_rxe and RoCE NICs: header fields, payload
sizes, the invariant CRC, and per-flow sequencing (PSNs, ACKs, MSNs).

Written from the InfiniBand Architecture spec (vol. 1, ch. 9 and the
RoCEv2 annex A17), independently of any RDMA implementation, so that it can
judge one. Standard library only.

Usage: roce_check.py PCAP [--expect-loss] [--allow-retransmit] [--json]
                     [--mtu N] [--pkey P] [--max-errors N]
                     [--expect-opcodes NAME,...] [--strict]
Exit status: 0 no violation, 1 violations found, 2 unreadable input/usage.

Input: classic pcap (not pcapng), link types Ethernet (with VLAN tags),
Linux cooked v1/v2 and raw IP; packets must be captured whole.

Per packet: IPv4 header checksum, no IP options or fragments; UDP length
equal to the IP payload; BTH TVer 0, P_Key, reserved bits 0; known opcode;
headers fit; payload+pad a multiple of 4; payload size rules per opcode
(none on READ request/ACK/atomics, FIRST/MIDDLE exactly PMTU, LAST 1..PMTU,
ONLY 0..PMTU); SE only where allowed; AtomicETH address 8-byte aligned;
AETH syndrome not reserved; the ICRC.
Per flow (source IP, destination IP, destination QPN): one UDP source port;
FIRST/MIDDLE sizes equal and an IB MTU; request PSNs consecutive (READs
take one PSN per response packet), retransmissions byte-identical to the
original; SEND/WRITE message structure and WRITE length = RETH length;
every RC message followed (in its last packet or a later request) by a
request that asks for an answer (AckReq, READ, atomic); responses only for PSNs
already requested; READ responses complete, in order, of the asked length;
ACK PSNs advancing; MSN = messages completed. UD: PSNs per source QP.
Also: every AckReq answered by a positive acknowledgement by the end of the
capture; plain ACKs never at a READ or atomic PSN; one UDP source port per
UD QP; RC/UC never to QP 0/1; pad bytes zero (warning); --mtu, if given,
matching the packets. --expect-opcodes fails a capture lacking an opcode.
Findings come as violations (exit 1), loss findings (--expect-loss) and
warnings (fail only under --strict, and only those about the sender's
choices), each with a category name; --json lists them all.
"""

import argparse
import bisect
import collections
import json
import struct
import sys
import zlib

ROCE_PORT = 4791
PSN_MOD = 1 << 24
IB_MTUS = (256, 512, 1024, 2048, 4096)

# Extension header sizes (bytes), IBA 9.3.
EXT_LEN = {
    'RETH': 16, 'AETH': 4, 'IMM': 4, 'IETH': 4, 'DETH': 8,
    'ATOMICETH': 28, 'ATOMICACKETH': 8,
}

# Payload classes: how the payload size relates to the path MTU.
#   first/middle: exactly PMTU; last: 1..PMTU; only: 0..PMTU; none: 0.
# kind: req (requester to responder), resp (responder to requester), cnp.
# msg: 'send'/'write'/'read'/'atomic' and the position in the message.
Op = collections.namedtuple('Op', 'name exts payload kind msg pos')


def _build_opcodes():
    ops = {}
    # The RC and UC SEND/WRITE opcodes share their low 5 bits.
    common = [
        (0x00, 'SEND_FIRST', (), 'first', 'send', 'first'),
        (0x01, 'SEND_MIDDLE', (), 'middle', 'send', 'middle'),
        (0x02, 'SEND_LAST', (), 'last', 'send', 'last'),
        (0x03, 'SEND_LAST_IMM', ('IMM',), 'last', 'send', 'last'),
        (0x04, 'SEND_ONLY', (), 'only', 'send', 'only'),
        (0x05, 'SEND_ONLY_IMM', ('IMM',), 'only', 'send', 'only'),
        (0x06, 'WRITE_FIRST', ('RETH',), 'first', 'write', 'first'),
        (0x07, 'WRITE_MIDDLE', (), 'middle', 'write', 'middle'),
        (0x08, 'WRITE_LAST', (), 'last', 'write', 'last'),
        (0x09, 'WRITE_LAST_IMM', ('IMM',), 'last', 'write', 'last'),
        (0x0a, 'WRITE_ONLY', ('RETH',), 'only', 'write', 'only'),
        (0x0b, 'WRITE_ONLY_IMM', ('RETH', 'IMM'), 'only', 'write', 'only'),
    ]
    for low, name, exts, pay, msg, pos in common:
        ops[0x00 | low] = Op('RC_' + name, exts, pay, 'req', msg, pos)
        ops[0x20 | low] = Op('UC_' + name, exts, pay, 'req', msg, pos)
    rc_only = [
        (0x0c, 'RDMA_READ_REQUEST', ('RETH',), 'none', 'req', 'read', 'only'),
        (0x0d, 'RDMA_READ_RESPONSE_FIRST', ('AETH',), 'first', 'resp', 'read', 'first'),
        (0x0e, 'RDMA_READ_RESPONSE_MIDDLE', (), 'middle', 'resp', 'read', 'middle'),
        (0x0f, 'RDMA_READ_RESPONSE_LAST', ('AETH',), 'last', 'resp', 'read', 'last'),
        (0x10, 'RDMA_READ_RESPONSE_ONLY', ('AETH',), 'only', 'resp', 'read', 'only'),
        (0x11, 'ACKNOWLEDGE', ('AETH',), 'none', 'resp', 'ack', 'only'),
        (0x12, 'ATOMIC_ACKNOWLEDGE', ('AETH', 'ATOMICACKETH'), 'none', 'resp',
         'atomic', 'only'),
        (0x13, 'COMPARE_SWAP', ('ATOMICETH',), 'none', 'req', 'atomic', 'only'),
        (0x14, 'FETCH_ADD', ('ATOMICETH',), 'none', 'req', 'atomic', 'only'),
        (0x16, 'SEND_LAST_WITH_INVALIDATE', ('IETH',), 'last', 'req', 'send', 'last'),
        (0x17, 'SEND_ONLY_WITH_INVALIDATE', ('IETH',), 'only', 'req', 'send', 'only'),
    ]
    for code, name, exts, pay, kind, msg, pos in rc_only:
        ops[code] = Op('RC_' + name, exts, pay, kind, msg, pos)
    ops[0x64] = Op('UD_SEND_ONLY', ('DETH',), 'only', 'req', 'send', 'only')
    ops[0x65] = Op('UD_SEND_ONLY_IMM', ('DETH', 'IMM'), 'only', 'req', 'send', 'only')
    # Congestion notification packet (annex A17.9.3): 16 reserved bytes.
    ops[0x81] = Op('CNP', (), 'cnp', 'cnp', 'cnp', 'only')
    return ops


OPCODES = _build_opcodes()

# Categories that stop being violations under --expect-loss.
LOSS_CATEGORIES = {'psn-gap', 'psn-retransmit', 'ack-duplicate', 'nak-psn-seq',
                   'read-response-gap'}
# Warnings about the sender's own choices rather than the capture or the
# timing: --strict makes them violations (for judging our own stack).
STRICT_CATEGORIES = {'udp-csum', 'pad-bytes', 'atomic-compare', 'udp-sport', 'ackreq'}
# The subset a sender may produce on a lossless link when its retransmit
# timer fires before a slow peer answers (allowed by --allow-retransmit).
RETRANSMIT_CATEGORIES = {'psn-retransmit', 'ack-duplicate'}


def transport(opcode):
    return {0: 'RC', 1: 'UC', 2: 'RD', 3: 'UD', 4: 'CNP'}.get(opcode >> 5, '?')


def psn_diff(a, b):
    """Signed distance a - b in the 24-bit PSN space."""
    d = (a - b) % PSN_MOD
    return d - PSN_MOD if d >= PSN_MOD // 2 else d


def psn_add(a, n):
    return (a + n) % PSN_MOD


# --------------------------------------------------------------------------
# pcap reading

class PcapError(Exception):
    pass


def read_pcap(path):
    """Yields (index, timestamp, linktype, caplen, origlen, bytes)."""
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise PcapError('file too short for a pcap header')
        magic = hdr[:4]
        table = {
            b'\xd4\xc3\xb2\xa1': ('<', 1e-6), b'\xa1\xb2\xc3\xd4': ('>', 1e-6),
            b'\x4d\x3c\xb2\xa1': ('<', 1e-9), b'\xa1\xb2\x3c\x4d': ('>', 1e-9),
        }
        if magic == b'\x0a\x0d\x0d\x0a':
            raise PcapError('pcapng is not supported; write with tcpdump -w or '
                            'convert with editcap -F pcap')
        if magic not in table:
            raise PcapError('not a pcap file (magic %s)' % magic.hex())
        endian, unit = table[magic]
        _, _, _, _, _, linktype = struct.unpack(endian + 'HHiIII', hdr[4:])
        linktype &= 0x0fffffff
        idx = 0
        while True:
            rec = f.read(16)
            if not rec:
                return
            if len(rec) < 16:
                raise PcapError('truncated record header after packet %d' % idx)
            sec, frac, caplen, origlen = struct.unpack(endian + 'IIII', rec)
            if caplen > 262144:
                raise PcapError('implausible record length %d' % caplen)
            data = f.read(caplen)
            if len(data) < caplen:
                raise PcapError('truncated packet data in packet %d' % (idx + 1))
            idx += 1
            yield idx, sec + frac * unit, linktype, caplen, origlen, data


# --------------------------------------------------------------------------
# decoding

class Pkt:
    """One decoded RoCEv2 packet."""
    __slots__ = ('no', 'ts', 'ipver', 'src', 'dst', 'sport', 'opcode', 'op',
                 'se', 'mig', 'pad', 'tver', 'pkey', 'resv8a', 'dqpn', 'ackreq',
                 'resv7', 'psn', 'ext', 'paylen', 'ipid', 'tbytes')

    def describe(self):
        return '%s psn %d dqpn 0x%x' % (self.op.name if self.op else
                                        'opcode 0x%02x' % self.opcode,
                                        self.psn, self.dqpn)


def ip_str(ver, raw):
    if ver == 4:
        return '.'.join(str(b) for b in raw)
    words = [raw[i] << 8 | raw[i + 1] for i in range(0, 16, 2)]
    # Good enough for reports; not RFC 5952 zero compression.
    return ':'.join('%x' % w for w in words)


def ones_sum16(data):
    if len(data) & 1:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def icrc_input(iphdr, ipver, udphdr, transport_bytes):
    """The bytes the ICRC is computed over, variant fields masked to 1s.

    A17.8: a phantom 8-byte LRH of all 1s, then the IP header with the
    fields routers may change set to 1s (IPv4 TOS, TTL, header checksum;
    IPv6 traffic class, flow label, hop limit), the UDP header with its
    checksum set to 1s, the BTH with its 8-bit reserved field after the
    P_Key set to 1s (that byte holds the FECN/BECN bits in IB), then the rest
    of the packet up to the ICRC, pad bytes included.
    """
    ip = bytearray(iphdr)
    if ipver == 4:
        ip[1] = 0xff          # TOS (DSCP + ECN)
        ip[8] = 0xff          # TTL
        ip[10:12] = b'\xff\xff'  # header checksum
    else:
        ip[0] |= 0x0f         # low nibble of byte 0: traffic class high bits
        ip[1:4] = b'\xff\xff\xff'  # traffic class low bits + flow label
        ip[7] = 0xff          # hop limit
    udp = bytearray(udphdr)
    udp[6:8] = b'\xff\xff'
    bth = bytearray(transport_bytes[:12])
    bth[4] = 0xff
    return b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(bth) + transport_bytes[12:]


def compute_icrc(iphdr, ipver, udphdr, transport_bytes):
    """ICRC value as it appears on the wire (4 bytes)."""
    crc = zlib.crc32(icrc_input(iphdr, ipver, udphdr, transport_bytes))
    # CRC-32 as in Ethernet; the 32-bit result goes on the wire least
    # significant byte first, like the Ethernet FCS.
    return struct.pack('<I', crc)


class Checker:
    def __init__(self, expect_loss=False, mtu=None, pkey=0xffff,
                 allow_retransmit=False, strict=False):
        self.strict = strict
        self.expect_loss = expect_loss
        self.allow_retransmit = allow_retransmit
        self.forced_mtu = mtu
        self.pkey = pkey
        self.errors = []      # (packet no or None, category, text)
        self.notes = []       # loss-related findings allowed by --expect-loss
        self.warnings = []
        self.pkts = []
        self.total_frames = 0
        self.non_roce = 0
        self.by_opcode = collections.Counter()
        self.linktypes = collections.Counter()
        self.flows_out = []
        self.icrc_ok = 0
        self.mig_bits = collections.Counter()

    # -- reporting ---------------------------------------------------------
    def error(self, no, cat, text):
        if (self.expect_loss and cat in LOSS_CATEGORIES) or \
                (self.allow_retransmit and cat in RETRANSMIT_CATEGORIES):
            self.notes.append((no, cat, text))
        else:
            self.errors.append((no, cat, text))

    def warn(self, no, cat, text):
        if self.strict and cat in STRICT_CATEGORIES:
            self.errors.append((no, cat, text))
        else:
            self.warnings.append((no, cat, text))

    # -- layer 2/3/4 -------------------------------------------------------
    def frame(self, no, ts, linktype, caplen, origlen, data):
        self.total_frames += 1
        self.linktypes[linktype] += 1
        if linktype == 1:           # Ethernet
            off, etype = 12, None
            if len(data) < 14:
                self.non_roce += 1
                return
            etype = struct.unpack_from('!H', data, 12)[0]
            off = 14
            while etype in (0x8100, 0x88a8) and len(data) >= off + 4:
                etype = struct.unpack_from('!H', data, off + 2)[0]
                off += 4
        elif linktype == 113:       # Linux cooked v1
            if len(data) < 16:
                self.non_roce += 1
                return
            etype = struct.unpack_from('!H', data, 14)[0]
            off = 16
        elif linktype == 276:       # Linux cooked v2
            if len(data) < 20:
                self.non_roce += 1
                return
            etype = struct.unpack_from('!H', data, 0)[0]
            off = 20
        elif linktype in (101, 12):  # raw IP
            if not data:
                self.non_roce += 1
                return
            etype = {4: 0x0800, 6: 0x86dd}.get(data[0] >> 4, 0)
            off = 0
        else:
            raise PcapError('unsupported link type %d' % linktype)
        if etype == 0x0800:
            self.ipv4(no, ts, caplen, origlen, data, off)
        elif etype == 0x86dd:
            self.ipv6(no, ts, caplen, origlen, data, off)
        else:
            self.non_roce += 1

    def ipv4(self, no, ts, caplen, origlen, data, off):
        if len(data) < off + 20 or data[off] >> 4 != 4:
            self.non_roce += 1
            return
        ihl = (data[off] & 0xf) * 4
        if data[off + 9] != 17 or len(data) < off + ihl + 8:
            self.non_roce += 1
            return
        dport = struct.unpack_from('!H', data, off + ihl + 2)[0]
        if dport != ROCE_PORT:
            self.non_roce += 1
            return
        if caplen < origlen:
            self.error(no, 'truncated', 'captured %d of %d bytes: recapture with '
                       'full snap length' % (caplen, origlen))
            return
        iph = data[off:off + ihl]
        if ihl != 20:
            self.error(no, 'ipv4-options', 'IPv4 header length %d: RoCEv2 uses no IP '
                       'options' % ihl)
            return
        if ones_sum16(iph) != 0xffff:
            self.error(no, 'ipv4-csum', 'IPv4 header checksum 0x%04x is wrong' %
                       struct.unpack_from('!H', iph, 10)[0])
        tot = struct.unpack_from('!H', iph, 2)[0]
        if tot < ihl or off + tot > len(data):
            self.error(no, 'ipv4-length', 'IPv4 total length %d does not fit the %d-byte '
                       'frame' % (tot, len(data) - off))
            return
        frag = struct.unpack_from('!H', iph, 6)[0]
        if frag & 0x3fff:
            self.error(no, 'ipv4-fragment', 'fragmented IPv4 packet (flags/offset 0x%04x)'
                       % frag)
            return
        ipid = struct.unpack_from('!H', iph, 4)[0]
        self.udp(no, ts, 4, iph, iph[12:16], iph[16:20], data[off + ihl:off + tot], ipid)

    def ipv6(self, no, ts, caplen, origlen, data, off):
        if len(data) < off + 48 or data[off] >> 4 != 6:
            self.non_roce += 1
            return
        if data[off + 6] != 17:
            # Extension headers are not allowed in RoCEv2 either, but only
            # count as ours if a UDP header to 4791 follows directly.
            self.non_roce += 1
            return
        dport = struct.unpack_from('!H', data, off + 42)[0]
        if dport != ROCE_PORT:
            self.non_roce += 1
            return
        if caplen < origlen:
            self.error(no, 'truncated', 'captured %d of %d bytes: recapture with '
                       'full snap length' % (caplen, origlen))
            return
        iph = data[off:off + 40]
        plen = struct.unpack_from('!H', iph, 4)[0]
        if off + 40 + plen > len(data):
            self.error(no, 'ipv6-length', 'IPv6 payload length %d does not fit the '
                       'frame' % plen)
            return
        self.udp(no, ts, 6, iph, iph[8:24], iph[24:40], data[off + 40:off + 40 + plen], None)

    def udp(self, no, ts, ipver, iph, src, dst, seg, ipid):
        udph = seg[:8]
        sport, dport, ulen, csum = struct.unpack('!HHHH', udph)
        if ulen != len(seg):
            # Carry on with the IP length so that one bad field does not
            # also show up as a lost packet.
            self.error(no, 'udp-length', 'UDP length %d but the IP payload is %d bytes'
                       % (ulen, len(seg)))
        if csum:
            if ipver == 4:
                pseudo = src + dst + struct.pack('!BBH', 0, 17, ulen)
            else:
                pseudo = src + dst + struct.pack('!IxxxB', ulen, 17)
            if ones_sum16(pseudo + seg) != 0xffff:
                # Sender-side captures often hold checksums the NIC fills
                # in later, so this is only a warning.
                self.warn(no, 'udp-csum', 'UDP checksum 0x%04x does not verify' % csum)
        tp = seg[8:]
        if len(tp) < 12 + 4:
            self.error(no, 'short', 'only %d bytes after UDP: no room for BTH and ICRC'
                       % len(tp))
            return
        self.bth(no, ts, ipver, iph, udph, ip_str(ipver, src), ip_str(ipver, dst),
                 sport, tp, ipid)

    # -- IB transport --------------------------------------------------------
    def bth(self, no, ts, ipver, iph, udph, src, dst, sport, tp, ipid):
        p = Pkt()
        p.no, p.ts, p.ipver, p.src, p.dst, p.sport, p.ipid = no, ts, ipver, src, dst, sport, ipid
        p.opcode = tp[0]
        p.se = tp[1] >> 7
        p.mig = (tp[1] >> 6) & 1
        p.pad = (tp[1] >> 4) & 3
        p.tver = tp[1] & 0xf
        p.pkey = struct.unpack_from('!H', tp, 2)[0]
        p.resv8a = tp[4]
        p.dqpn = struct.unpack_from('!I', tp, 4)[0] & 0xffffff
        p.ackreq = tp[8] >> 7
        p.resv7 = tp[8] & 0x7f
        p.psn = struct.unpack_from('!I', tp, 8)[0] & 0xffffff
        p.op = OPCODES.get(p.opcode)
        p.ext = {}
        p.paylen = 0
        p.tbytes = tp[:-4]
        self.by_opcode[p.op.name if p.op else 'unknown 0x%02x' % p.opcode] += 1
        self.mig_bits[p.mig] += 1

        want = compute_icrc(iph, ipver, udph, tp[:-4])
        if want != tp[-4:]:
            self.error(no, 'icrc', 'ICRC %s, computed %s (%s)' %
                       (tp[-4:].hex(), want.hex(), p.describe()))
        else:
            self.icrc_ok += 1

        if p.tver != 0:
            self.error(no, 'bth-tver', 'BTH TVer %d, must be 0' % p.tver)
        if p.pkey != self.pkey:
            self.error(no, 'bth-pkey', 'P_Key 0x%04x, expected 0x%04x' % (p.pkey, self.pkey))
        if p.resv8a & 0x3f:
            self.error(no, 'bth-reserved', 'BTH reserved bits after P_Key are 0x%02x'
                       % p.resv8a)
        if p.resv7:
            self.error(no, 'bth-reserved', 'BTH reserved bits after AckReq are 0x%02x'
                       % p.resv7)
        if p.op is None:
            self.error(no, 'opcode', 'unsupported/reserved opcode 0x%02x (%s)' %
                       (p.opcode, transport(p.opcode)))
            return
        op = p.op
        off = 12
        body = tp[:-4]
        if op.kind == 'cnp':
            if len(body) != 12 + 16:
                self.error(no, 'cnp-length', 'CNP carries %d bytes after BTH, must be 16'
                           % (len(body) - 12))
            self.pkts.append(p)
            return
        for e in op.exts:
            n = EXT_LEN[e]
            if len(body) < off + n:
                self.error(no, 'short', '%s: packet ends inside %s' % (p.describe(), e))
                return
            p.ext[e] = body[off:off + n]
            off += n
        rest = len(body) - off
        if rest % 4:
            self.error(no, 'pad', '%s: payload+pad is %d bytes, not a multiple of 4'
                       % (p.describe(), rest))
        if p.pad > rest:
            self.error(no, 'pad', '%s: pad count %d exceeds the %d bytes left' %
                       (p.describe(), p.pad, rest))
            return
        p.paylen = rest - p.pad
        if p.pad and any(body[len(body) - p.pad:]):
            # Receivers ignore them, but anything but zeros there is
            # memory the sender did not mean to send.
            self.warn(no, 'pad-bytes', '%s: pad bytes %s are not zero' %
                      (p.describe(), body[len(body) - p.pad:].hex()))
        if op.payload == 'none' and rest:
            self.error(no, 'payload', '%s must carry no payload, has %d bytes (pad %d)'
                       % (op.name, p.paylen, p.pad))
        if op.payload == 'last' and p.paylen == 0:
            self.error(no, 'payload', '%s carries no payload; a LAST packet carries 1 to '
                       'PMTU bytes' % op.name)
        if op.payload in ('first', 'middle') and p.pad:
            self.error(no, 'pad', '%s has pad %d; FIRST/MIDDLE payloads are PMTU sized'
                       % (op.name, p.pad))
        if p.paylen > 4096:
            self.error(no, 'payload', '%s payload %d exceeds the largest IB MTU'
                       % (op.name, p.paylen))
        if p.se and not (op.msg in ('send', 'write') and op.pos in ('last', 'only')):
            self.error(no, 'bth-se', '%s has the Solicited Event bit set' % op.name)
        if p.se and op.msg == 'write' and 'IMM' not in op.exts:
            self.error(no, 'bth-se', '%s has Solicited Event set without immediate data'
                       % op.name)
        if 'ATOMICETH' in p.ext:
            va = struct.unpack_from('!Q', p.ext['ATOMICETH'])[0]
            if va & 7:
                self.error(no, 'atomic-align', '%s virtual address 0x%x not 8-byte '
                           'aligned' % (op.name, va))
            if op.name == 'RC_FETCH_ADD' and any(p.ext['ATOMICETH'][20:28]):
                # Ignored by the responder, but whatever is there came from
                # the sender's memory: rxe leaves it uninitialised.
                self.warn(no, 'atomic-compare', 'FETCH_ADD Compare field is %s, not zero'
                          % p.ext['ATOMICETH'][20:28].hex())
        if 'AETH' in p.ext:
            syn = p.ext['AETH'][0]
            if syn >> 5 == 2 or (syn >> 5 == 3 and (syn & 0x1f) > 4):
                self.error(no, 'aeth', '%s AETH syndrome 0x%02x is reserved' %
                           (op.name, syn))
        self.pkts.append(p)

    # -- flow analysis -------------------------------------------------------
    def analyse(self):
        req = collections.OrderedDict()    # (src, dst, dqpn) -> [pkts]
        resp = collections.OrderedDict()
        ud = collections.OrderedDict()     # (src, src qpn) -> [pkts]
        sports = collections.defaultdict(set)
        ud_sports = collections.defaultdict(set)   # (src, source QPN)
        for p in self.pkts:
            if p.op is None or p.op.kind == 'cnp':
                continue
            key = (p.src, p.dst, p.dqpn)
            if p.sport < 0xc000:
                self.warn(p.no, 'udp-sport', 'UDP source port %d below 49152' % p.sport)
            t = transport(p.opcode)
            if t == 'UD':
                deth = p.ext['DETH']
                sqpn = struct.unpack_from('!I', deth, 4)[0] & 0xffffff
                if deth[4]:
                    self.error(p.no, 'deth-reserved', 'DETH reserved byte 0x%02x' % deth[4])
                if sqpn == 0 or p.dqpn == 0:
                    # RoCE has no subnet management QP.
                    self.error(p.no, 'qpn', 'UD %s: QP 0 used on RoCE' % p.describe())
                ud_sports[(p.src, sqpn)].add(p.sport)
                ud.setdefault((p.src, sqpn), []).append(p)
            elif p.dqpn in (0, 1):
                self.error(p.no, 'qpn', '%s %s: QPs 0 and 1 take only UD packets' %
                           (t, p.describe()))
            elif p.op.kind == 'req':
                sports[key].add(p.sport)
                req.setdefault(key + (t,), []).append(p)
            else:
                sports[key].add(p.sport)
                resp.setdefault(key, []).append(p)
        # A QP's packets keep one UDP source port (its flow entropy), so
        # that ECMP routers keep them on one path and in order. Requests
        # and responses of an RC/UC QP pair share the key (src, dst, dqpn);
        # a UD QP talks to many QPs, so it is keyed by its own QPN.
        for key, ports in sports.items():
            if len(ports) > 1:
                self.error(None, 'udp-sport', 'flow %s -> %s qpn 0x%x uses several UDP '
                           'source ports %s' % (key[0], key[1], key[2], sorted(ports)))
        for (src, sqpn), ports in ud_sports.items():
            if len(ports) > 1:
                self.error(None, 'udp-sport', 'UD QP 0x%x of %s uses several UDP source '
                           'ports %s' % (sqpn, src, sorted(ports)))

        # Which request stream does each response stream answer? The
        # requester's QPN is not in the requests, so match on PSNs.
        spans = {k: self.psn_set(v) for k, v in req.items()}
        paired = {}
        taken = set()
        for rkey, rpk in resp.items():
            best, score, tie = None, 0, False
            for qkey, span in spans.items():
                if qkey[0] != rkey[1] or qkey[1] != rkey[0] or qkey[3] != 'RC':
                    continue
                s = sum(1 for p in rpk if p.psn in span)
                if s > score:
                    best, score, tie = qkey, s, False
                elif s == score and s:
                    tie = True
            if best is None:
                self.error(rpk[0].no, 'orphan-response', 'responses %s -> %s to qpn 0x%x '
                           'match no captured request flow' % rkey)
                continue
            if tie:
                self.warn(rpk[0].no, 'pairing', 'responses to qpn 0x%x match several '
                          'request flows; using %s' % (rkey[2], best))
            if best in taken:
                self.warn(rpk[0].no, 'pairing', 'two response flows pair with request '
                          'flow %s' % (best,))
            taken.add(best)
            paired[best] = rkey
        for qkey, qpk in req.items():
            rkey = paired.get(qkey)
            self.connection(qkey, qpk, resp.get(rkey, []) if rkey else [], rkey)
        for (src, sqpn), pk in ud.items():
            self.ud_flow(src, sqpn, pk)

    def psn_set(self, pkts):
        s = set()
        for p in pkts:
            s.add(p.psn)
            if p.op.msg == 'read':
                dlen = struct.unpack_from('!I', p.ext['RETH'], 12)[0]
                for i in range(1, (dlen + 255) // 256):
                    s.add(psn_add(p.psn, i))
        return s

    def infer_mtu(self, pkts, label):
        sizes = collections.Counter(p.paylen for p in pkts
                                    if p.op.payload in ('first', 'middle'))
        if not sizes:
            return None
        if len(sizes) > 1:
            self.error(pkts[0].no, 'pmtu', '%s: FIRST/MIDDLE packets have unequal payload '
                       'sizes %s' % (label, dict(sizes)))
        mtu = sizes.most_common(1)[0][0]
        if mtu not in IB_MTUS:
            self.error(pkts[0].no, 'pmtu', '%s: FIRST/MIDDLE payload size %d is not an IB '
                       'MTU' % (label, mtu))
        return mtu

    def connection(self, qkey, qpk, rpk, rkey):
        src, dst, dqpn, t = qkey
        label = '%s %s -> %s qpn 0x%x' % (t, src, dst, dqpn)
        mtu_q = self.infer_mtu(qpk, label + ' requests')
        mtu_r = self.infer_mtu(rpk, label + ' read responses') if rpk else None
        if mtu_q and mtu_r and mtu_q != mtu_r:
            self.error(None, 'pmtu', '%s: requests use PMTU %d, read responses %d' %
                       (label, mtu_q, mtu_r))
        if self.forced_mtu and (mtu_q or mtu_r) not in (None, self.forced_mtu):
            self.error(None, 'pmtu', '%s: packets use PMTU %d, --mtu says %d' %
                       (label, mtu_q or mtu_r, self.forced_mtu))
        mtu = self.forced_mtu or mtu_q or mtu_r
        if mtu:
            for p in qpk + rpk:
                if p.paylen > mtu:
                    self.error(p.no, 'payload', '%s payload %d exceeds PMTU %d' %
                               (p.op.name, p.paylen, mtu))
        fl = {
            'transport': t, 'src': src, 'dst': dst, 'dqpn': dqpn,
            'requests': len(qpk), 'responses': len(rpk), 'pmtu': mtu,
            'requester_qpn': rkey[2] if rkey else None,
            'messages': 0, 'retransmits': 0, 'gaps': 0, 'acks': 0, 'naks': 0,
            'ack_coalescing': {}, 'first_msn': None,
        }
        self.flows_out.append(fl)

        # Requests and responses merged in capture order: a response can
        # only acknowledge what was sent before it.
        events = sorted(qpk + rpk, key=lambda p: p.no)
        expect = None           # next new request PSN
        first_psn = None
        in_msg = None           # (msg kind, first pkt) while inside a message
        msg_bytes = 0
        msg_dlen = None
        sent = {}               # request PSN -> PSNs it uses (0: read response slot)
        orig_pkt = {}           # request PSN -> first packet sent with it
        # Last PSN of each message, unwrapped (counted on from the first
        # request without the mod 2^24 wrap) so that the list stays sorted.
        msg_end = []
        reads = {}              # read request PSN -> [dma length, pkts expected]
        last_ack = None
        msn_base = None
        last_msn = None
        read_cur = None         # [req psn, next resp psn, bytes, expected pkts]
        coalesce = collections.Counter()
        req_msg = {}            # request PSN -> 'send'/'write'/'read'/'atomic'
        # Unwrapped PSNs: the newest request that asked for an
        # acknowledgement (a read's last response slot: a read is answered
        # by its responses) and the newest positively acknowledged one.
        need_ack = None
        acked = None
        # The first SEND/WRITE end since the last request that asks for an
        # answer: a requester may leave AckReq off a message's last packet
        # (RoCE NICs ask only every so many packets), but some later
        # request of the flow must ask, or nothing acknowledges it.
        unasked = None

        def npkts_read(dlen):
            if dlen == 0:
                return 1
            if mtu:
                return (dlen + mtu - 1) // mtu
            if dlen <= 256:
                return 1
            self.warn(p.no, 'pmtu', '%s: PMTU unknown, guessing 4096 for a read' % label)
            return (dlen + 4095) // 4096

        anchor = [0, None]      # unwrapped and raw PSN of the newest request

        def unwrap(psn):
            if anchor[1] is None:
                return 0
            return anchor[0] + psn_diff(psn, anchor[1])

        def completed_upto(psn):
            return bisect.bisect_right(msg_end, unwrap(psn))

        for p in events:
            op = p.op
            if op.kind == 'req':
                n = 1
                if op.msg == 'read':
                    dlen = struct.unpack_from('!I', p.ext['RETH'], 12)[0]
                    n = npkts_read(dlen)
                if expect is None:
                    expect = first_psn = p.psn
                d = psn_diff(p.psn, expect)
                if d < 0:
                    # Go-back-N replay: must repeat the original packet,
                    # and leaves the message state of new packets alone.
                    fl['retransmits'] += 1
                    self.error(p.no, 'psn-retransmit', '%s: %s retransmitted (next new '
                               'PSN %d)' % (label, p.describe(), expect))
                    orig = orig_pkt.get(p.psn)
                    if op.msg == 'read' and sent.get(p.psn) == 0:
                        # A read retried from the middle of its response:
                        # the new request covers only the rest.
                        reads[p.psn] = [dlen, n]
                    elif orig is None:
                        self.error(p.no, 'psn-retransmit', '%s: %s repeats a PSN this '
                                   'capture never saw' % (label, p.describe()))
                    elif orig.tbytes[12:] != p.tbytes[12:] or \
                            orig.tbytes[:2] != p.tbytes[:2]:
                        self.error(p.no, 'retransmit-mismatch', '%s: %s differs from '
                                   'the original in packet %d' % (label, p.describe(),
                                                                  orig.no))
                    continue
                if d > 0:
                    fl['gaps'] += 1
                    self.error(p.no, 'psn-gap', '%s: %s, expected PSN %d (%d missing)' %
                               (label, p.describe(), expect, d))
                    # The lost packets may have started or ended a message:
                    # take whatever comes until the next message boundary.
                    in_msg = ('lost', p) if op.pos in ('middle', 'last') else None
                expect = psn_add(p.psn, n)
                anchor[:] = [unwrap(p.psn), p.psn]
                orig_pkt[p.psn] = p
                req_msg[p.psn] = op.msg
                if t == 'RC' and p.ackreq:
                    need_ack = anchor[0] + n - 1
                # Answered at once (AckReq, or a READ/atomic, whose responses
                # acknowledge everything before): covers the messages before.
                if t == 'RC' and (p.ackreq or op.msg in ('read', 'atomic')):
                    unasked = None
                elif t != 'RC' and p.ackreq:
                    self.warn(p.no, 'ackreq', '%s: AckReq set on %s; only RC requests '
                              'are acknowledged' % (label, p.describe()))
                self.msg_structure(p, label, in_msg)
                if op.pos in ('first',):
                    in_msg = (op.msg, p)
                    msg_bytes = p.paylen
                    msg_dlen = (struct.unpack_from('!I', p.ext['RETH'], 12)[0]
                                if 'RETH' in p.ext else None)
                elif op.pos == 'middle':
                    msg_bytes += p.paylen
                    if in_msg and in_msg[0] == 'lost':
                        msg_dlen = None
                elif op.pos in ('last', 'only'):
                    if op.pos == 'last':
                        msg_bytes += p.paylen
                        if in_msg and in_msg[0] == 'lost':
                            msg_dlen = None
                    else:
                        msg_bytes = p.paylen
                        msg_dlen = (struct.unpack_from('!I', p.ext['RETH'], 12)[0]
                                    if 'RETH' in p.ext else None)
                    if op.msg == 'write' and msg_dlen is not None and \
                            msg_bytes != msg_dlen and (in_msg or op.pos == 'only'):
                        self.error(p.no, 'write-length', '%s: WRITE carried %d bytes, '
                                   'RETH DMA length says %d' % (label, msg_bytes, msg_dlen))
                    in_msg = None
                    if t == 'RC' and not p.ackreq and op.msg in ('send', 'write') \
                            and unasked is None:
                        unasked = p
                    fl['messages'] += 1
                    # A read counts as done from its first response on: its
                    # responses all carry the MSN that includes it.
                    msg_end.append(unwrap(p.psn) + (0 if op.msg == 'read' else n - 1))
                    if op.msg == 'read':
                        reads[p.psn] = [dlen, n]
                sent[p.psn] = n
                for i in range(1, n):
                    sent[psn_add(p.psn, i)] = 0
                continue

            # responses
            aeth = p.ext.get('AETH')
            if p.psn not in sent:
                self.error(p.no, 'response-psn', '%s: %s answers a PSN never requested'
                           % (label, p.describe()))
            if op.msg == 'read':
                if op.pos in ('first', 'only'):
                    if p.psn not in reads:
                        self.error(p.no, 'read-response', '%s: %s starts no read '
                                   'request\'s PSN range' % (label, p.describe()))
                        read_cur = None
                    else:
                        dlen, n = reads[p.psn]
                        read_cur = [p.psn, psn_add(p.psn, 1), p.paylen, n, dlen]
                        if (op.pos == 'only') != (n == 1):
                            self.error(p.no, 'read-response', '%s: %s but the read of %d '
                                       'bytes needs %d packets' % (label, op.name, dlen, n))
                elif read_cur is None:
                    self.error(p.no, 'read-response-gap', '%s: %s outside a read response'
                               % (label, p.describe()))
                else:
                    if p.psn != read_cur[1]:
                        self.error(p.no, 'read-response-gap', '%s: %s expected PSN %d' %
                                   (label, p.describe(), read_cur[1]))
                    read_cur[1] = psn_add(p.psn, 1)
                    read_cur[2] += p.paylen
                if read_cur and op.pos in ('last', 'only'):
                    if read_cur[2] != read_cur[4]:
                        self.error(p.no, 'read-length', '%s: read response carried %d '
                                   'bytes, request asked %d' % (label, read_cur[2],
                                                                read_cur[4]))
                    if psn_diff(p.psn, read_cur[0]) != read_cur[3] - 1:
                        self.error(p.no, 'read-response', '%s: read response ended at '
                                   'PSN %d, request %d needs %d packets' %
                                   (label, p.psn, read_cur[0], read_cur[3]))
                    read_cur = None
            if aeth is None:
                continue
            syn = aeth[0]
            msn = struct.unpack_from('!I', aeth)[0] & 0xffffff
            kind = syn >> 5
            if kind == 3:
                fl['naks'] += 1
                code = syn & 0x1f
                if code == 0:
                    self.error(p.no, 'nak-psn-seq', '%s: NAK PSN sequence error at PSN %d'
                               % (label, p.psn))
                else:
                    names = {1: 'invalid request', 2: 'remote access error',
                             3: 'remote operational error', 4: 'invalid RD request'}
                    self.error(p.no, 'nak-error', '%s: NAK %s at PSN %d' %
                               (label, names.get(code, code), p.psn))
                continue
            if kind == 1:
                self.warn(p.no, 'rnr-nak', '%s: RNR NAK at PSN %d' % (label, p.psn))
                continue
            # A positive acknowledgement (ACK, read response with AETH, or
            # atomic ACK): MSN counts the messages completed up to its PSN.
            # A plain ACK cannot stand for a read's data or an atomic's
            # original value, so it never carries the PSN of either; but
            # a responder answering a duplicate may ACK its newest PSN
            # whatever request that was, so only before any replay.
            if op.msg == 'ack' and (sent.get(p.psn) == 0 or
                                    req_msg.get(p.psn) in ('read', 'atomic')):
                (self.warn if fl['retransmits'] else self.error)(
                    p.no, 'ack-kind', '%s: ACK at PSN %d, which is a %s request\'s'
                    % (label, p.psn, req_msg.get(p.psn, 'read')))
            if op.msg == 'atomic' and req_msg.get(p.psn) != 'atomic':
                self.error(p.no, 'ack-kind', '%s: ATOMIC_ACKNOWLEDGE at PSN %d, which is '
                           'no atomic request\'s' % (label, p.psn))
            if p.psn in sent and (acked is None or unwrap(p.psn) > acked):
                acked = unwrap(p.psn)
            if op.msg == 'ack':
                fl['acks'] += 1
                if last_ack is not None:
                    d = psn_diff(p.psn, last_ack)
                    if d <= 0:
                        self.error(p.no, 'ack-duplicate', '%s: ACK PSN %d does not advance '
                                   'past %d' % (label, p.psn, last_ack))
                    else:
                        coalesce[d] += 1
                elif first_psn is not None:
                    coalesce[psn_diff(p.psn, first_psn) + 1] += 1
                last_ack = p.psn
            elif op.pos in ('last', 'only'):
                last_ack = p.psn
            want = completed_upto(p.psn)
            alt = want
            if op.msg == 'read' and op.pos == 'first':
                # Some responders count the read only once its last
                # response is out; tolerate that on the first one.
                alt = want - 1
            if msn_base is None:
                msn_base = (msn - want) % PSN_MOD
                fl['first_msn'] = msn
            got = (msn - msn_base) % PSN_MOD
            if got not in (want, alt):
                self.error(p.no, 'msn', '%s: %s MSN %d, expected %d (messages completed '
                           'up to PSN %d, first MSN seen %d)' %
                           (label, op.name, msn, (msn_base + want) % PSN_MOD, p.psn,
                            msn_base))
            if last_msn is not None and psn_diff(msn, last_msn) < 0:
                self.error(p.no, 'msn', '%s: MSN went back from %d to %d' %
                           (label, last_msn, msn))
            last_msn = msn
        if read_cur is not None:
            self.error(None, 'read-response', '%s: capture ends inside a read response'
                       % label)
        if unasked is not None:
            self.error(unasked.no, 'ackreq', '%s: %s ends a message without AckReq, '
                       'and no later request asks for an acknowledgement' %
                       (label, unasked.describe()))
        if t == 'RC' and rpk and need_ack is not None and \
                (acked is None or acked < need_ack):
            # Responders may coalesce ACKs, but each AckReq must be answered
            # by one covering its PSN before the exchange ends.
            self.error(None, 'unacked', '%s: requests up to PSN %d asked for an ACK, '
                       'the last positive acknowledgement is for PSN %s' %
                       (label, psn_add(first_psn, need_ack - unwrap(first_psn)),
                        'none' if acked is None else
                        psn_add(first_psn, acked - unwrap(first_psn))))
        if t == 'RC' and qpk and not rpk:
            self.warn(qpk[0].no, 'no-responses', '%s: no responses captured' % label)
        if t == 'UC' and rpk:
            self.error(rpk[0].no, 'uc-response', '%s: responses on a UC flow' % label)
        fl['ack_coalescing'] = {str(k): v for k, v in sorted(coalesce.items())}

    def msg_structure(self, p, label, in_msg):
        op = p.op
        if op.pos in ('middle', 'last'):
            if in_msg is None:
                self.error(p.no, 'msg-structure', '%s: %s without a FIRST' %
                           (label, p.describe()))
            elif in_msg[0] not in (op.msg, 'lost'):
                self.error(p.no, 'msg-structure', '%s: %s inside a %s message' %
                           (label, p.describe(), in_msg[0]))
        elif in_msg is not None and in_msg[0] != 'lost':
            self.error(p.no, 'msg-structure', '%s: %s starts a message before the %s '
                       'message from packet %d ended' % (label, p.describe(),
                                                         in_msg[0], in_msg[1].no))

    def ud_flow(self, src, sqpn, pk):
        label = 'UD %s qpn 0x%x' % (src, sqpn)
        expect = None
        for p in pk:
            if expect is not None:
                d = psn_diff(p.psn, expect)
                if d > 0:
                    self.error(p.no, 'psn-gap', '%s: %s, expected PSN %d' %
                               (label, p.describe(), expect))
                elif d < 0:
                    self.error(p.no, 'psn-retransmit', '%s: %s repeats PSN (next %d)' %
                               (label, p.describe(), expect))
            expect = psn_add(p.psn, 1)
            if self.forced_mtu and p.paylen > self.forced_mtu:
                self.error(p.no, 'payload', '%s: payload %d exceeds PMTU %d' %
                           (label, p.paylen, self.forced_mtu))
        self.flows_out.append({
            'transport': 'UD', 'src': src, 'sqpn': sqpn, 'packets': len(pk),
            'dqpns': sorted({p.dqpn for p in pk}),
            'qkeys': sorted({'0x%08x' % struct.unpack_from('!I', p.ext['DETH'])[0]
                             for p in pk}),
        })

    # -- output ------------------------------------------------------------
    def result(self):
        cats = collections.Counter(c for _, c, _ in self.errors)
        return {
            'frames': self.total_frames,
            'roce_packets': len(self.pkts) + sum(1 for _, c, _ in self.errors
                                                if c == 'truncated'),
            'non_roce_frames': self.non_roce,
            'icrc_ok': self.icrc_ok,
            'by_opcode': dict(sorted(self.by_opcode.items())),
            'migreq_bit': {str(k): v for k, v in self.mig_bits.items()},
            'flows': self.flows_out,
            'violations': len(self.errors),
            'violations_by_category': dict(cats),
            'errors': [{'packet': n, 'category': c, 'text': t} for n, c, t in self.errors],
            'loss_notes': [{'packet': n, 'category': c, 'text': t}
                           for n, c, t in self.notes],
            'warnings': [{'packet': n, 'category': c, 'text': t}
                         for n, c, t in self.warnings],
        }


def print_text(res, path, max_errors, out):
    w = out.write
    w('%s: %d frames, %d RoCEv2 packets (%d other), ICRC ok %d\n' %
      (path, res['frames'], res['roce_packets'], res['non_roce_frames'], res['icrc_ok']))
    w('packets by opcode:\n')
    for name, n in res['by_opcode'].items():
        w('  %-36s %6d\n' % (name, n))
    w('flows:\n')
    for f in res['flows']:
        if f['transport'] == 'UD':
            w('  UD from %s qpn 0x%x: %d packets to qpn %s, Q_Key %s\n' %
              (f['src'], f['sqpn'], f['packets'],
               ','.join('0x%x' % q for q in f['dqpns']), ','.join(f['qkeys'])))
            continue
        w('  %s %s -> %s qpn 0x%x (requester qpn %s): %d requests, %d messages, '
          '%d responses (%d ACK, %d NAK), PMTU %s, %d retransmits, %d gaps\n' %
          (f['transport'], f['src'], f['dst'], f['dqpn'],
           '0x%x' % f['requester_qpn'] if f['requester_qpn'] is not None else '?',
           f['requests'], f['messages'], f['responses'], f['acks'], f['naks'],
           f['pmtu'], f['retransmits'], f['gaps']))
        if f['ack_coalescing']:
            w('    request packets per ACK: %s\n' % ', '.join(
                '%s:%d' % kv for kv in f['ack_coalescing'].items()))
    for key, title in (('warnings', 'warnings'), ('loss_notes',
                                                  'loss findings (allowed by --expect-loss)'),
                       ('errors', 'VIOLATIONS')):
        items = res[key]
        if not items:
            continue
        w('%s: %d\n' % (title, len(items)))
        for e in items[:max_errors]:
            w('  %s [%s] %s\n' % ('pkt %d' % e['packet'] if e['packet'] else 'flow',
                                  e['category'], e['text']))
        if len(items) > max_errors:
            w('  ... %d more\n' % (len(items) - max_errors))
    w('result: %s (%d violations%s)\n' % (
        'FAIL' if res['violations'] else 'PASS', res['violations'],
        ': ' + ', '.join('%s %d' % kv for kv in sorted(
            res['violations_by_category'].items())) if res['violations'] else ''))


def main(argv=None):
    ap = argparse.ArgumentParser(description='Check RoCEv2 packets in a pcap file.')
    ap.add_argument('pcap')
    ap.add_argument('--expect-loss', action='store_true',
                    help='report PSN gaps, retransmissions, duplicate ACKs and PSN '
                    'sequence NAKs without failing')
    ap.add_argument('--allow-retransmit', action='store_true',
                    help='report go-back-N retransmissions (exact replays) and the '
                    'duplicate ACKs they cause without failing; gaps still fail')
    ap.add_argument('--strict', action='store_true',
                    help='count warnings about the sender\'s choices (%s) as violations'
                    % ', '.join(sorted(STRICT_CATEGORIES)))
    ap.add_argument('--json', action='store_true', help='print the result as JSON')
    ap.add_argument('--mtu', type=int, choices=IB_MTUS,
                    help='path MTU to assume where the capture does not show it')
    ap.add_argument('--pkey', type=lambda s: int(s, 0), default=0xffff,
                    help='expected P_Key (default 0xffff)')
    ap.add_argument('--expect-opcodes', metavar='NAME,...', default='',
                    help='opcodes (names as in the report, e.g. RC_SEND_FIRST) the '
                    'capture must hold at least one packet of')
    ap.add_argument('--max-errors', type=int, default=40,
                    help='errors/warnings listed per section in text mode')
    args = ap.parse_args(argv)
    known = {op.name for op in OPCODES.values()}
    unknown = [n for n in args.expect_opcodes.split(',') if n and n not in known]
    if unknown:
        ap.error('--expect-opcodes: unknown opcode name(s) %s' % ', '.join(unknown))
    chk = Checker(expect_loss=args.expect_loss, mtu=args.mtu, pkey=args.pkey,
                  allow_retransmit=args.allow_retransmit, strict=args.strict)
    try:
        for rec in read_pcap(args.pcap):
            chk.frame(*rec)
    except (OSError, PcapError) as e:
        print('roce_check: %s: %s' % (args.pcap, e), file=sys.stderr)
        return 2
    chk.analyse()
    for name in filter(None, args.expect_opcodes.split(',')):
        if name not in chk.by_opcode:
            chk.error(None, 'missing-opcode', 'no %s packet in the capture' % name)
    if not chk.pkts and not chk.errors:
        # Most often a capture filter or interface that missed the traffic.
        chk.error(None, 'empty', 'no RoCEv2 packet (UDP port %d) in the capture' % ROCE_PORT)
    res = chk.result()
    if args.json:
        json.dump(res, sys.stdout, indent=1)
        sys.stdout.write('\n')
    else:
        print_text(res, args.pcap, args.max_errors, sys.stdout)
    return 1 if res['violations'] else 0


if __name__ == '__main__':
    sys.exit(main())
