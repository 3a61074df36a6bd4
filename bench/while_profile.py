#!/usr/bin/env python3
"""Wall time of a conjugate-gradient while_loop beside the GPU time of its
kernels alone: run it against a server started under `nsys profile`, then
divide the wall time by the kernel time nsys sums (cuda_gpu_kern_sum).

    nsys profile -o prof --trace=cuda resident-server --listen 127.0.0.1:50551 &
    bench/while_profile.py --server 127.0.0.1:50551 --cg 2048 --runs 3
    nsys stats --report cuda_gpu_kern_sum prof.nsys-rep

The script runs one warm-up solve and then --runs timed solves; the kernel
sum covers all of them, so it prints the wall time of each and their total.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import resident as rs
from while_loops import cg_parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="127.0.0.1:50051")
    ap.add_argument("--cg", type=int, default=2048)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-trips", type=int, default=100_000)
    args = ap.parse_args()
    n = args.cg
    rhs = np.sin(np.linspace(0, 3, n * n)).reshape(n, n) / (n * n)
    with rs.connect(args.server) as c:
        rs.set_default_client(c)
        b = c.asarray(rhs)

        def solve():
            s, cond, step = cg_parts(rs, b, 1e-8)
            _, trips, _ = c.while_loop(cond, step, s, max_trips=args.max_trips,
                                       full_output=True)
            return int(trips)
        solve()  # warm-up: compiles, loads, records
        walls, trips = [], 0
        for _ in range(args.runs):
            t0 = time.perf_counter()
            trips = solve()
            walls.append(time.perf_counter() - t0)
    print(f"CG {n}^2: {trips} trips; wall per solve (ms): "
          + ", ".join(f"{w * 1e3:.1f}" for w in walls)
          + f"; timed total {sum(walls) * 1e3:.1f} ms over {args.runs} solves"
          " (the kernel sum also holds the warm-up's kernels)")


if __name__ == "__main__":
    main()
