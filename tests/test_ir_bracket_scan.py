"""``split_top`` takes a C-speed path when every comma is visibly at top level; the
token-by-token scan stays the reference: both agree on every fixture line and on
garbled ones."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from irscope.ir import bracket_scan


_reference = bracket_scan.split_top_scan


LINES = sorted({line.strip() for p in (Path(__file__).parent / "data" / "ir").rglob("*")
                if p.is_file() and p.suffix in (".ptx", ".ttir", ".ttgir", ".llir")
                for line in p.read_text().split("\n")})


def test_every_fixture_line():
    for line in LINES:
        assert bracket_scan.split_top(line) == _reference(line), line


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(LINES), st.lists(st.tuples(st.integers(0, 120), st.sampled_from(
    ["[", "]", ",", "{", "}", "(", ")", "<", ">", "->", '"', " : ", " ", "[a, b]", "[[x]"])), max_size=5))
def test_garbled_lines(line, edits):
    for pos, piece in edits:
        line = line[:pos] + piece + line[pos:]
    assert bracket_scan.split_top(line) == _reference(line), line
