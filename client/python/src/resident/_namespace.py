"""The Array API standard's namespace pieces that need no new server op:
its version, dtype objects and constants, the data-type functions, a
default client for module-level creation functions (as CuPy's functions
use the current device), and ``__array_namespace_info__``.

    import resident as rs                 # RESIDENT_SERVER, RESIDENT_TOKEN name the server
    x = rs.ones((3, 4), dtype=rs.float32)  # on the default client (connected on first use)
    rs.set_default_client(c)               # or make a client of your own the default
    xp = x.__array_namespace__()           # the resident module itself

NumPy is the reference for every data-type rule: these functions ask NumPy
2 (whose answers are the standard's) about the same dtypes.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _dtypes
from ._array import ndarray

__array_api_version__ = "2024.12"

# The standard's dtype objects: NumPy's dtypes, which Resident's arrays report.
bool = np.dtype(np.bool_)  # noqa: A001 (the standard's name)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

_lock = threading.Lock()
_default: Optional[Any] = None  # the default Client


def set_default_client(client: Optional[Any]) -> Optional[Any]:
    """Makes ``client`` the one module-level functions (``rs.ones``,
    ``rs.asarray``, ...) create arrays on; returns the previous one. None
    forgets it: the next use connects anew (``rs.connect()``'s defaults:
    ``$RESIDENT_SERVER``, ``$RESIDENT_TOKEN``)."""
    global _default
    with _lock:
        previous, _default = _default, client
    return previous


def get_default_client() -> Any:
    """The default client, connecting with ``rs.connect()``'s defaults on
    first use (or after the previous one was closed)."""
    global _default
    with _lock:
        if _default is None or _default.closed:
            from ._client import connect
            _default = connect()
        return _default


def _client_for(device: Any) -> Any:
    """The client to create on: ``device`` may be a Client, one of the
    default client's devices, or None."""
    if device is None:
        return get_default_client()
    if hasattr(device, "asarray") and hasattr(device, "ones"):
        return device
    client = get_default_client()
    if isinstance(device, Device) and device.name == client.device:
        return client
    raise ValueError(f"device {device!r} is not the default client's device {client.device!r}; "
                     "connect a client to it (rs.connect(device=...)) and pass that")


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: Optional[Any] = None
            ) -> ndarray:
    """``numpy.asarray`` onto the server. A Resident array stays itself, or
    is cast when ``dtype`` differs; ``copy=True`` gives a new array object
    of the same value (an assignment to one, ``x[i] = v``, then leaves the
    other as it was: no bytes are copied, values being immutable on the
    server); ``copy=False`` refuses a dtype change (ValueError)."""
    if isinstance(obj, ndarray):
        if dtype is not None and _dtypes.normalize(dtype) != obj.dtype:
            if copy is False:
                raise ValueError("asarray(copy=False): converting the dtype needs a copy")
            return obj.astype(dtype)
        return ndarray._wrap(obj._node) if copy else obj
    return _client_for(device).asarray(obj, dtype=dtype)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> ndarray:
    return _client_for(device).ones(shape, np.float64 if dtype is None else dtype)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> ndarray:
    return _client_for(device).zeros(shape, np.float64 if dtype is None else dtype)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> ndarray:
    return _client_for(device).full(shape, fill_value, dtype)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> ndarray:
    return _client_for(device).arange(start, stop, step, dtype)


# --- data-type functions ---------------------------------------------------------------


def _dtype_of(x: Any) -> Any:
    """A Resident array's dtype; anything else as NumPy reads it."""
    return x.dtype if isinstance(x, ndarray) else x


def isdtype(dtype: Any, kind: Any) -> Any:
    """The standard's ``isdtype``: ``kind`` a dtype, a kind name ("bool",
    "signed integer", "unsigned integer", "integral", "real floating",
    "complex floating", "numeric") or a tuple of them."""
    return np.isdtype(np.dtype(dtype), kind)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The promoted dtype of arrays, dtypes and (weak) Python scalars."""
    return _dtypes.normalize(np.result_type(*(_dtype_of(a) for a in arrays_and_dtypes)))


def can_cast(from_: Any, to: Any, /) -> Any:
    """Whether ``from_`` (a dtype or array) casts to ``to`` by the
    standard's (safe) rules."""
    return np.can_cast(np.dtype(_dtype_of(from_)), np.dtype(to))


class FInfo(NamedTuple):
    """The standard's ``finfo``: Python floats (NumPy's are NumPy scalars)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


def finfo(type: Any, /) -> FInfo:  # noqa: A002 (the standard's name)
    f = np.finfo(np.dtype(_dtype_of(type)))
    return FInfo(int(f.bits), float(f.eps), float(f.max), float(f.min),
                 float(f.smallest_normal), np.dtype(f.dtype))


def iinfo(type: Any, /) -> Any:  # noqa: A002
    return np.iinfo(np.dtype(_dtype_of(type)))


# --- __array_namespace_info__ ---------------------------------------------------------


class Device:
    """A server device, as the standard's ``x.device`` reports it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: Any) -> Any:
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Device({self.name!r})"


_NUMERIC_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_NUMERIC_KINDS["integral"] = _NUMERIC_KINDS["signed integer"] + _NUMERIC_KINDS["unsigned integer"]
_NUMERIC_KINDS["numeric"] = (_NUMERIC_KINDS["integral"] + _NUMERIC_KINDS["real floating"]
                             + _NUMERIC_KINDS["complex floating"])


class _Info:
    """``__array_namespace_info__()``: what this namespace supports."""

    def capabilities(self) -> Dict[str, Any]:
        # Data-dependent shapes (boolean masks, nonzero, unique) are not yet
        # served; no linalg or fft extension yet.
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": None}

    def default_device(self) -> Device:
        return Device(get_default_client().device)

    def devices(self) -> List[Device]:
        return [Device(d.name) for d in get_default_client().info().devices]

    def default_dtypes(self, *, device: Any = None) -> Dict[str, np.dtype]:
        return {"real floating": float64, "complex floating": complex128, "integral": int64,
                "indexing": int64}

    def dtypes(self, *, device: Any = None, kind: Union[str, Tuple[str, ...], None] = None
               ) -> Dict[str, np.dtype]:
        names: Tuple[str, ...] = _NUMERIC_KINDS["bool"] + _NUMERIC_KINDS["numeric"]
        if kind is not None:
            kinds = (kind,) if isinstance(kind, str) else kind
            names = tuple(n for k in kinds for n in _NUMERIC_KINDS[k])
        return {n: np.dtype(n) for n in names}


def __array_namespace_info__() -> _Info:
    return _Info()
