"""resident: NumPy/CuPy-like arrays that live on a Resident server.

    import resident as rs
    c = rs.connect("127.0.0.1:50051")          # token=..., tls_ca=... for a shared server
    x = c.ones((1024, 512, 4, 4))
    for _ in range(1024):
        x = x + x                              # recorded, not sent
    print(x.get()[0, 0, 0, 0])                 # one program, then a download: inf

Operations are recorded and sent as one program when a value is needed;
``c.loop(n, x, body)`` runs a loop on the server. Arrays are released on the
server when garbage-collected; ``with c:`` ends the session. Failures raise
:class:`ResidentError` subclasses carrying the gRPC code and the server's
message.
"""

from . import _array
from ._array import (ELEMENTWISE_FUNCTIONS, asnumpy, astype, clip, dot, matmul, ndarray, reshape,
                     transpose, where)
from ._shape_ops import (all, any, argmax, argmin, broadcast_to, concatenate, expand_dims, max,
                         mean, min, prod, squeeze, stack, sum)
from ._client import (ArrayListing, Client, DeviceInfo, ServerInfo, SessionListing, connect)
from ._dtypes import SUPPORTED as supported_dtypes
from ._composed import (concat, empty, empty_like, full_like, matrix_transpose, ones_like,
                        permute_dims, pow, round, std, tensordot, var, vecdot, zeros_like)
from . import _protocols  # noqa: F401 (installs __array_ufunc__, __array_function__)
from ._indexing import extract, flatnonzero, nonzero
from ._sets import unique_all, unique_counts, unique_inverse, unique_values
from ._sorting import (argsort, cumprod, cumsum, cumulative_prod, cumulative_sum, searchsorted,
                       sort, take, take_along_axis)
from ._manipulation import (broadcast_arrays, count_nonzero, diff, eye, flip, linspace, meshgrid,
                            moveaxis, repeat, roll, tile, tril, triu, unstack)
from ._namespace import (Device, __array_api_version__, __array_namespace_info__, arange,
                         asarray, bool, can_cast, complex64, complex128, e, finfo, float32,
                         float64, full, get_default_client, iinfo, inf, int8, int16, int32,
                         int64, isdtype, nan, newaxis, ones, pi, result_type,
                         set_default_client, uint8, uint16, uint32, uint64, zeros)
from ._interchange import from_dlpack
from ._numpy_extras import (allclose, argwhere, bincount, column_stack, copy, corrcoef, cov, diag,
                            histogram, hstack, isclose, median, outer, vstack)
from . import fft, linalg, random
from ._errors import (Aborted, AlreadyExists, Cancelled, DataLoss, DeadlineExceeded,
                      FailedPrecondition, IndexOutOfBounds, Internal, InvalidArgument, NotFound,
                      OutOfRange,
                      PermissionDenied, ResidentError, ResourceExhausted, Unauthenticated,
                      Unavailable, Unimplemented, Unknown)

# add, subtract, ..., sqrt, less, isnan, abs, mod: one per ufunc of the table.
globals().update({_n: getattr(_array, _n) for _n in ELEMENTWISE_FUNCTIONS})

__version__ = "0.1.0"

__all__ = [
    "connect", "Client", "ndarray", "asnumpy", *ELEMENTWISE_FUNCTIONS, "where", "clip", "dot",
    "matmul", "sum", "reshape", "transpose", "astype", "supported_dtypes",
    "prod", "mean", "max", "min", "argmax", "argmin", "any", "all", "concatenate", "stack",
    "broadcast_to", "squeeze", "expand_dims",
    "asarray", "ones", "zeros", "full", "arange", "set_default_client", "get_default_client",
    "var", "std", "empty", "empty_like", "zeros_like", "ones_like", "full_like", "pow", "round",
    "concat", "tensordot", "vecdot", "permute_dims", "matrix_transpose", "flip", "roll",
    "moveaxis", "broadcast_arrays",
    "meshgrid", "unstack", "diff", "tile", "repeat", "count_nonzero", "linspace", "eye", "tril",
    "triu", "nonzero", "flatnonzero", "extract", "unique_all", "unique_counts",
    "unique_inverse", "unique_values",
    "argsort", "sort", "searchsorted", "take", "take_along_axis", "cumulative_sum",
    "cumulative_prod",
    "cumsum", "cumprod", "from_dlpack", "linalg", "fft", "random", "allclose", "argwhere", "bincount",
    "column_stack", "copy", "corrcoef", "cov", "diag", "histogram", "hstack", "isclose", "median",
    "outer", "vstack",
    "isdtype", "result_type", "can_cast", "finfo", "iinfo", "__array_namespace_info__",
    "Device", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128", "e", "pi", "inf", "nan", "newaxis",
    "ServerInfo", "DeviceInfo", "ArrayListing", "SessionListing", "ResidentError", "Cancelled",
    "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
    "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
    "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated", "IndexOutOfBounds",
]
