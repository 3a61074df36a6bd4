#!/usr/bin/env python3
"""The CuPy and NumPy baseline for resident-bench: the same workloads, in one process.

CuPy figures are "n/a" when CuPy (or a GPU) is missing. Every CuPy time ends
with a device synchronise; the seed also records the tutorial's unsynchronised
time, to show what it hid.  Usage: baseline.py [--json FILE] [--quick] [--reps N]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy

ADDS = 1024
TINY_OPS = 10000
ROUNDTRIP_SAMPLES = 2000


def load_cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy, None
    except Exception as e:  # no module, no driver or no device
        return None, f"{type(e).__name__}: {e}".splitlines()[0]


class Lib:
    """numpy or cupy behind one interface; sync() waits for the device."""

    def __init__(self, name, xp):
        self.name, self.xp = name, xp
        self.sync = (lambda: xp.cuda.Device().synchronize()) if name == "cupy" else (lambda: None)


def repeat(reps, fn):
    """Warm up once, then time fn() (which returns ms) reps times: (median, min)."""
    fn()
    t = [fn() for _ in range(reps)]
    return statistics.median(t), min(t)


def put(m, key, stats):
    m[key], m[key + "_min"] = stats


def ms_since(t0):
    return (time.perf_counter() - t0) * 1e3


def seed(lib, quick, reps, m):
    xp, shape = lib.xp, (16, 512, 4, 4) if quick else (1024, 512, 4, 4)
    unsynced = []

    def run():
        x = xp.ones(shape)
        lib.sync()
        t0 = time.perf_counter()
        for _ in range(ADDS):  # as the tutorial writes it
            x = xp.add(x, x)
        unsynced.append(ms_since(t0))
        lib.sync()
        ms = ms_since(t0)
        assert bool(xp.isinf(x).all()), "seed: 1.0 doubled 1024 times must be inf"
        return ms

    with numpy.errstate(over="ignore"):  # the overflow to inf is the point
        put(m, "seed.loop_ms", repeat(reps, run))
    if lib.name == "cupy":
        m["seed.unsynced_ms"] = statistics.median(unsynced[1:])


def roundtrip(lib, m):
    """One tiny add with its result ready, as Resident's tiny program."""
    a, b = lib.xp.ones(16, dtype="float32"), lib.xp.ones(16, dtype="float32")
    t = []
    for i in range(200 + ROUNDTRIP_SAMPLES):
        t0 = time.perf_counter()
        c = lib.xp.add(a, b)
        lib.sync()
        t.append(ms_since(t0) * 1e3)
    t = sorted(t[200:])
    m["roundtrip.program_p50_us"] = t[len(t) // 2]
    m["roundtrip.program_p99_us"] = t[int(0.99 * (len(t) - 1))]
    del c


def tiny_ops(lib, reps, m):
    a = lib.xp.ones(16, dtype="float32")

    def run():
        lib.sync()
        t0 = time.perf_counter()
        x = a
        for _ in range(TINY_OPS):
            x = lib.xp.add(x, a)
        lib.sync()
        return ms_since(t0)

    put(m, "tiny_ops.ms", repeat(reps, run))
    m["tiny_ops.ops_per_s"] = TINY_OPS / (m["tiny_ops.ms"] / 1e3)


def chain(lib, quick, reps, m):
    """resident-bench's chain: y = sqrt(x * x + 1) * 0.5 - x, five ufuncs."""
    n = 1 << 17 if quick else 1 << 23
    x = lib.xp.arange(n, dtype="float64") * (1.0 / n)

    def run():
        lib.sync()
        t0 = time.perf_counter()
        lib.xp.sqrt(x * x + 1.0) * 0.5 - x
        lib.sync()
        return ms_since(t0) * 1e3

    put(m, "chain.us", repeat(max(reps, 5), run))
    del x


def fused(lib, quick, reps, m):
    """resident-bench's fused: x * w + b with rows w, b; (x > 0.5).sum()."""
    rows, cols = (64 if quick else 4096), 2048
    n = rows * cols
    x = (lib.xp.arange(n, dtype="float32") * (1.0 / n)).reshape(rows, cols)
    w = lib.xp.arange(cols, dtype="float32") * 0.001
    b = lib.xp.arange(cols, dtype="float32") * -0.5

    def bias():
        lib.sync()
        t0 = time.perf_counter()
        x * w + b
        lib.sync()
        return ms_since(t0) * 1e3

    def count():
        lib.sync()
        t0 = time.perf_counter()
        (x > 0.5).sum()
        lib.sync()
        return ms_since(t0) * 1e3

    put(m, "fused_bias.us", repeat(max(reps, 5), bias))
    put(m, "fused_count.us", repeat(max(reps, 5), count))
    del x


def dot(lib, quick, reps, m):
    n = 1024 if quick else 8192
    m["dot.n"] = n
    for dt, name in (("float32", "f32"), ("float64", "f64")):
        a, b = lib.xp.ones((n, n), dtype=dt), lib.xp.ones((n, n), dtype=dt)

        def run():
            lib.sync()
            t0 = time.perf_counter()
            lib.xp.dot(a, b)
            lib.sync()
            return ms_since(t0)

        put(m, f"dot.{name}_ms", repeat(max(reps, 5), run))
        m[f"dot.{name}_tflops"] = 2 * n**3 / (m[f"dot.{name}_ms"] / 1e3) / 1e12
        del a, b


def transfer(lib, quick, reps, m):
    """cupy.asarray / cupy.asnumpy of 1 GiB float64 (no NumPy equivalent)."""
    cp = lib.xp
    host = numpy.arange(1 << 23 if quick else 1 << 27, dtype=numpy.float64)
    holder = {}

    def up():
        holder.pop("d", None)
        t0 = time.perf_counter()
        holder["d"] = cp.asarray(host)
        lib.sync()
        return ms_since(t0)

    def down():
        t0 = time.perf_counter()
        holder["h"] = cp.asnumpy(holder["d"])  # synchronous
        return ms_since(t0)

    put(m, "transfer.upload_ms", repeat(reps, up))
    put(m, "transfer.download_ms", repeat(reps, down))
    assert numpy.array_equal(holder["h"], host), "transfer: round trip differs"
    m["transfer.bytes"] = host.nbytes
    for k in ("upload", "download"):
        m[f"transfer.{k}_gbs"] = host.nbytes / (m[f"transfer.{k}_ms"] / 1e3) / 1e9


def first_result(lib, m):
    mod = lib.name
    code = (f"import {mod}; print({mod}.asnumpy({mod}.ones(16)+{mod}.ones(16)))" if mod == "cupy"
            else f"import {mod}; print({mod}.ones(16)+{mod}.ones(16))")

    def run():
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
        return ms_since(t0)

    put(m, "first_result.ms", repeat(5, run))


def time_synced(lib, m, key, fn, reps):
    """Puts `key`'s times: fn() between two synchronisations, after a
    warm-up (CuPy: at least 5 repetitions)."""
    def run():
        lib.sync()
        t0 = time.perf_counter()
        fn()
        lib.sync()
        return ms_since(t0)
    put(m, key, repeat(max(reps, 5) if lib.name == "cupy" else reps, run))


def sort(lib, quick, reps, m):
    """sort, argsort, cumsum of 2^26 float32 / int64; take_along_axis and
    x[x > 0] of the float32."""
    n = 1 << 20 if quick else 1 << 26
    m["sort.n"] = n
    rng = numpy.random.default_rng(7)
    for name, host in (("f32", rng.uniform(-1, 1, n).astype(numpy.float32)),
                       ("i64", rng.integers(-(1 << 40), 1 << 40, n))):
        a = lib.xp.asarray(host)
        ops = [("sort", lambda: lib.xp.sort(a)), ("argsort", lambda: lib.xp.argsort(a)),
               ("cumsum", lambda: lib.xp.cumsum(a))]
        if name == "f32":
            idx = lib.xp.argsort(a)
            ops.append(("take", lambda: lib.xp.take_along_axis(a, idx, axis=0)))
            ops.append(("mask", lambda: a[a > 0]))
        for op, fn in ops:
            time_synced(lib, m, f"sort.{op}_{name}_ms", fn, reps)
        del a


def fft(lib, quick, reps, m):
    """fft of 2^24 complex128, fftn of 4096^2 complex64, rfft of 2^26
    float32 (quick: 2^16, 256^2, 2^18), as resident-bench's fft."""
    rng = numpy.random.default_rng(11)
    n1, side, n3 = (1 << 16, 256, 1 << 18) if quick else (1 << 24, 4096, 1 << 26)
    cases = [
        ("fft_c128", (rng.uniform(-1, 1, n1) + 1j * rng.uniform(-1, 1, n1)),
         lambda a: lib.xp.fft.fft(a)),
        ("fftn_c64", (rng.uniform(-1, 1, (side, side))
                      + 1j * rng.uniform(-1, 1, (side, side))).astype(numpy.complex64),
         lambda a: lib.xp.fft.fftn(a)),
        ("rfft_f32", rng.uniform(-1, 1, n3).astype(numpy.float32), lambda a: lib.xp.fft.rfft(a)),
    ]
    for name, host, fn in cases:
        a = lib.xp.asarray(host)
        time_synced(lib, m, f"fft.{name}_ms", lambda fn=fn, a=a: fn(a), reps)
        del a


def linalg(lib, quick, reps, m):
    """solve, cholesky, inv, det, eigvalsh of a 4096^2 float64 matrix and
    solve of 10,000 stacked 32^2 systems (quick: 256^2, 500), as
    resident-bench's linalg."""
    rng = numpy.random.default_rng(13)
    n, stack = (256, 500) if quick else (4096, 10000)
    a = rng.uniform(-1, 1, (n, n)) + n * numpy.eye(n)
    h = numpy.triu(a) + numpy.triu(a, 1).T
    b = rng.uniform(-1, 1, (n, 1))
    sa = rng.uniform(-1, 1, (stack, 32, 32)) + 32 * numpy.eye(32)
    sb = rng.uniform(-1, 1, (stack, 32, 1))
    xa, xh, xb, xsa, xsb = (lib.xp.asarray(v) for v in (a, h, b, sa, sb))
    la = lib.xp.linalg
    cases = [("solve_f64", lambda: la.solve(xa, xb)), ("cholesky_f64", lambda: la.cholesky(xh)),
             ("inv_f64", lambda: la.inv(xa)), ("det_f64", lambda: la.det(xa)),
             ("eigvalsh_f64", lambda: la.eigvalsh(xh)),
             ("qr_f64", lambda: la.qr(xa)), ("svd_f64", lambda: la.svd(xa, full_matrices=False)),
             ("eigh_f64", lambda: la.eigh(xh)),
             ("solve_batched_f64", lambda: la.solve(xsa, xsb))]
    for name, fn in cases:
        time_synced(lib, m, f"linalg.{name}_ms", fn, reps)


def random(lib, quick, reps, m):
    """default_rng(0).random(2^28) float64 and float32, integers(0, 1000,
    2^26) int64, standard_normal(2^26) and standard_exponential(2^26)
    (quick: 2^20, 2^20, 2^18, 2^18, 2^18),
    one generator whose state
    advances between repetitions, as resident-bench's random."""
    n = 1 << 20 if quick else 1 << 28
    g = lib.xp.random.default_rng(0)
    time_synced(lib, m, "random.random_f64_ms", lambda: g.random(n), reps)
    time_synced(lib, m, "random.random_f32_ms", lambda: g.random(n, dtype=numpy.float32), reps)
    time_synced(lib, m, "random.integers_i64_ms", lambda: g.integers(0, 1000, n // 4), reps)
    time_synced(lib, m, "random.normal_f64_ms", lambda: g.standard_normal(n // 4), reps)
    time_synced(lib, m, "random.exponential_f64_ms", lambda: g.standard_exponential(n // 4),
                reps)


def bench(lib, args):
    m, only = {}, set(filter(None, args.only.split(",")))
    want = lambda w: not only or w in only
    gpu = lib.name == "cupy"
    steps = [("seed", lambda: seed(lib, args.quick, args.reps, m)),
             ("roundtrip", lambda: roundtrip(lib, m)),
             ("tiny_ops", lambda: tiny_ops(lib, args.reps, m)),
             ("chain", lambda: chain(lib, args.quick, args.reps, m)),
             ("fused", lambda: fused(lib, args.quick, args.reps, m)),
             ("dot", lambda: dot(lib, args.quick, args.reps, m)),
             ("sort", lambda: sort(lib, args.quick, args.reps, m)),
             ("fft", lambda: fft(lib, args.quick, args.reps, m)),
             ("linalg", lambda: linalg(lib, args.quick, args.reps, m)),
             ("random", lambda: random(lib, args.quick, args.reps, m)),
             ("transfer", lambda: transfer(lib, args.quick, args.reps, m)),
             ("first_result", lambda: first_result(lib, m))]
    for name, fn in steps:
        if want(name) and (gpu or name != "transfer"):  # no host-device copy in NumPy
            t0 = time.perf_counter()
            fn()
            print(f"{lib.name} {name} ({ms_since(t0) / 1e3:.1f} s):", ", ".join(
                f"{k.split('.', 1)[1]} {v:.4g}" for k, v in m.items() if k.startswith(name + ".")))
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", default="")
    p.add_argument("--quick", action="store_true", help="smaller sizes")
    p.add_argument("--reps", type=int, default=0, help="0: 3, as the tutorial's median of 3")
    p.add_argument("--only", default="", help="comma-separated workloads")
    p.add_argument("--cupy-only", action="store_true", help="leave NumPy out (a GPU host's run)")
    args = p.parse_args()
    args.reps = args.reps or 3
    cupy, why = load_cupy()
    out = {"tool": "baseline", "quick": args.quick, "python": sys.version.split()[0],
           "numpy": {"version": numpy.__version__},
           "cupy": {"available": cupy is not None}}
    if cupy is not None:
        props = cupy.cuda.runtime.getDeviceProperties(0)
        out["cupy"].update(version=cupy.__version__, device=props["name"].decode())
        out["cupy"]["metrics"] = bench(Lib("cupy", cupy), args)
    else:
        out["cupy"]["reason"] = why
        print(f"cupy: n/a ({why})")
    if not args.cupy_only:
        out["numpy"]["metrics"] = bench(Lib("numpy", numpy), args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
