"""rs.random through the real server: default_rng(seed)'s random, uniform,
integers, standard_normal and normal equal numpy.random.default_rng(seed)'s
values bit for bit, for
many seeds, sizes, dtypes and call sequences (a call split in two, float32
draws that use PCG64's buffered 32-bit half, integers' rejection), and the
state advances as NumPy's; permutation, shuffle and choice have NumPy's
distributions (checked statistically) and are recorded lazily."""

from __future__ import annotations

import numpy as np
import pytest

import resident as rs

INT_DTYPES = [np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8,
              np.bool_]


def same(got: rs.ndarray, want: np.ndarray) -> None:
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**63 + 7, [1, 2, 3]], ids=str)
def test_random_and_uniform_match_numpy(client, seed):
    g, n = rs.random.default_rng(seed, client=client), np.random.default_rng(seed)
    for size in (0, 1, 7, (3, 5), 100_003):
        same(g.random(size), n.random(size))
    same(g.uniform(-2.5, 7.0, size=(4, 33)), n.uniform(-2.5, 7.0, size=(4, 33)))
    same(g.random(1001, dtype=np.float32), n.random(1001, dtype=np.float32))  # odd: buffers
    same(g.random(10), n.random(10))                          # 64-bit draws keep the buffer
    same(g.random(4, dtype=np.float32), n.random(4, dtype=np.float32))  # the buffered half
    assert g.state == n.bit_generator.state


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**63 + 7, [1, 2, 3]], ids=str)
def test_standard_normal_and_normal_match_numpy(client, seed):
    # NumPy's ziggurat bit for bit: the layers' fast path, the wedge tests
    # and the tail (2^20 draws hold about 270 tail draws), successive
    # calls, float32 on the 32-bit stream with its buffered half, and the
    # state after.
    g, n = rs.random.default_rng(seed, client=client), np.random.default_rng(seed)
    for size in (0, 1, 7, (3, 5), 100_003):
        same(g.standard_normal(size), n.standard_normal(size))
    same(g.standard_normal(1 << 20), n.standard_normal(1 << 20))
    same(g.normal(-2.5, 3.0, size=(4, 33)), n.normal(-2.5, 3.0, size=(4, 33)))
    same(g.normal(size=5), n.normal(size=5))
    same(g.random(3, dtype=np.float32), n.random(3, dtype=np.float32))  # leaves a half buffered
    same(g.standard_normal(1001, dtype=np.float32), n.standard_normal(1001, dtype=np.float32))
    same(g.standard_normal(1 << 18, dtype=np.float32),
         n.standard_normal(1 << 18, dtype=np.float32))
    same(g.standard_normal(9), n.standard_normal(9))  # 64-bit draws keep the buffer
    same(g.random(2, dtype=np.float32), n.random(2, dtype=np.float32))
    assert g.state == n.bit_generator.state


def test_normal_errors_are_numpys(client):
    g = rs.random.default_rng(0, client=client)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0.0, -1.0, 3)
    with pytest.raises(TypeError):
        g.standard_normal(3, dtype=np.int64)
    with pytest.raises(TypeError):
        g.standard_normal(3, dtype=np.float16)
    same(g.normal(1.0, 0.0, 3), np.random.default_rng(0).normal(1.0, 0.0, 3))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_integers_match_numpy(client, dtype):
    info = np.iinfo(dtype) if dtype != np.bool_ else None
    spans = [(0, 2)] if dtype == np.bool_ else [
        (0, 10), (int(info.min), int(info.max)), (int(info.min), int(info.max) + 1),
        (0, 1), (5, 6), (0, int(info.max) // 2 + 2), (-3 if info.min < 0 else 3, 1000 % int(
            info.max))]
    for seed in (0, 7):
        g, n = rs.random.default_rng(seed, client=client), np.random.default_rng(seed)
        for lo, hi in spans:
            if lo >= hi:
                continue
            for size in (1, 999, 20_001):
                same(g.integers(lo, hi, size=size, dtype=dtype),
                     n.integers(lo, hi, size=size, dtype=dtype))
        if dtype != np.bool_:
            same(g.integers(int(info.min), int(info.max), size=77, dtype=dtype, endpoint=True),
                 n.integers(int(info.min), int(info.max), size=77, dtype=dtype, endpoint=True))
        same(g.random(3), n.random(3))  # the stream continues where NumPy's does
        assert g.state == n.bit_generator.state


def test_split_calls_and_mixed_sequences(client):
    g, n = rs.random.default_rng(42, client=client), np.random.default_rng(42)
    whole = np.random.default_rng(42).random(50_000)
    a, b = g.random(20_000), g.random(30_000)
    np.testing.assert_array_equal(np.concatenate([a.get(), b.get()]), whole)
    n.random(50_000)
    for step in range(6):
        if step % 3 == 0:
            same(g.integers(0, 3 * step + 5, size=1000 + step), n.integers(0, 3 * step + 5,
                                                                            size=1000 + step))
        elif step % 3 == 1:
            same(g.random(333, dtype=np.float32), n.random(333, dtype=np.float32))
        else:
            same(g.integers(0, 2**40 + step, size=517), n.integers(0, 2**40 + step, size=517))
    assert g.state == n.bit_generator.state


def test_lazy_draws_are_one_program(server):
    with rs.connect(server.target, lazy=True) as c:
        g, n = rs.random.default_rng(3, client=c), np.random.default_rng(3)
        x = g.random((256, 256))
        y = g.integers(0, 100, size=(256, 256))
        z = (x * y).sum()  # draws and their use recorded together
        want = (n.random((256, 256)) * n.integers(0, 100, size=(256, 256))).sum()
        np.testing.assert_allclose(z.get(), want, rtol=1e-12)


def test_permutation_shuffle_choice(client):
    g = rs.random.default_rng(5, client=client)
    p = g.permutation(1000).get()
    assert sorted(p.tolist()) == list(range(1000))
    rows = client.asarray(np.arange(12).reshape(6, 2))
    q = g.permutation(rows).get()
    assert sorted(q[:, 0].tolist()) == [0, 2, 4, 6, 8, 10] and np.all(q[:, 1] == q[:, 0] + 1)
    x = client.asarray(np.arange(10))
    g.shuffle(x)
    assert sorted(x.get().tolist()) == list(range(10))
    # Uniform positions: where element 0 lands over many permutations.
    firsts = np.array([g.permutation(4).get()[0] for _ in range(400)])
    counts = np.bincount(firsts, minlength=4)
    assert counts.min() > 60, counts
    # choice: with replacement uniform, with p the probabilities, without
    # replacement distinct.
    c = g.choice(5, size=20_000).get()
    assert set(np.unique(c)) <= set(range(5)) and np.all(np.abs(np.bincount(c) / 20_000 - 0.2)
                                                         < 0.02)
    w = g.choice(3, size=30_000, p=[0.7, 0.2, 0.1]).get()
    np.testing.assert_allclose(np.bincount(w, minlength=3) / 30_000, [0.7, 0.2, 0.1], atol=0.02)
    d = g.choice(client.asarray(np.arange(100) * 3), size=50, replace=False).get()
    assert len(set(d.tolist())) == 50 and np.all(d % 3 == 0)


def test_bad_arguments(client):
    g = rs.random.default_rng(0, client=client)
    with pytest.raises(TypeError, match="Unsupported dtype"):
        g.random(3, dtype=np.int32)
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError, match="high <= 0"):
        g.integers(0, 0)
    with pytest.raises(ValueError, match="low > high"):
        g.integers(3, 2, endpoint=True)
    with pytest.raises(ValueError, match="high - low < 0"):
        g.uniform(2.0, 1.0)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(-1, 10, dtype=np.uint8)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(0, 257, dtype=np.uint8)
    with pytest.raises(ValueError, match="negative"):
        g.random((2, -1))
    with pytest.raises(OverflowError):
        g.uniform(-1e308, 1e308)
    with pytest.raises(ValueError, match="too big"):
        g.integers(0, 10, size=(2**31, 2**31))
    # None of the refused calls advanced the stream.
    same(g.random(2), np.random.default_rng(0).random(2))
    # More than the server's memory: RESOURCE_EXHAUSTED, the server serving.
    big = rs.random.default_rng(0, client=client)
    with pytest.raises(rs.ResourceExhausted):
        big.random(2**40).get()
    # A state that is not a generator's is refused by the server.
    bad = client.asarray(np.zeros(5, dtype=np.uint64))
    g._state = bad
    with pytest.raises(rs.InvalidArgument, match="state"):
        g.random(3).get()
    # The stream of a fresh generator is unaffected.
    same(rs.random.default_rng(0, client=client).random(3), np.random.default_rng(0).random(3))


def test_evaluating_one_result_keeps_the_others(server):
    """Asking for one output of an op of several keeps the others that are
    still held: the generator's next state is on the server after a draw is
    read, so the next draw does not run the previous ones again; likewise
    svd's U after reading S."""
    from resident._graph import Kind
    with rs.connect(server.target, lazy=True) as c:
        g = rs.random.default_rng(11, client=c)
        for _ in range(3):
            g.random(5)[0].get()
            assert g._state._node.kind is Kind.MATERIALIZED
        u, s, vh = rs.linalg.svd(c.asarray(np.eye(3) * 2.0))
        s.get()
        assert u._node.kind is Kind.MATERIALIZED and vh._node.kind is Kind.MATERIALIZED
        np.testing.assert_array_equal(g.random(4).get(), np.random.default_rng(11).random(19)[15:])
        a, b = c.loop(3, [c.asarray(np.ones(2)), c.asarray(np.ones(2))],
                      lambda vs: [vs[0] + 1, vs[1] * 2])
        np.testing.assert_array_equal(a.get(), [4.0, 4.0])
        assert b._node.kind is Kind.MATERIALIZED  # the loop's other carried value
        np.testing.assert_array_equal(b.get(), [8.0, 8.0])


def test_a_refused_draw_leaves_the_generator_where_it_was(start_server):
    # A draw too big for --max-memory is refused (as NumPy raises
    # MemoryError); the generator goes on from the state before it, lazily
    # recorded or not, and the refused array says why it cannot be had.
    s = start_server("--max-memory", "256M")
    with rs.connect(s.target) as c:
        g, n = rs.random.default_rng(3, client=c), np.random.default_rng(3)
        same(g.random(100), n.random(100))
        big = g.random(1 << 25)  # 256 MiB: recorded, refused when it runs
        with pytest.raises(rs.ResourceExhausted):
            big.get()
        same(g.random(50), n.random(50))
        same(g.integers(0, 1000, 64), n.integers(0, 1000, 64))
        with pytest.raises(rs.FailedPrecondition, match="refused"):
            big.get()
        # A refused program of several draws: each is refused; the next
        # draw starts before the first of them.
        a, b = g.random(10), g.random(1 << 25)
        with pytest.raises(rs.ResourceExhausted):
            b.get()
        with pytest.raises(rs.FailedPrecondition):
            a.get()
        same(g.random(10), n.random(10))
        assert g.state == n.bit_generator.state
        # An error the server names another instruction for marks no draw:
        # the draw runs again with the program that next needs it.
        x = g.random(5)
        with pytest.raises(rs.linalg.LinAlgError):
            (rs.linalg.inv(c.zeros((2, 2))) + x[0]).get()  # singular
        same(x, n.random(5))


def test_uniform_with_array_bounds_matches_numpy(client):
    # Bounds broadcast against each other (and size), resident or host
    # arrays: low + (high - low) * u, bit for bit, u in C order.
    g, n = rs.random.default_rng(9, client=client), np.random.default_rng(9)
    low = np.array([-1.0, 0.5, 2.0])
    high = np.array([[3.0], [10.0]])
    same(g.uniform(client.asarray(low), client.asarray(high)), n.uniform(low, high))
    same(g.uniform(low, 7.5), n.uniform(low, 7.5))
    same(g.uniform(0.0, high, size=(4, 2, 3)), n.uniform(0.0, high, size=(4, 2, 3)))
    same(g.uniform(np.arange(4, dtype=np.int32), 9, size=4),
         n.uniform(np.arange(4, dtype=np.int32), 9, size=4))
    assert g.state == n.bit_generator.state
    with pytest.raises(OverflowError):
        g.uniform(np.array([0.0, -np.inf]), 1.0)
    with pytest.raises(ValueError, match="high - low < 0"):
        g.uniform(np.array([0.0, 2.0]), 1.0)
    with pytest.raises(ValueError):
        g.uniform(low, 7.5, size=(2,))
    same(g.random(4), n.random(4))  # refusals drew nothing


def test_normal_with_array_parameters_matches_numpy(client):
    g, n = rs.random.default_rng(21, client=client), np.random.default_rng(21)
    loc = np.array([[-1.0], [0.5], [2.0]])
    scale = np.array([0.5, 3.0])
    same(g.normal(client.asarray(loc), client.asarray(scale)), n.normal(loc, scale))
    same(g.normal(loc, 2.0, size=(2, 3, 2)), n.normal(loc, 2.0, size=(2, 3, 2)))
    same(g.normal(0.0, scale), n.normal(0.0, scale))
    for bad in (np.array([1.0, -0.0]), -0.0):  # NumPy's check is the sign bit
        with pytest.raises(ValueError, match="scale < 0"):
            g.normal(0.0, bad)
    with pytest.raises(ValueError, match="high - low < 0"):
        g.uniform(0.0, -0.0)
    same(g.standard_normal(3), n.standard_normal(3))  # refusals drew nothing
    assert g.state == n.bit_generator.state


@pytest.mark.parametrize("seed", [0, 5, 2**63 + 7], ids=str)
def test_standard_exponential_and_exponential_match_numpy(client, seed):
    # NumPy's exponential ziggurat bit for bit: its layers' fast path, the
    # wedge tests, the tail (one uniform) and restarts; float32 on the
    # 32-bit stream; scalar and array scales.
    g, n = rs.random.default_rng(seed, client=client), np.random.default_rng(seed)
    for size in (0, 1, 7, (3, 5), 100_003):
        same(g.standard_exponential(size), n.standard_exponential(size))
    same(g.standard_exponential(1 << 20), n.standard_exponential(1 << 20))
    same(g.exponential(2.5, size=(4, 33)), n.exponential(2.5, size=(4, 33)))
    same(g.random(3, dtype=np.float32), n.random(3, dtype=np.float32))  # a half buffered
    same(g.standard_exponential(1001, dtype=np.float32),
         n.standard_exponential(1001, dtype=np.float32))
    same(g.standard_exponential(1 << 18, dtype=np.float32),
         n.standard_exponential(1 << 18, dtype=np.float32))
    scale = np.array([[0.5], [4.0]])
    same(g.exponential(client.asarray(scale), size=(2, 3)), n.exponential(scale, size=(2, 3)))
    for bad in (-1.0, -0.0, np.array([1.0, -2.0])):
        with pytest.raises(ValueError, match="scale < 0"):
            g.exponential(bad)
    with pytest.raises(TypeError):
        g.standard_exponential(3, dtype=np.int32)
    same(g.exponential(size=9), n.exponential(size=9))
    assert g.state == n.bit_generator.state
