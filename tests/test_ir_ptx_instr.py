"""PTX instruction lines are split with string operations for speed; the regex they
replaced stays here as the oracle: both agree on every fixture line and on
garbled ones."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from irscope.ir import ptx
from irscope.ir.bracket_scan import split_top

_ORACLE_RE = re.compile(r"(@!?%?[\w]+\s+)?([a-z_][\w.:]*)(?:\s+(.*?))?\s*(;)?\s*(?://.*)?$")


def _oracle(s: str) -> tuple:
    m = _ORACLE_RE.match(s)
    if m is None:
        return (ptx.P_UNKNOWN,)
    pred, opcode, ops, semi = m.groups()
    if opcode.split(".", 1)[0] not in ptx._OPCODES:
        return (ptx.P_UNKNOWN,)
    return (ptx.P_INSTR, opcode, (pred or "").strip(), tuple(split_top(ops)) if ops else (), semi is not None)


LINES = sorted({line.strip() for p in (Path(__file__).parent / "data" / "ir").rglob("*.ptx")
                for line in p.read_text().split("\n") if line.strip()})


def test_every_fixture_line_agrees_with_the_regex():
    assert len(LINES) > 3000
    for line in LINES:
        assert ptx._instr(line) == _oracle(line), line


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(LINES), st.lists(st.tuples(st.integers(0, 80), st.sampled_from(
    ["@", "@!", "%p1 ", ";", "//", " ", "\t", "{", "}", ",", "[", "]", "ld.", "X"])), max_size=4))
def test_garbled_lines_agree_with_the_regex(line, edits):
    for pos, piece in edits:
        line = line[:pos] + piece + line[pos:]
    line = line.strip()
    if line:
        assert ptx._instr(line) == _oracle(line), line
