"""python -m resident seed: the CLI's table, every row checked against NumPy."""

from __future__ import annotations

import os
import subprocess
import sys


def test_seed_job_from_python(server):
    env = dict(os.environ, RESIDENT_SERVER=server.target)
    out = subprocess.run([sys.executable, "-m", "resident", "seed", "--iterations", "3"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "expected every element = 8" in out.stdout
    header = next(i for i, l in enumerate(lines) if l.startswith("mode"))
    rows = [l for l in lines[header + 1:] if l.strip() and not l.startswith(("expected", "("))]
    modes = [r[:40].strip() for r in rows]
    assert modes[:4] == ["eager (one request per add)", "one batched program (lazy)",
                         "server-side loop", "NumPy (this process)"]
    assert all(r.endswith(" ok") for r in rows), out.stdout
    requests = [r[40:50].strip() for r in rows[:3]]
    assert requests == ["3", "1", "1"]


def test_info_from_python(server):
    out = subprocess.run([sys.executable, "-m", "resident", "info", "--server", server.target],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "device     cpu" in out.stdout or "device     cuda" in out.stdout


def test_errors_exit_non_zero_with_the_code(server):
    out = subprocess.run([sys.executable, "-m", "resident", "info", "--server", "127.0.0.1:1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "UNAVAILABLE" in out.stderr
