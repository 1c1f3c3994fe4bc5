"""The types of the values an MLIR op defines, where its printed type is an operand's.

A custom printer that prints one type (``OpTypes.form == "single"``) usually prints the
type every operand and result share (``arith.addf %a, %b : tensor<..>``), and
:func:`irscope.ir.op_types.parse_op_types` assigns it to the results. A few ops print
an operand's type and define another:

- ``tt.load %p : tensor<128x64x!tt.ptr<f16>, #blocked>`` defines
  ``tensor<128x64xf16, #blocked>`` (the pointee, same shape and layout), and
  ``tt.load %bp : !tt.ptr<tensor<64x64xf16, #blocked>>`` (a block pointer) its tensor;
- ``arith.cmpi``/``arith.cmpf`` define ``i1`` values of the operands' shape and layout.

:func:`op_result_types` is the op's results with those rules applied.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from .model import Op
from .type_model import PointerType, ScalarType, TensorType, Type

_I1 = ScalarType("i1", 1, "int", "i1")


def _pointee(t: Type) -> Type:
    """What a load through ``t`` gives: a pointer's pointee, a tensor of pointers' tensor
    of pointees (``t`` itself when it is neither)."""
    if isinstance(t, PointerType) and t.pointee is not None:
        return t.pointee
    if isinstance(t, TensorType) and isinstance(t.element, PointerType) and t.element.pointee is not None:
        loaded = replace(t, element=t.element.pointee, raw="")
        return replace(loaded, raw=str(loaded))
    return t


def _bools(t: Type) -> Type:
    """The i1 values a comparison of ``t`` values gives (same shape and layout)."""
    if isinstance(t, TensorType):
        out = replace(t, element=_I1, raw="")
        return replace(out, raw=str(out))
    return _I1


def op_result_types(op: Op, aliases: Mapping[str, str] | None = None) -> tuple[Type, ...]:
    """The types of ``op``'s results (one per printed result type), with the printed
    operand type of ``tt.load``, ``arith.cmpi`` and ``arith.cmpf`` turned into the type
    they define (see the module notes)."""
    sig = op.signature(aliases)
    results = tuple(sig.results)
    if sig.form != "single" or not results:
        return results
    if op.name == "tt.load":
        return tuple(_pointee(t) for t in results)
    if op.name in ("arith.cmpi", "arith.cmpf"):
        return tuple(_bools(t) for t in results)
    return results
