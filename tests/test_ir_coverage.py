"""Every real fixture is understood completely; the registry and the model helpers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from irscope import text_guard
import pytest

from irscope.compiler.stages import STAGES, for_extension
from irscope.ir import Frame, Location, ParseCache, parse_snapshots, parse_stage, split_pass_dump

DATA = Path(__file__).parent / "data" / "ir"
STAGE_FILES = sorted(p for p in DATA.glob("*/*/*") if p.suffix[1:] in STAGES)
DUMPS = sorted(DATA.glob("*/*/*_passes.txt"))


def test_fixture_set_is_complete():
    versions = {p.parts[-3] for p in STAGE_FILES}
    cases = {p.parts[-2] for p in STAGE_FILES}
    assert versions == {"3.2.0", "3.6.0", "3.9.0"}
    assert {c.rsplit("_", 1)[1] for c in cases} == {"sm80", "sm90"}
    assert len(STAGE_FILES) == 3 * 10 * 5


@pytest.mark.parametrize("path", STAGE_FILES, ids=lambda p: "/".join(p.parts[-3:]))
def test_stage_coverage(path):
    mod = parse_stage(path.suffix[1:], path.read_text())
    assert mod.unknown == [] and mod.coverage == 1.0
    assert len(mod.functions) == 1
    assert mod.functions[0].name == path.stem
    ops = list(mod.ops())
    assert ops and all(op.name != "<unknown>" for op in ops)
    # the instructions of the kernel all point at a source line, except a few
    # compiler-made ones (constants, line-0 entries)
    located = [op for op in ops if op.location.frames]
    assert len(located) >= 0.75 * len(ops)


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: "/".join(p.parts[-3:]))
def test_pass_dump_coverage(path):
    dump = split_pass_dump(path.read_text())
    mods = parse_snapshots(dump, ParseCache())
    assert len(mods) == len(dump) > 0
    assert all(m.coverage == 1.0 for m in mods)


def test_registry():
    parsed = [s.name for s in STAGES.values() if s.parsed and s.base is None]
    assert parsed == ["ttir", "ttgir", "llir", "ptx", "amdgcn", "sass", "mlir"]
    info = STAGES["ttgir"]
    assert (info.extension, info.family, info.display_name) == (".ttgir", "mlir",
                                                                "Triton GPU IR")
    assert for_extension("ptx") is STAGES["ptx"]
    assert for_extension(".cubin") is None
    with pytest.raises(ValueError):
        parse_stage("hsaco", "")
    with pytest.raises(ValueError):
        parse_stage("nope", "")
    assert parse_stage("amdgcn", "").stage == "amdgcn"
    assert parse_stage("mlir", "").coverage == 1.0
    assert parse_stage("ptx_ttgirloc", "").stage == "ptx"


def test_user_frame():
    lib = Frame("/x/site-packages/triton/language/standard.py", 293, 36)
    user = Frame("/home/me/k.py", 67, 19, "total")
    win = Frame("C:\\py\\triton\\language\\core.py", 1, 1)
    loc = Location((lib, win, user), "callsite")
    assert lib.is_library() and win.is_library() and not user.is_library()
    assert loc.user_frame() is user and loc.frame is lib
    assert Location((lib,), "file").user_frame() is None
    assert Location().frame is None and Location().user_frame() is None
    assert str(user) == "/home/me/k.py:67:19"


def test_core_imports_nothing_heavy():
    code = ("import sys, irscope.ir; "
            "bad = [m for m in ('triton', 'torch', 'textual', 'rich') if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parent.parent).stdout.strip()
    assert out == "[]"


def test_parser_bug_degrades_instead_of_raising(monkeypatch):
    from irscope.ir import parse_guard, ptx

    def boom(raw):
        raise RuntimeError("bug")

    monkeypatch.setattr(ptx, "_safe", boom)
    mod = parse_stage("ptx", "ret;\n\nexit;\n")
    assert [op.name for op in mod.ops()] == ["<unknown>", "<unknown>"]
    assert mod.unknown == [(1, "ret;"), (3, "exit;")] and mod.coverage == 0.0
    monkeypatch.setattr(text_guard, "STRICT", True)
    with pytest.raises(RuntimeError):
        parse_stage("ptx", "ret;")
