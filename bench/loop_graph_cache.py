#!/usr/bin/env python3
"""Many short solves in one session: what keeping executable loop graphs
(--loop-graph-cache) saves a client that solves the same shape again and
again, beside the same server keeping none and beside trip by trip.

    bench/loop_graph_cache.py --server kept=127.0.0.1:50051@127.0.0.1:9551 \\
        --server none=127.0.0.1:50052@127.0.0.1:9552 [--n 32] [--solves 50] [--json out.json]

Each --server is LABEL=TARGET[@METRICS]: with its metrics address the row also
gives the mean time a graph took to record and ready (from
resident_loop_graph_setup_seconds_total) and how many were updated from a
kept one (resident_loop_graph_cache_hits_total). Each solve is conjugate
gradient on an n x n Poisson grid (bench/while_loops.py's), to a relative
residual of 1e-8, with a new right-hand side each time, as one request;
the figure is the median over --solves after one warm-up solve. CuPy, where
installed, runs the same solves as a Python loop testing each trip.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
import urllib.request

import numpy as np

import resident as rs
from while_loops import cg_parts, host_loop


def metric(addr, name):
    if not addr:
        return 0.0
    text = urllib.request.urlopen(f"http://{addr}/metrics", timeout=10).read().decode()
    m = re.search(rf"^{re.escape(name)} ([0-9.eE+-]+)", text, re.M)
    return float(m.group(1)) if m else 0.0


GRAPHS = ('resident_while_loops_total{form="graph"}', "resident_loop_graphs_total")


def graph_counts(addr):
    return (sum(metric(addr, g) for g in GRAPHS),
            metric(addr, "resident_loop_graph_setup_seconds_total"),
            metric(addr, "resident_loop_graph_cache_hits_total"))


def rhs_list(n, count):
    rng = np.random.default_rng(3)
    return [rng.standard_normal((n, n)) for _ in range(count)]


def solve_times(solve, rhss):
    solve(rhss[0])  # warm-up: kernels compiled, first graph made
    times, trips = [], []
    for b in rhss[1:]:
        t0 = time.perf_counter()
        trips.append(solve(b))
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), statistics.median(trips)


def run_server(label, spec, n, rhss, tol, max_trips):
    target, _, metrics = spec.partition("@")
    with rs.connect(target, lazy=True) as c:
        rs.set_default_client(c)

        def solve(b):
            s, cond, step = cg_parts(rs, c.asarray(b), tol)
            _, trips, _ = c.while_loop(cond, step, s, max_trips=max_trips, full_output=True)
            return int(trips)
        before = graph_counts(metrics)
        ms, trips = solve_times(solve, rhss)
        after = graph_counts(metrics)
    graphs, setup, hits = (a - b for a, b in zip(after, before))
    return {"label": label, "ms": ms, "trips": trips, "graphs": graphs,
            "setup_us": setup / graphs * 1e6 if graphs else None, "hits": hits}


def run_cupy(cupy, rhss, tol, max_trips):
    def solve(b):
        s, cond, step = cg_parts(cupy, cupy.asarray(b), tol)
        trips = host_loop(s, cond, step, max_trips)
        cupy.cuda.Device().synchronize()
        return trips
    ms, trips = solve_times(solve, rhss)
    return {"label": "CuPy, Python loop", "ms": ms, "trips": trips}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", action="append", required=True,
                    help="LABEL=TARGET[@METRICS], repeatable")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--solves", type=int, default=50)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--json")
    args = ap.parse_args()
    rhss = rhs_list(args.n, args.solves + 1)
    max_trips = 10 * args.n * args.n
    rows = []
    for s in args.server:
        label, _, spec = s.partition("=")
        rows.append(run_server(label, spec, args.n, rhss, args.tol, max_trips))
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        rows.append(run_cupy(cupy, rhss, args.tol, max_trips))
    print(f"CG on {args.n}x{args.n}, {args.solves} solves in one session (median per solve)")
    print(f"{'':28} {'ms':>9} {'trips':>6} {'graphs':>7} {'setup us':>9} {'hits':>5}")
    for r in rows:
        setup = r.get("setup_us")
        print(f"{r['label']:28} {r['ms']:9.3f} {r['trips']:6.0f} {r.get('graphs', 0):7.0f} "
              f"{'' if setup is None else f'{setup:9.1f}':>9} {r.get('hits', 0):5.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "solves": args.solves, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
