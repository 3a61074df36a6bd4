#!/usr/bin/env python3
"""The server's resident memory before, during and after a hostile load.

Starts a CPU-backend resident-server, takes its RSS once warm and idle, runs
`--workers` client processes for `--seconds` (uploads and downloads of random
sizes over gRPC and shared memory, programs, failing programs, sessions
opened and abandoned, clients killed mid-call), then waits for the server to
go idle and reports RSS again, with /proc/PID/smaps grouped by kind of
mapping (heap arenas, thread stacks, files) so what holds memory can be told.

    python3 bench/rss_after_load.py --server build/server/rpc/resident-server \\
        --seconds 120 --workers 4

Needs the Python client (client/python) importable.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def smaps_groups(pid: int) -> Dict[str, Tuple[int, int]]:
    """RSS KiB and mapping count per kind: heap, arena (anonymous, 64 MiB
    aligned glibc arenas and other anonymous memory), stack, file, other."""
    groups: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    kind = "other"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$", line)
        if m:
            name = m.group(3)
            size = int(m.group(2), 16) - int(m.group(1), 16)
            if name == "[heap]":
                kind = "heap (brk)"
            elif name.startswith("[stack"):
                kind = "stack"
            elif name.startswith("/memfd:") or "(deleted)" in name:
                kind = "shared memory"
            elif name.startswith("/"):
                kind = "files"
            elif name == "":
                # By size: thread stacks are 8 MiB maps, glibc's arenas
                # reserve 64 MiB, OpenBLAS's buffers are 32 MiB and more.
                mib = size / (1 << 20)
                kind = f"anonymous {mib:.0f} MiB maps" if mib >= 1 else "anonymous < 1 MiB maps"
            else:
                kind = name
            groups[kind][1] += 1
            continue
        if line.startswith("Rss:"):
            groups[kind][0] += int(line.split()[1])
    return {k: (v[0], v[1]) for k, v in groups.items()}


def metric(text: str, name: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def worker(target: str, seconds: float, seed: int) -> None:
    import resident as rs

    rng = random.Random(seed)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            c = rs.connect(target, local_data=rng.random() < 0.5,
                           close_session=rng.random() < 0.8, run_timeout=10)
        except Exception:
            time.sleep(0.1)
            continue
        try:
            for _ in range(rng.randint(1, 20)):
                n = rng.choice([1, 10, 1000, 1 << 14, 1 << 18, 1 << 20])
                a = np.random.default_rng(rng.randint(0, 1 << 30)).random(n)
                x = c.asarray(a)
                y = (x * 2.0 + 1.0).sum()
                float(y)
                r = rng.random()
                if r < 0.3:
                    (x * x).get()
                elif r < 0.45:
                    try:  # a failing program
                        float((x.reshape(-1, 1) @ x.reshape(1, -1)[:, :1].T).sum())
                    except Exception:
                        pass
                elif r < 0.55:
                    try:
                        c.asarray(np.zeros((3, 0)))[5]
                    except Exception:
                        pass
                elif r < 0.65:
                    m = c.asarray(np.random.default_rng(1).random((64, 64)))
                    float(rs.linalg.svdvals(m).sum())
        except Exception:
            pass
        finally:
            if rng.random() < 0.9:
                try:
                    c.close()
                except Exception:
                    pass


def killer(target: str, seconds: float, seed: int) -> None:
    """Starts workers and kills them mid-call, over and over."""
    rng = random.Random(seed)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p = mp.Process(target=worker, args=(target, 5.0, rng.randint(0, 1 << 30)))
        p.start()
        time.sleep(rng.uniform(0.2, 2.0))
        if p.is_alive():
            os.kill(p.pid, signal.SIGKILL)
        p.join()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True, help="the resident-server binary")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--idle-wait", type=float, default=5.0,
                    help="seconds to wait after the load before reading RSS")
    ap.add_argument("--diagnose", action="store_true",
                    help="then, through gdb: malloc_stats() into the server's log and RSS "
                         "after a forced malloc_trim(0)")
    ap.add_argument("--server-arg", action="append", default=[],
                    help="extra server flag (repeatable)")
    args = ap.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="rss-after-load-"))
    log = open(workdir / "server.log", "wb")
    proc = subprocess.Popen(
        [args.server, "--listen", "127.0.0.1:0", "--device", "cpu",
         "--metrics-listen", "127.0.0.1:0", "--session-idle-timeout", "3s", *args.server_arg],
        stdout=log, stderr=subprocess.STDOUT)
    port = metrics_port = None
    for _ in range(600):
        text = (workdir / "server.log").read_text(errors="replace")
        m = re.search(r"\(port (\d+)\)", text)
        mm = re.search(r"metrics on http://[^:]+:(\d+)/metrics", text)
        if m and mm:
            port, metrics_port = int(m.group(1)), int(mm.group(1))
            break
        time.sleep(0.05)
    if port is None:
        print("server did not start:\n" + text, file=sys.stderr)
        proc.kill()
        return 1
    target = f"127.0.0.1:{port}"

    import urllib.request

    def metrics() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
            return r.read().decode()

    # Warm: one worker round so lazily made pools and caches exist.
    worker(target, 2.0, 0)
    time.sleep(args.idle_wait)
    idle = rss_kib(proc.pid)
    idle_groups = smaps_groups(proc.pid)
    idle_threads = threads(proc.pid)

    procs = [mp.Process(target=worker, args=(target, args.seconds, i + 1))
             for i in range(args.workers)]
    procs.append(mp.Process(target=killer, args=(target, args.seconds, 99)))
    for p in procs:
        p.start()
    peak = peak_threads = 0
    while any(p.is_alive() for p in procs):
        peak = max(peak, rss_kib(proc.pid))
        peak_threads = max(peak_threads, threads(proc.pid))
        time.sleep(0.2)
    for p in procs:
        p.join()
    time.sleep(args.idle_wait)
    after = rss_kib(proc.pid)
    after_groups = smaps_groups(proc.pid)
    m = metrics()
    print(f"RSS idle {idle / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB, "
          f"{args.idle_wait:.0f} s after the load {after / 1024:.0f} MiB "
          f"(+{(after - idle) / 1024:.1f} MiB); threads {idle_threads} idle, "
          f"{peak_threads} peak, {threads(proc.pid)} after")
    print(f"gauges after: sessions {metric(m, 'resident_sessions ')}, "
          f"handles {metric(m, 'resident_handles ')}")
    print(f"{'mappings':36} {'idle MiB':>9} {'after MiB':>10} {'count':>6}")
    for k in sorted(set(idle_groups) | set(after_groups)):
        a = idle_groups.get(k, (0, 0))
        b = after_groups.get(k, (0, 0))
        print(f"{k:36} {a[0] / 1024:9.1f} {b[0] / 1024:10.1f} {b[1]:6d}")
    if args.diagnose:
        mark = (workdir / "server.log").stat().st_size
        subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-ex", "call (void)malloc_stats()",
                        "-ex", "call (int)malloc_trim(0)"], capture_output=True, timeout=120)
        time.sleep(0.5)
        print(f"after a forced malloc_trim(0): RSS {rss_kib(proc.pid) / 1024:.0f} MiB")
        with open(workdir / "server.log", "rb") as f:
            f.seek(mark)
            tail = f.read().decode(errors="replace").splitlines()
        print("\n".join(line for line in tail if "Total" in line or "system bytes" in line
                        or "in use bytes" in line)[-4000:])
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
