#!/usr/bin/env python3
"""Writes random_literals.inc: calls of numpy.random.Generator(PCG64)'s
random, uniform and integers, each as the state before it, the fill's
RandomParams (kernels/pcg64.h), the values it returned and the state after
it, for random_kernels_test.cc. Short outputs are stored whole; longer ones
as a hash of every element (Hash below, mirrored by the test) plus a few
sampled elements.

Every RandomDraw and integer dtype; spans (rng) 0, 1, small, 2^31+1,
2^32-1, 2^32, 2^63+5, 2^64-1 and each width's maximum, and spans that
reject about half their units; sizes 0, 1, 7, 1000, 100003 and larger;
calls split in two (the state carried, the 8/16/bool buffers dropped as
NumPy drops them) and calls that start with has_uint32 set.

Run with NumPy 2: python3 make_random_literals.py > random_literals.inc
"""
import numpy as np

M64 = (1 << 64) - 1
WHOLE = 64  # outputs up to this long are stored whole
SAMPLES = 6


def integers_params(low, high=None, dtype=np.int64, endpoint=False):
    """(draw, off, rng) of Generator.integers(low, high, dtype=dtype,
    endpoint=endpoint) with scalar bounds: NumPy's _rand_<dtype> (the bounds
    checks left to NumPy itself)."""
    if high is None:
        low, high = 0, low
    dt = np.dtype(dtype)
    low, high = int(low), int(high)
    hi = high if endpoint else high - 1  # the closed upper bound
    if dt == np.bool_:
        return "kBool", low, hi - low
    bits = dt.itemsize * 8
    mask = (1 << bits) - 1
    draw = {8: "kBounded64", 4: "kBounded32", 2: "kBounded16", 1: "kBounded8"}[dt.itemsize]
    return draw, low & mask, (hi - low) & mask


def state_words(bg):
    s = bg.state
    st, inc = s["state"]["state"], s["state"]["inc"]
    return [st >> 64, st & M64, inc >> 64, inc & M64, int(s["has_uint32"]), int(s["uinteger"])]


def element_bits(a):
    """Each element's bits, zero-extended to uint64 (bool as 0/1)."""
    a = np.ascontiguousarray(a)
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return a.view(u).astype(np.uint64)


def splitmix(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def Hash(bits):
    """sum_i splitmix(bits_i + (i + 1) * golden) mod 2^64: every element
    and its position (random_kernels_test.cc's Hash)."""
    i = np.arange(1, len(bits) + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(splitmix(bits + i * np.uint64(0x9E3779B97F4A7C15)), dtype=np.uint64))


rows = []


def call(name, bg, n, kind, *args, **kw):
    """Runs one call on Generator(bg), recording it."""
    g = np.random.Generator(bg)
    before = state_words(bg)
    if kind == "random":
        dtype = kw.get("dtype", np.float64)
        out = g.random(n, dtype=dtype)
        params = ("kDouble" if dtype == np.float64 else "kFloat", 0.0, 1.0, 0, 0)
    elif kind == "uniform":
        low, high = args
        out = g.uniform(low, high, n)
        params = ("kDouble", float(low), float(high) - float(low), 0, 0)
    else:
        draw, off, rng = integers_params(*args, **kw)
        out = g.integers(*args, size=n, **kw)
        params = (draw, 0.0, 1.0, off, rng)
    bits = element_bits(out)
    if len(bits) <= WHOLE:
        samples = list(range(len(bits)))
    else:
        samples = sorted({0, 1, len(bits) // 3, len(bits) // 2, len(bits) - 2, len(bits) - 1})
    rows.append(dict(name=name, before=before, params=params, n=n, after=state_words(bg),
                     hash=Hash(bits), samples=[(i, int(bits[i])) for i in samples]))


def fresh(seed):
    return np.random.PCG64(seed)


def with_uint32(seed):
    """A generator whose has_uint32 is set (one float32 drawn)."""
    bg = fresh(seed)
    np.random.Generator(bg).random(1, dtype=np.float32)
    assert bg.state["has_uint32"] == 1
    return bg


SEEDS = [0, 12345, 2**63 + 7]
SIZES = [0, 1, 7, 1000, 100003]

for seed in SEEDS:
    for n in SIZES:
        call(f"random_f64_s{seed}_n{n}", fresh(seed), n, "random")
        call(f"random_f32_s{seed}_n{n}", fresh(seed), n, "random", dtype=np.float32)
        call(f"int64_0_1000_s{seed}_n{n}", fresh(seed), n, "integers", 0, 1000)
        call(f"uint8_full_s{seed}_n{n}", fresh(seed), n, "integers", 0, 256, dtype=np.uint8)
        call(f"bool_s{seed}_n{n}", fresh(seed), n, "integers", 0, 2, dtype=np.bool_)
    call(f"uniform_s{seed}", fresh(seed), 1000, "uniform", -3.5, 10.25)
    call(f"uniform_wide_s{seed}", fresh(seed), 1000, "uniform", -1e307, 1e307)
    call(f"uniform_tiny_s{seed}", fresh(seed), 1000, "uniform", 1e-300, 3e-300)

# Every dtype over spans (rng) at the edges of each branch of distributions.c.
SPANS = {
    np.uint64: [0, 1, 2, 999, 2**31 + 1, 2**32 - 2, 2**32 - 1, 2**32, 2**32 + 1, 2**63 + 5,
                2**64 - 2, 2**64 - 1],
    np.uint32: [0, 1, 999, 2**31 + 1, 2**32 - 2, 2**32 - 1],
    np.uint16: [0, 1, 999, 2**15 + 1, 2**16 - 2, 2**16 - 1],
    np.uint8: [0, 1, 99, 2**7 + 1, 2**8 - 2, 2**8 - 1],
}
for dt, spans in SPANS.items():
    bits = np.dtype(dt).itemsize * 8
    signed = {np.uint64: np.int64, np.uint32: np.int32, np.uint16: np.int16, np.uint8: np.int8}[dt]
    for rng in spans:
        for n in [7, 1000, 100003]:
            name = np.dtype(dt).name
            # unsigned from an offset that wraps near the top: low = 5
            if 5 + rng <= 2**bits - 1:
                call(f"{name}_rng{rng}_n{n}", fresh(rng + n), n, "integers", 5, 5 + rng, dtype=dt,
                     endpoint=True)
            else:
                call(f"{name}_rng{rng}_n{n}", fresh(rng + n), n, "integers", 0, rng, dtype=dt,
                     endpoint=True)
            # signed from the type's minimum (off = 2^(bits-1))
            lo = -(2**(bits - 1))
            if lo + rng <= 2**(bits - 1) - 1:
                call(f"{np.dtype(signed).name}_rng{rng}_n{n}", fresh(rng + n + 1), n, "integers",
                     lo, lo + rng + 1, dtype=signed)

# Bool bounds: [0, 1] draws; (0, 1) and (1, 2) are constant without drawing.
call("bool_0_1_endpoint", fresh(3), 1000, "integers", 0, 1, dtype=np.bool_, endpoint=True)
call("bool_const_false", fresh(3), 1000, "integers", 0, 1, dtype=np.bool_)
call("bool_const_true", fresh(3), 1000, "integers", 1, 2, dtype=np.bool_)
call("int8_neg", fresh(4), 1000, "integers", -100, 27, dtype=np.int8)
call("int16_neg", fresh(4), 1000, "integers", -30000, 30001, dtype=np.int16)
call("int32_neg", fresh(4), 1000, "integers", -(2**31) + 3, 2**31 - 10, dtype=np.int32)
call("int64_neg", fresh(4), 1000, "integers", -(2**62), 2**62 + 17)
call("int64_one", fresh(4), 7, "integers", -9, -8)
call("int64_single", fresh(4), 1, "integers", 10**18, 10**18 + 3)

# Calls split in two and chained: the second starts where the first left.
for name, kind, args, kw, n1, n2 in [
    ("f32", "random", (), dict(dtype=np.float32), 7, 9),
    ("f64", "random", (), {}, 5, 1000),
    ("uint16", "integers", (0, 2**16), dict(dtype=np.uint16), 5, 5),
    ("uint16_lemire", "integers", (0, 40000), dict(dtype=np.uint16), 3, 1001),
    ("uint8_lemire", "integers", (0, 200), dict(dtype=np.uint8), 5, 6),
    ("bool", "integers", (0, 2), dict(dtype=np.bool_), 3, 40),
    ("int64_lemire32", "integers", (0, 1000), {}, 101, 100003),
    ("int64_lemire64", "integers", (0, 2**40), {}, 3, 1000),
    ("uint32_direct", "integers", (0, 2**32), dict(dtype=np.uint32), 3, 4),
]:
    bg = fresh(77)
    call(f"split_{name}_a", bg, n1, kind, *args, **kw)
    call(f"split_{name}_b", bg, n2, kind, *args, **kw)

# Calls that start with has_uint32 set.
for n in [1, 2, 7, 1000, 100003]:
    call(f"buffered_f32_n{n}", with_uint32(9), n, "random", dtype=np.float32)
    call(f"buffered_f64_n{n}", with_uint32(9), n, "random")  # leaves the buffer alone
    call(f"buffered_int64_lemire32_n{n}", with_uint32(9), n, "integers", 0, 1000)
    call(f"buffered_int64_u32_n{n}", with_uint32(9), n, "integers", 0, 2**32, dtype=np.uint64)
    call(f"buffered_int64_lemire64_n{n}", with_uint32(9), n, "integers", 0, 2**33)
    call(f"buffered_uint32_n{n}", with_uint32(9), n, "integers", 0, 12345, dtype=np.uint32)
    call(f"buffered_uint16_n{n}", with_uint32(9), n, "integers", 0, 2**16, dtype=np.uint16)
    call(f"buffered_uint16_lemire_n{n}", with_uint32(9), n, "integers", 0, 1000, dtype=np.uint16)
    call(f"buffered_uint8_n{n}", with_uint32(9), n, "integers", 0, 256, dtype=np.uint8)
    call(f"buffered_uint8_lemire_n{n}", with_uint32(9), n, "integers", 0, 130, dtype=np.uint8)
    call(f"buffered_bool_n{n}", with_uint32(9), n, "integers", 0, 2, dtype=np.bool_)

# Large enough for the parallel paths: many runs of the rejecting fill, and
# spans that reject about half their units.
call("big_int64_0_1000", fresh(5), 1000003, "integers", 0, 1000)
call("big_uint64_half_reject", fresh(6), 300007, "integers", 0, 2**63, dtype=np.uint64,
     endpoint=True)
call("big_uint32_half_reject", fresh(7), 300007, "integers", 0, 2**31 + 1, dtype=np.uint32)
call("big_int16_half_reject", fresh(8), 300007, "integers", -(2**15), 1, dtype=np.int16)
call("big_uint8_half_reject", fresh(9), 300007, "integers", 0, 129, dtype=np.uint8)
call("big_f32_buffered", with_uint32(10), 1000001, "random", dtype=np.float32)
call("big_bool", fresh(11), 1000001, "integers", 0, 2, dtype=np.bool_)


# NumPy's advance(delta) (128-bit deltas, wrapping); it also clears the
# 32-bit buffer, which Pcg64::Advance leaves to its caller.
advances = []
for seed, delta in [(1, 0), (1, 1), (2, 12345), (3, 2**64 + 5), (4, 2**100 + 3), (5, 2**128 - 1),
                    (6, 3 * 2**126 + 2**64 - 1)]:
    bg = fresh(seed)
    before = state_words(bg)
    bg.advance(delta)
    advances.append((before, delta, state_words(bg)))


def hex64(v):
    return f"0x{v:016x}ull"


print(f"// Generated by make_random_literals.py with NumPy {np.__version__}; do not edit.")
print("// {name, state before, draw, low, range, off, rng, n, state after, hash,")
print("//  samples {index, element bits}}")
print("const RandomCase kRandomCases[] = {")
for r in rows:
    draw, low, rng_d, off, rng = r["params"]
    samples = ", ".join(f"{{{i}, {hex64(v)}}}" for i, v in r["samples"])
    print(f'{{"{r["name"]}", '
          f'{{{", ".join(hex64(v) for v in r["before"])}}}, '
          f'RandomDraw::{draw}, {low!r}, {rng_d!r}, {hex64(off)}, {hex64(rng)}, {r["n"]}, '
          f'{{{", ".join(hex64(v) for v in r["after"])}}}, {hex64(r["hash"])}, '
          f'{{{samples}}}}},')
print("};")
print("// {state before, delta hi, delta lo, state after} of PCG64.advance")
print("const AdvanceCase kAdvanceCases[] = {")
for before, delta, after in advances:
    print(f'{{{{{", ".join(hex64(v) for v in before)}}}, {hex64(delta >> 64)}, {hex64(delta & M64)}, '
          f'{{{", ".join(hex64(v) for v in after)}}}}},')
print("};")
