#!/usr/bin/env python3
"""Same-host transfers: 1 GiB (default) of float64 up and down through the
server's local data socket (shared memory) and through gRPC, beside the
machine's own copy speeds measured in the same run: a memcpy (NumPy copyto
into memory already touched) and, with CuPy on a GPU host, a pinned
host-to-device and device-to-host copy.

    bench/local_transfer.py --server 127.0.0.1:50051 [--mib 1024] [--reps 5]
        [--json out.json]

Each figure is the median of --reps runs after one warm-up; uploads end
when the server has the array (the call returns), downloads when the NumPy
array is in hand.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import resident as rs


def median_s(reps: int, fn) -> float:
    fn()  # warm-up: regions registered, pages touched, pools filled
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def transfers(c: rs.Client, host: np.ndarray, reps: int, m: dict, key: str) -> None:
    nbytes = host.nbytes
    holder = {}

    def up():
        holder.pop("x", None)  # the previous upload is released first (sent with this one)
        holder["x"] = c.asarray(host)

    m[f"{key}.upload_gbs"] = nbytes / median_s(reps, up) / 1e9
    x = holder["x"]

    def down():
        holder["h"] = None  # the previous download's memory goes back first
        holder["h"] = x.get()

    m[f"{key}.download_gbs"] = nbytes / median_s(reps, down) / 1e9
    assert np.array_equal(holder["h"], host), f"{key}: the round trip differs"
    holder.clear()
    del x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="127.0.0.1:50051")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    n = args.mib * (1 << 20) // 8
    host = np.arange(n, dtype=np.float64)
    m: dict = {"bytes": host.nbytes}

    dst = np.empty_like(host)
    dst[...] = 1.0  # touched: a copy into it measures the copy, not page faults
    m["memcpy_gbs"] = host.nbytes / median_s(args.reps, lambda: np.copyto(dst, host)) / 1e9
    del dst
    try:
        import cupy  # noqa: PLC0415: GPU hosts only

        pinned = cupy.cuda.alloc_pinned_memory(host.nbytes)
        ph = np.frombuffer(pinned, np.float64, n)
        ph[...] = host
        dev = cupy.empty(n, np.float64)

        def h2d():
            dev.set(ph)
            cupy.cuda.Device().synchronize()

        def d2h():
            dev.get(out=ph)
            cupy.cuda.Device().synchronize()

        m["pinned_h2d_gbs"] = host.nbytes / median_s(args.reps, h2d) / 1e9
        m["pinned_d2h_gbs"] = host.nbytes / median_s(args.reps, d2h) / 1e9
        del dev, ph, pinned
    except ImportError:
        pass

    with rs.connect(args.server) as c:
        assert c.transport == "shared-memory", c.transport_detail
        m["device"] = c.device
        transfers(c, host, args.reps, m, "shm")
        shared = c.empty_host(host.shape, host.dtype)
        shared[...] = host
        def up_in_place():
            holder.pop("y", None)
            holder["y"] = c.asarray(shared)

        holder: dict = {}
        m["shm.upload_in_place_gbs"] = host.nbytes / median_s(args.reps, up_in_place) / 1e9
        holder.clear()
        del shared
    with rs.connect(args.server, local_data=False) as c:
        transfers(c, host, args.reps, m, "grpc")

    base = m.get("pinned_h2d_gbs", m["memcpy_gbs"])
    base_name = "pinned H2D" if "pinned_h2d_gbs" in m else "memcpy"
    rows = [("shared memory, upload of NumPy data", m["shm.upload_gbs"]),
            ("shared memory, upload in place (empty_host)", m["shm.upload_in_place_gbs"]),
            ("shared memory, download", m["shm.download_gbs"]),
            ("gRPC, upload", m["grpc.upload_gbs"]),
            ("gRPC, download", m["grpc.download_gbs"])]
    print(f"{args.mib} MiB float64 on {m['device']}; memcpy {m['memcpy_gbs']:.1f} GB/s"
          + (f", pinned H2D {m['pinned_h2d_gbs']:.1f}, D2H {m['pinned_d2h_gbs']:.1f} GB/s"
             if "pinned_h2d_gbs" in m else ""))
    print(f"| path | GB/s | / {base_name} |\n| --- | ---: | ---: |")
    for name, gbs in rows:
        print(f"| {name} | {gbs:.2f} | {gbs / base:.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(m, f, indent=1)


if __name__ == "__main__":
    main()
