"""Parsed types: the text of an MLIR or LLVM IR type as immutable data.

An :class:`~irscope.ir.model.Op` keeps its types as text (``Op.types``); this module
turns such text into :class:`Type` objects: ``tensor<128x64xf16, #blocked>`` is a
:class:`TensorType` with shape ``(128, 64)``, element ``f16`` and encoding ref
``#blocked``. It reads the builtin, Triton (``tt``/``ttg``/``triton_gpu``) and LLVM
dialect types, and LLVM IR types (``ptr addrspace(3)``, ``<4 x float>``, ``{ i32, i32 }``).

Pure functions over text, standard library only. Nothing here raises on input
text: what is not understood becomes an :class:`OpaqueType` that keeps the text.
Types are frozen and hashable, so text -> type is memoised (``lru_cache``):
a module prints the same few dozen type texts thousands of times.

Equality ignores ``raw`` (the text as written) and the spelling (``flavor``,
``dialect``): ``tensor<4xf32,#blocked>`` equals ``tensor<4xf32, #blocked>`` and
``!llvm.ptr<1>`` equals LLVM IR ``ptr addrspace(1)``.

The model is in :mod:`.type_model`, the parser in :mod:`.type_parser`, the
op-level readers in :mod:`.op_types`; this module is their public face.
"""

from .op_types import OpTypes, instruction_result_type, op_types, parse_op_types
from .type_model import (ArrayType, FunctionType, MemDescType, OpaqueType, PointerType, ScalarType, StructType,
                         TensorType, TokenType, Type, VectorType, VoidType)
from .type_parser import parse_leading_type, parse_type

__all__ = [
    "ArrayType", "FunctionType", "MemDescType", "OpTypes", "OpaqueType", "PointerType",
    "ScalarType", "StructType", "TensorType", "TokenType", "Type", "VectorType", "VoidType",
    "instruction_result_type", "op_types", "parse_leading_type", "parse_op_types", "parse_type",
]
