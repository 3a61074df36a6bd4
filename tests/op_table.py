"""The server's elementwise op table, read from core/elementwise_kind.h, for
the scripts that generate NumPy's answers (make_*_literals.py,
make_infer_*_rows.py): a row added there is picked up by each of them.

    from op_table import elementwise_ops
    for op in elementwise_ops(): print(op.name, op.arity, op.rule)
"""
import os
import re
from typing import List, NamedTuple

import numpy as np

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core",
                      "elementwise_kind.h")


class Op(NamedTuple):
    kind: str   # kAdd
    name: str   # add: NumPy's name
    arity: int
    rule: str   # kAll, ...


def elementwise_ops() -> List[Op]:
    """Every row of RESIDENT_ELEMENTWISE_OPS, in the table's order."""
    with open(HEADER) as f:
        text = f.read()
    body = text[text.index("#define RESIDENT_ELEMENTWISE_OPS(X)"):]
    body = body[:body.index("\n\n")]
    rows = re.findall(r"X\((k\w+), (\w+), (\d), (k\w+)\)", body)
    return [Op(k, n, int(a), r) for k, n, a, r in rows]


def numpy_function(name: str):
    """NumPy's function of a row: its ufunc, or numpy.real / numpy.imag."""
    return getattr(np, name)
