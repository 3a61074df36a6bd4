#!/usr/bin/env python3
"""Writes the NumPy-computed results the concurrency soak checks against.

The inputs are defined by formulas that concurrency_soak_test.cc repeats in
C++ (exact in float64/float32/int32, so both sides build the same arrays);
every recipe's result is computed here by NumPy and saved as
oracle/r<recipe>_s<seed>.npy. Re-run after changing a recipe:

    python3 tests/soak/make_oracle.py   # needs numpy
"""
import os

import numpy as np

M, N = 32, 24
SEEDS = 4
HERE = os.path.dirname(os.path.abspath(__file__))


def inputs(s):
    i = np.arange(M * N, dtype=np.int64)
    a = (((i * 7919 + s * 104729) % 201) - 100).astype(np.float64) / 8.0
    b = (((i * 6271 + s * 15485863) % 157) - 78).astype(np.float64) / 4.0
    ai = (((i * 40503 + s * 9973) % 2001) - 1000).astype(np.int32)
    bi = (((i * 2654435761 + s) % 127) - 63).astype(np.int32)
    return a.reshape(M, N), b.reshape(M, N), ai.reshape(M, N), bi.reshape(M, N)


def recipes(a, b, ai, bi):
    x = a
    for _ in range(10):  # the server-side loop, step by step
        x = x + b
    return [
        (a + b) * a - b / np.full((M, N), 4.0),
        a.astype(np.float32) * np.full((M, N), 0.5, np.float32) + b.astype(np.float32),
        np.dot(a, b.T),
        np.sum(a * b, axis=0),
        x,
        (ai + bi) * ai,
        np.transpose(np.reshape(a, (N, M))) - a,
        np.dot(ai, bi.T),
        np.sum(a),
    ]


def main():
    out = os.path.join(HERE, "oracle")
    os.makedirs(out, exist_ok=True)
    for s in range(SEEDS):
        for r, value in enumerate(recipes(*inputs(s))):
            np.save(os.path.join(out, f"r{r}_s{s}.npy"), np.asarray(value))


if __name__ == "__main__":
    main()
