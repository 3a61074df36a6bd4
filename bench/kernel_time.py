#!/usr/bin/env python3
"""The GPU time of the kernels alone, per window of a benchmark: reads the
records that the CUPTI injection library resident_kernel_time wrote (each
kernel's, copy's and memset's start and end on the GPU, in CLOCK_MONOTONIC ns)
beside a JSON list of windows in the same clock, such as
`bench/while_loops.py --windows FILE` writes.

    export CUDA_INJECTION64_PATH=$PWD/build/bench/libresident_kernel_time.so
    RESIDENT_KERNEL_TIME_OUT=/tmp/server.rkt resident-server ... &
    RESIDENT_KERNEL_TIME_OUT=/tmp/client.rkt bench/while_loops.py --windows /tmp/windows.json ...
    bench/kernel_time.py /tmp/server.rkt /tmp/client.rkt /tmp/windows.json [--json out.json]
    bench/kernel_time.py --self-test

Several records files (the server's, the CuPy client's) are read as one.

For each window: its wall time, the kernels that ran in it, the sum of their
durations, the time the GPU was busy (kernels, copies and memsets, overlaps
merged), wall / busy, and the six kernels that took longest in all. Records
that straddle a window's edge count for the part inside it, so busy time never
exceeds wall time. Whole-graph records (RESIDENT_KERNEL_TIME_GRAPHS=1) are
shown as their own column and left out of busy time: a graph's span holds the
gaps between its kernels.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import struct
import sys
import tempfile

MAGIC = b"RKTIME01"
KERNEL, MEMCPY, MEMSET, GRAPH = 0, 1, 2, 3
RECORD = struct.Struct("<QQII")  # start, end, name id, kind
TOP = 6


def read_records(path):
    """(names by id, [(start, end, name id, kind)] sorted by start, records
    CUPTI dropped) from a resident_kernel_time file. A truncated last entry
    (the process killed mid-write) is ignored."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a resident_kernel_time file")
    _clock, offset = struct.unpack_from("<Iq", data, 8)
    pos = 8 + 12
    names: dict = {}
    records: list = []
    dropped = 0
    while pos < len(data):
        tag = data[pos:pos + 1]
        try:
            if tag == b"N":
                ident, size = struct.unpack_from("<II", data, pos + 1)
                if pos + 9 + size > len(data):
                    break
                names[ident] = data[pos + 9:pos + 9 + size].decode("utf-8", "replace")
                pos += 9 + size
            elif tag == b"R":
                (count,) = struct.unpack_from("<I", data, pos + 1)
                end = pos + 5 + count * RECORD.size
                if end > len(data):
                    break
                records.extend(RECORD.iter_unpack(data[pos + 5:end]))
                pos = end
            elif tag == b"D":
                (dropped,) = struct.unpack_from("<Q", data, pos + 1)
                pos += 9
            else:
                raise ValueError(f"{path}: unknown entry {tag!r} at byte {pos}")
        except struct.error:  # truncated
            break
    if offset:
        records = [(s + offset, e + offset, n, k) for s, e, n, k in records]
    records.sort()
    return names, records, dropped


def read_all(paths):
    """read_records over several files, as one: name ids renumbered so they
    stay unique, records sorted by start, drops summed."""
    names: dict = {}
    records: list = []
    dropped = 0
    for path in paths:
        file_names, file_records, file_dropped = read_records(path)
        ids = {i: len(names) + i for i in file_names}
        names.update((ids[i], n) for i, n in file_names.items())
        records.extend((s, e, ids.get(n, n), k) for s, e, n, k in file_records)
        dropped += file_dropped
    records.sort()
    return names, records, dropped


def merged_ns(intervals) -> int:
    """The length of the union of [start, end) intervals.

    >>> merged_ns([(0, 10), (5, 15), (20, 25)])
    20
    >>> merged_ns([])
    0
    """
    total = 0
    cur_start = cur_end = None
    for s, e in sorted(intervals):
        if cur_end is None or s > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = s, e
        else:
            cur_end = max(cur_end, e)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


class Index:
    """Records sorted by start, to find those that overlap a window quickly."""

    def __init__(self, records):
        self.records = records
        self.starts = [r[0] for r in records]
        self.longest = max((r[1] - r[0] for r in records), default=0)

    def overlapping(self, start, end):
        lo = bisect.bisect_left(self.starts, start - self.longest)
        hi = bisect.bisect_left(self.starts, end)
        return [r for r in self.records[lo:hi] if r[1] > start]


def window_stats(index, names, window) -> dict:
    """What the GPU did inside one window, each record clipped to it."""
    w0, w1 = int(window["start_ns"]), int(window["end_ns"])
    busy = []
    graph = []
    per_kernel = collections.defaultdict(lambda: [0, 0])  # name -> [count, ns]
    kernels = kernel_ns = 0
    for s, e, name, kind in index.overlapping(w0, w1):
        s, e = max(s, w0), min(e, w1)
        if kind == GRAPH:
            graph.append((s, e))
            continue
        busy.append((s, e))
        if kind == KERNEL:
            kernels += 1
            kernel_ns += e - s
            entry = per_kernel[names.get(name, f"#{name}")]
            entry[0] += 1
            entry[1] += e - s
    busy_ns = merged_ns(busy)
    wall_ns = w1 - w0
    top = sorted(per_kernel.items(), key=lambda kv: -kv[1][1])[:TOP]
    return {
        "label": window["label"],
        "wall_ms": wall_ns / 1e6,
        "kernels": kernels,
        "kernel_ms": kernel_ns / 1e6,
        "busy_ms": busy_ns / 1e6,
        "wall_over_busy": wall_ns / busy_ns if busy_ns else None,
        "graph_ms": merged_ns(graph) / 1e6 if graph else None,
        "top": [{"name": n, "count": c, "ms": ns / 1e6} for n, (c, ns) in top],
    }


def report(stats, dropped) -> None:
    graphs = any(s["graph_ms"] is not None for s in stats)
    print("| window | wall ms | kernels | kernel ms | busy ms | wall/busy |"
          + (" graph ms |" if graphs else ""))
    print("| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if graphs else ""))
    for s in stats:
        ratio = "-" if s["wall_over_busy"] is None else f"{s['wall_over_busy']:.2f}"
        row = (f"| {s['label']} | {s['wall_ms']:.1f} | {s['kernels']} | {s['kernel_ms']:.1f}"
               f" | {s['busy_ms']:.1f} | {ratio} |")
        if graphs:
            row += " - |" if s["graph_ms"] is None else f" {s['graph_ms']:.1f} |"
        print(row)
    for s in stats:
        if not s["top"]:
            continue
        print(f"\n{s['label']}: top kernels\n| kernel | count | ms |\n| --- | ---: | ---: |")
        for t in s["top"]:
            print(f"| {t['name'][:70]} | {t['count']} | {t['ms']:.2f} |")
    if dropped:
        print(f"\nwarning: CUPTI dropped {dropped} records; busy and kernel times are low")


# --- the self-test ----------------------------------------------------------------


def write_file(path, records, names, offset=0) -> None:
    """A file as resident_kernel_time writes it, for the self-test; timestamps
    are stored less offset, as CUPTI's own clock would give them."""
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<Iq", 0 if offset else 1, offset))
        for ident, name in names.items():
            raw = name.encode()
            f.write(b"N" + struct.pack("<II", ident, len(raw)) + raw)
        f.write(b"R" + struct.pack("<I", len(records)))
        for s, e, n, k in records:
            f.write(RECORD.pack(s - offset, e - offset, n, k))
        f.write(b"R" + struct.pack("<I", 5))  # a batch cut short by a kill


def self_test() -> None:
    """A window [100, 200) ns over records worked out by hand:
    kernel A [90, 130)  -> [100, 130)  30 ns
    kernel B [120, 155)                35 ns, overlapping A
    memcpy   [160, 175)                15 ns, busy but no kernel
    kernel A [180, 260) -> [180, 200)  20 ns
    kernel C [300, 400)                outside
    kernels 3, kernel sum 85 ns, busy [100, 155) + [160, 175) + [180, 200) = 90 ns,
    wall 100 ns, top A (2, 50 ns) then B (1, 35 ns)."""
    import doctest  # noqa: PLC0415: the self-test only

    assert doctest.testmod().failed == 0
    names = {0: "A", 1: "B", 2: "[memcpy]", 3: "C"}
    records = [(90, 130, 0, KERNEL), (120, 155, 1, KERNEL), (160, 175, 2, MEMCPY),
               (180, 260, 0, KERNEL), (300, 400, 3, KERNEL)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.rkt")
        write_file(path, records, names, offset=-1000)
        got_names, got, dropped = read_records(path)
        twice = read_all([path, path])
    assert got_names == names and got == sorted(records) and dropped == 0, got
    s = window_stats(Index(twice[1]), twice[0], {"label": "w", "start_ns": 100, "end_ns": 200})
    assert len(twice[0]) == 8 and s["kernels"] == 6 and round(s["busy_ms"] * 1e6) == 90, s
    assert [(t["name"], t["count"]) for t in s["top"]] == [("A", 4), ("B", 2)], s["top"]
    s = window_stats(Index(got), got_names, {"label": "w", "start_ns": 100, "end_ns": 200})
    assert s["kernels"] == 3, s
    assert round(s["kernel_ms"] * 1e6) == 85, s
    assert round(s["busy_ms"] * 1e6) == 90, s
    assert round(s["wall_ms"] * 1e6) == 100, s
    assert abs(s["wall_over_busy"] - 100 / 90) < 1e-12, s
    assert [(t["name"], t["count"], round(t["ms"] * 1e6)) for t in s["top"]] == [
        ("A", 2, 50), ("B", 1, 35)], s["top"]
    empty = window_stats(Index(got), got_names, {"label": "e", "start_ns": 500, "end_ns": 600})
    assert empty["kernels"] == 0 and empty["busy_ms"] == 0 and empty["wall_over_busy"] is None
    print("kernel_time self-test: ok")


def graph_rounds(records, names) -> list:
    """Per graph (RESIDENT_KERNEL_TIME_GRAPHS=1 records): its launches, the
    first one's and the median one's duration, and their total. CUPTI
    reports no kernel inside a conditional node's body (seen on an H100,
    CUDA 13), so a loop graph's own time per trip comes from its launches:
    a loop's first round runs a known number of trips (the executor's
    kFirstGraphRound, 4)."""
    by_graph: dict = collections.defaultdict(list)
    for s, e, n, k in records:
        if k == GRAPH:
            by_graph[names.get(n, str(n))].append(e - s)
    out = []
    for name, spans in by_graph.items():
        out.append({"graph": name, "launches": len(spans), "first_ms": spans[0] / 1e6,
                    "median_ms": sorted(spans)[len(spans) // 2] / 1e6,
                    "total_ms": sum(spans) / 1e6})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", metavar="FILE",
                    help="the records files (RESIDENT_KERNEL_TIME_OUT), then the windows: a JSON "
                    'list of {"label", "start_ns", "end_ns"} in CLOCK_MONOTONIC ns')
    ap.add_argument("--json", help="write each window's figures here too")
    ap.add_argument("--self-test", action="store_true",
                    help="check the arithmetic on a case worked out by hand")
    ap.add_argument("--rounds", action="store_true",
                    help="list each graph's launches (first, median, total) instead: only "
                    "records files are given")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if args.rounds:
        names, records, _ = read_all(args.files)
        print(f"{'graph':>14} {'launches':>8} {'first ms':>9} {'median ms':>10} {'total ms':>10}")
        for g in graph_rounds(records, names):
            print(f"{g['graph']:>14} {g['launches']:8d} {g['first_ms']:9.3f} {g['median_ms']:10.3f} "
                  f"{g['total_ms']:10.1f}")
        return
    if len(args.files) < 2:
        ap.error("a records file and a windows file are required (or --self-test)")
    names, records, dropped = read_all(args.files[:-1])
    with open(args.files[-1]) as f:
        windows = json.load(f)
    index = Index(records)
    stats = [window_stats(index, names, w) for w in windows]
    if records:
        print(f"{len(records)} records, {records[0][0]} to {records[-1][1]} ns (CLOCK_MONOTONIC)")
    else:
        print("no records", file=sys.stderr)
    report(stats, dropped)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"dropped": dropped, "windows": stats}, f, indent=1)


if __name__ == "__main__":
    main()
