"""Exceptions: every failure of a call is a ResidentError carrying the gRPC
status code and the server's message.

Subclasses follow the gRPC codes; where a Python built-in means the same
thing they derive from it too, so ``except ValueError`` catches a shape
mismatch as it would with NumPy, and ``except MemoryError`` an exhausted
quota as it would with CuPy.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Type

import grpc
import numpy as np


class ResidentError(Exception):
    """A call to the server failed (or could not be made).

    Attributes:
        code: the gRPC status code (``grpc.StatusCode``).
        details: the server's message, e.g. ``instruction 3 (add): operands
            could not be broadcast together with shapes (3,) (4,)``.
        request_id: the server's id of the call (its log line), if it sent one.
    """

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None,
                 request_id: Optional[str] = None) -> None:
        if code is not None:
            self.code = code
        self.details = details
        self.request_id = request_id
        text = f"{self.code.name}: {details}"
        if request_id:
            text += f" (request {request_id})"
        super().__init__(text)


class Cancelled(ResidentError):
    code = grpc.StatusCode.CANCELLED


class Unknown(ResidentError):
    code = grpc.StatusCode.UNKNOWN


class InvalidArgument(ResidentError, ValueError):
    """Malformed program, bad dtype or shape, shapes that do not broadcast."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class AxisError(InvalidArgument, IndexError):
    """An axis out of range: a ValueError and an IndexError, as NumPy's."""


class IndexOutOfBounds(InvalidArgument, IndexError):
    """An index array's value out of range, found on the server when the
    program ran (``x[idx]`` with idx a resident array): an IndexError, as
    NumPy's, and an InvalidArgument, as every refused program."""


class DeadlineExceeded(ResidentError, TimeoutError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFound(ResidentError, LookupError):
    """Unknown, released or another tenant's handle or name; unknown session."""

    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ResidentError):
    """Keeping a name the tenant already has (delete it first)."""

    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(ResidentError):
    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(ResidentError, MemoryError):
    """Over --max-memory or a tenant quota, or a message over the limit."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(ResidentError):
    """The array cannot be used here: released, a loop parameter outside its
    loop, or its client is closed."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(ResidentError):
    code = grpc.StatusCode.ABORTED


class OutOfRange(ResidentError):
    code = grpc.StatusCode.OUT_OF_RANGE


class Unimplemented(ResidentError, NotImplementedError):
    code = grpc.StatusCode.UNIMPLEMENTED


class Internal(ResidentError):
    code = grpc.StatusCode.INTERNAL


class Unavailable(ResidentError, ConnectionError):
    """The server cannot be reached, is draining, or its device is unhealthy."""

    code = grpc.StatusCode.UNAVAILABLE


class DataLoss(ResidentError):
    code = grpc.StatusCode.DATA_LOSS


class Unauthenticated(ResidentError):
    """Missing or wrong token."""

    code = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE: Dict[grpc.StatusCode, Type[ResidentError]] = {
    cls.code: cls
    for cls in (Cancelled, Unknown, InvalidArgument, DeadlineExceeded, NotFound,
                AlreadyExists, PermissionDenied, ResourceExhausted, FailedPrecondition,
                Aborted, OutOfRange, Unimplemented, Internal, Unavailable, DataLoss,
                Unauthenticated)
}


class LinAlgError(InvalidArgument, np.linalg.LinAlgError):
    """numpy.linalg.LinAlgError's case (a subclass of it, so ``except
    numpy.linalg.LinAlgError`` catches it, and a ValueError): the server
    could not factor a matrix ("Singular matrix", "Matrix is not positive
    definite", "... did not converge", NaN or infinity given to svd or eigh),
    or the array is not a stack of (square) matrices. Also
    ``resident.linalg.LinAlgError``."""


# take_along_axis's message (every backend's) for an index out of range.
_OUT_OF_BOUNDS = re.compile(r"index -?\d+ is out of bounds for axis")


def error_for(code: grpc.StatusCode, details: str,
              request_id: Optional[str] = None) -> ResidentError:
    """The exception of the class for ``code`` (LinAlgError for a
    factorisation's failure, which the server's message names;
    IndexOutOfBounds for an index array's value out of range)."""
    if code == grpc.StatusCode.INVALID_ARGUMENT and "LinAlgError: " in details:
        return LinAlgError(details, code, request_id)
    if code == grpc.StatusCode.INVALID_ARGUMENT and _OUT_OF_BOUNDS.search(details):
        return IndexOutOfBounds(details, code, request_id)
    return _BY_CODE.get(code, ResidentError)(details, code, request_id)


def from_rpc_error(e: grpc.RpcError, context: str = "") -> ResidentError:
    """Converts a gRPC failure, keeping the code, message and request id."""
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = (e.details() if hasattr(e, "details") else None) or str(e)
    request_id = None
    try:
        for key, value in e.trailing_metadata() or ():
            if key == "x-request-id":
                request_id = value
    except Exception:  # some failures (e.g. no connection) carry no metadata
        pass
    if context:
        details = f"{context}: {details}"
    return error_for(code, details, request_id)
