"""Constants in the diff: two constants are one op changed only when they share a
type or a value.

A constant only names a value, and passes hoist, merge and reorder constants freely,
so the engine pairs them apart from the other ops of a gap: an equal constant of the
gap first, then (after the move pass has paired equal constants anywhere) the
leftovers of one function by :func:`pair_leftover_constants`. Pairing them by name
alone made ``%c64_i32 = arith.constant 64 : i32`` a "change" of
``%accumulator = arith.constant dense<0.0> : tensor<128x128xf32>``.
"""

from __future__ import annotations

import re
from collections import defaultdict

from irscope.ir import Op

from .keys import Keys

CONSTANT_OPS = frozenset({"arith.constant", "llvm.mlir.constant"})
"""Ops that only name a value."""


def is_constant(op: Op) -> bool:
    """Whether ``op`` is a constant (and has no regions)."""
    return op.name in CONSTANT_OPS and not op.regions


def pair_leftover_constants(xs: list[Op], ys: list[Op], keys_a: Keys, keys_b: Keys) -> list[tuple[Op, Op]]:
    """Pair the constants of one function that are still unpaired: a tensor of the same
    type (its value changed), then one of the same value and shape (its layout
    changed), then one of the same value and element type (its shape changed), in
    order. The rest stay added and removed: a scalar of another value, or a constant
    of another type and value, is another constant (``%c64_i32`` is no edit of
    ``%c32_i32``)."""
    out: list[tuple[Op, Op]] = []
    for part in (_constant_tensor_type, _constant_shape_value, _constant_element_value):
        if not xs or not ys:
            break
        waiting: dict[str, list[Op]] = defaultdict(list)
        for y in ys:
            waiting[part(y, keys_b)].append(y)
        taken: set[int] = set()
        still = []
        for x in xs:
            peers = waiting.get(part(x, keys_a))
            if peers:
                y = peers.pop(0)
                out.append((x, y))
                taken.add(id(y))
            else:
                still.append(x)
        xs = still
        ys = [y for y in ys if id(y) not in taken]
    return out


def _constant_type(op: Op, keys: Keys) -> str:
    """A constant's result type, encodings as the shared tokens."""
    return keys._key(op.types) if op.types else ""


def _constant_tensor_type(op: Op, keys: Keys) -> str:
    """A tensor constant's type; a scalar's type and value (scalars pair by value)."""
    t = _constant_type(op, keys)
    return t if t.startswith("tensor<") else t + " = " + _constant_value(op, keys)


_ENCODING = re.compile(r",\s*#[\w.]+(?:<\{[^}]*\}>)?")


def _constant_shape(op: Op, keys: Keys) -> str:
    """A constant's result type without its encoding (``tensor<64x64xf16>``)."""
    return _ENCODING.sub("", _constant_type(op, keys))


def _constant_shape_value(op: Op, keys: Keys) -> str:
    return _constant_shape(op, keys) + " = " + _constant_value(op, keys)


def _constant_element_value(op: Op, keys: Keys) -> str:
    """A constant's value and element type (``f32 = dense<0.0>``), whatever its shape."""
    shape = _constant_shape(op, keys)
    element = shape[shape.rfind("x") + 1:].rstrip(">") if shape.startswith("tensor<") else shape
    return element + " = " + _constant_value(op, keys)


def _constant_value(op: Op, keys: Keys) -> str:
    """A constant's value: its key after the op name, without the result type."""
    key = keys(op)
    suffix = " : " + _constant_type(op, keys)
    if op.types and key.endswith(suffix):
        key = key[:-len(suffix)]
    return key.split(op.name, 1)[-1].strip()
