"""Recorded arrays and how a graph of them becomes a wire program.

A port of the C++ client's Node and ScopeBuilder (client/client_core.h,
client/program_builder.cc): pending nodes form a graph through ``inputs``;
building a scope orders the nodes the targets need, numbers their values
(parameters first, then every output of every instruction) and emits the
instructions. Traversals are iterative, so a chain of a million recorded
ops neither overflows the stack nor hits Python's recursion limit.
"""

from __future__ import annotations

import enum
import os
import sys
import weakref
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from ._errors import FailedPrecondition
from ._infer import Meta
from .v1 import resident_pb2 as pb

if TYPE_CHECKING:  # pragma: no cover
    from ._session import Session


class Kind(enum.Enum):
    MATERIALIZED = 0  # on the server under ``handle``
    OP = 1            # an instruction not yet sent (a loop has several outputs)
    PARAM = 2         # a loop body's parameter
    LOOP_OUTPUT = 3   # output ``index`` of the loop node inputs[0]
    SCALAR = 4        # a Python scalar operand (weak, NEP 50), sent inline as ``scalar``


class Node:
    """One array value, recorded or computed. Immutable once computed."""

    __slots__ = ("kind", "session", "handle", "meta", "ins", "inputs", "num_outputs",
                 "scope", "index", "user", "borrowed", "scalar", "site", "outputs", "refused",
                 "consumers", "consumer_refs", "__weakref__")

    def __init__(self, kind: Kind, session: "Session", meta: Optional[Meta] = None,
                 ins: Optional["pb.Instruction"] = None, inputs: Sequence["Node"] = (),
                 num_outputs: int = 1, scope: object = None, index: int = 0) -> None:
        self.kind = kind
        self.session = session
        self.handle = b""
        self.meta = meta
        self.ins = ins
        self.inputs = tuple(inputs)
        # Pending nodes that read this one: a flush keeps (as a handle) a
        # node it computes when one outside the flush still needs it, else
        # that consumer would compute it again at the next flush.
        self.consumers = 0
        # The pending consumers themselves, while this node is pending: a
        # flush that computes it also computes those it makes ready.
        self.consumer_refs: List[weakref.ref] = []
        me = weakref.ref(self)
        for i in self.inputs:
            i.consumers += 1
            if i.kind is Kind.OP or i.kind is Kind.LOOP_OUTPUT:
                i.consumer_refs.append(me)
        self.num_outputs = num_outputs
        self.scope = scope
        self.index = index
        self.user: Optional[weakref.ref] = None  # the ndarray that wraps this node
        self.borrowed = False
        self.scalar: Optional["pb.Scalar"] = None  # SCALAR: the value on the wire
        # OP: the user's line that recorded it (file, line), named in errors.
        self.site: Optional[Tuple[str, int]] = call_site() if kind is Kind.OP else None
        # OP of several outputs (a loop, qr, random...): its output nodes, so
        # running it keeps every output still held, not only the one asked
        # for (else a held output stays pending and a later use re-runs it).
        self.outputs: Tuple[weakref.ref, ...] = ()
        # A random draw the server refused: why. It never runs again (a
        # Generator draws on from the state before it, as NumPy's does
        # after a MemoryError).
        self.refused: Optional[str] = None

    def materialize(self, info: "pb.ArrayInfo", meta: Meta) -> None:
        self.kind = Kind.MATERIALIZED
        self.handle = info.handle
        self.meta = meta
        self.ins = None
        for i in self.inputs:
            i.consumers -= 1
        self.inputs = ()
        self.consumer_refs = []

    def has_user(self) -> bool:
        return self.user is not None and self.user() is not None

    def __del__(self) -> None:
        # Only queues the handle: the release rides on the next request.
        # Never a call from here, which could block inside a garbage collection.
        if self.kind is Kind.MATERIALIZED and self.handle and not self.borrowed:
            self.session.queue_release(self.handle)
        for i in self.inputs:  # a pending node dropped unrun
            i.consumers -= 1


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def call_site() -> Optional[Tuple[str, int]]:
    """The innermost frame outside this package: the user's line."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else None


def _pending(n: Node) -> bool:
    return n.kind is Kind.OP or n.kind is Kind.LOOP_OUTPUT


class ScopeBuilder:
    """Builds the top-level program (scope None) or a loop body (scope = the
    loop's tag, whose PARAM nodes are its first ``num_carried`` values)."""

    def __init__(self, scope: object, num_carried: int) -> None:
        self.scope = scope
        self.num_carried = num_carried
        self.order: List[Node] = []       # emitted pending nodes, in order
        self.invariants: List[Node] = []  # body only: outer nodes passed in
        self._values: Dict[int, int] = {}
        self._invariant_index: Dict[int, int] = {}
        self._internal: Dict[int, bool] = {}

    def preset_invariants(self, invariants: Sequence[Node]) -> None:
        """Numbers these outer nodes as the body's invariants, in order, before
        build: a while's condition and body share one parameter list."""
        for n in invariants:
            self._invariant_index[id(n)] = len(self.invariants)
            self.invariants.append(n)

    def _is_internal(self, root: Node) -> bool:
        """Computed inside this scope: at the top level every pending node; in
        a body, the pending nodes that depend on one of its parameters."""
        if self.scope is None:
            return _pending(root)
        memo = self._internal
        if id(root) in memo:
            return memo[id(root)]
        stack = [(root, 0)]
        while stack:
            n, nxt = stack[-1]
            if id(n) in memo:
                stack.pop()
                continue
            if n.kind is Kind.PARAM or n.kind is Kind.MATERIALIZED:
                memo[id(n)] = n.kind is Kind.PARAM and n.scope is self.scope
                stack.pop()
                continue
            if nxt < len(n.inputs):
                stack[-1] = (n, nxt + 1)
                child = n.inputs[nxt]
                if id(child) not in memo:
                    stack.append((child, 0))
                continue
            memo[id(n)] = any(memo[id(i)] for i in n.inputs)
            stack.pop()
        return memo[id(root)]

    def build(self, targets: Sequence[Node], out: "pb.Program") -> None:
        """Emits every pending node the targets need into ``out``."""
        visited: Dict[int, bool] = {}
        for target in targets:
            stack: List[list] = []

            def visit(n: Node) -> None:
                if id(n) in visited:
                    return
                if n.kind is Kind.SCALAR:  # inline in its op's operands
                    visited[id(n)] = True
                    return
                if n.kind is Kind.MATERIALIZED or (n.kind is Kind.PARAM and n.scope is self.scope):
                    visited[id(n)] = True
                    return
                if n.kind is Kind.PARAM and self.scope is None:
                    raise FailedPrecondition(
                        "an array made inside a loop body was used outside its loop")
                if not self._is_internal(n):
                    visited[id(n)] = True
                    if id(n) not in self._invariant_index:  # else preset
                        self._invariant_index[id(n)] = len(self.invariants)
                        self.invariants.append(n)
                    return
                visited[id(n)] = False
                stack.append([n, 0])

            visit(target)
            while stack:
                top = stack[-1]
                n = top[0]
                if top[1] < len(n.inputs):
                    child = n.inputs[top[1]]
                    top[1] += 1
                    visit(child)
                    continue
                visited[id(n)] = True
                self.order.append(n)
                stack.pop()
        # The other outputs of every op of several outputs emitted here: they
        # are values of the same instruction, named (and kept) at no cost.
        siblings = []
        for n in self.order:
            for ref in n.outputs:
                o = ref()
                if o is not None and o.kind is Kind.LOOP_OUTPUT and id(o) not in visited:
                    visited[id(o)] = True
                    siblings.append(o)
        self.order.extend(siblings)
        # Number values: parameters (carried, then invariants), then outputs.
        next_value = self.num_carried + len(self.invariants)
        for n in self.order:
            if n.kind is Kind.LOOP_OUTPUT:
                self._values[id(n)] = self._values[id(n.inputs[0])] + n.index
                continue
            self._values[id(n)] = next_value
            next_value += n.num_outputs
        for n in self.order:
            if n.kind is Kind.LOOP_OUTPUT:
                continue
            ins = out.instructions.add()
            ins.CopyFrom(n.ins)
            for i in n.inputs:
                ins.operands.append(self.operand(i))

    def operand(self, n: Node) -> "pb.Operand":
        """The operand naming ``n`` inside this scope (after build)."""
        if n.kind is Kind.SCALAR:
            return pb.Operand(scalar=n.scalar)
        if n.kind is Kind.MATERIALIZED:
            if not n.handle:
                raise FailedPrecondition("the array was released")
            return pb.Operand(handle=n.handle)
        if n.kind is Kind.PARAM and n.scope is self.scope and self.scope is not None:
            return pb.Operand(value=n.index)
        if id(n) in self._invariant_index:
            return pb.Operand(value=self.num_carried + self._invariant_index[id(n)])
        if id(n) in self._values:
            return pb.Operand(value=self._values[id(n)])
        raise FailedPrecondition("an array made inside a loop body was used outside its loop")

    def value_of(self, n: Node) -> int:
        return self._values[id(n)]

    def node_of_instruction(self, i: int) -> Optional[Node]:
        """The node of the program's instruction ``i``."""
        emitted = [n for n in self.order if n.kind is not Kind.LOOP_OUTPUT]
        return emitted[i] if 0 <= i < len(emitted) else None

    def site_of_instruction(self, i: int) -> Optional[Tuple[str, int]]:
        """The recording line of the program's instruction ``i``."""
        n = self.node_of_instruction(i)
        return n.site if n is not None else None
