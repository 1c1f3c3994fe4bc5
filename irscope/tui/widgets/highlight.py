"""Light syntax highlighting for IR panes: one small regex tokenizer per language family.

Each family is one compiled alternation of named groups; the group name is the token kind,
and the pane maps kinds to component styles (``ir-view--tok-<kind>``) so themes restyle
them. Tokenizing is per line and pure, so the pane can cache it per line and never touch
lines that are not on screen. Nothing here imports Textual.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from irscope.compiler.stages import LANG_AMDGCN, LANG_LLVM, LANG_MLIR, LANG_PTX, LANG_PYTHON, LANG_SASS

#: Token kinds a tokenizer may emit (each has a component class in IRView).
TOKEN_KINDS = (
    "comment", "string", "keyword", "op", "value", "type", "attr", "number", "label",
    "directive", "register",
)


class Token(NamedTuple):
    """One highlighted span of a line: [start, end) in characters and its kind."""

    start: int
    end: int
    kind: str


def _family(*parts: tuple[str, str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{kind}>{rx})" for kind, rx in parts))


_STRING = r'"(?:[^"\\]|\\.)*"?'
_NUMBER = r"(?<![\w.%#@$])-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b"

# MLIR (TTIR/TTGIR/pass snapshots), e.g.
#   %12 = tt.load %11, %mask : tensor<64x!tt.ptr<f16>, #blocked> loc(#loc7)
_MLIR = _family(
    ("comment", r"//.*$"),
    ("string", _STRING),
    ("value", r"%[\w$.#-]+(?::\d+)?"),
    ("label", r"\^[\w$.-]+"),
    ("attr", r"#[\w$.-]+"),
    ("type", r"![\w$.]+|\b(?:tensor|memref|vector|ptr)\b|\b(?:[isuf]\d+|bf16|index|none)\b"),
    ("op", r"\b[a-z_][\w]*\.[\w.]+\b"),
    ("keyword", r"\b(?:module|func|loc|attributes|to|step|iter_args|callsite|at|fused)\b"),
    ("number", _NUMBER),
)

# LLVM IR, e.g.  %23 = getelementptr float, ptr addrspace(1) %0, i64 %22, !dbg !12
_LLVM = _family(
    ("comment", r";.*$"),
    ("string", r'c?' + _STRING),
    ("value", r"[%@][\w$.-]+|[%@]\d+"),
    ("attr", r"![\w.]+|#\d+"),
    ("type", r"\b(?:i\d+|half|bfloat|float|double|ptr|void|label|metadata|x86_fp80)\b"),
    ("keyword", r"\b(?:define|declare|call|ret|br|switch|phi|select|load|store|alloca|"
                r"getelementptr|inbounds|addrspace|tail|nuw|nsw|to|align|global|constant|"
                r"private|internal|external|dso_local|local_unnamed_addr|unnamed_addr|"
                r"attributes|target|datalayout|triple|asm|sideeffect|fadd|fsub|fmul|fdiv|"
                r"add|sub|mul|sdiv|udiv|and|or|xor|shl|lshr|ashr|icmp|fcmp|zext|sext|"
                r"trunc|bitcast|extractelement|insertelement|shufflevector|"
                r"extractvalue|insertvalue|fptrunc|fpext|sitofp|uitofp|fptosi|inttoptr|"
                r"ptrtoint|unreachable|true|false|undef|poison|zeroinitializer)\b"),
    ("label", r"^[\w$.-]+:"),
    ("number", _NUMBER),
)

# PTX, e.g.  ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd5 + 0 ];
_PTX = _family(
    ("comment", r"//.*$"),
    ("string", _STRING),
    ("directive", r"(?<![\w])\.[a-z_][\w]*"),
    ("register", r"%[\w.]+"),
    ("label", r"\$?[\w$]+:|\$L\w+"),
    ("op", r"^\s*(?:@!?%\w+\s+)?[a-z][\w]*(?:\.[\w]+)*"),
    ("number", _NUMBER),
)

# SASS (nvdisasm / cuobjdump), e.g.  /*0090*/  @P0 LDG.E.128 R4, desc[UR4][R2.64] ;
_SASS = _family(
    ("comment", r"/\*.*?\*/|//.*$"),
    ("string", _STRING),
    ("label", r"\.L_x_\w+:?|\.[\w$]+:"),
    ("directive", r"(?<![\w])\.[a-z_][\w]*"),
    ("register", r"@?!?U?P[T\d]+\b|\bU?R[Z\d]+\b|\bSR_\w+|\bc\[0x[0-9a-f]+\]"),
    ("op", r"\b[A-Z][A-Z0-9_]{1,}(?:\.[A-Z0-9_]+)*\b"),
    ("number", _NUMBER),
)

# AMDGCN, e.g.  global_load_dwordx4 v[2:5], v[0:1], off
_AMDGCN = _family(
    ("comment", r";.*$|//.*$"),
    ("string", _STRING),
    ("directive", r"(?<![\w])\.[a-z_][\w]*"),
    ("label", r"^[\w$.]+:"),
    ("register", r"\b[svak]\[\d+:\d+\]|\b[sva]\d+\b|\b(?:vcc|exec|scc|m0|off)\w*\b"),
    ("op", r"^\s*[a-z_][\w]*"),
    ("number", _NUMBER),
)

# Python (Triton kernels), e.g.  acc = tl.dot(a, b, acc)  # accumulate
_PYTHON = _family(
    ("comment", r"#.*$"),
    ("string", r"[rbfu]{0,2}(?:\"\"\"|'''|\"(?:[^\"\\]|\\.)*\"?|'(?:[^'\\]|\\.)*'?)"),
    ("attr", r"^\s*@[\w.]+"),
    ("keyword", r"\b(?:def|return|for|in|range|if|elif|else|while|and|or|not|is|None|"
                r"True|False|import|from|as|with|pass|break|continue|lambda|yield|class|"
                r"try|except|finally|raise|assert|global|nonlocal|del)\b"),
    ("type", r"\btl\.constexpr\b"),
    ("op", r"\btl\.[\w.]+"),
    ("number", _NUMBER),
)

# Keyed by the registry's highlighting languages (a stage's ``language``); views ask
# the registry (``highlight_language``) which one a stage or snapshot kind uses.
_FAMILIES: dict[str, re.Pattern[str]] = {
    LANG_MLIR: _MLIR,
    LANG_LLVM: _LLVM,
    LANG_PTX: _PTX,
    LANG_SASS: _SASS,
    LANG_AMDGCN: _AMDGCN, "gcn": _AMDGCN,
    LANG_PYTHON: _PYTHON, "py": _PYTHON,
}


def supported(language: str | None) -> bool:
    """Whether a tokenizer exists for ``language`` (case-insensitive)."""
    return language is not None and language.lower() in _FAMILIES


def tokenize(line: str, language: str | None) -> list[Token]:
    """Split ``line`` into highlighted spans for ``language``; unknown language -> no tokens.

    Spans never overlap and are in order; text between them is plain.
    """
    if not language:
        return []
    pattern = _FAMILIES.get(language.lower())
    if pattern is None:
        return []
    return [Token(m.start(), m.end(), m.lastgroup or "") for m in pattern.finditer(line)
            if m.end() > m.start()]
