#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Write a seed corpus for fuzz_pkt and fuzz_keys.

fuzz_pkt seeds: one well-formed transport packet (BTH..ICRC) per RC/UC/UD/XRC
opcode with the extension headers laid out per IBA 9.2, plus the IPv4/IPv6
ICRC vectors from ../unit/icrc_vectors.h as whole IP packets.
Usage: gen_seeds.py OUTDIR
"""
import os
import re
import struct
import sys

# extension header sizes in wire order: XRCETH FETH DETH RETH AtomicETH
# AETH AtomicAck ImmDt IETH
X, F, D, R, A, K, AA, I, V = 4, 4, 8, 16, 28, 4, 8, 4, 4
RC_UC = {
    0x00: ((), 256), 0x01: ((), 256), 0x02: ((), 7), 0x03: ((I,), 5),
    0x04: ((), 9), 0x05: ((I,), 0), 0x06: ((R,), 256), 0x07: ((), 256),
    0x08: ((), 3), 0x09: ((I,), 4), 0x0a: ((R,), 11), 0x0b: ((R, I), 2),
}
RC_ONLY = {
    0x0c: ((R,), 0), 0x0d: ((K,), 256), 0x0e: ((), 256), 0x0f: ((K,), 1),
    0x10: ((K,), 17), 0x11: ((K,), 0), 0x12: ((K, AA), 0),
    0x13: ((A,), 0), 0x14: ((A,), 0), 0x16: ((V,), 6), 0x17: ((V,), 1),
    0x1c: ((F, R), 0), 0x1d: ((R,), 8),
}
UD = {0x64: ((D,), 33), 0x65: ((D, I), 8)}


def packet(op, exts, plen, seq):
    pad = (-plen) & 3
    bth = struct.pack('>BBHII', op, 0x80 * (seq & 1) | (pad << 4), 0xffff,
                      0x11 + seq, 0x80000000 | (seq * 977))
    ext = b''.join(bytes((seq + i + n) & 0xff for i in range(n))
                   for n in exts)
    body = bytes((i * 13 + seq) & 0xff for i in range(plen))
    return bth + ext + body + bytes(pad) + b'\x01\x02\x03\x04'


def vectors():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        '..', 'unit', 'icrc_vectors.h')
    text = open(path).read()
    for name, body in re.findall(r'(\w+)\[\d+\] = \{([^}]*)\}', text):
        yield name, bytes(int(x, 16) for x in re.findall(r'0x([0-9a-f]+)',
                                                         body))


def main():
    out = sys.argv[1]
    pkt_dir = os.path.join(out, 'fuzz_pkt')
    key_dir = os.path.join(out, 'fuzz_keys')
    os.makedirs(pkt_dir, exist_ok=True)
    os.makedirs(key_dir, exist_ok=True)
    seq = 0
    table = dict(RC_ONLY)
    for op, v in RC_UC.items():
        table[op] = v
        table[op | 0x20] = v
    table.update(UD)
    # XRC: RC's operations but FLUSH and ATOMIC WRITE; an XRCETH first in
    # requests (responses are 0x0d..0x12)
    for op, (exts, plen) in list(table.items()):
        if op < 0x1c and not 0x0d <= op <= 0x12:
            table[op | 0xa0] = ((X,) + exts, plen)
        elif op < 0x1c:
            table[op | 0xa0] = (exts, plen)
    for op, (exts, plen) in sorted(table.items()):
        with open(os.path.join(pkt_dir, 'op%02x' % op), 'wb') as f:
            f.write(packet(op, exts, plen, seq))
        seq += 1
    for name, data in vectors():
        with open(os.path.join(pkt_dir, name), 'wb') as f:
            f.write(data)
    edges = [(0, 0, 0, 0), (0x1000, 0x1000, 0x1fff, 1),
             (2**64 - 10, 100, 2**64 - 6, 20), (0, 2**64 - 1, 1, 2**64 - 1)]
    for i, e in enumerate(edges):
        with open(os.path.join(key_dir, 'edge%d' % i), 'wb') as f:
            f.write(struct.pack('<4Q', *e) + b'\x00')
    return 0


if __name__ == '__main__':
    sys.exit(main())
