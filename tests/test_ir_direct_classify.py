"""Stage files are read through fast paths (one regex per plain instruction line)
that must give exactly what the general line classifiers give: those stay as the
oracles here, on every fixture line and on garbled ones."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from irscope.ir import llvm, mlir, mlir_loc, ptx

DATA = Path(__file__).parent / "data" / "ir"


def _lines(*suffixes: str) -> list[str]:
    return sorted({line for suffix in suffixes for p in DATA.rglob(f"*{suffix}")
                   for line in p.read_text().split("\n")})


def _edit(line: str, edits: list[tuple[int, str]]) -> str:
    """``line`` with each piece inserted at its position (garbling a real line)."""
    for pos, piece in edits:
        line = line[:pos] + piece + line[pos:]
    return line


def _classify(raw: str) -> tuple:
    try:
        return llvm.classify(raw)
    except Exception:
        return (llvm.L_UNKNOWN,)


LLVM_LINES = _lines(".llir", ".ll")
EDITS = st.lists(st.tuples(st.integers(0, 120), st.sampled_from(
    ["%", "%x = ", " = ", "tail ", "call ", "i32 0, label %", ", !dbg !7", ", !dbg !", "\"",
     "@", " ", "  ", "\t", "\r", "\xa0", ",", "!", "x", "é", "unreachable"])), max_size=4)


def test_every_llvm_fixture_line_agrees_with_classify():
    assert len(LLVM_LINES) > 3000
    fast = 0
    for line in LLVM_LINES:
        assert llvm.classify_direct(line) == _classify(line), line
        fast += llvm._PLAIN_INSTR.match(line) is not None
    assert fast > len(LLVM_LINES) // 2  # the fast path does serve most lines


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(LLVM_LINES), EDITS)
def test_garbled_llvm_lines_agree_with_classify(line, edits):
    line = _edit(line, edits)
    assert llvm.classify_direct(line) == _classify(line), line


def _read_lazily(parser, lazy_class, kind: int, raw: str) -> tuple:
    """A stage-file line as ``parser`` reads it, with the operands it left unread
    filled in the way ``lazy_class`` reads them."""
    t = parser.classify_stage_line(raw)
    if t[0] == kind and t[3] is None:
        t = t[:3] + (lazy_class.read_details(raw)[0],) + t[4:]
    return t


def _stage_line(raw: str) -> tuple:
    return _read_lazily(llvm, llvm.LlvmInstruction, llvm.L_INSTR, raw)


def test_every_llvm_fixture_line_agrees_with_classify_when_read_lazily():
    lazy = 0
    for line in LLVM_LINES:
        assert _stage_line(line) == _classify(line), line
        lazy += line.strip() != "" and llvm.classify_stage_line(line)[3:4] == (None,)
    assert lazy > len(LLVM_LINES) // 2


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(LLVM_LINES), EDITS)
def test_garbled_llvm_lines_agree_with_classify_when_read_lazily(line, edits):
    line = _edit(line, edits)
    assert _stage_line(line) == _classify(line), line


PTX_LINES = _lines(".ptx")
PTX_EDITS = st.lists(st.tuples(st.integers(0, 80), st.sampled_from(
    ["@", "@!", "@%p1 ", ";", "//", ":", "::", " ", "\t", "{", "}", ",", "[", "]", "ld.", "X",
     "$L__BB0_1:", "\xa0", "\r", "é"])), max_size=4)


def _ptx_stage_line(raw: str) -> tuple:
    return _read_lazily(ptx, ptx.PtxInstruction, ptx.P_INSTR, raw)


def test_every_ptx_fixture_line_agrees_with_classify_when_read_lazily():
    assert len(PTX_LINES) > 3000
    lazy = 0
    for line in PTX_LINES:
        assert _ptx_stage_line(line) == ptx._safe(line), line
        lazy += ptx.classify_stage_line(line)[3:4] == (None,)
    assert lazy > len(PTX_LINES) // 2


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(PTX_LINES), PTX_EDITS)
def test_garbled_ptx_lines_agree_with_classify_when_read_lazily(line, edits):
    line = _edit(line, edits)
    assert _ptx_stage_line(line) == ptx._safe(line), line


MLIR_LINES = _lines(".ttir", ".ttgir")
MLIR_EDITS = st.lists(st.tuples(st.integers(0, 120), st.sampled_from(
    ["%", "%x = ", " = ", "%a:2 = ", "#loc", "#loc3 = loc(", "\\", '"', "{", "}", " {", " ({", "(", ")", "<", ">", "->", " : ",
     ", ", "loc(#loc3)", "loc(", "#loc", "^bb0", "tt.", "//", "\t", "\xa0", "é", "[", "]", "[%c0_i32]", ": ", "\u0663", "ß"])), max_size=4)


def _mlir_lazy(raw: str) -> tuple:
    t = mlir._classify_lazy(raw)
    if t[0] == mlir.K_OP and t[4] is None:
        # defs (9) name the values an op's region defines: an op read lazily has none
        defs = mlir._classify_safe(raw)[9]
        t = t[:4] + mlir.MlirOp.read_details(raw) + t[7:9] + (defs,) + t[10:]
    return t


def test_every_mlir_fixture_line_agrees_with_classify_when_read_lazily():
    assert len(MLIR_LINES) > 2000
    lazy = 0
    for line in MLIR_LINES:
        assert _mlir_lazy(line) == mlir._classify_safe(line), line
        lazy += mlir._classify_lazy(line)[4:5] == (None,)
    assert lazy > 1000


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(MLIR_LINES), MLIR_EDITS)
def test_garbled_mlir_lines_agree_with_classify_when_read_lazily(line, edits):
    line = _edit(line, edits)
    assert _mlir_lazy(line) == mlir._classify_safe(line), line


class _GeneralResolver(mlir_loc.LocResolver):
    """The resolver without its fast path for common alias shapes: the oracle."""

    __slots__ = ()

    def _common(self, s, depth):
        return None


def _alias_tables() -> list[dict[str, str]]:
    tables = []
    for p in sorted(DATA.rglob("*.tt*ir")):
        mod = mlir.parse_mlir(p.read_text(), "ttgir")
        tables.append(dict(mod.loc_aliases))
    return tables


TABLES = _alias_tables()


def test_every_fixture_alias_resolves_as_the_general_parser_does():
    assert sum(map(len, TABLES)) > 3000
    for table in TABLES:
        fast, general = mlir_loc.LocResolver(table), _GeneralResolver(table)
        for name in table:
            assert fast.resolve(name) == general.resolve(name), (name, table[name])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TABLES), st.data())
def test_garbled_alias_tables_resolve_as_the_general_parser_does(table, data):
    names = sorted(table)
    table = dict(table)
    for _ in range(data.draw(st.integers(1, 6))):
        name = data.draw(st.sampled_from(names))
        text = table[name]
        pos = data.draw(st.integers(0, len(text)))
        piece = data.draw(st.sampled_from(['"', "(", ")", "#loc", "#loc1", " at ", "\\22", ":", "1",
                                           "callsite(", "fused[", "]", name]))
        table[name] = text[:pos] + piece + text[pos:]
    fast, general = mlir_loc.LocResolver(table), _GeneralResolver(table)
    for name in names:
        assert fast.resolve(name) == general.resolve(name), (name, table[name])


def _general(raw: str, lazy: bool) -> tuple:
    try:
        return mlir.classify_general(raw, lazy)
    except Exception:
        return (mlir.K_UNKNOWN, "")


def test_mlir_fast_paths_agree_with_the_general_reader_on_every_fixture_line():
    fast = 0
    for line in MLIR_LINES:
        for lazy in (False, True):
            assert mlir._classify_safe(line, lazy) == _general(line, lazy), (lazy, line)
        fast += bool(mlir._PLAIN_LOCDEF_RE.fullmatch(line) or mlir._PLAIN_OP_RE.match(line))
    assert fast > len(MLIR_LINES) // 2


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(MLIR_LINES), MLIR_EDITS, st.booleans())
def test_mlir_fast_paths_agree_with_the_general_reader_on_garbled_lines(line, edits, lazy):
    line = _edit(line, edits)
    assert mlir._classify_safe(line, lazy) == _general(line, lazy), line


def _rows(mod) -> list[tuple]:
    return [(op.name, op.dialect, op.results,
             op.operands, op.types, op.attributes, op.location, op.line, op.end_line, op.text,
             op.loc_ref) for op in mod.ops()]


def test_every_fixture_stage_reads_lazily_what_the_eager_parse_reads():
    from irscope.ir import ParseCache, parse_llvm, parse_stage

    n = 0
    for suffix in (".ttir", ".ttgir", ".llir"):
        for p in sorted(DATA.rglob(f"*{suffix}")):
            text = p.read_text()
            lazy = parse_stage(suffix[1:], text)
            # a pass snapshot's parse (stage "mlir" / "llvm") reads every detail at once
            eager = (parse_llvm(text, "llvm", ParseCache()) if suffix == ".llir"
                     else parse_stage("mlir", text, ParseCache()))
            assert _rows(lazy) == _rows(eager), p
            n += len(lazy.all_ops)
    assert n > 10000
