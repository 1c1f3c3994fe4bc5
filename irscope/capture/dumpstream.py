"""Split Triton's per-pass IR dump streams into snapshots (pure functions).

``MLIR_ENABLE_DUMP=1`` prints the whole module *before* every MLIR pass;
``LLVM_IR_ENABLE_DUMP=1`` prints LLVM IR *after* every LLVM pass. Both go to
stderr, one after the other, with headers whose format changed across Triton
versions (see docs/bundle-format.md). Anything that is not part of a dump
(warnings, diagnostics) is returned separately instead of being glued onto the
snapshot before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# // -----// IR Dump Before TritonGPUCoalesce (tritongpu-coalesce) ('builtin.module' operation) //----- //   (<= 3.7)
# // -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //    (3.8+)
# // -----// IR Dump Before Canonicalizer (canonicalize) ('tt.func' operation: @kernel) //----- //
# // -----// IR Dump After ConvertTritonGPUToLLVM Failed (convert-triton-gpu-to-llvm) ('builtin.module' operation) //----- //
MLIR_HEADER = re.compile(r"^// -----// (?P<body>IR Dump .*?) //----- //[ \t]*$", re.M)
_MLIR_BODY = re.compile(
    r"IR Dump (?P<when>Before|After) (?P<name>[\w.:<>-]+?)(?P<failed> Failed)?"
    r"(?: \((?P<arg_paren>[^()]*(?:\{[^}]*\})?)\)|: (?P<arg_colon>.*?))?"
    r" \('(?P<anchor>[\w.]+)' operation(?:: @(?P<anchor_name>.*))?\)$"
)
# // -----// SoftwarePipeliner internal IR Dump After: LowerLoops
TRITON_INTERNAL_HEADER = re.compile(r"^// -----// (?P<owner>\w+) internal IR Dump (?P<when>After|Before): (?P<name>.*?)[ \t]*$", re.M)
# ; *** IR Dump After InstCombinePass on matmul_kernel ***                             (new pass manager)
# *** IR Dump After Inliner for always_inline functions (always-inline) ***             (legacy, NVPTX codegen)
# # *** IR Dump After Prologue/Epilogue Insertion & Frame Finalization (prologepilog) ***:   (machine IR)
LLVM_HEADER = re.compile(
    r"^(?:(?P<lead>[;#]) )?\*\*\* IR Dump (?P<when>After|Before) (?P<name>.+?)(?: on (?P<anchor>\S+))? \*\*\*:?[ \t]*$", re.M
)
# Running pass: InstCombinePass on add_kernel (12 instructions)
_PM_TRACE = re.compile(r"^(Running (pass|analysis|function pass)|Invalidating (analysis|all non-preserved)|Clearing all analysis)")
_ARG_OPTIONS = re.compile(r"^(?P<arg>[^{\s]*)(?:\{(?P<options>.*)\})?$")

# How a module dump ends: MLIR modules end with the #loc alias block and the
# closing brace at column 0; the text after that, up to the next header, is
# either more aliases (#locN = ...) or foreign output.
_MLIR_TAIL_LINE = re.compile(r"^(#loc\d*\s*=|#[\w.]+\s*=|\s*$|module\b|\}|\s)")


@dataclass(frozen=True, slots=True)
class PassSnapshot:
    """One IR snapshot printed by a pass instrumentation.

    ``kind`` is 'mlir' or 'llvm'; ``when`` is 'before', 'after', 'after-failed'
    or 'internal' (Triton's own SoftwarePipeliner/WarpSpec dumps).
    """

    index: int
    kind: str
    when: str
    name: str
    argument: str
    options: str
    anchor: str
    anchor_name: str
    header: str
    text: str
    offset: int  # byte/char offset of the header in the stream


def _parse_mlir_header(body: str) -> tuple[str, str, str, str, str, str]:
    m = _MLIR_BODY.match(body)
    if not m:
        return ("before", body, "", "", "", "")
    when = "before" if m["when"] == "Before" else ("after-failed" if m["failed"] else "after")
    raw_arg = m["arg_paren"] if m["arg_paren"] is not None else (m["arg_colon"] or "")
    am = _ARG_OPTIONS.match(raw_arg.strip())
    arg, opts = (am["arg"], am["options"] or "") if am else (raw_arg, "")
    return (when, m["name"], arg, opts, m["anchor"] or "", m["anchor_name"] or "")


def split_dump_stream(text: str) -> tuple[list[PassSnapshot], str]:
    """Split a dump stream (MLIR and/or LLVM) into snapshots, in order.

    Returns ``(snapshots, noise)`` where ``noise`` is every line that belongs to
    no snapshot (compiler warnings and diagnostics), kept for the record.
    """
    heads: list[tuple[int, int, str, re.Match]] = []
    for rx, kind in ((MLIR_HEADER, "mlir"), (TRITON_INTERNAL_HEADER, "internal"), (LLVM_HEADER, "llvm")):
        for m in rx.finditer(text):
            heads.append((m.start(), m.end(), kind, m))
    heads.sort(key=lambda h: h[0])
    snapshots: list[PassSnapshot] = []
    noise: list[str] = []
    if heads and heads[0][0] > 0:
        noise.append(text[: heads[0][0]])
    elif not heads and text.strip():
        noise.append(text)
    for i, (start, end, kind, m) in enumerate(heads):
        stop = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        body = text[end + 1 : stop] if end < len(text) else ""
        body, extra = _trim_foreign_tail(body, kind)
        if extra:
            noise.append(extra)
        header = m.group(0)
        if kind == "mlir":
            when, name, arg, opts, anchor, anchor_name = _parse_mlir_header(m["body"])
        elif kind == "internal":
            when, name, arg, opts, anchor, anchor_name = "internal", m["name"], m["owner"], "", "builtin.module", ""
            kind = "mlir"
        else:
            when = "before" if m["when"] == "Before" else "after"
            name, anchor = m["name"], m["anchor"] or ""
            am = re.match(r"^(.*?) \(([\w-]+)\)$", name)  # codegen passes: "Name (arg)"
            arg, name = (am[2], am[1]) if am else ("", name)
            opts, anchor_name = "", ""
            if anchor and anchor not in ("[module]",):
                anchor_name, anchor = anchor, "function"
            elif anchor:
                anchor = "module"
        snapshots.append(PassSnapshot(len(snapshots), kind, when, name, arg, opts, anchor, anchor_name, header, body, start))
    return snapshots, "".join(noise)


def _trim_foreign_tail(body: str, kind: str) -> tuple[str, str]:
    """Separate lines printed after an MLIR module's end (warnings) from the dump.

    An MLIR dump ends with ``}`` then the ``#loc`` alias lines; anything after
    the last such line that does not look like IR is foreign output.
    """
    if not body:
        return body, ""
    if kind == "llvm":
        # The pass manager's own trace ("Running pass: X on f") interleaves
        # with the dumps; it is not IR.
        if "Running " not in body:
            return body, ""
        keep, drop = [], []
        for line in body.splitlines(keepends=True):
            (drop if _PM_TRACE.match(line) else keep).append(line)
        return "".join(keep), "".join(drop)
    lines = body.splitlines(keepends=True)
    cut = len(lines)
    while cut > 0 and not _MLIR_TAIL_LINE.match(lines[cut - 1]):
        cut -= 1
    if cut == len(lines):
        return body, ""
    return "".join(lines[:cut]), "".join(lines[cut:])
