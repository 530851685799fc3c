#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Host test for scripts/roce_check.py against the rdma_rxe reference captures.

Every capture in selftests/data/rxe_*.pcap must check clean, and edited
copies with one defect each must fail with exactly the expected finding;
that second half is what shows the checker can fail at all.
TAP on stdout, last line "N passed, N failed", exit status 1 on any failure.
Usage: /usr/bin/python3 selftests/unit/test_roce_check.py
"""

import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
DATA = os.path.join(ROOT, 'selftests', 'data')
CHECKER = os.path.join(ROOT, 'scripts', 'roce_check.py')
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import roce_check  # noqa: E402

# Captures in which rxe's retransmit timer fired while the peer (a TCG
# guest) was slow to answer: their only strict findings are exact replays
# and the duplicate ACKs those draw. See selftests/data/README.md.
RETRANSMITTING = {
    'rxe_rc_pingpong_1.pcap', 'rxe_rc_pingpong_1024.pcap',
    'rxe_rc_pingpong_4096.pcap', 'rxe_rc_pingpong_5000.pcap',
    'rxe_rc_pingpong_v6_5000.pcap',
}

OPCODES_EXPECTED = [
    'RC_SEND_FIRST', 'RC_SEND_MIDDLE', 'RC_SEND_LAST', 'RC_SEND_LAST_IMM',
    'RC_SEND_ONLY', 'RC_SEND_ONLY_IMM', 'RC_WRITE_FIRST', 'RC_WRITE_MIDDLE',
    'RC_WRITE_LAST', 'RC_WRITE_LAST_IMM', 'RC_WRITE_ONLY', 'RC_WRITE_ONLY_IMM',
    'RC_RDMA_READ_REQUEST', 'RC_RDMA_READ_RESPONSE_FIRST',
    'RC_RDMA_READ_RESPONSE_MIDDLE', 'RC_RDMA_READ_RESPONSE_LAST',
    'RC_RDMA_READ_RESPONSE_ONLY', 'RC_ACKNOWLEDGE', 'RC_ATOMIC_ACKNOWLEDGE',
    'RC_COMPARE_SWAP', 'RC_FETCH_ADD', 'UC_SEND_FIRST', 'UC_SEND_MIDDLE',
    'UC_SEND_LAST', 'UC_WRITE_FIRST', 'UC_WRITE_MIDDLE', 'UC_WRITE_LAST',
    'UD_SEND_ONLY',
]

results = []
tmpdir = tempfile.mkdtemp(prefix='roce_check_test.')


def ok(cond, name, diag=''):
    results.append(bool(cond))
    print('%s %d - %s' % ('ok' if cond else 'not ok', len(results), name))
    if not cond and diag:
        for line in str(diag).splitlines()[:30]:
            print('#   ' + line)


def check(path, *flags):
    """Runs the checker as a program; returns (exit status, JSON result)."""
    p = subprocess.run([sys.executable, CHECKER, path, '--json'] + list(flags),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        res = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        res = None
    return p.returncode, res, p.stderr


# -- pcap editing helpers ---------------------------------------------------

def load(path):
    with open(path, 'rb') as f:
        raw = f.read()
    assert raw[:4] == b'\xd4\xc3\xb2\xa1', 'test expects little-endian usec pcap'
    recs, off = [], 24
    while off < len(raw):
        sec, usec, caplen, origlen = struct.unpack_from('<IIII', raw, off)
        recs.append([sec, usec, bytearray(raw[off + 16:off + 16 + caplen])])
        off += 16 + caplen
    return raw[:24], recs


def save(name, hdr, recs, linktype=None):
    path = os.path.join(tmpdir, name)
    if linktype is not None:
        hdr = hdr[:20] + struct.pack('<I', linktype)
    with open(path, 'wb') as f:
        f.write(hdr)
        for sec, usec, data in recs:
            f.write(struct.pack('<IIII', sec, usec, len(data), len(data)))
            f.write(data)
    return path


def layout(frame):
    """Offsets in an Ethernet frame: (ipver, ip off, udp off, BTH off, end)."""
    et = struct.unpack_from('!H', frame, 12)[0]
    if et == 0x0800:
        ihl = (frame[14] & 0xf) * 4
        tot = struct.unpack_from('!H', frame, 16)[0]
        return 4, 14, 14 + ihl, 14 + ihl + 8, 14 + tot
    plen = struct.unpack_from('!H', frame, 18)[0]
    return 6, 14, 54, 62, 54 + plen


def fix_icrc(frame):
    ver, ip, udp, bth, end = layout(frame)
    iph = bytes(frame[ip:udp])
    frame[end - 4:end] = roce_check.compute_icrc(iph, ver, bytes(frame[udp:bth]),
                                                 bytes(frame[bth:end - 4]))


def fix_ipv4_csum(frame):
    frame[24:26] = b'\0\0'
    s = roce_check.ones_sum16(bytes(frame[14:34]))
    frame[24:26] = struct.pack('!H', 0xffff - s)


def opcode(frame):
    return frame[layout(frame)[3]]


def bth_field(frame, off):
    return layout(frame)[3] + off


def main():
    caps = sorted(glob.glob(os.path.join(DATA, 'rxe_*.pcap')))
    ok(len(caps) >= 10, 'at least 10 rxe reference captures present (%d)' % len(caps))
    total_icrc = 0
    seen_ops = set()
    for path in caps:
        name = os.path.basename(path)
        rc, res, err = check(path)
        if res is None:
            ok(False, '%s: checker produced JSON' % name, err)
            continue
        n = res['roce_packets']
        ok(n > 0 and res['icrc_ok'] == n,
           '%s: all %d RoCEv2 packets carry a correct ICRC' % (name, n),
           json.dumps(res['violations_by_category']))
        total_icrc += res['icrc_ok']
        seen_ops.update(res['by_opcode'])
        if name in RETRANSMITTING:
            cats = set(res['violations_by_category'])
            ok(rc == 1 and cats and cats <= {'psn-retransmit', 'ack-duplicate'},
               '%s: strict run reports only retransmissions/duplicate ACKs (%s)'
               % (name, ', '.join(sorted(cats))),
               '\n'.join(e['text'] for e in res['errors']))
            rc, res, err = check(path, '--allow-retransmit')
            ok(rc == 0 and res and res['violations'] == 0,
               '%s: 0 violations with --allow-retransmit' % name,
               err + '\n'.join(e['text'] for e in (res or {}).get('errors', [])))
        else:
            ok(rc == 0 and res['violations'] == 0, '%s: 0 violations' % name,
               err + '\n'.join(e['text'] for e in res['errors']))
    ok(total_icrc > 300, 'ICRC verified on %d rxe packets in total' % total_icrc)
    # The captures must keep covering every opcode rxe can send us.
    missing = set(OPCODES_EXPECTED) - seen_ops
    ok(not missing, 'captures cover %d opcodes' % len(OPCODES_EXPECTED),
       'missing: ' + ', '.join(sorted(missing)))

    negative_tests()
    shutil.rmtree(tmpdir, ignore_errors=True)
    print('%d passed, %d failed' % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


def expect_only(path, cats, name, *flags):
    rc, res, err = check(path, *flags)
    got = res['violations_by_category'] if res else None
    ok(rc == 1 and got is not None and set(got) == set(cats), name,
       'exit %d, categories %s %s' % (rc, got, err))
    return res


def negative_tests():
    write = os.path.join(DATA, 'rxe_write_bw_8192.pcap')
    uc = os.path.join(DATA, 'rxe_uc_pingpong_5000.pcap')
    send = os.path.join(DATA, 'rxe_send_bw_8192.pcap')
    hdr, recs = load(write)
    mid = next(i for i, r in enumerate(recs) if opcode(r[2]) == 0x07)

    # One payload byte flipped: the ICRC, and only the ICRC, must catch it.
    h, r = load(write)
    end = layout(r[mid][2])[4]
    r[mid][2][end - 10] ^= 0x01
    res = expect_only(save('flip.pcap', h, r), ['icrc'],
                      'payload byte flipped: ICRC violation only')
    ok(res and res['violations'] == 1, 'payload byte flipped: exactly one violation')

    # The IPv4 header checksum is outside the ICRC: corrupting it must trip
    # the IP check alone.
    h, r = load(write)
    r[mid][2][24] ^= 0x5a
    expect_only(save('ipcsum.pcap', h, r), ['ipv4-csum'],
                'IPv4 checksum corrupted: ipv4-csum only (checksum masked in ICRC)')

    # A router's changes (TTL, DSCP/ECN) with a fixed-up IP checksum keep
    # the ICRC valid.
    h, r = load(write)
    for rec in r:
        rec[2][22] -= 3          # TTL
        rec[2][15] = 0x03        # ECN CE
        fix_ipv4_csum(rec[2])
    rc, res, _ = check(save('routed.pcap', h, r))
    ok(rc == 0, 'TTL decremented and ECN marked en route: still 0 violations')

    # Not a masked field: the IP identification.
    h, r = load(write)
    r[mid][2][19] ^= 0x01
    fix_ipv4_csum(r[mid][2])
    expect_only(save('ipid.pcap', h, r), ['icrc'],
                'IPv4 identification changed: ICRC violation')

    # A sender that skipped a PSN: shift one UC flow's PSNs from its second
    # message on, ICRCs recomputed, so sequencing is the only defect.
    h, r = load(uc)
    first = [i for i, rec in enumerate(r) if opcode(rec[2]) == 0x20]
    src = bytes(r[first[0]][2][26:30])
    first = [i for i in first if bytes(r[i][2][26:30]) == src]
    for rec in r[first[1]:]:
        if bytes(rec[2][26:30]) != src:
            continue
        o = bth_field(rec[2], 8)
        v = struct.unpack_from('!I', rec[2], o)[0]
        v = (v & 0xff000000) | (((v & 0xffffff) + 1) & 0xffffff)
        struct.pack_into('!I', rec[2], o, v)
        fix_icrc(rec[2])
    path = save('psnskip.pcap', h, r)
    res = expect_only(path, ['psn-gap'], 'PSN skipped: psn-gap violation only')
    ok(res and res['violations'] == 1, 'PSN skipped: exactly one violation')
    rc, res, _ = check(path, '--expect-loss')
    ok(rc == 0 and res and len(res['loss_notes']) == 1,
       'PSN skipped: allowed but reported with --expect-loss')

    # A request packet lost from an RC write: one gap, no follow-on noise
    # about the rest of that message.
    h, r = load(write)
    del r[mid]
    res = expect_only(save('lost.pcap', h, r), ['psn-gap'],
                      'WRITE_MIDDLE dropped: psn-gap only')
    ok(res and res['violations'] == 1, 'WRITE_MIDDLE dropped: exactly one violation')

    # A READ request consumes one PSN per response packet: shrink the first
    # read to 4096 bytes and the next request's PSN no longer follows.
    h, r = load(os.path.join(DATA, 'rxe_read_bw_8192.pcap'))
    rd = next(i for i, rec in enumerate(r) if opcode(rec[2]) == 0x0c)
    struct.pack_into('!I', r[rd][2], bth_field(r[rd][2], 12 + 12), 4096)
    fix_icrc(r[rd][2])
    rc, res, _ = check(save('readlen.pcap', h, r))
    cats = set(res['violations_by_category']) if res else set()
    ok(rc == 1 and {'psn-gap', 'read-length', 'read-response'} <= cats,
       'READ of 4096 answered with 8 packets: psn-gap, read-length, read-response (%s)'
       % ', '.join(sorted(cats)))

    # A retransmission must repeat the original: change one replayed byte.
    h, r = load(os.path.join(DATA, 'rxe_rc_pingpong_4096.pcap'))
    seen, dup = set(), None
    for i, rec in enumerate(r):
        if opcode(rec[2]) in (0x00, 0x01, 0x02):
            key = (bytes(rec[2][26:30]), bytes(rec[2][bth_field(rec[2], 9):
                                                      bth_field(rec[2], 12)]))
            if key in seen:
                dup = i
                break
            seen.add(key)
    end = layout(r[dup][2])[4]
    r[dup][2][end - 5] ^= 0x80
    fix_icrc(r[dup][2])
    expect_only(save('retx.pcap', h, r), ['retransmit-mismatch'],
                'retransmission with different payload: retransmit-mismatch',
                '--allow-retransmit')

    # AckReq cleared on a message's last packet: legal while a later
    # request asks for an ACK, a violation on the flow's last message.
    h, r = load(send)
    ends = [i for i, rec in enumerate(r) if opcode(rec[2]) == 0x02]
    first = ends[0]
    r[first][2][bth_field(r[first][2], 8)] &= 0x7f
    fix_icrc(r[first][2])
    rc, res, _ = check(save('noackreq1.pcap', h, r), '--strict')
    ok(len(ends) > 1 and rc == 0,
       'AckReq cleared on the first SEND_LAST, later ones ask: no violation',
       'exit %d, %s' % (rc, res and res['violations_by_category']))
    h, r = load(send)
    last = ends[-1]
    r[last][2][bth_field(r[last][2], 8)] &= 0x7f
    fix_icrc(r[last][2])
    expect_only(save('noackreq.pcap', h, r), ['ackreq'],
                'AckReq cleared on the flow\'s last SEND_LAST: ackreq violation')
    last = ends[0]

    # Wrong P_Key and nonzero TVer, ICRC kept valid.
    h, r = load(send)
    r[last][2][bth_field(r[last][2], 2)] = 0x7f
    r[last][2][bth_field(r[last][2], 1)] |= 0x01
    fix_icrc(r[last][2])
    expect_only(save('pkey.pcap', h, r), ['bth-pkey', 'bth-tver'],
                'P_Key 0x7fff and TVer 1: bth-pkey and bth-tver')

    # An ACK whose MSN jumps.
    h, r = load(send)
    ack = next(i for i, rec in enumerate(r) if opcode(rec[2]) == 0x11)
    r[ack][2][bth_field(r[ack][2], 15)] ^= 0x04
    fix_icrc(r[ack][2])
    expect_only(save('msn.pcap', h, r), ['msn'], 'ACK MSN altered: msn violation')

    # An ACK for a PSN the requester never sent.
    h, r = load(send)
    o = bth_field(r[ack][2], 8)
    v = struct.unpack_from('!I', r[ack][2], o)[0]
    struct.pack_into('!I', r[ack][2], o, (v & 0xff000000) | (((v & 0xffffff) + 100) & 0xffffff))
    fix_icrc(r[ack][2])
    rc, res, _ = check(save('ackpsn.pcap', h, r))
    cats = set(res['violations_by_category']) if res else set()
    ok(rc == 1 and 'response-psn' in cats and 'icrc' not in cats,
       'ACK for an unsent PSN: response-psn (%s)' % ', '.join(sorted(cats)))

    # Solicited Event on a packet that does not end a message.
    h, r = load(write)
    r[mid][2][bth_field(r[mid][2], 1)] |= 0x80
    fix_icrc(r[mid][2])
    expect_only(save('se.pcap', h, r), ['bth-se'], 'SE bit on WRITE_MIDDLE: bth-se')

    # UDP length disagreeing with the IP length.
    h, r = load(send)
    v = struct.unpack_from('!H', r[last][2], 38)[0]
    struct.pack_into('!H', r[last][2], 38, v - 4)
    fix_icrc(r[last][2])
    expect_only(save('udplen.pcap', h, r), ['udp-length'],
                'UDP length 4 short of the IP payload: udp-length')

    # A pad count that leaves the payload unaligned is caught through the
    # payload size rules; a MIDDLE with a pad is itself wrong.
    h, r = load(write)
    r[mid][2][bth_field(r[mid][2], 1)] |= 0x30
    fix_icrc(r[mid][2])
    res = expect_only(save('pad.pcap', h, r), ['pad', 'pmtu', 'write-length'],
                      'pad 3 on WRITE_MIDDLE: pad, pmtu and write-length')

    # One request of an RC flow leaves from another UDP source port (the
    # port is under the ICRC, so that is fixed up): the QP's flow entropy
    # must not change.
    h, r = load(write)
    struct.pack_into('!H', r[mid][2], layout(r[mid][2])[2],
                     struct.unpack_from('!H', r[mid][2], layout(r[mid][2])[2])[0] ^ 1)
    fix_icrc(r[mid][2])
    expect_only(save('sport.pcap', h, r), ['udp-sport'],
                'RC request from another UDP source port: udp-sport')

    # The same for a UD QP, which is keyed by its own QPN (DETH).
    h, r = load(os.path.join(DATA, 'rxe_ud_pingpong_512.pcap'))
    ud1 = [i for i, rec in enumerate(r) if opcode(rec[2]) == 0x64][-1]
    o = layout(r[ud1][2])[2]
    struct.pack_into('!H', r[ud1][2], o, struct.unpack_from('!H', r[ud1][2], o)[0] ^ 2)
    fix_icrc(r[ud1][2])
    expect_only(save('udsport.pcap', h, r), ['udp-sport'],
                'UD QP sending from a second UDP source port: udp-sport')

    # The last ACK of a flow lost from the capture: the requests that asked
    # for it stay unacknowledged.
    h, r = load(send)
    last_ack = [i for i, rec in enumerate(r) if opcode(rec[2]) == 0x11][-1]
    del r[last_ack]
    expect_only(save('unacked.pcap', h, r), ['unacked'],
                'final ACK missing: unacked violation')

    # An atomic answered by a plain ACK (AtomicAckETH cut off, lengths,
    # checksums and ICRC redone): the requester would never get the value.
    h, r = load(os.path.join(DATA, 'rxe_atomic_fetch_add.pcap'))
    aa = next(i for i, rec in enumerate(r) if opcode(rec[2]) == 0x12)
    f = r[aa][2]
    ver, ip, udp, bth, end = layout(f)
    del f[bth + 16:bth + 24]
    f[bth] = 0x11
    struct.pack_into('!H', f, ip + 2, struct.unpack_from('!H', f, ip + 2)[0] - 8)
    struct.pack_into('!H', f, udp + 4, struct.unpack_from('!H', f, udp + 4)[0] - 8)
    fix_ipv4_csum(f)
    fix_icrc(f)
    expect_only(save('ackkind.pcap', h, r), ['ack-kind'],
                'FETCH_ADD answered by a plain ACK: ack-kind')

    # Non-zero pad bytes are legal but reported.
    h, r = load(os.path.join(DATA, 'rxe_verbs_mix_v4.pcap'))
    padded = next(i for i, rec in enumerate(r)
                  if rec[2][bth_field(rec[2], 1)] & 0x30)
    r[padded][2][layout(r[padded][2])[4] - 5] = 0xa5
    fix_icrc(r[padded][2])
    rc, res, _ = check(save('padbytes.pcap', h, r))
    ok(rc == 0 and res and [w['category'] for w in res['warnings']
                            if w['category'] != 'atomic-compare'] == ['pad-bytes'],
       'non-zero pad byte: pad-bytes warning, no violation')

    # AckReq on a UC packet is ignored by receivers but reported.
    h, r = load(uc)
    ucl = next(i for i, rec in enumerate(r) if opcode(rec[2]) == 0x22)
    r[ucl][2][bth_field(r[ucl][2], 8)] |= 0x80
    fix_icrc(r[ucl][2])
    rc, res, _ = check(save('ucackreq.pcap', h, r))
    ok(rc == 0 and res and [w['category'] for w in res['warnings']] == ['ackreq'],
       'AckReq on UC_SEND_LAST: ackreq warning, no violation')

    rc, res, _ = check(save('ucackreq.pcap', h, r), '--strict')
    ok(rc == 1 and res and list(res['violations_by_category']) == ['ackreq'],
       'AckReq on UC_SEND_LAST with --strict: ackreq violation')
    rc, res, _ = check(os.path.join(DATA, 'rxe_atomic_fetch_add.pcap'), '--strict')
    ok(rc == 1 and res and list(res['violations_by_category']) == ['atomic-compare'],
       'rxe\'s FETCH_ADD with --strict: atomic-compare violation')

    # A path MTU other than the one the caller expects.
    expect_only(write, ['pmtu'], '--mtu 4096 on a PMTU 1024 capture: pmtu violation',
                '--mtu', '4096')

    # Opcodes the caller expects to see.
    rc, res, _ = check(write, '--expect-opcodes', 'RC_WRITE_FIRST,RC_ACKNOWLEDGE')
    ok(rc == 0, '--expect-opcodes with opcodes present: pass')
    expect_only(write, ['missing-opcode'], '--expect-opcodes RC_FETCH_ADD on a write '
                'capture: missing-opcode', '--expect-opcodes', 'RC_WRITE_LAST,RC_FETCH_ADD')
    rc, _, err = check(write, '--expect-opcodes', 'RC_NO_SUCH_OP')
    ok(rc == 2 and 'RC_NO_SUCH_OP' in err, '--expect-opcodes with an unknown name: exit 2')

    # Captured with a short snap length: must refuse rather than guess.
    h, r = load(send)
    r[0][2] = r[0][2][:100]
    path = os.path.join(tmpdir, 'snap.pcap')
    with open(path, 'wb') as f:
        f.write(h)
        for i, (sec, usec, data) in enumerate(r):
            orig = len(load(send)[1][0][2]) if i == 0 else len(data)
            f.write(struct.pack('<IIII', sec, usec, len(data), orig) + bytes(data))
    rc, res, _ = check(path)
    ok(rc == 1 and res and 'truncated' in res['violations_by_category'],
       'truncated capture: truncated violation')

    # Same packets behind Linux cooked headers (v1 and v2) check the same.
    h, r = load(os.path.join(DATA, 'rxe_read_bw_8192.pcap'))
    sll = [[s, u, bytearray(struct.pack('!HHH8sH', 0, 1, 6, bytes(d[6:12]) + b'\0\0',
                                        struct.unpack_from('!H', d, 12)[0]) + d[14:])]
           for s, u, d in r]
    rc, res, _ = check(save('sll.pcap', h, sll, linktype=113))
    ok(rc == 0 and res and res['icrc_ok'] == len(r), 'Linux cooked (SLL) capture: 0 violations')
    sll2 = [[s, u, bytearray(struct.pack('!HHIHBB8s', struct.unpack_from('!H', d, 12)[0],
                                         0, 2, 1, 0, 6, bytes(d[6:12]) + b'\0\0') + d[14:])]
            for s, u, d in r]
    rc, res, _ = check(save('sll2.pcap', h, sll2, linktype=276))
    ok(rc == 0 and res and res['icrc_ok'] == len(r), 'Linux cooked v2 capture: 0 violations')

    # A capture without RoCE traffic is a failed capture, not a pass.
    rc, res, _ = check(save('empty.pcap', h, []))
    ok(rc == 1 and res and list(res['violations_by_category']) == ['empty'],
       'capture with no RoCEv2 packet: empty violation')

    # Not a pcap at all: usage/input error, not a verdict.
    bad = os.path.join(tmpdir, 'bad.pcap')
    with open(bad, 'wb') as f:
        f.write(b'\x0a\x0d\x0d\x0a' + b'\0' * 40)
    rc, _, err = check(bad)
    ok(rc == 2 and 'pcapng' in err, 'pcapng input: exit 2 with a clear message')


if __name__ == '__main__':
    sys.exit(main())
