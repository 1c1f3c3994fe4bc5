"""How graph elements look, and the text cleaning every label goes through.

:func:`clean` makes any external string (IR text, a path, a pass name) safe to
carry in a graph: lone surrogates (what ``surrogateescape`` makes of non-UTF-8
bytes) become U+FFFD and control characters become spaces, so DOT, SVG, XML and
JSON all accept it. Escaping for a format (DOT quoting, HTML entities) comes later,
in :mod:`irscope.export.render`.
"""

from __future__ import annotations

import re
import zlib

from irscope.compiler.stages import AMDGCN, CUBIN, HSACO, LLIR, PTX, SASS, SOURCE, TTGIR, TTIR
from irscope.ir.model import DIALECT_AMDGCN, DIALECT_LLVM, DIALECT_MIR, DIALECT_PTX, DIALECT_SASS

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ufffe\uffff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean(text: object, limit: int = 0) -> str:
    """``text`` as a printable one-line string; cut to ``limit`` characters (with an
    ellipsis) when ``limit`` is set."""
    s = text if isinstance(text, str) else str(text)
    if isinstance(text, bytes):
        s = text.decode("utf-8", "replace")
    s = _CONTROL.sub(" ", _SURROGATE.sub("\ufffd", s))
    if limit and len(s) > limit:
        s = s[: max(1, limit - 1)] + "\u2026"
    return s


# Light fills, one per dialect, so dark text stays readable on every one.
DIALECT_FILL = {
    "tt": "#cfe2ff", "ttg": "#d3f0d3", "ttng": "#e4d7f5", "triton_gpu": "#d3f0d3", "triton_nvidia_gpu": "#e4d7f5",
    "arith": "#fff1b8", "math": "#ffdcb0", "scf": "#f9d3d8", "cf": "#f4c2c9", DIALECT_LLVM: "#dbe7f4",
    "nvvm": "#c9ebd2", "nvgpu": "#f1d6f7", "nvg": "#f1d6f7", "builtin": "#ececec", "gpu": "#d2f3f3",
    "amdgpu": "#ffd5c7", "rocdl": "#ffe2d6", "ub": "#eeeeee", "func": "#e8e8ff", "proton": "#e6f5c9",
    DIALECT_PTX: "#dbe7f4", DIALECT_SASS: "#fde0e3", DIALECT_AMDGCN: "#fde0e3", DIALECT_MIR: "#e9e0d4",
}
_SPARE = ("#e0f2e9", "#f7e6d0", "#dfe3f7", "#f3e0ec", "#e3f0d0", "#d9eef2", "#f2ecd4", "#ece0f5")
GREY_FILL = "#f0f0f0"
GREY_TEXT = "#8a8a8a"

# Instruction classes of PTX and SASS (irscope.diff.mix): a stage of one dialect is
# coloured by what its instructions do instead.
CLASS_FILL = {
    "global_load": "#cfe2ff", "global_store": "#b9d3fb", "shared_load": "#d3f0d3", "shared_store": "#bfe6bf",
    "local": "#f9d3d8", "atomic": "#f4c2c9", "mma": "#ffd08a", "async_copy_tma": "#e4d7f5",
    "barrier": "#e0e0e0", "conversion": "#fff1b8", "control_flow": "#f1d6f7", "other": "#f4f4f4",
}

# Diff / pass highlighting: (fill, border).
STATUS = {
    "added": ("#b8f0b8", "#1f8a1f"),
    "removed": ("#ffd0d0", "#c62828"),
    "changed": ("#ffe1a8", "#d07a00"),
    "moved": ("#d9d2ff", "#5a3fc0"),
    "only-here": ("#b8f0b8", "#1f8a1f"),
    "only-other": ("#ffd0d0", "#c62828"),
    "effect-differs": ("#ffe1a8", "#d07a00"),
}

STAGE_FILL = {SOURCE: "#fffbe6", TTIR: "#eef4ff", TTGIR: "#effaef", LLIR: "#f3f6fb", PTX: "#f6f1fb",
              CUBIN: "#f5f5f5", SASS: "#fff0f1", AMDGCN: "#fff0f1", HSACO: "#f5f5f5"}


def dialect_fill(dialect: str) -> str:
    """The fill colour of a dialect (a stable spare colour for one not listed)."""
    got = DIALECT_FILL.get(dialect)
    if got is None:
        got = _SPARE[zlib.crc32(dialect.encode("utf-8", "replace")) % len(_SPARE)]
    return got


_TENSOR = re.compile(r"^tensor<(?P<shape>(?:\d+x)*)(?P<elem>[^,>]+)(?:,\s*(?P<enc>#[\w.]+|#\w+<[^>]*>?))?.*>$", re.DOTALL)


def short_type(text: str, limit: int = 30) -> str:
    """A result type short enough for a label: ``tensor<128x64xf16, #blocked1>`` ->
    ``128x64xf16 #blocked1``; a long LLVM struct is cut."""
    t = " ".join(text.split())
    m = _TENSOR.match(t)
    if m:
        enc = m.group("enc") or ""
        if enc and not enc.startswith("#") or len(enc) > 14:
            enc = enc[:13] + "\u2026" if enc else ""
        t = f"{m.group('shape')}{m.group('elem')}" + (f" {enc}" if enc else "")
    elif t.startswith("!ttg.memdesc<"):
        inner = t[len("!ttg.memdesc<"):].rstrip(">").split(",")
        enc = next((x.strip() for x in inner[1:] if x.strip().startswith("#")), "")
        t = f"memdesc {inner[0].strip()}" + (f" {enc}" if enc and len(enc) < 14 else "")
    elif t.startswith("!llvm.struct<(") and t.count(",") > 2:
        parts = t[len("!llvm.struct<("):].rstrip(")>").split(",")
        first = parts[0].strip()
        if all(p.strip() == first for p in parts):
            t = f"struct<{len(parts)} x {first}>"
    return clean(t, limit)


def counts_line(counter, limit: int = 3) -> str:
    """``llvm.extractvalue 128, llvm.fadd 64, +5 more`` for a Counter of names."""
    items = counter.most_common()
    out = ", ".join(f"{clean(name, 28)} {n}" for name, n in items[:limit])
    if len(items) > limit:
        out += f", +{len(items) - limit} more"
    return out
