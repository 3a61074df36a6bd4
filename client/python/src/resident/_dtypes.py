"""NumPy dtypes <-> the wire's DType, and Python scalars as wire Scalars."""

from __future__ import annotations

import numbers
from typing import Any, Dict, Union

import numpy as np

from .v1 import resident_pb2 as pb

try:  # bfloat16 is ml_dtypes' NumPy dtype (pip install ml_dtypes, or resident[bfloat16])
    import ml_dtypes as _ml_dtypes
    BFLOAT16: Any = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # without it, bfloat16 arrays download as their raw uint16 bits
    BFLOAT16 = None


def _wire_table() -> Dict[np.dtype, Any]:
    """NumPy dtype -> wire value, from the proto's own enum: DTYPE_<NAME> is
    NumPy's dtype ``name`` (core/dtype.h's table defines both), so a dtype
    added to the server is known here without a second table. bfloat16 is
    ml_dtypes' (left out without it)."""
    table: Dict[np.dtype, Any] = {}
    for wire_name, value in pb.DType.items():
        if value == pb.DTYPE_UNSPECIFIED:
            continue
        name = wire_name[len("DTYPE_"):].lower()
        if name == "bfloat16":
            if BFLOAT16 is not None:
                table[BFLOAT16] = value
            continue
        table[np.dtype(name)] = value
    return table


_TO_WIRE: Dict[np.dtype, Any] = _wire_table()
#: The dtypes the server stores, as NumPy names them (bfloat16 only with
#: ml_dtypes), in NumPy's order: bool, signed, unsigned, floats, complex.
SUPPORTED = tuple(sorted(_TO_WIRE, key=lambda d: ("biufcV".index(d.kind), d.itemsize)))
_FROM_WIRE: Dict[Any, np.dtype] = {v: k for k, v in _TO_WIRE.items()}
if BFLOAT16 is None:
    # A server's bfloat16 array still downloads: as uint16 holding its bits
    # (view them with ml_dtypes.bfloat16, or shift them into float32's top half).
    _FROM_WIRE[pb.DTYPE_BFLOAT16] = np.dtype(np.uint16)

DTypeLike = Union[np.dtype, type, str]


def normalize(dtype: Any) -> np.dtype:
    """``dtype`` as one of the supported NumPy dtypes (native byte order).

    Accepts what NumPy accepts (``np.float32``, ``"int64"``, ``float``...).
    Raises TypeError, naming the supported ones, for any other.
    """
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        if BFLOAT16 is None and str(dtype) == "bfloat16":
            raise TypeError("bfloat16 needs ml_dtypes (pip install ml_dtypes)") from e
        raise TypeError(f"not a dtype: {dtype!r}") from e
    dt = dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt
    if dt not in _TO_WIRE:
        names = ", ".join(str(d) for d in SUPPORTED)
        raise TypeError(f"dtype {dt} is not supported by resident (supported: {names})")
    return dt


def to_wire(dtype: Any) -> Any:
    """The wire enum value (``resident.v1.DType``)."""
    return _TO_WIRE[normalize(dtype)]


def from_wire(value: int) -> np.dtype:
    try:
        return _FROM_WIRE[value]
    except KeyError:
        from ._errors import Internal
        raise Internal(f"server sent unknown dtype {value}") from None


def is_scalar(value: Any) -> bool:
    """A Python or NumPy number (or bool) usable as an operand or fill."""
    return isinstance(value, (bool, numbers.Integral, numbers.Real, numbers.Complex,
                              np.bool_)) and not isinstance(value, np.ndarray)


def _set_complex(value: Any, out: "pb.Scalar") -> None:
    c = complex(value)
    out.complex_value.real = c.real
    out.complex_value.imag = c.imag


def set_scalar(value: Any, out: "pb.Scalar", dtype: Any = None) -> None:
    """Writes ``value`` into a wire Scalar; with ``dtype``, as that dtype's
    kind, so the server never has to guess a conversion."""
    if dtype is not None:
        kind = np.dtype(dtype).kind
        if kind == "b":
            out.bool_value = bool(value)
        elif kind in "iu":
            out.int_value = int(value.real if isinstance(value, numbers.Complex) else value)
        elif kind == "c":
            _set_complex(value, out)
        else:  # a complex's real part, as NumPy's unsafe cast (without its ComplexWarning)
            out.float_value = float(value.real if isinstance(value, numbers.Complex) else value)
        return
    if isinstance(value, (bool, np.bool_)):
        out.bool_value = bool(value)
    elif isinstance(value, numbers.Integral):
        out.int_value = int(value)
    elif isinstance(value, numbers.Real):
        out.float_value = float(value)
    elif isinstance(value, numbers.Complex):
        _set_complex(value, out)
    else:
        raise TypeError(f"expected a bool, int, float or complex, got {type(value).__name__}")


def natural_dtype(value: Any) -> np.dtype:
    """NumPy's dtype for a lone scalar: bool, int64, float64, or a NumPy
    scalar's own."""
    if isinstance(value, np.generic):
        return normalize(value.dtype)
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, numbers.Integral):
        return np.dtype(np.int64)
    if isinstance(value, numbers.Real):
        return np.dtype(np.float64)
    if isinstance(value, numbers.Complex):
        return np.dtype(np.complex128)
    raise TypeError(f"expected a bool, int, float or complex, got {type(value).__name__}")


def check_fits(value: Any, dtype: np.dtype) -> None:
    """NumPy 2 refuses a Python int that the integer dtype cannot hold."""
    if dtype.kind in "iu" and isinstance(value, numbers.Integral) and not isinstance(
            value, (bool, np.bool_)):
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise OverflowError(f"Python integer {int(value)} out of bounds for {dtype}")
