#!/usr/bin/env python3
"""Merges resident-bench's and baseline.py's JSONs into one Markdown table.

Usage: report.py RESIDENT_JSON BASELINE_JSON   (stdlib only; a missing file or
figure prints as n/a)
"""
import json
import sys

# (workload, Resident key, CuPy/NumPy key, reference label, reference key).
# Keys ending in _ms/_us are times (lower is better); the rest are rates.
ROWS = [
    ("seed 1024 adds, eager: 1 request/add (ms)", "seed.eager_ms", "seed.loop_ms",
     "memory floor", "seed.floor_ms"),
    ("seed 1024 adds, eager, client busy-polling (ms)", "seed.eager_busy_ms", "seed.loop_ms",
     "memory floor", "seed.floor_ms"),
    ("seed 1024 adds, one lazy program (ms)", "seed.program_ms", "seed.loop_ms",
     "memory floor", "seed.floor_ms"),
    ("seed 1024 adds, Client::Loop (ms)", "seed.loop_ms", "seed.loop_ms",
     "memory floor", "seed.floor_ms"),
    ("seed, CuPy not synchronised (tutorial's figure, ms)", None, "seed.unsynced_ms", None, None),
    ("tiny add, result ready, p50 (us)", "roundtrip.program_p50_us", "roundtrip.program_p50_us",
     "no-op RPC p50", "roundtrip.noop_p50_us"),
    ("tiny add, result ready, p99 (us)", "roundtrip.program_p99_us", "roundtrip.program_p99_us",
     "no-op RPC p99", "roundtrip.noop_p99_us"),
    ("tiny add, busy-polling client, p50 (us)", "roundtrip_busy.program_p50_us",
     "roundtrip.program_p50_us", "busy-polled no-op RPC p50", "roundtrip_busy.noop_p50_us"),
    ("tiny add, busy-polling client, p99 (us)", "roundtrip_busy.program_p99_us",
     "roundtrip.program_p99_us", "busy-polled no-op RPC p99", "roundtrip_busy.noop_p99_us"),
    ("10,000 chained 16-elt adds (ops/s)", "tiny_ops.ops_per_s", "tiny_ops.ops_per_s", None, None),
    ("chain sqrt(x*x+1)*0.5-x, 8M f64, one program (us)", "chain.us", "chain.us",
     "one-pass memory floor", "chain.floor_us"),
    ("x * w + b, (4096, 2048) f32, rows w, b (us)", "fused_bias.us", "fused_bias.us",
     "one-pass memory floor", "fused_bias.floor_us"),
    ("(x > 0.5).sum(), (4096, 2048) f32 (us)", "fused_count.us", "fused_count.us",
     "one-pass memory floor", "fused_count.floor_us"),
    ("dot float32 n^3 (TFLOP/s)", "dot.f32_tflops", "dot.f32_tflops", None, None),
    ("dot float64 n^3 (TFLOP/s)", "dot.f64_tflops", "dot.f64_tflops", None, None),
    ("dot float32, busy-polling client (TFLOP/s)", "dot.f32_busy_tflops", "dot.f32_tflops",
     None, None),
    ("dot float64, busy-polling client (TFLOP/s)", "dot.f64_busy_tflops", "dot.f64_tflops",
     None, None),
    ("upload host->server (GB/s)", "transfer.upload_gbs", "transfer.upload_gbs",
     "loopback TCP", "transfer.tcp_gbs"),
    ("download server->host (GB/s)", "transfer.download_gbs", "transfer.download_gbs",
     "loopback TCP", "transfer.tcp_gbs"),
    ("first result from a fresh process (ms)", "first_result.ms", "first_result.ms", None, None),
]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def table(res, base):
    r = res.get("metrics", {})
    c = base.get("cupy", {}).get("metrics", {})
    n = base.get("numpy", {}).get("metrics", {})
    lines = ["| workload | Resident | CuPy | NumPy | Resident/CuPy | reference |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for label, rk, bk, ref, refk in ROWS:
        rv = r.get(rk) if rk else None
        cv, nv = c.get(bk), n.get(bk)
        ratio = f"{rv / cv:.3g}" if rv is not None and cv else "n/a"
        refs = "" if not ref else f"{ref} {fmt(r.get(refk))}"
        if ref and rv is not None and r.get(refk):
            refs += f" ({rv / r[refk]:.3g}x)"
        lines.append(f"| {label} | {fmt(rv)} | {fmt(cv)} | {fmt(nv)} | {ratio} | {refs} |")
    return lines


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    res, base = load(sys.argv[1]), load(sys.argv[2])
    cupy = base.get("cupy", {})
    print(f"Resident: device {res.get('device', '?')} ({res.get('device_description', '?')})"
          f"{', quick sizes' if res.get('quick') else ''}")
    cupy_desc = (f"{cupy['version']} on {cupy.get('device', '?')}" if cupy.get("available")
                 else f"n/a ({cupy.get('reason', 'no baseline')})")
    print(f"CuPy: {cupy_desc}; "
          f"NumPy {base.get('numpy', {}).get('version', 'n/a')}")
    m = res.get("metrics", {})
    if "seed.nbytes" in m:
        print(f"seed array {m['seed.nbytes'] / 2**20:.0f} MiB float64; memory floor at "
              f"{fmt(m.get('seed.copy_bw_gbs'))} GB/s; dot n = {fmt(m.get('dot.n'))}; "
              f"transfer {fmt(m.get('transfer.bytes', 0) / 2**20)} MiB")
    print()
    print("\n".join(table(res, base)))
    print()
    print("Times (ms, us): lower is better. Rates (ops/s, TFLOP/s, GB/s): higher is better.\n"
          "Resident/CuPy is the plain quotient of the two figures. Every figure waits for\n"
          "the result (device synchronised); median after warm-up. The reference column\n"
          "is measured by resident-bench in the same run; (Nx) = Resident / reference.")


if __name__ == "__main__":
    main()
