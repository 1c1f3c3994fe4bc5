"""Regenerate sample_encodings.json: the distinct (layout, shape) pairs of the sample kernels' TTGIR.

    .venv/bin/irscope run sample_kernels/matmul_autotune.py --target sm_80 --target sm_90 \
        --target sm_100 --target gfx942 -o /tmp/lay/matmul_autotune.irscope -q      # etc.
    .venv/bin/irscope cat /tmp/lay/matmul_autotune.irscope '#1' --stage ttgir > /tmp/lay/ttgir/matmul_1.ttgir
    .venv/bin/python tests/data/layouts/make_sample_encodings.py /tmp/lay/ttgir/*.ttgir

Each entry: the encoding text with every alias inlined, the tensor shape it is
used with, the element type's bit width, whether it is a register tensor or a
shared/tensor memory descriptor, and the targets it occurred for.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from irscope.ir.layouts import parse_aliases

OUT = Path(__file__).with_name("sample_encodings.json")
_TARGET = re.compile(r'ttg\.target = "(?:cuda:(\d+)|hip:(\w+))"')
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


def _balanced(text: str, start: int) -> int:
    """Index just past the '>' closing the '<' at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch in "<{[(":
            depth += 1
        elif ch in ">}])":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<{[(":
            depth += 1
        elif ch in ">}])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def inline(text: str, aliases: dict[str, str], depth: int = 0) -> str:
    """Replace alias references (``#blocked``) by their definitions, recursively."""
    if depth > 10:
        return text

    def sub(m: re.Match) -> str:
        name = m.group(0)
        return inline(aliases[name], aliases, depth + 1) if name in aliases else name

    return re.sub(r"#[A-Za-z_][\w]*(?![\w.])", sub, text)


def _bits(elem: str) -> int | None:
    if elem.startswith("!tt.ptr"):
        return 64
    return _BITS.get(elem) or (8 if elem.startswith("f8") else None)


def scan(path: Path) -> list[dict]:
    text = path.read_text()
    m = _TARGET.search(text)
    target = ("sm_" + m.group(1)) if m and m.group(1) else (m.group(2) if m else "?")
    aliases = parse_aliases(text)
    found = []
    for kind, opener in (("tensor", "tensor<"), ("memdesc", "!ttg.memdesc<")):
        pos = 0
        while (i := text.find(opener, pos)) >= 0:
            lt = i + len(opener) - 1
            end = _balanced(text, lt)
            pos = end
            parts = _split_top(text[lt + 1:end - 1])
            if len(parts) < 2 or not parts[1].startswith("#"):
                continue
            dims = parts[0].split("x")
            shape = []
            while dims and dims[0].isdigit():
                shape.append(int(dims.pop(0)))
            elem = "x".join(dims)
            found.append({"encoding": inline(parts[1], aliases), "shape": shape, "element_bits": _bits(elem),
                          "kind": kind, "target": target})
    return found


def main(paths: list[str]) -> None:
    merged: dict[tuple, dict] = {}
    for p in paths:
        for e in scan(Path(p)):
            key = (e["encoding"], tuple(e["shape"]), e["element_bits"], e["kind"])
            entry = merged.setdefault(key, {**{k: v for k, v in e.items() if k != "target"}, "targets": []})
            if e["target"] not in entry["targets"]:
                entry["targets"].append(e["target"])
    entries = sorted(merged.values(), key=lambda e: (e["kind"], e["encoding"], e["shape"], e["element_bits"] or 0))
    # One entry per line: small diffs when the sample kernels change.
    lines = ",\n".join(json.dumps(e, sort_keys=True) for e in entries)
    OUT.write_text('{"triton": "3.6.0", "entries": [\n' + lines + "\n]}\n")
    print(f"{len(entries)} entries -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
