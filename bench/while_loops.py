#!/usr/bin/env python3
"""Loops that decide on the device: conjugate gradient and Jacobi to a
tolerance, and a fixed loop whose body holds a dot, each as one Resident
request (`c.while_loop`, `c.loop`) beside the same algorithm as a client-side
loop that checks convergence every iteration (a round trip each) and beside
NumPy, and CuPy where it is installed (a Python loop synchronising on each
test, as CuPy users write it), in the same run.

    bench/while_loops.py --server 127.0.0.1:50051 [--cg 2048] [--jacobi 1024]
        [--dot 256] [--trips 1000] [--reps 3] [--json out.json]
        [--server-trip-by-trip 127.0.0.1:50052] [--windows windows.json]

--server-trip-by-trip names a second server started with --loop-graphs=false:
the same request there runs trip by trip (the condition read back each
trip), so the two rows show what the device graph saves. Beside CuPy's Python
loop the bench also times CuPy running the same number of trips with no test
at all (one launch per op, nothing read back): the floor of a client-side
loop.

Each figure is the median of --reps runs after one warm-up, from the call to
the answer in hand (the trip count read back). The algorithms are written
once over an array namespace (numpy, cupy, resident) so each side runs the
same operations.

--windows writes each timed run of the Resident and CuPy rows as a window
{"label", "start_ns", "end_ns"} in CLOCK_MONOTONIC ns (labels such as
"CG 2048².resident_while rep 2"), for bench/kernel_time.py to set beside the
GPU time of the kernels that a profiled server ran in it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import resident as rs


WINDOWS: list | None = None  # --windows: the labelled runs' windows
WINDOWS_PATH: str | None = None  # rewritten after each window, so a cut-off run keeps its own


def median_ms(reps: int, fn, label: str | None = None) -> tuple:
    """(median ms, what fn returned last) after one warm-up; with --windows,
    each timed run of a labelled call is recorded as a window."""
    out = fn()
    times = []
    for rep in range(reps):
        start_ns = time.monotonic_ns()
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if WINDOWS is not None and label:
            WINDOWS.append({"label": f"{label} rep {rep}", "start_ns": start_ns,
                            "end_ns": time.monotonic_ns()})
            with open(WINDOWS_PATH, "w") as f:
                json.dump(WINDOWS, f, indent=1)
    return statistics.median(times), out


# --- the algorithms, over a namespace xp -------------------------------------------


def neighbours(xp, p):
    """The sum of p's four neighbours on an n x n grid, zero beyond its edges."""
    n = p.shape[0]
    zr = xp.zeros((1, n), dtype=p.dtype)
    zc = xp.zeros((n, 1), dtype=p.dtype)
    return (xp.concatenate([zr, p[:-1]], axis=0) + xp.concatenate([p[1:], zr], axis=0)
            + xp.concatenate([zc, p[:, :-1]], axis=1) + xp.concatenate([p[:, 1:], zc], axis=1))


def laplacian(xp, p):
    """The 5-point Laplacian of p with zero Dirichlet boundaries, matrix-free."""
    return 4 * p - neighbours(xp, p)


def cg_parts(xp, b, tol):
    """Conjugate gradient on laplacian(x) = b from x = 0: the initial state,
    the condition and the step."""
    bb = xp.sum(b * b)
    threshold = tol * tol * bb  # |r| / |b| > tol

    def cond(s):
        return s[3] > threshold

    def step(s):
        x, r, p, rr = s
        ap = laplacian(xp, p)
        alpha = rr / xp.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = xp.sum(r * r)
        return [x, r, r + (rr_new / rr) * p, rr_new]
    return [xp.zeros_like(b), b, b, bb], cond, step


def jacobi_parts(xp, b, tol):
    """Jacobi sweeps on laplacian(x) = b until no element moves by more than tol."""
    def cond(s):
        return s[1] > tol

    def step(s):
        x, _ = s
        x_new = (b + neighbours(xp, x)) * 0.25
        return [x_new, xp.max(xp.abs(x_new - x))]
    return [xp.zeros_like(b), xp.max(xp.abs(b)) + 2 * tol], cond, step


def host_loop(state, cond, step, max_trips, test=bool):
    """The client-side loop: the condition read back every iteration."""
    trips = 0
    while test(cond(state)) and trips < max_trips:
        state = step(state)
        trips += 1
    return trips


# --- the runs ------------------------------------------------------------------------


def fixed_trips(state, step, trips):
    """The same steps with no test: what the kernels cost without the checks."""
    for _ in range(trips):
        state = step(state)
    return state


def run_problem(name, parts, n, tol, max_trips, reps, c, cupy, m, rows, c_plain=None,
                numpy=True):
    rhs = np.sin(np.linspace(0, 3, n * n)).reshape(n, n) / (n * n)

    def numpy_run():
        s, cond, step = parts(np, rhs, tol)
        return host_loop(s, cond, step, max_trips)
    if numpy:
        t, trips = median_ms(reps, numpy_run)
        m[f"{name}.numpy_ms"], m[f"{name}.trips"] = t, trips
        rows.append((name, "NumPy, Python loop", t, trips))
    if cupy is not None:
        b_dev = cupy.asarray(rhs)

        def cupy_run():
            s, cond, step = parts(cupy, b_dev, tol)
            trips = host_loop(s, cond, step, max_trips)  # bool() synchronises each test
            cupy.cuda.Device().synchronize()
            return trips
        t, trips = median_ms(reps, cupy_run, f"{name}.cupy_loop")
        m[f"{name}.cupy_loop_ms"] = t
        rows.append((name, "CuPy, Python loop (sync per test)", t, trips))

        def cupy_untested():
            s, _, step = parts(cupy, b_dev, tol)
            fixed_trips(s, step, trips)
            cupy.cuda.Device().synchronize()
            return trips
        t, _ = median_ms(reps, cupy_untested, f"{name}.cupy_no_test")
        m[f"{name}.cupy_no_test_ms"] = t
        rows.append((name, "CuPy, same trips, no test", t, trips))

    def resident_while_on(client, key, how):
        rs.set_default_client(client)
        b_res = client.asarray(rhs)

        def resident_while():
            s, cond, step = parts(rs, b_res, tol)
            _, trips, _ = client.while_loop(cond, step, s, max_trips=max_trips, full_output=True)
            return int(trips)
        t, trips = median_ms(reps, resident_while, f"{name}.{key}")
        m[f"{name}.{key}_ms"], m[f"{name}.{key}_trips"] = t, trips
        rows.append((name, how, t, trips))
        rs.set_default_client(c)
    resident_while_on(c, "resident_while", "Resident while_loop, one request")
    if c_plain is not None:
        resident_while_on(c_plain, "resident_while_trip_by_trip",
                          "Resident while_loop, one request, trip by trip")
    b_res = c.asarray(rhs)

    def resident_host_loop():
        s, cond, step = parts(rs, b_res, tol)
        return host_loop(s, cond, step, max_trips)  # a round trip per test
    # The client-side loop is slow; one timed run after the warm-up.
    t, trips = median_ms(1, resident_host_loop)
    m[f"{name}.resident_host_loop_ms"] = t
    rows.append((name, "Resident, Python loop (round trip per test)", t, trips))


def run_dot_loop(n, trips, reps, c, cupy, m, rows, c_plain=None, numpy=True):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)) / n
    x0 = rng.standard_normal((n, n))

    def body(xp, x):
        return xp.tanh(a_of[xp.__name__] @ x) * 0.5 + x * 0.5
    a_of = {"numpy": a}

    def numpy_run():
        x = x0
        for _ in range(trips):
            x = body(np, x)
        return float(x[0, 0])
    if numpy:
        t, _ = median_ms(reps, numpy_run)
        m["dot_loop.numpy_ms"] = t
        rows.append((f"{trips} x ({n}² dot + update)", "NumPy", t, trips))
    if cupy is not None:
        a_of["cupy"] = cupy.asarray(a)
        x_dev = cupy.asarray(x0)

        def cupy_run():
            x = x_dev
            for _ in range(trips):
                x = body(cupy, x)
            cupy.cuda.Device().synchronize()
            return trips
        t, _ = median_ms(reps, cupy_run, "dot_loop.cupy")
        m["dot_loop.cupy_ms"] = t
        rows.append((f"{trips} x ({n}² dot + update)", "CuPy, one launch per op", t, trips))
    for client, key, how in ((c, "resident", "Resident loop, one request"),
                             (c_plain, "resident_trip_by_trip",
                              "Resident loop, one request, trip by trip")):
        if client is None:
            continue
        rs.set_default_client(client)
        a_of["resident"] = client.asarray(a)
        x_res = client.asarray(x0)

        def resident_run():
            x = client.loop(trips, x_res, lambda x: body(rs, x))
            return float(x[0, 0])
        t, _ = median_ms(reps, resident_run, f"dot_loop.{key}")
        m[f"dot_loop.{key}_ms"] = t
        rows.append((f"{trips} x ({n}² dot + update)", how, t, trips))
    rs.set_default_client(c)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="127.0.0.1:50051")
    ap.add_argument("--cg", type=int, default=2048, help="CG grid side (to |r|/|b| 1e-8)")
    ap.add_argument("--jacobi", type=int, default=1024, help="Jacobi grid side")
    ap.add_argument("--jacobi-tol", type=float, default=1e-9)
    ap.add_argument("--dot", type=int, default=256, help="the fixed loop's matrix side")
    ap.add_argument("--trips", type=int, default=1000, help="the fixed loop's trips")
    ap.add_argument("--max-trips", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--no-numpy", action="store_true",
                    help="skip NumPy's rows (minutes at GPU sizes)")
    ap.add_argument("--server-trip-by-trip",
                    help="a second server started with --loop-graphs=false, timed beside")
    ap.add_argument("--windows", help="write the Resident and CuPy runs' CLOCK_MONOTONIC windows "
                    "here, for bench/kernel_time.py")
    args = ap.parse_args()
    global WINDOWS, WINDOWS_PATH
    WINDOWS = [] if args.windows else None
    WINDOWS_PATH = args.windows
    try:
        import cupy  # noqa: PLC0415: GPU hosts only
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no module, driver or device
        cupy = None
    m: dict = {}
    rows: list = []
    c_plain = rs.connect(args.server_trip_by_trip) if args.server_trip_by_trip else None
    with rs.connect(args.server) as c:
        rs.set_default_client(c)
        m["device"] = c.device
        run_problem(f"CG {args.cg}²", cg_parts, args.cg, 1e-8, args.max_trips, args.reps, c,
                    cupy, m, rows, c_plain, not args.no_numpy)
        run_problem(f"Jacobi {args.jacobi}²", jacobi_parts, args.jacobi, args.jacobi_tol,
                    args.max_trips, args.reps, c, cupy, m, rows, c_plain, not args.no_numpy)
        run_dot_loop(args.dot, args.trips, args.reps, c, cupy, m, rows, c_plain,
                     not args.no_numpy)
    if c_plain is not None:
        c_plain.close()
    print(f"server device {m['device']}" + ("" if cupy is None else ", CuPy in the same run"))
    print("| workload | how | ms | trips |\n| --- | --- | ---: | ---: |")
    for name, how, ms, trips in rows:
        print(f"| {name} | {how} | {ms:.1f} | {trips} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(m, f, indent=1)
    if args.windows:
        with open(args.windows, "w") as f:
            json.dump(WINDOWS, f, indent=1)


if __name__ == "__main__":
    main()
