"""Moving arrays between Resident and other libraries, and between servers:
DLPack (``__dlpack__``, ``__dlpack_device__``, ``from_dlpack``) and the
Array API's ``to_device``.

A Resident array lives on the server, usually on another machine, so its
DLPack export is a host copy: ``__dlpack__`` downloads the array (as
``x.get()``) and hands out the NumPy copy's capsule, and
``__dlpack_device__`` says (kDLCPU, 0), where that copy lives.
``np.from_dlpack(x)``, ``torch.from_dlpack(x)`` and the like therefore get a
host array; ``copy=False`` raises BufferError, since no export can avoid
the download. ``from_dlpack(obj)`` uploads any DLPack producer's data (a
NumPy array, or a GPU library's array through its host copy) to the
server. Device-to-device exchange with a GPU library on the server's own
host is the data-path issue's work, not this module's.

    y = rs.from_dlpack(torch_tensor)          # one upload
    h = np.from_dlpack(x)                      # one download, a NumPy array
    z = x.to_device(other_client)              # through the host
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._array import ndarray

_KDLCPU = 1


def _dlpack(self: ndarray, *, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
            dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
    if copy is False:
        raise BufferError("a resident array lives on the server: exporting it is a download, "
                          "which copy=False forbids")
    if dl_device is not None and int(dl_device[0]) != _KDLCPU:
        raise BufferError(f"a resident array exports to host memory (kDLCPU) only, not {dl_device}")
    host = self.get()
    kwargs: dict = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    return host.__dlpack__(**kwargs)


def _dlpack_device(self: ndarray) -> Tuple[int, int]:
    """(kDLCPU, 0): where ``__dlpack__``'s export (a host copy) lives."""
    return (_KDLCPU, 0)


def _same_session(a: Any, client: Any) -> bool:
    return getattr(client, "_s", None) is a._node.session


def to_device(self: ndarray, device: Any, /, *, stream: Any = None) -> ndarray:
    """The array on ``device``: itself when that is its own device; a
    Client (of another server or device) gets a copy through the host
    (a download and an upload)."""
    if stream is not None:
        raise ValueError("resident arrays take no stream")
    if device is None or device == self.device:
        return self
    if hasattr(device, "asarray") and hasattr(device, "ones"):  # a Client
        if _same_session(self, device):
            return self
        return device.asarray(self.get())
    raise ValueError(f"cannot move a resident array from {self.device} to {device!r}: pass a "
                     "client connected to that device (rs.connect(..., device=...))")


def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[bool] = None) -> ndarray:
    """An array from any DLPack producer: a Resident array stays on the
    server (a new array object when ``copy`` is True, moved with
    ``to_device`` when ``device`` differs); anything else is brought to the
    host (``numpy.from_dlpack``) and uploaded, which copy=False forbids."""
    from ._namespace import _client_for, asarray
    if isinstance(x, ndarray):
        y = x if device is None else to_device(x, device)
        if y is not x and copy is False:
            raise BufferError("moving to another device copies, which copy=False forbids")
        return asarray(y, copy=True) if copy and y is x else y
    if copy is False:
        raise BufferError("from_dlpack of a foreign array uploads it to the server (a copy), "
                          "which copy=False forbids")
    try:
        host = np.from_dlpack(x, device="cpu")
    except (BufferError, TypeError, ValueError):
        host = np.from_dlpack(x)
    return _client_for(device).asarray(host)


ndarray.__dlpack__ = _dlpack  # type: ignore[attr-defined]
ndarray.__dlpack_device__ = _dlpack_device  # type: ignore[attr-defined]
ndarray.to_device = to_device  # type: ignore[attr-defined]
