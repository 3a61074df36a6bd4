"""The op table: every server op the client records, with its arity and
its local dtype/shape rule.

Adding an op the server gained is a line here (plus, for a new function, a
line in _array.py): an elementwise NumPy ufunc goes in BINARY_ELEMENTWISE or
UNARY_ELEMENTWISE and gets its rule from NumPy itself; an op without a local
rule (infer=None) still works, its shape and dtype then come from the server
when first asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from . import _infer, _infer_shape

#: Binary ufuncs: NumPy broadcasting and promotion; Python operators below.
#: Mirrors the server's op table (core/elementwise_kind.h), in its order.
BINARY_ELEMENTWISE = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax",
                      "fmin", "power", "remainder", "floor_divide", "equal", "not_equal", "less",
                      "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
                      "logical_xor", "arctan2", "hypot", "logaddexp", "copysign", "nextafter",
                      "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
#: Unary ufuncs.
UNARY_ELEMENTWISE = ("negative", "absolute", "sign", "sqrt", "exp", "log", "log1p", "expm1",
                     "sin", "cos", "tanh", "floor", "ceil", "logical_not", "isnan", "isfinite",
                     "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh",
                     "arctanh", "log2", "log10", "rint", "trunc", "square", "reciprocal",
                     "positive", "conjugate", "real", "imag", "isinf", "signbit", "invert")
#: NumPy's other names for them, and the Array API standard's.
ALIASES = {"abs": "absolute", "mod": "remainder", "true_divide": "divide", "conj": "conjugate",
           "asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
           "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
           "bitwise_invert": "invert", "bitwise_not": "invert",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}

#: Reductions over axis sets (_shape_ops.py).
REDUCTIONS = ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all")

#: Python operator -> op, for ndarray's dunder methods (each also gets its
#: reflected form, __radd__ and so on, except the comparisons, which Python
#: reflects itself).
OPERATORS = {"__add__": "add", "__sub__": "subtract", "__mul__": "multiply",
             "__truediv__": "divide", "__floordiv__": "floor_divide", "__mod__": "remainder",
             "__pow__": "power", "__matmul__": "matmul", "__and__": "bitwise_and",
             "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__lshift__": "left_shift",
             "__rshift__": "right_shift"}
COMPARISONS = {"__eq__": "equal", "__ne__": "not_equal", "__lt__": "less",
               "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal"}
UNARY_OPERATORS = {"__neg__": "negative", "__abs__": "absolute", "__pos__": "positive",
                   "__invert__": "invert"}


@dataclass(frozen=True)
class OpSpec:
    name: str
    arity: int                       # operands; creation ops take none; -1: any
    infer: Optional[_infer.Rule]     # None: metadata from the server
    # Shape errors its rule finds raise at the call (InvalidArgument, a
    # ValueError), as NumPy's do, even in a lazy client; other ops' errors
    # surface when the program is evaluated.
    eager_errors: bool = False


OPS: Dict[str, OpSpec] = {s.name: s for s in (
    OpSpec("ones", 0, _infer.creation),
    OpSpec("zeros", 0, _infer.creation),
    OpSpec("full", 0, _infer.full),
    OpSpec("arange", 0, _infer.arange),
    *(OpSpec(n, 2, _infer.elementwise(n)) for n in BINARY_ELEMENTWISE),
    *(OpSpec(n, 1, _infer.elementwise(n)) for n in UNARY_ELEMENTWISE),
    OpSpec("where", 3, _infer.where),
    OpSpec("clip", 3, _infer.clip),
    OpSpec("dot", 2, _infer.dot, eager_errors=True),
    OpSpec("matmul", 2, _infer.matmul, eager_errors=True),
    *(OpSpec(n, 1, _infer_shape.reduction(n)) for n in REDUCTIONS),
    OpSpec("reshape", 1, _infer.reshape, eager_errors=True),
    OpSpec("transpose", 1, _infer.transpose, eager_errors=True),
    OpSpec("astype", 1, _infer.astype),
    # Shaping (_shape_ops.py); concatenate and stack take any number (-1).
    OpSpec("slice", 1, _infer_shape.slice_),
    OpSpec("concatenate", -1, _infer_shape.concatenate, eager_errors=True),
    OpSpec("stack", -1, _infer_shape.stack, eager_errors=True),
    OpSpec("broadcast_to", 1, _infer_shape.broadcast_to, eager_errors=True),
    OpSpec("squeeze", 1, _infer_shape.squeeze, eager_errors=True),
    OpSpec("expand_dims", 1, _infer_shape.expand_dims, eager_errors=True),
    # Sorting and scans along one axis (_sorting.py).
    OpSpec("argsort", 1, _infer_shape.argsort, eager_errors=True),
    OpSpec("sort", 1, _infer_shape.sort, eager_errors=True),
    OpSpec("take_along_axis", 2, _infer_shape.take_along_axis, eager_errors=True),
    OpSpec("cumulative_sum", 1, _infer_shape.cumulative("cumulative_sum"), eager_errors=True),
    OpSpec("cumulative_prod", 1, _infer_shape.cumulative("cumulative_prod"), eager_errors=True),
    # Mask selection of a length the client evaluated first (_indexing.py).
    OpSpec("flatnonzero", 1, _infer_shape.extract("flatnonzero"), eager_errors=True),
    OpSpec("extract", 2, _infer_shape.extract("extract"), eager_errors=True),
    # Discrete Fourier transforms along one axis (fft.py).
    *(OpSpec(n, 1, _infer_shape.transform(n), eager_errors=True)
      for n in ("fft", "ifft", "rfft", "irfft")),
    # numpy.linalg's routines of stacks of matrices (linalg.py).
    *(OpSpec(n, 2 if n == "solve" else 1, _infer_shape.factorisation(n), eager_errors=True)
      for n in ("cholesky", "solve", "inv", "det", "eigvalsh", "svdvals")),
)}
