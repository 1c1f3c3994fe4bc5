"""The grid of ``irscope tune``: parsing ``'BLOCK_M=64,128 num_warps=4,8'``, checking its
keys against what the kernel can vary, and writing dtype values as a capture writes them.
Pure: no compile, no I/O."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from irscope.capture.child.irscope_compile_kernel import constexpr_value
from irscope.errors import IrscopeError
from irscope.whatif.compile_spec import TUNABLE_OPTIONS, CompileSpec

Value = int | float | bool | str


@dataclass(frozen=True)
class Grid:
    """Keys and the values each takes, in the order written."""

    axes: tuple[tuple[str, tuple[Value, ...]], ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.axes)

    def configs(self) -> list[dict[str, Value]]:
        """Every combination, the last key varying fastest."""
        values = [v for _, v in self.axes]
        return [dict(zip(self.keys, combo)) for combo in itertools.product(*values)]

    def __len__(self) -> int:
        n = 1
        for _, v in self.axes:
            n *= len(v)
        return n


def parse_grid(text: str) -> Grid:
    """``'BLOCK_M=64,128 num_warps=4,8'`` -> a :class:`Grid`. Items are separated by
    spaces (or ``;``), values by commas; a key given twice, an item without ``=`` or a
    key without values is a one-line IrscopeError."""
    axes: list[tuple[str, tuple[Value, ...]]] = []
    seen: set[str] = set()
    for item in text.replace(";", " ").split():
        key, eq, values = item.partition("=")
        key = key.strip()
        if not eq or not key or not key.isidentifier():
            raise IrscopeError(f"--grid item {item!r}: expected KEY=V1,V2,... (e.g. BLOCK_M=64,128 num_warps=4,8)")
        if key in seen:
            raise IrscopeError(f"--grid key {key} is given twice")
        seen.add(key)
        vals = tuple(dict.fromkeys(constexpr_value(v.strip()) for v in values.split(",") if v.strip()))
        if not vals:
            raise IrscopeError(f"--grid key {key} has no values (e.g. {key}=64,128)")
        axes.append((key, vals))
    if not axes:
        raise IrscopeError("--grid is empty: give KEY=V1,V2,... items, e.g. 'BLOCK_M=64,128 num_warps=4,8'")
    return Grid(tuple(axes))


# How a capture writes a dtype constexpr (``repr(tl.float16)``), and Triton's short
# names of its dtypes (``tl.float16`` prints as ``fp16``).
_DTYPE_PREFIX = "triton.language."
_SHORT_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                 "fp8e5": "float8e5", "fp8e4nv": "float8e4nv", "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8",
                 "fp8e5b16": "float8e5b16", "i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32",
                 "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def typed_grid(grid: Grid, spec: CompileSpec) -> Grid:
    """``grid`` with the values of a dtype constexpr (captured as ``triton.language.float16``)
    written as the capture writes dtypes, whichever way they were given (``float32``,
    ``tl.float32``, ``fp32``, ``torch.float32``): the grid child turns that form back
    into the dtype, and the rows' captures record it so."""
    axes = []
    for key, values in grid.axes:
        base = spec.declared_constexprs.get(key)
        if isinstance(base, str) and base.startswith(_DTYPE_PREFIX):
            values = tuple(dict.fromkeys(_dtype_value(v) for v in values))
        axes.append((key, values))
    return Grid(tuple(axes))


def _dtype_value(value: Value) -> Value:
    if not isinstance(value, str):
        return value
    name = value
    for prefix in (_DTYPE_PREFIX, "tl.", "torch."):
        name = name.removeprefix(prefix)
    return _DTYPE_PREFIX + _SHORT_DTYPES.get(name, name)


def tunable_keys(spec: CompileSpec) -> tuple[str, ...]:
    """What a grid may vary: the kernel's declared constexprs, then the tunable options."""
    return tuple(dict.fromkeys((*spec.declared_constexprs, *TUNABLE_OPTIONS)))  # num_stages may be both


def check_grid(grid: Grid, spec: CompileSpec) -> None:
    """One-line IrscopeError for a key that is neither a declared constexpr of the
    kernel nor a tunable option, naming the valid ones; and for an option value that is
    not a whole number."""
    valid = tunable_keys(spec)
    for key in grid.keys:
        if key not in valid:
            raise IrscopeError(f"--grid key {key} is not a constexpr of {spec.kernel} nor a tunable option "
                               f"(valid keys: {', '.join(valid)})")
    for key, values in grid.axes:
        if key in TUNABLE_OPTIONS:
            bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int) or v < 1]
            if bad:
                raise IrscopeError(f"--grid {key}={bad[0]}: {key} takes whole numbers from 1 up")
