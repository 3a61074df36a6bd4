"""``rs.random``: numpy.random.Generator's streams, made on the server.

``rs.random.default_rng(seed)`` returns a Generator whose ``random``,
``uniform`` and ``integers`` give exactly ``numpy.random.default_rng(seed)``'s
values, bit for bit, on every backend, and whose state advances as NumPy's,
so successive calls keep matching. The seed is expanded here by NumPy's own
SeedSequence into a PCG64 state (six 64-bit words: NumPy's state dict); the
state lives on the server as a uint64 array, and each draw is one ``random``
instruction that takes it and returns the values and the next state. So
drawing is recorded lazily like any op, nothing is read back, and the
numbers are generated on the device in parallel (each thread jumps ahead in
PCG64's stream; integers' Lemire rejection is a stream compaction).

``permutation``, ``shuffle`` and ``choice`` are built on those draws with
NumPy's distributions (uniform permutations, NumPy's inverse-CDF choice with
``p``) but not NumPy's exact values. Not built: ``standard_normal`` and the
other distributions (NumPy's ziggurat is not reproduced yet).

    import resident as rs
    g = rs.random.default_rng(0)
    x = g.random((1000, 1000))            # == np.random.default_rng(0).random(...)
    k = g.integers(0, 10, size=5)          # continues the same stream
"""

from __future__ import annotations

import operator
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _dtypes
from ._array import ndarray, record_many
from ._graph import Kind, Node
from ._infer import Meta
from .v1 import resident_pb2 as pb

__all__ = ["default_rng", "Generator"]

Size = Union[None, int, Sequence[int]]
_STATE_META = Meta(np.dtype(np.uint64), (6,))
_MASK64 = (1 << 64) - 1


def _signed(v: int) -> int:
    """A 64-bit pattern as the int64 the wire carries."""
    v &= _MASK64
    return v - (1 << 64) if v >= 1 << 63 else v


def _shape(size: Size) -> Tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        size = (size,)
    shape = tuple(operator.index(d) for d in size)
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _words(state: Dict[str, Any]) -> np.ndarray:
    s, inc = state["state"]["state"], state["state"]["inc"]
    return np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64,
                     int(state["has_uint32"]), state["uinteger"]], dtype=np.uint64)


class Generator:
    """numpy.random.Generator over PCG64, its state on the server."""

    def __init__(self, client: Any, state: Dict[str, Any]) -> None:
        self._client = client
        self._state = client.asarray(_words(state))

    def _draw(self, dtype: np.dtype, shape: Tuple[int, ...], start: Optional[pb.Scalar],
              stop: Optional[pb.Scalar], op: str = "random") -> ndarray:
        count = 1
        for d in shape:
            count *= d
        if count * dtype.itemsize > (1 << 63) - 1:  # NumPy's check, before anything is recorded
            raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                             "the maximum possible size.")
        ins = pb.Instruction(dtype=_dtypes.to_wire(dtype), shape=shape)
        if start is not None:
            ins.start.CopyFrom(start)
        if stop is not None:
            ins.stop.CopyFrom(stop)
        s = self._state._node.session
        values, self._state = record_many(op, [self._drawn_from()], s, ins,
                                          [Meta(dtype, shape), _STATE_META])
        return values

    def _drawn_from(self) -> Node:
        """The state the next draw starts from: a draw the server refused
        (too big for its memory or the tenant's quota, say) left the stream
        where it was, as NumPy's MemoryError leaves its Generator."""
        node = self._state._node
        while node.kind is Kind.LOOP_OUTPUT and node.inputs[0].refused is not None:
            node = node.inputs[0].inputs[0]
        if node is not self._state._node:
            self._state = ndarray._wrap(node)
        return node

    @property
    def state(self) -> Dict[str, Any]:
        """NumPy's PCG64 state dict (reads the state back)."""
        self._drawn_from()
        w = [int(v) for v in self._state.get()]
        return {"bit_generator": "PCG64",
                "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
                "has_uint32": w[4], "uinteger": w[5]}

    def random(self, size: Size = None, dtype: Any = np.float64) -> ndarray:
        """Floats in [0, 1): NumPy's (next_uint64 >> 11) * 2^-53 for float64,
        (next_uint32 >> 8) * 2^-24 for float32."""
        dt = np.dtype(dtype)
        if dt not in (np.float64, np.float32):
            raise TypeError(f"Unsupported dtype {dt!r} for random")
        if dt == np.float32:
            return self._draw(dt, _shape(size), None, None)
        return self._draw(dt, _shape(size), pb.Scalar(float_value=0.0),
                          pb.Scalar(float_value=1.0))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Size = None) -> ndarray:
        """float64 low + (high - low) * u, as NumPy's: scalar bounds, or
        arrays (resident or host) broadcast against each other and size."""
        if isinstance(low, ndarray) or isinstance(high, ndarray) or np.ndim(low) or np.ndim(high):
            return self._uniform_arrays(low, high, size)
        lo, span = float(low), float(high) - float(low)
        if not np.isfinite(span):
            raise OverflowError("Range exceeds valid bounds")
        if np.signbit(span):  # -0.0 too, as NumPy's CONS_NON_NEGATIVE
            raise ValueError("high - low < 0")
        return self._draw(np.dtype(np.float64), _shape(size), pb.Scalar(float_value=lo),
                          pb.Scalar(float_value=span))

    def _uniform_arrays(self, low: Any, high: Any, size: Size) -> ndarray:
        """NumPy's uniform over array bounds: high - low in float64, checked
        finite and not negative (one small read-back), then low + range * u
        elementwise, u one draw per element of the broadcast shape in C
        order, as NumPy's cont() loop (the server's multiply and add round
        as NumPy's do)."""
        lo, hi = self._float64_bounds(low, high)
        span = hi - lo
        if not bool(np.all(np.isfinite(span))):
            raise OverflowError("Range exceeds valid bounds")
        if bool(np.any(np.signbit(span))):
            raise ValueError("high - low < 0")
        return lo + span * self.random(self._draw_shape(size, lo, span))

    def _float64_bounds(self, *values: Any) -> Tuple[ndarray, ...]:
        """Parameters as resident float64 arrays (NumPy converts them to
        double first)."""
        def resident(v: Any) -> ndarray:
            if isinstance(v, ndarray):
                return v.astype(np.float64)
            return self._client.asarray(np.asarray(v, dtype=np.float64))
        return tuple(resident(v) for v in values)

    @staticmethod
    def _draw_shape(size: Size, *params: ndarray) -> Tuple[int, ...]:
        """The draw's shape: the parameters' broadcast shape, or size, which
        they must broadcast to (NumPy's ValueError otherwise)."""
        bounds = np.broadcast_shapes(*(p.shape for p in params))
        if size is None:
            return tuple(bounds)
        shape = _shape(size)
        if np.broadcast_shapes(shape, bounds) != shape:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape "
                             f"{shape} from parameters of shape {bounds}")
        return shape

    def standard_normal(self, size: Size = None, dtype: Any = np.float64) -> ndarray:
        """NumPy's standard_normal bit for bit: its ziggurat (float64 on
        64-bit draws, float32 on 32-bit ones, which use the buffered half)."""
        dt = np.dtype(dtype)
        if dt not in (np.float64, np.float32):
            raise TypeError(f"Unsupported dtype {dt!r} for standard_normal")
        return self._draw(dt, _shape(size), None, None, op="normal")

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None) -> ndarray:
        """float64 loc + scale * standard_normal, as NumPy's: scalar loc and
        scale on the server; arrays (resident or host) as one draw and the
        elementwise product and sum, after a read-back of scale's check."""
        if isinstance(loc, ndarray) or isinstance(scale, ndarray) or np.ndim(loc) or np.ndim(scale):
            lo, sc = self._float64_bounds(loc, scale)
            if bool(np.any(np.signbit(sc))):
                raise ValueError("scale < 0")
            return lo + sc * self.standard_normal(self._draw_shape(size, lo, sc))
        loc, scale = float(loc), float(scale)
        if np.signbit(scale):  # -0.0 too, as NumPy's CONS_NON_NEGATIVE
            raise ValueError("scale < 0")
        return self._draw(np.dtype(np.float64), _shape(size), pb.Scalar(float_value=loc),
                          pb.Scalar(float_value=scale), op="normal")

    def standard_exponential(self, size: Size = None, dtype: Any = np.float64,
                             method: str = "zig") -> ndarray:
        """NumPy's standard_exponential bit for bit: its ziggurat (float64 on
        64-bit draws, float32 on 32-bit ones)."""
        dt = np.dtype(dtype)
        if dt not in (np.float64, np.float32):
            raise TypeError(f"Unsupported dtype {dt!r} for standard_exponential")
        if method != "zig":
            raise ValueError("method 'inv' is not built; only 'zig' (NumPy's default)")
        return self._draw(dt, _shape(size), None, None, op="exponential")

    def exponential(self, scale: Any = 1.0, size: Size = None) -> ndarray:
        """float64 scale * standard_exponential, as NumPy's: a scalar scale
        on the server, an array one as one draw and the elementwise product
        after a read-back of its check."""
        if isinstance(scale, ndarray) or np.ndim(scale):
            (sc,) = self._float64_bounds(scale)
            if bool(np.any(np.signbit(sc))):
                raise ValueError("scale < 0")
            return sc * self.standard_exponential(self._draw_shape(size, sc))
        scale = float(scale)
        if np.signbit(scale):  # -0.0 too, as NumPy's CONS_NON_NEGATIVE
            raise ValueError("scale < 0")
        return self._draw(np.dtype(np.float64), _shape(size), None,
                          pb.Scalar(float_value=scale), op="exponential")

    def integers(self, low: int, high: Optional[int] = None, size: Size = None,
                 dtype: Any = np.int64, endpoint: bool = False) -> ndarray:
        """Integers in [low, high) (or [low, high] with endpoint), NumPy's
        Lemire draws; one argument is [0, low)."""
        dt = np.dtype(dtype)
        if dt.kind not in "biu":
            raise TypeError(f"Unsupported dtype {dt!r} for integers")
        if high is None:
            low, high = 0, low
        low, high = operator.index(low), operator.index(high)
        if dt == np.bool_:
            lo_bound, hi_bound = 0, 1
        else:
            info = np.iinfo(dt)
            lo_bound, hi_bound = int(info.min), int(info.max)
        top = high if endpoint else high - 1
        if low < lo_bound:
            raise ValueError("low is out of bounds for " + dt.name)
        if top > hi_bound:
            raise ValueError("high is out of bounds for " + dt.name)
        if low > top:  # NumPy's messages
            if low == 0:
                raise ValueError("high < 0" if endpoint else "high <= 0")
            raise ValueError("low > high" if endpoint else "low >= high")
        return self._draw(dt, _shape(size), pb.Scalar(int_value=_signed(low)),
                          pb.Scalar(int_value=_signed(top - low)))

    def permutation(self, x: Any, axis: int = 0) -> ndarray:
        """A uniformly random permutation of range(x), or of x's rows (along
        ``axis``): the order of fresh uniform keys."""
        from ._sorting import argsort, take
        if isinstance(x, (int, np.integer)):
            n = operator.index(x)
            return argsort(self.random(n))
        if not isinstance(x, ndarray):
            x = self._client.asarray(np.asarray(x))
        if x.ndim == 0:
            raise ValueError("x must be an integer or at least 1-dimensional")
        axis = operator.index(axis) % x.ndim
        return take(x, argsort(self.random(x.shape[axis])), axis=axis)

    def shuffle(self, x: ndarray, axis: int = 0) -> None:
        """Shuffles a resident array in place (an assignment: x's object
        takes the permuted value)."""
        if not isinstance(x, ndarray):
            raise TypeError("shuffle needs a resident array")
        x[...] = self.permutation(x, axis=axis)

    def choice(self, a: Any, size: Size = None, replace: bool = True, p: Any = None,
               axis: int = 0, shuffle: bool = True) -> ndarray:
        """Samples of range(a) or of a's rows: uniform integers with
        replacement, NumPy's inverse CDF (cumsum and searchsorted of uniform
        draws) with ``p``, a permutation's first ``size`` without."""
        from ._sorting import argsort, cumulative_sum, searchsorted, take
        pop = self._client.asarray(np.asarray(a)) if not isinstance(a, (int, np.integer, ndarray)) \
            else a
        n = operator.index(pop) if isinstance(pop, (int, np.integer)) else pop.shape[axis]
        shape = _shape(size)
        count = int(np.prod(shape))
        if n == 0 and count > 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        if p is not None:
            probs = p if isinstance(p, ndarray) else self._client.asarray(
                np.asarray(p, dtype=np.float64))
            if probs.shape != (n,):
                raise ValueError("a and p must have same size")
            cdf = cumulative_sum(probs)
            cdf = cdf / cdf[n - 1]
            if not replace:
                raise NotImplementedError("choice without replacement and with p is not built")
            idx = searchsorted(cdf, self.random(shape), side="right")
        elif replace:
            idx = self.integers(0, n, size=shape)
        else:
            if count > n:
                raise ValueError("Cannot take a larger sample than population when replace=False")
            idx = argsort(self.random(n))[:count].reshape(shape)
        if isinstance(pop, (int, np.integer)):
            return idx
        return take(pop, idx.reshape((count,)), axis=axis).reshape(
            pop.shape[:axis] + shape + pop.shape[axis + 1:])


def default_rng(seed: Any = None, *, client: Any = None) -> Generator:
    """A Generator seeded as numpy.random.default_rng(seed) (NumPy's
    SeedSequence expands the seed here; None draws fresh entropy), on
    ``client`` or the default connection."""
    from ._namespace import _client_for
    if isinstance(seed, Generator):
        return seed
    state = np.random.PCG64(seed).state
    return Generator(_client_for(client), state)
