"""The seed job from Python: the tutorial's loop run three ways on the
server, plus NumPy (and CuPy, when installed) in this process, every result
checked against NumPy's. Prints the same table as ``resident seed``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ._client import Client, connect

SHAPE = (1024, 512, 4, 4)


@dataclass
class Row:
    mode: str
    requests: Optional[int]
    ms: float
    value: float
    ok: bool


def _check(x: np.ndarray, want: float) -> Tuple[float, bool]:
    flat = x.reshape(-1)
    return (float(flat[0]) if flat.size else math.nan), bool(np.all(x == want))


def _runs(c: Client) -> int:
    return c.stats.get("Run", 0)


def _timed_remote(connect_args: Dict[str, Any], n: int, shape: Tuple[int, ...], want: float,
                  mode: str, lazy: bool, run: Callable[[Client, Any], Any]) -> Row:
    with connect(lazy=lazy, **connect_args) as c:
        x = c.ones(shape).evaluate()
        before = _runs(c)
        t0 = time.perf_counter()
        x = run(c, x)
        x.evaluate()
        ms = (time.perf_counter() - t0) * 1e3
        requests = _runs(c) - before
        value, ok = _check(x.get(), want)  # outside the timed region
    return Row(mode, requests, ms, value, ok)


def _eager(c: Client, x: Any, n: int) -> Any:
    for _ in range(n):
        x = x + x  # eager client: one request each
    return x


def _batched(c: Client, x: Any, n: int) -> Any:
    for _ in range(n):
        x = x + x  # recorded
    return x


def _numpy_row(n: int, shape: Tuple[int, ...], want: float) -> Row:
    x = np.ones(shape)
    t0 = time.perf_counter()
    with np.errstate(over="ignore"):
        for _ in range(n):
            x = x + x
    ms = (time.perf_counter() - t0) * 1e3
    return Row("NumPy (this process)", None, ms, *_check(x, want))


def _cupy_row(n: int, shape: Tuple[int, ...], want: float) -> Optional[Row]:
    try:
        import cupy as cp  # type: ignore[import-not-found]
        cp.cuda.runtime.getDeviceCount()
    except Exception:
        return None
    t_start = time.perf_counter()
    x = cp.ones(shape)
    cp.cuda.Device().synchronize()
    first = (time.perf_counter() - t_start) * 1e3
    t0 = time.perf_counter()
    for _ in range(n):
        x = x + x
    cp.cuda.Device().synchronize()  # device work is asynchronous: wait for it
    ms = (time.perf_counter() - t0) * 1e3
    row = Row(f"CuPy (this process; first array {first:.0f} ms)", None, ms,
              *_check(cp.asnumpy(x), want))
    return row


def run_seed(connect_args: Dict[str, Any], iterations: int = 1024,
             shape: Tuple[int, ...] = SHAPE, out: Any = None) -> bool:
    """Runs the seed job and prints the table; True when every row is right."""
    import sys
    out = out or sys.stdout
    n = iterations
    want = math.inf if n >= 1024 else math.ldexp(1.0, n)  # 1.0 doubled n times
    with connect(**connect_args) as probe:
        info = probe.info()
        target = probe._s.target
    dev = info.device
    print(f"seed job: x = add(x, x) {n} times, x = ones({shape}, float64), server {target}, "
          f"device {dev.name if dev else '?'} ({dev.description if dev else ''}) "
          "[Python client]", file=out)
    rows: List[Row] = [
        _timed_remote(connect_args, n, shape, want, "eager (one request per add)", False,
                      lambda c, x: _eager(c, x, n)),
        _timed_remote(connect_args, n, shape, want, "one batched program (lazy)", True,
                      lambda c, x: _batched(c, x, n)),
        _timed_remote(connect_args, n, shape, want, "server-side loop", True,
                      lambda c, x: c.loop(n, x, lambda v: v + v)),
        _numpy_row(n, shape, want),
    ]
    cupy = _cupy_row(n, shape, want)
    if cupy is not None:
        rows.append(cupy)
    print(f"{'mode':<40} {'requests':>9} {'wall ms':>11} {'ms per add':>12} {'x[0]':>12}  check",
          file=out)
    for r in rows:
        req = str(r.requests) if r.requests is not None else "-"
        print(f"{r.mode:<40} {req:>9} {r.ms:11.1f} {r.ms / n:12.3f} {r.value:12g}  "
              f"{'ok' if r.ok else 'WRONG'}", file=out)
    note = " overflows float64 to inf" if math.isinf(want) else ""
    print(f"expected every element = {want:g} (NumPy: 1.0 doubled {n} times{note})", file=out)
    if cupy is None:
        print("(CuPy not installed or no GPU here: no CuPy row)", file=out)
    return all(r.ok for r in rows)
