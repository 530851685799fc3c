#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Turn a scripts/bench.sh run folder into bench/results.md, a JSON summary
and a gnuplot PNG of bandwidth against message size.

Usage: bench_report.py RUNDIR OUTDIR

RUNDIR holds host.info and one m<MTU>/ folder per VM boot, each with the
guests' raw/ folder (see selftests/bench/lib.sh for its layout). Only the
standard library is used; every figure is the median over repetitions.
"""

import json
import os
import re
import statistics
import subprocess
import sys

USER_HZ = 100  # /proc/stat ticks; fixed at 100 on x86 Linux
MIB = 1 << 20
DEVS = ("sroce", "rxe")
RUN_RE = re.compile(r"^(?P<dev>[a-z]+)_m(?P<mtu>\d+)_(?P<test>[a-z]+)"
                    r"_s(?P<size>\d+)(?:_[qp](?P<q>\d+))?_r(?P<rep>\d+)$")
SCALE_RE = re.compile(r"^(?P<dev>[a-z]+)_m(?P<mtu>\d+)_scale_q(?P<q>\d+)$")


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def kv(path):
    out = {}
    for line in read(path).splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def nums(line):
    try:
        return [float(t) for t in line.split()]
    except ValueError:
        return None


# ---- tool output parsers ---------------------------------------------------

def parse_perftest_bw(text):
    """Result row under the '#bytes #iterations BW peak ...' header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and "BW average" in line:
            for row in lines[i + 1:]:
                v = nums(row)
                if v and len(v) >= 5:
                    # perftest's MB/sec is 2^20 bytes per second.
                    return {"bytes": v[0], "iters": v[1], "bw_mib": v[3],
                            "kpps": v[4] * 1000.0}
    return None


LAT_COLS = ("#bytes", "#iterations", "t_min", "t_max", "t_typical", "t_avg",
            "t_stdev", "99% percentile", "99.9% percentile")


def parse_perftest_lat(text):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and "t_typical" in line:
            cols = re.findall("|".join(re.escape(c) for c in LAT_COLS), line)
            for row in lines[i + 1:]:
                v = nums(row)
                if v and len(v) >= len(cols):
                    d = dict(zip(cols, v))
                    return {"typ": d.get("t_typical"), "p99": d.get("99% percentile"),
                            "avg": d.get("t_avg")}
    return None


def parse_pingpong(text):
    m = re.search(r"(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter", text)
    return {"usec": float(m.group(3))} if m else None


def parse_iperf(text):
    try:
        j = json.loads(text[text.index("{"):])
    except (ValueError, json.JSONDecodeError):
        return None
    end = j.get("end", {})
    rcv = end.get("sum_received") or {}
    snd = end.get("sum_sent") or {}
    if "bits_per_second" not in rcv:
        return None
    return {"bw_mib": rcv["bits_per_second"] / 8.0 / MIB,
            "retrans": snd.get("retransmits")}


def parse_udp(text, size):
    """iperf3 -u: what arrived, as datagrams per second and as RoCE payload
    (SIZE bytes per datagram of SIZE + 16)."""
    try:
        j = json.loads(text[text.index("{"):])
    except (ValueError, json.JSONDecodeError):
        return None
    rcv = j.get("end", {}).get("sum_received") or {}
    if not rcv.get("seconds") or "bytes" not in rcv:
        return None
    fps = rcv["bytes"] / (size + 16) / rcv["seconds"]
    return {"fps": fps, "bw_mib": fps * size / MIB}


def parse_pktgen(text, size):
    """pair.sh's pktgen_run: frames the receiver's eth0 counted over the
    measured window, as frames per second and as RoCE payload (SIZE bytes
    per frame)."""
    m = re.search(r"pktgen_rx size \d+ start ([\d.]+) (\d+) (\d+) end ([\d.]+) (\d+) (\d+)",
                  text)
    if not m:
        return None
    t0, p0, _, t1, p1, _ = (float(x) for x in m.groups())
    if t1 <= t0 or p1 <= p0:
        return None
    fps = (p1 - p0) / (t1 - t0)
    return {"fps": fps, "bw_mib": fps * size / MIB}


def ib_mtu(mtu):
    """The path MTU the bench's RDMA tools use at this netdev MTU."""
    return 4096 if mtu >= 4096 + 100 else 2048 if mtu >= 2048 + 100 else 1024


def parse_ping(text):
    t = [float(x) for x in re.findall(r"time=([\d.]+) ms", text)]
    m = re.search(r"(\d+) packets transmitted, (\d+) received", text)
    if not t:
        return None
    return {"med_us": statistics.median(t) * 1000, "p99_us": pct(t, 99) * 1000,
            "sent": int(m.group(1)) if m else None,
            "rcvd": int(m.group(2)) if m else None}


# ---- per-run CPU and wire accounting ------------------------------------

def moved(meta, name):
    """Per-field change of the meta sample NAME over the run (pre_NAME to
    post_NAME, space-separated integers), or None if not recorded."""
    try:
        pre = [int(x) for x in meta["pre_" + name].split()]
        post = [int(x) for x in meta["post_" + name].split()]
    except (KeyError, ValueError):
        return None
    return [b - a for a, b in zip(pre, post)]


def cpu_cost(meta):
    """CPU seconds (total busy and kernel part) and wire bytes for one side."""
    d, n = moved(meta, "cpu"), moved(meta, "net")
    if d is None or n is None:
        return None
    # user nice system idle iowait irq softirq steal
    busy = d[0] + d[1] + d[2] + d[5] + d[6] + d[7]
    kern = d[2] + d[5] + d[6]
    return {"busy_s": busy / USER_HZ, "kern_s": kern / USER_HZ, "wire": max(n[0], n[1])}


def heavy_frame(metas):
    """Mean wire frame (bytes, Ethernet header included) sent by the side
    that sent the most bytes during the run: the data direction."""
    best = None
    for meta in metas:
        n = moved(meta, "net")
        if n and n[2] > 0 and (best is None or n[0] > best[0]):
            best = (n[0], n[2])
    return best[0] / best[1] if best and best[0] > 1e6 else None


# Counters that say a packet was lost, repeated or refused (data counters
# such as sent_pkts are left out).
TROUBLE_RE = re.compile(r"retr|rnr|dup|seq|timeout|err|drop|nak|out_of|"
                        r"discard|rcv_errors|resend|lost", re.I)


def hw_moved(meta):
    """The device's hw_counters that moved during the run and say trouble."""
    try:
        pre = dict(t.split("=", 1) for t in meta["pre_hw"].split())
        post = dict(t.split("=", 1) for t in meta["post_hw"].split())
    except (KeyError, ValueError):
        return None
    out = {}
    for k, v in post.items():
        try:
            d = int(v) - int(pre.get(k, v))
        except ValueError:
            continue
        if d and TROUBLE_RE.search(k):
            out[k] = d
    return out


def per_gb(c):
    if not c or c["wire"] < 1e6:
        return None
    gb = c["wire"] / 1e9
    return (c["busy_s"] / gb, c["kern_s"] / gb)


# ---- collection ----------------------------------------------------------

def collect(run):
    data = {"runs": {}, "na": {}, "aborted": {}, "counters": {}, "scale": {},
            "boots": {}, "failed": [], "trouble": {},
            "hw_runs": 0}
    for name in sorted(os.listdir(run)):
        bdir = os.path.join(run, name)
        if not (name.startswith("m") and os.path.isdir(bdir)):
            continue
        mtu = int(name[1:])
        raw = os.path.join(bdir, "raw")
        boot = kv(os.path.join(bdir, "boot.info"))
        boot["verdict"] = read(os.path.join(bdir, "verdict")).strip()
        # One boot per device since 2026-12-03 (a subfolder each); older
        # runs booted once per MTU.
        logs = [os.path.join(bdir, "vm1.dmesg"), os.path.join(bdir, "vm1.console")]
        for sub in sorted(os.listdir(bdir)):
            if os.path.isdir(os.path.join(bdir, sub)) and sub != "raw":
                logs.append(os.path.join(bdir, sub, "vm1.console"))
        cmdlines = re.findall(r"Command line: (.*)", "".join(read(f) for f in logs))
        boot["cmdline"] = cmdlines[0] if cmdlines else ""
        boot["slub_any"] = any("slub_debug" in c for c in cmdlines)
        boot["retries"] = read(os.path.join(bdir, "retries")).strip()
        data["boots"][mtu] = boot
        if not os.path.isdir(raw):
            continue
        files = os.listdir(raw)
        for f in files:
            if f.endswith(".na") or f.endswith(".aborted"):
                kind, what = f.rsplit(".", 1)
                data[what][(kind, mtu)] = read(os.path.join(raw, f)).strip()
        for dev in DEVS:
            for vm in (1, 2):
                pre = os.path.join(raw, f"{dev}.vm{vm}.counters.pre")
                post = os.path.join(raw, f"{dev}.vm{vm}.counters.post")
                if os.path.exists(pre) and os.path.exists(post):
                    a = dict(l.rsplit(" ", 1) for l in read(pre).splitlines() if " " in l)
                    b = dict(l.rsplit(" ", 1) for l in read(post).splitlines() if " " in l)
                    delta = {}
                    for k in sorted(b):
                        try:
                            delta[k] = int(b[k]) - int(a.get(k, 0))
                        except ValueError:
                            pass
                    data["counters"][(dev, mtu, vm)] = delta
        ids = sorted({f.split(".vm")[0] for f in files if ".vm" in f and f.endswith(".meta")})
        for rid in ids:
            sm = SCALE_RE.match(rid)
            m = RUN_RE.match(rid)
            if not (m or sm):
                continue
            sides = {}
            for vm in (1, 2):
                meta = kv(os.path.join(raw, f"{rid}.vm{vm}.meta"))
                if meta:
                    sides[vm] = {"meta": meta,
                                 "out": read(os.path.join(raw, f"{rid}.vm{vm}.out"))}
            ok = all(s["meta"].get("rc") == "0" for s in sides.values()) and sides
            # Failed runs count too: a retry storm is often why a run failed.
            tkey = (m or sm).group("dev"), int((m or sm).group("mtu")), \
                re.sub(r"_r\d+$", "", rid.split("_", 2)[2])
            for vm, s in sides.items():
                data["hw_runs"] += "pre_hw" in s["meta"]
                for k, d in (hw_moved(s["meta"]) or {}).items():
                    tot = data["trouble"].setdefault(tkey, {})
                    tot[f"vm{vm} {k}"] = tot.get(f"vm{vm} {k}", 0) + d
            if sm:
                q = int(sm.group("q"))
                rec = {"ok": bool(ok), "bw": None, "mem": {}}
                if 2 in sides:
                    rec["bw"] = parse_perftest_bw(sides[2]["out"])
                for vm in (1, 2):
                    rec["mem"][vm] = scale_mem(raw, rid, vm, q)
                if not ok:
                    rec["why"] = last_words(sides)
                data["scale"][(sm.group("dev"), int(sm.group("mtu")), q)] = rec
                continue
            test = m.group("test")
            key = (m.group("dev"), int(m.group("mtu")), test, int(m.group("size")),
                   int(m.group("q") or 1))
            res = None
            client = sides.get(2, {}).get("out", "")
            if ok:
                if test.endswith("bw") or test == "msgrate":
                    res = parse_perftest_bw(client)
                elif test.endswith("lat"):
                    res = parse_perftest_lat(client)
                elif test in ("pingpong", "pingpongev"):
                    res = parse_pingpong(client)
                elif test == "udp":
                    res = parse_udp(client, int(m.group("size")))
                elif test == "pktgen":
                    res = parse_pktgen(sides.get(1, {}).get("out", ""), int(m.group("size")))
                elif test == "iperf":
                    res = parse_iperf(client)
                elif test == "ping":
                    res = parse_ping(client)
            if res is None:
                data["failed"].append((rid, last_words(sides)))
                continue
            res["cpu"] = {vm: per_gb(cpu_cost(s["meta"])) for vm, s in sides.items()}
            res["frame"] = heavy_frame([s["meta"] for s in sides.values()])
            data["runs"].setdefault(key, []).append(res)
    return data


ERR_RE = re.compile(r"fail|error|couldn|unable|check|timed? ?out|refused|stuck|not |"
                    r"invalid|denied|abort", re.I)


def last_words(sides):
    """The line of each side's output most likely to say what went wrong."""
    out = []
    for vm, s in sorted(sides.items()):
        lines = [l.strip() for l in s["out"].splitlines()
                 if l.strip() and re.search(r"[A-Za-z]", l)]
        errs = [l for l in lines if ERR_RE.search(l)]
        tail = errs[0] if errs else lines[-1] if lines else "(no output)"
        rc = s["meta"].get("rc", "?")
        why = {"124": "timed out, killed; ", "125": "stuck in the kernel, abandoned; ",
               "126": ""}.get(rc, "")
        tail = why + tail
        out.append(f"vm{vm} rc={s['meta'].get('rc', '?')}: {tail[:160]}")
    return "; ".join(out)


def meminfo(path):
    d = {}
    for line in read(path).splitlines():
        m = re.match(r"^(\w+):\s+(\d+) kB", line)
        if m:
            d[m.group(1)] = int(m.group(2))
    return d


def scale_mem(raw, rid, vm, q):
    base = os.path.join(raw, f"{rid}.vm{vm}.mem")
    pre, during = meminfo(base + ".pre"), meminfo(base + ".during")
    if not pre or not during:
        return None
    up = re.search(r"^Uptime: ([\d.]+)", read(base + ".during"), re.M)
    end = kv(os.path.join(raw, f"{rid}.vm{vm}.meta")).get("post_up")
    if up and end and float(up.group(1)) > float(end):
        return None  # sampled after the tool had freed its QPs
    keys = ("SUnreclaim", "SReclaimable", "VmallocUsed", "PageTables", "KernelStack")
    kern = sum(during.get(k, 0) - pre.get(k, 0) for k in keys)
    slab = during.get("Slab", 0) - pre.get("Slab", 0)
    return {"kern_kib_per_qp": kern / q, "slab_kib_per_qp": slab / q,
            "vmalloc_kib_per_qp": (during.get("VmallocUsed", 0) - pre.get("VmallocUsed", 0)) / q}


# ---- formatting ----------------------------------------------------------

def fmt(x, nd=1):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.{max(nd, 2)}f}"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def size_name(n):
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


class Report:
    def __init__(self, run, data):
        self.run, self.d = run, data
        self.info = kv(os.path.join(run, "host.info"))
        self.mtus = sorted(data["boots"])
        self.lines = []

    def w(self, s=""):
        self.lines.append(s)

    def table(self, head, rows):
        self.w("| " + " | ".join(head) + " |")
        self.w("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            self.w("| " + " | ".join(str(c) for c in r) + " |")
        self.w()

    def status(self, dev, mtu):
        """None if measured, else the reason it was not."""
        if (dev, mtu) in self.d["na"]:
            return "not available (" + self.d["na"][(dev, mtu)].replace("\n", "; ") + ")"
        if any(k[0] == dev and k[1] == mtu for k in self.d["runs"]) or \
                any(k[0] == dev and k[1] == mtu and v.get("ok") for k, v in self.d["scale"].items()):
            return None
        if (dev, mtu) in self.d["aborted"]:
            return "failed: every run failed (see Failed runs)"
        boot = self.d["boots"].get(mtu, {})
        if dev not in self.info.get("devs", "").split():
            return "not measured (not in BENCH_DEVS)"
        verdict = boot.get("verdict", "")
        # One boot per device since 2026-12-03: its lines are "DEV: ...".
        mine = [l[len(dev) + 2:] for l in verdict.splitlines() if l.startswith(f"{dev}: ")]
        if mine:
            verdict = "\n".join(mine)
        return ("not available (no result; boot verdict: " +
                (verdict or "none").replace("\n", "; ")[-300:] + ")")

    def vals(self, dev, mtu, test, size, q, field):
        runs = self.d["runs"].get((dev, mtu, test, size, q), [])
        return med([r.get(field) for r in runs]), len(runs)

    def cell(self, dev, mtu, test, size, q, field):
        v, n = self.vals(dev, mtu, test, size, q, field)
        if v is None:
            st = self.status(dev, mtu)
            return "n/a" if st else "fail", None
        return fmt(v) + ("" if n >= 3 else f" (n={n})"), v

    def header(self):
        i = self.info
        quick = i.get("quick") == "1"
        self.w("<!-- SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause -->")
        self.w("<!-- Generated by scripts/bench_report.py; do not edit. -->")
        self.w("# sroce benchmark results")
        self.w()
        if quick:
            self.w("**BENCH_QUICK=1 run: one repetition of a reduced matrix. It checks the "
                   "harness; its figures are not measurements.**")
            self.w()
        self.w(f"- run: {i.get('started', '?')} to {i.get('finished', '?')}, git `{i.get('git', '?')}`, "
               f"raw data `{self.run}`")
        self.w(f"- host: {i.get('host_cpus', '?')} CPUs, kernel {i.get('host_kernel', '?')}, "
               f"{i.get('qemu', '?')} (TCG, no KVM); load average (1/5/15 min) "
               f"at start **{i.get('load_start', '?')}**, at end **{i.get('load_end', '?')}** "
               f"(a load well above 0 means the host was not idle and the figures are low and noisy)")
        self.w(f"- sroce from the staged install `{i.get('stage', '?')}`")
        link = {"unix": "QEMU stream netdev over a host Unix socket",
                "tcp": "QEMU socket netdev over host TCP"}.get(i.get("link", ""), "link type not recorded")
        if self.mtus:
            self.w(f"- guests: 2 VMs, 1 vCPU and 2048 MB each, Debian kernel, joined by one "
                   f"virtio-net link ({link}); perftest {i.get('perftest', '?')}, "
                   f"iperf3 {i.get('iperf3', '?')}")
        else:
            self.w(f"- zero-copy run only (`make bench-zc`): one guest, 2 vCPUs and 2048 MB; "
                   f"perftest {i.get('perftest', '?')}, iperf3 {i.get('iperf3', '?')}")
        for mtu in self.mtus:
            b = self.d["boots"][mtu]
            cl = b.get("cmdline", "")
            slub = ("**off** (no guest command line has slub_debug)" if cl and not b.get("slub_any")
                    else "ON" if b.get("slub_any") else "unknown (no guest command line found)")
            results = [l for l in b.get("verdict", "").splitlines() if "RESULT:" in l]
            self.w(f"- MTU {mtu} boots: slub_debug {slub}; {b.get('wall', '?')} s wall; "
                   f"harness verdicts: {'; '.join(results) if results else '?'}")
            for line in b.get("retries", "").splitlines():
                self.w(f"  - MTU {mtu} rerun: {line}")
        dur = i.get("dur", "?")
        meas = int(dur) - 2 if dur.isdigit() else "?"
        self.w(f"- repetitions: {i.get('reps', '?')} per figure (median shown; `n=` when fewer "
               f"succeeded); each bandwidth run lasts {dur} s of which the middle {meas} s are "
               f"measured (perftest -D {dur} -f 1, iperf3 -O 1 -t {meas})")
        if len(self.mtus) > 1 and i.get("full_all") != "1" and not quick:
            self.w(f"- MTU {(i.get('mtus') or '?').split()[0]} ran the whole matrix; the other MTUs ran the MTU-sensitive subset "
                   f"(4 KiB to 1 MiB, 1 QP/stream; 4 KiB latency) to keep the run near an hour "
                   f"(BENCH_FULL_ALL=1 for everything)")
        self.w(f"- perftest RC ack timeout -u {i.get('qp_timeout', '14 (default)')} for both "
               f"devices (ibv_rc_pingpong keeps its built-in 14)")
        self.w("- bandwidth in MiB/s (2^20 bytes/s) of payload; ratios > 1 mean sroce is faster "
               "(bandwidth) or slower (latency)")
        self.w()
        if not self.mtus:
            return
        self.w("## Devices")
        self.w()
        rows = []
        for mtu in self.mtus:
            for dev in ("sroce", "rxe", "tcp"):
                st = self.status(dev if dev != "tcp" else "tcp", mtu)
                if dev == "tcp":
                    have = any(k[0] == "tcp" and k[1] == mtu for k in self.d["runs"])
                    st = None if have else st
                ab = self.d["aborted"].get((dev, mtu))
                rows.append((mtu, {"sroce": "sroce0", "rxe": "rxe0 (rdma_rxe)",
                                   "tcp": "TCP/ICMP (eth0)"}[dev],
                             (st or "measured") + (f"; section cut short: {ab}" if ab else "")))
        self.table(("MTU", "device", "status"), rows)

    def bandwidth(self):
        self.w("## Bandwidth (MiB/s)")
        self.w()
        self.w("TCP column: iperf3 with the same write size (-l) and 1 stream for 1 QP, "
               "-P 4 for 4 QPs. UDP column: what iperf3 -u delivers in datagrams of the "
               "test's RoCE data frame (payload min(size, IB MTU)), as payload MiB/s; see "
               "\"UDP in RoCE-sized datagrams\" below for why it is not the link's ceiling. "
               "Link column: the link's ceiling for that frame, the frames per second the "
               "kernel's packet generator gets across (\"Link ceiling\" below) times the "
               "payload per frame.")
        self.w()
        for mtu in self.mtus:
            keys = sorted({(k[2], k[3], k[4]) for k in self.d["runs"]
                           if k[1] == mtu and k[2].endswith("bw")} |
                          {(t, s, q) for t in ("writebw",) for (_, m, tt, s, q) in self.d["runs"]
                           if m == mtu and tt == "iperf"})
            if not keys:
                continue
            self.w(f"### MTU {mtu}")
            self.w()
            rows = []
            for test, size, q in keys:
                c = {d: self.cell(d, mtu, test, size, q, "bw_mib") for d in DEVS}
                tcp = self.cell("tcp", mtu, "iperf", size, q, "bw_mib")
                csize = min(size, ib_mtu(mtu))
                ceil, link = (self.cell("tcp", mtu, t, csize, 1, "bw_mib")
                              if any(k[1:4] == (mtu, t, csize) for k in self.d["runs"])
                              else ("-", None) for t in ("udp", "pktgen"))
                rows.append((test.replace("bw", "_bw"), size_name(size), q,
                             c["sroce"][0], c["rxe"][0], tcp[0], ceil[0], link[0],
                             ratio(c["sroce"][1], c["rxe"][1]), ratio(c["sroce"][1], tcp[1]),
                             ratio(c["sroce"][1], ceil[1]), ratio(c["sroce"][1], link[1])))
            self.table(("test", "size", "QPs", "sroce", "rxe", "TCP", "UDP", "link",
                        "sroce/rxe", "sroce/TCP", "sroce/UDP", "sroce/link"), rows)
        rows = []
        for mtu in self.mtus:
            c = {d: self.cell(d, mtu, "msgrate", 8, 4, "kpps") for d in DEVS}
            if any(v[1] is not None for v in c.values()):
                rows.append((mtu, c["sroce"][0], c["rxe"][0], ratio(c["sroce"][1], c["rxe"][1])))
        if rows:
            self.w("### Message rate: ib_write_bw 8 B, 4 QPs (thousand messages/s)")
            self.w()
            self.table(("MTU", "sroce", "rxe", "sroce/rxe"), rows)

    # Headers around the payload of a full data frame: Ethernet 14 + IPv4
    # 20, then TCP 20 + 12 (timestamps) or UDP 8 + BTH 12 + ICRC 4.
    FRAME_HDR = {"tcp": 14 + 20 + 32, "sroce": 14 + 20 + 8 + 12 + 4,
                 "rxe": 14 + 20 + 8 + 12 + 4}

    def frames(self):
        """Bandwidth as frames per second: the link and the guests pay per
        frame, and a RoCE frame carries at most the IB path MTU."""
        rows = []
        for mtu in self.mtus:
            for test, size, q in (("writebw", 65536, 1), ("readbw", 65536, 1)):
                row, any_v = [test.replace("bw", "_bw"), size_name(size), q, mtu], False
                for dev in ("sroce", "rxe", "tcp"):
                    if dev == "tcp" and test != "writebw":
                        row.append("")
                        continue
                    t = "iperf" if dev == "tcp" else test
                    runs = self.d["runs"].get((dev, mtu, t, size, q), [])
                    frame = med([r.get("frame") for r in runs])
                    bw = med([r.get("bw_mib") for r in runs])
                    if frame is None or bw is None or frame <= self.FRAME_HDR[dev]:
                        row.append("")
                        continue
                    pay = frame - self.FRAME_HDR[dev]
                    row.append(f"{bw * MIB / pay / 1000:.1f}k x {pay:.0f} B")
                    any_v = True
                if any_v:
                    rows.append(row)
        if not rows:
            return
        self.w("## Frames per second (data direction)")
        self.w()
        self.w("Median bandwidth divided by the mean payload per data frame (the sender's eth0 "
               "bytes per frame minus Ethernet, IP and TCP or UDP+BTH+ICRC headers; ACKs travel "
               "the other way). The link and both guests pay per frame, and a RoCE frame "
               "carries at most the IB path MTU (1024 B at netdev MTU 1500, 4096 at 9000) "
               "where TCP carries the MSS (1448, 8948).")
        self.w()
        self.table(("test", "size", "QPs/streams", "MTU", "sroce", "rxe", "TCP"), rows)

    def frame_rows(self, test, hdr):
        """Rows of the frame-rate tables: per MTU and RoCE payload size, the
        median frames/s of tcp-section runs TEST, whose frame or datagram is
        the payload plus HDR bytes."""
        rows = []
        for mtu in self.mtus:
            for size in sorted({k[3] for k in self.d["runs"] if k[1] == mtu and k[2] == test}):
                runs = self.d["runs"].get(("tcp", mtu, test, size, 1), [])
                fps = med([r.get("fps") for r in runs])
                if fps is None:
                    continue
                rows.append((mtu, ib_mtu(mtu), f"{size} B", f"{size + hdr} B",
                             f"{fps / 1000:.1f}k", fmt(med([r.get("bw_mib") for r in runs])),
                             len(runs)))
        return rows

    def link_ceiling(self):
        rows = self.frame_rows("pktgen", 58)
        if not rows:
            return
        self.w("## Link ceiling")
        self.w()
        self.w("The kernel's packet generator (pktgen) in the client guest sends UDP frames "
               "the size of a RoCE data frame (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + "
               "payload + ICRC 4) to a closed port of the server guest, each frame built "
               "once and handed to virtio-net 32 times with xmit_more, for the bandwidth "
               "runs' duration; the server counts what its eth0 receives in the middle of "
               "that time. No sender is cheaper, so this is what the link and the receiving "
               "guest can carry in frames of that size; times the RoCE payload per frame it "
               "is the ceiling of the bandwidth table's link column.")
        self.w()
        self.table(("MTU", "IB MTU", "RoCE payload per frame", "frame", "frames/s",
                    "payload MiB/s", "runs"), rows)

    def ceiling(self):
        rows = self.frame_rows("udp", 16)
        if not rows:
            return
        self.w("## UDP in RoCE-sized datagrams")
        self.w()
        self.w("iperf3 -u -b 0, one stream, datagrams of a RoCE data frame's UDP payload "
               "(BTH 12 + payload + ICRC 4), counted where they arrive, times the RoCE "
               "payload per frame. This is what a socket application moves in frames of "
               "that size (a system call and a copy per datagram on each side), not what "
               "the link can carry (that is \"Link ceiling\" above).")
        self.w()
        self.table(("MTU", "IB MTU", "RoCE payload per frame", "UDP datagram", "datagrams/s",
                    "payload MiB/s", "runs"), rows)

    def latency(self):
        self.w("## Latency (usec)")
        self.w()
        self.w("perftest t_typical (median) and 99th percentile; ICMP ping RTT (median, p99) "
               "is the floor; ibv_rc_pingpong usec/iter is the round trip. Ratios are "
               "sroce/rxe of the median (< 1: sroce faster).")
        self.w()
        for mtu in self.mtus:
            rows = []
            keys = sorted({(k[2], k[3]) for k in self.d["runs"] if k[1] == mtu and
                           (k[2].endswith("lat") or k[2].startswith("pingpong"))})
            for test, size in keys:
                field = "usec" if test.startswith("pingpong") else "typ"
                s = self.cell("sroce", mtu, test, size, 1, field)
                r = self.cell("rxe", mtu, test, size, 1, field)
                sp = self.cell("sroce", mtu, test, size, 1, "p99")[0] if field == "typ" else ""
                rp = self.cell("rxe", mtu, test, size, 1, "p99")[0] if field == "typ" else ""
                name = test.replace("lat", "_lat").replace("pingpongev", "rc_pingpong -e")
                rows.append((name.replace("pingpong", "rc_pingpong", 1)
                             if not name.startswith("rc_") else name,
                             size_name(size), s[0], sp, r[0], rp, ratio(s[1], r[1])))
            for size in sorted({k[3] for k in self.d["runs"] if k[1] == mtu and
                                k[2] == "pingpongev"}):
                for dev in DEVS:
                    ev = self.cell(dev, mtu, "pingpongev", size, 1, "usec")[1]
                    po = self.cell(dev, mtu, "pingpong", size, 1, "usec")[1]
                    if ev is not None and po is not None:
                        rows.append((f"{dev}: rc_pingpong -e / polled", size_name(size),
                                     "", "", "", "", ratio(ev, po)))
            for (dev, m, test, size, q) in sorted(self.d["runs"]):
                if m == mtu and test == "ping":
                    a = self.cell("icmp", mtu, "ping", size, q, "med_us")[0]
                    b = self.cell("icmp", mtu, "ping", size, q, "p99_us")[0]
                    rows.append(("ICMP ping RTT", f"{size} B payload", "", "", "", "",
                                 f"floor: {a} (p99 {b})"))
            if rows:
                self.w(f"### MTU {mtu}")
                self.w()
                self.table(("test", "size", "sroce", "sroce p99", "rxe", "rxe p99", "sroce/rxe"),
                           rows)

    def cpu(self):
        self.w("## CPU cost (guest CPU seconds per GB on the wire)")
        self.w()
        self.w("From /proc/stat deltas around each tool run in both guests, divided by the eth0 "
               "bytes moved in the same window (the larger of tx/rx, headers included). "
               "`kernel` is system+irq+softirq time, `total` adds user time: perftest busy-polls "
               "its CQ, so `total` on the polling side is mostly that spin. Server = vm1, "
               "client = vm2. Medians over repetitions; connection setup is included.")
        self.w()
        for mtu in self.mtus:
            rows = []
            keys = sorted({(k[2], k[3], k[4]) for k in self.d["runs"] if k[1] == mtu and
                           (k[2].endswith("bw") or k[2] == "iperf")})
            for test, size, q in keys:
                row = [("TCP iperf3" if test == "iperf" else test.replace("bw", "_bw")),
                       size_name(size), q]
                devs = ("tcp",) if test == "iperf" else DEVS
                any_v = False
                for dev in ("sroce", "rxe", "tcp"):
                    if dev not in devs:
                        row.append("")
                        continue
                    runs = self.d["runs"].get((dev, mtu, test, size, q), [])
                    parts = []
                    for vm in (1, 2):
                        k = med([r["cpu"].get(vm)[1] for r in runs if r["cpu"].get(vm)])
                        t = med([r["cpu"].get(vm)[0] for r in runs if r["cpu"].get(vm)])
                        any_v |= k is not None
                        parts.append(f"{fmt(k)}/{fmt(t)}")
                    row.append(" ; ".join(parts))
                if any_v:
                    rows.append(row)
            if rows:
                self.w(f"### MTU {mtu} (kernel/total: server ; client)")
                self.w()
                self.table(("test", "size", "QPs/streams", "sroce", "rxe", "TCP"), rows)

    def counters(self):
        self.w("## Retransmissions and error counters on the clean link")
        self.w()
        self.w("Deltas of /sys/class/infiniband/<dev>/ports/1/{hw_counters,counters} over the "
               "whole device section (all runs); only counters that moved are listed, data "
               "counters excluded. TCP: iperf3's sender retransmits.")
        self.w()
        rows = []
        for (dev, mtu, vm), delta in sorted(self.d["counters"].items()):
            names = [f"{k.split('/')[-1]}={v}" for k, v in delta.items()
                     if v and TROUBLE_RE.search(k.split("/")[-1])]
            rows.append((mtu, dev, f"vm{vm}", ", ".join(names) if names else "none moved"))
        for mtu in self.mtus:
            tr = [r.get("retrans") for (dev, m, t, s, q), rs in self.d["runs"].items()
                  if dev == "tcp" and m == mtu for r in rs if r.get("retrans") is not None]
            if tr:
                rows.append((mtu, "tcp", "vm2", f"retransmits total {sum(tr)} over {len(tr)} runs"))
        if rows:
            self.table(("MTU", "device", "VM", "counters that moved"), rows)
        else:
            self.w("No counter data.")
            self.w()
        self.trouble()

    def trouble(self):
        """Which runs the section totals above come from."""
        rows = [(mtu, dev, test, ", ".join(f"{k}={v}" for k, v in sorted(tot.items())))
                for (dev, mtu, test), tot in sorted(self.d["trouble"].items())]
        self.w("### The same counters per test")
        self.w()
        self.w("Summed over the repetitions (failed runs included), read just before "
               "and after each tool run; tests where none moved are not listed.")
        self.w()
        if rows:
            self.table(("MTU", "device", "test", "counters that moved"), rows)
        else:
            self.w("None moved in any run." if self.d["hw_runs"] else
                   "No per-run counter data (runs older than 2026-12-03).")
            self.w()

    def scale(self):
        if not self.d["scale"]:
            return
        self.w("## QP scaling: one ib_write_bw with N RC QPs")
        self.w()
        self.w("4 KiB writes, send queue depth 16 (one CQ serves all QPs and rxe caps a CQ at "
               "32767 entries; small messages keep the data in flight at 1024 QPs within what "
               "the emulated link moves in the measured window), run 8 s longer than the "
               "matrix runs. Kernel memory per QP = change in SUnreclaim+SReclaimable+"
               "VmallocUsed+PageTables+KernelStack between the idle device and the moment the "
               "tool has listed all N peer QPs (every QP created), divided by N; it includes the "
               "tool's page tables and pinned-MR bookkeeping. `-` = no sample while the tool "
               "was still running.")
        self.w()
        rows = []
        for (dev, mtu, q), rec in sorted(self.d["scale"].items()):
            bw = rec["bw"]["bw_mib"] if rec.get("bw") else None
            mem = []
            for vm in (1, 2):
                m = rec["mem"].get(vm)
                mem.append(f"{m['kern_kib_per_qp']:.1f} (slab {m['slab_kib_per_qp']:.1f}, "
                           f"vmalloc {m['vmalloc_kib_per_qp']:.1f})" if m else "-")
            rows.append((dev, mtu, q, fmt(bw) if bw is not None else
                         "fail: " + rec.get("why", "?")[:200], mem[0], mem[1]))
        self.table(("device", "MTU", "QPs", "aggregate MiB/s", "server KiB/QP", "client KiB/QP"),
                   rows)

    def zero_copy(self):
        """selftests/bench/zc.sh's zc.tsv: copy against zero-copy, one guest."""
        path = os.path.join(self.run, "zc", "raw", "zc.tsv")
        if not os.path.isfile(path):
            return
        runs = {}
        for line in read(path).splitlines():
            f = line.split("\t")
            # perftest prints 0.00 when it could not calibrate its clock
            if len(f) != 9 or f[8] != "0" or float(f[4]) <= 0:
                continue
            mode, test, size = f[0], f[1], int(f[2])
            bw, cpu, zc, sent = float(f[4]), float(f[5]), int(f[6]), int(f[7])
            gib = bw * float(self.info.get("dur", 4)) / 1024
            runs.setdefault((test, size, mode), []).append(
                {"bw": bw, "cpu_gib": cpu / gib if gib else None,
                 "zc_share": zc / sent if sent else 0.0})
        if not runs:
            return
        self.w("## Zero-copy transmit: copy against page fragments")
        self.w()
        self.w("One guest with two vCPUs (`selftests/bench/zc.sh`): sroce on each end of a "
               "veth pair between two network namespaces, path MTU 1024, one RC QP, 64 KiB "
               "and 1 MiB messages. The VM link cannot gather (no NETIF_F_SG on QEMU's stream "
               "netdev), a veth pair can. Both ends share the guest's CPUs, so a figure pays "
               "for sender and receiver; the receiver still copies into its MR. Each "
               "repetition runs the copy (`zero_copy` 0) and zero-copy (1) back to back. "
               "CPU = guest CPU seconds (both namespaces) per GiB moved; zc share = packets "
               "sent as page fragments / packets sent. TCP (iperf3 over the same veth, 64 KiB "
               "GSO packets) is there for scale.")
        self.w()
        rows = []
        for (test, size, mode) in sorted(runs):
            if mode != "0":
                continue
            c, z = runs[(test, size, "0")], runs.get((test, size, "1"), [])
            cb, zb = med([r["bw"] for r in c]), med([r["bw"] for r in z])
            cc, zcpu = med([r["cpu_gib"] for r in c]), med([r["cpu_gib"] for r in z])
            share = med([r["zc_share"] for r in z])
            rows.append((test, size_name(size), f"{fmt(cb)} (n={len(c)})",
                         f"{fmt(zb)} (n={len(z)})", ratio(zb, cb), fmt(cc, 2),
                         fmt(zcpu, 2), ratio(zcpu, cc),
                         "-" if share is None else f"{share:.2f}"))
        self.table(("test", "size", "copy MiB/s", "zero-copy MiB/s", "zc/copy",
                    "copy CPU s/GiB", "zc CPU s/GiB", "zc/copy CPU", "zc share"), rows)
        tcp = runs.get(("tcp", 131072, "tcp"), [])
        if tcp:
            self.w(f"TCP over the same veth: {fmt(med([r['bw'] for r in tcp]))} MiB/s "
                   f"(n={len(tcp)}).")
            self.w()
        self.zero_copy_profile()

    # Where the sender's copy shows in a profile, and what replaces it.
    ZC_SYMS = ("req_build", "sroce_sge_copy", "sroce_sge_frags", "sroce_net_zc_seal",
               "sroce_put_icrc", "sroce_mr_copy", "memcpy", "__memcpy", "memcpy_orig",
               "memcpy_erms", "crc32_body", "sroce_net_rcv")

    def zero_copy_profile(self):
        prof = {}
        for mode in ("0", "1"):
            text = read(os.path.join(self.run, "zc", "raw", f"zc_{mode}_write.prof"))
            for line in text.splitlines():
                m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[k\]\s+(\S+)", line)
                if m and m.group(3) in self.ZC_SYMS:
                    prof[(mode, m.group(3))] = (float(m.group(1)), float(m.group(2)))
        if not prof:
            return
        self.w("Profile of the first 64 KiB write runs (perf, whole guest, call graphs): "
               "each function's share of all samples including what it calls (self in "
               "brackets); `-` = under 0.5%. In the copy run the sender's copy is "
               "`sroce_sge_copy`; the responder of a WRITE copies through `sroce_mr_copy` "
               "in both.")
        self.w()
        rows = []
        for sym in self.ZC_SYMS:
            if not any((m, sym) in prof for m in ("0", "1")):
                continue
            cells = []
            for mode in ("0", "1"):
                v = prof.get((mode, sym))
                cells.append(f"{v[0]:.1f}% ({v[1]:.1f}%)" if v else "-")
            rows.append((f"`{sym}`", cells[0], cells[1]))
        self.table(("function", "copy", "zero-copy"), rows)

    def failures(self):
        if not self.d["failed"]:
            return
        self.w("## Failed runs")
        self.w()
        for rid, why in self.d["failed"][:60]:
            self.w(f"- `{rid}`: {why}")
        if len(self.d["failed"]) > 60:
            self.w(f"- ... and {len(self.d['failed']) - 60} more (see raw data)")
        self.w()


def plot(data, mtus, outdir, reps):
    """Bandwidth vs message size: ib_write_bw 1 QP per device, iperf3 1 stream."""
    dat = os.path.join(outdir, "bandwidth.dat")
    series = []
    with open(dat, "w") as f:
        f.write("# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause\n"
                "# size_bytes MiB/s (median); one block per series\n")
        for mtu in mtus:
            for dev, test, label in (("sroce", "writebw", "sroce ib_write_bw"),
                                     ("rxe", "writebw", "rxe ib_write_bw"),
                                     ("tcp", "iperf", "TCP iperf3")):
                pts = sorted((k[3], med([r.get("bw_mib") for r in rs]))
                             for k, rs in data["runs"].items()
                             if k[0] == dev and k[1] == mtu and k[2] == test and k[4] == 1)
                pts = [p for p in pts if p[1]]
                if not pts:
                    continue
                f.write(f"# {dev} MTU {mtu}\n")
                for s, v in pts:
                    f.write(f"{s} {v:.4f}\n")
                f.write("\n\n")
                series.append(f"{label}, MTU {mtu}")
    if not series:
        return None
    png = os.path.join(outdir, "bandwidth.png")
    plots = ", ".join(f"'{dat}' index {i} using 1:2 with linespoints lw 2 title '{t}'"
                      for i, t in enumerate(series))
    script = f"""set terminal pngcairo size 900,560 noenhanced
set output '{png}'
set termoption noenhanced
set title 'Bandwidth vs message size, 1 QP / 1 stream (median of {reps})'
set logscale x 2
set logscale y 10
set xrange [32:2097152]
set xtics ('64 B' 64, '512 B' 512, '4 KiB' 4096, '64 KiB' 65536, '1 MiB' 1048576)
set xlabel 'message size (bytes)'
set ylabel 'MiB/s'
set grid
set key left top
plot {plots}
"""
    try:
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True,
                           timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"gnuplot failed: {e}"
    if r.returncode != 0:
        # pngcairo is absent in some builds; the plain png terminal is enough.
        script = script.replace("pngcairo size 900,560 noenhanced", "png size 900,560")
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True,
                           timeout=60, check=False)
        if r.returncode != 0:
            return "gnuplot failed: " + r.stderr.strip()[-300:]
    return png


def drop_empty_sections(lines):
    """Leave out '## ' sections that ended up without a table or figure."""
    out, sec = [], []
    for line in lines + ["## "]:
        if line.startswith("## "):
            if sec and (not sec[0].startswith("## ") or
                        any(l.startswith("|") or l.startswith("!") or l.startswith("- ")
                            for l in sec[1:])):
                out += sec
            sec = []
        sec.append(line)
    return "\n".join(out).rstrip() + "\n"


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    run, outdir = sys.argv[1], sys.argv[2]
    if not os.path.isfile(os.path.join(run, "host.info")):
        print(f"bench_report: {run} is not a bench run folder", file=sys.stderr)
        return 2
    os.makedirs(outdir, exist_ok=True)
    data = collect(run)
    rep = Report(run, data)
    rep.header()
    rep.bandwidth()
    rep.frames()
    rep.link_ceiling()
    rep.ceiling()
    rep.latency()
    rep.cpu()
    rep.counters()
    rep.scale()
    rep.zero_copy()
    rep.failures()
    png = plot(data, rep.mtus, outdir, rep.info.get("reps", "?"))
    if png and png.endswith(".png"):
        rep.w("## Plot")
        rep.w()
        rep.w("![bandwidth vs message size](bandwidth.png)")
        rep.w()
    elif png:
        rep.w(f"Plot: {png}")
    md = os.path.join(outdir, "results.md")
    with open(md, "w") as f:
        f.write(drop_empty_sections(rep.lines))
    summary = {"info": rep.info,
               "runs": [{"dev": k[0], "mtu": k[1], "test": k[2], "size": k[3], "qps": k[4],
                         "results": v} for k, v in sorted(data["runs"].items())],
               "not_available": {f"{k[0]}@{k[1]}": v for k, v in data["na"].items()},
               "failed": data["failed"]}
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    print(f"bench_report: wrote {md}" + (f" and {png}" if png and png.endswith('.png') else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
