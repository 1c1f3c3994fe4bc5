"""Stage knowledge lives in one place, the registry ``irscope/compiler/stages.py``.

Every other module names a stage, a snapshot kind, a parser family or a
highlighting language by the registry's constants and asks it for the facts
(pass kind -> stage, stage -> language, display names). These tests read the
source of ``irscope/`` and fail on a stage-name literal outside the registry, and
on a second copy of the registry's maps.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import pytest

import irscope
from irscope.compiler import stages as registry

PACKAGE = Path(irscope.__file__).resolve().parent
REGISTRY = PACKAGE / "compiler" / "stages.py"
NAMES = frozenset(registry.STAGES) | frozenset(registry.SNAPSHOT_KINDS)
"""Every stage name and snapshot kind: the literals only the registry may write."""

# Where a stage name is a word of another vocabulary. path under irscope/ ->
# ({literal: how many times}, why). Two kinds of use are never counted (see
# _exempt): the keys of a record written as a dict display (a JSON object such as
# {"kernel": ..., "error": ...}), and Textual's ``severity="error"``.
ALLOWED: dict[str, tuple[dict[str, int], str]] = {
    "capture/child/irscope_child_hook.py": (
        {"ttgir": 1, "error": 1},
        "the hook runs in the user's interpreter with the standard library only, so it cannot import "
        "the registry: USE_IR_LOC=ttgir, and the error field of its meta.json"),
    "capture/child/irscope_cuda_guard.py": ({"error": 1}, "a word searched for in the C++ compiler's output"),
    "capture/child/irscope_child_source.py": ({"source": 1}, "the stdlib-only hook's source field"),
    "capture/ingest.py": ({"error": 4, "source": 1}, "fields of the meta.json the hook writes"),
    "compiler/pass_catalog.py": ({"source": 1}, "pass_catalog.json's field: where a pass is defined"),
    "core/capture_records.py": ({"error": 1}, "the error column of the bundle's runs table"),
    "export/render.py": ({"json": 2}, "the json picture format, beside svg, png and dot"),
    "cli/export_cmd.py": ({"json": 2}, "the json picture format, beside svg, png and dot"),
    "cli/layout_cmd.py": ({"json": 4, "source": 1},
                          "the json picture format; 'source', the dest of the ENCODING|BUNDLE argument"),
    "cli/run_cmd.py": ({"json": 1}, "the dest of the --json flag"),
    "cli/explain_render.py": ({"source": 2}, "the header of the Python source column"),
    "tui/kernel_nav.py": ({"source": 1}, "the Python pane's widget id"),
    "ir/type_model.py": ({"mlir": 1, "llvm": 1},
                         "FLAVOR_MLIR, FLAVOR_LLVM: how a type is spelled (builtin MLIR, LLVM dialect), no stage"),
    "capture/child/irscope_replay.py": ({"error": 1}, "the error field of a replay job's outcome (stdlib-only child)"),
    "whatif/replay.py": ({"error": 1}, "the error field of a replay job's outcome, read back"),
    "capture/ncu_tool.py": ({"source": 1, "sass": 1}, "Nsight Compute's page and view names (--page source --print-source sass)"),
    "cli/hot_cmd.py": ({"source": 1}, "the header of the Python source column"),
    "export/report/heat.py": ({"source": 2}, "the header of the Python source column"),
    "cli/tune_cmd.py": ({"source": 1}, "'source', the dest of the SCRIPT_OR_BUNDLE argument"),
    "core/experiments.py": ({"error": 1}, "a field of the stored ablation table's JSON"),
    "core/tune_table.py": ({"error": 1, "source": 1}, "fields of the stored tune table's JSON"),
    "profiles/model.py": ({"source": 1}, "a field of a stored profile's JSON: the file it came from"),
}


def _exempt(tree: ast.AST) -> set[int]:
    """ids of the string constants that are text or another vocabulary's words: every
    docstring (of a module, class or function, and the attribute docstrings under an
    assignment), the keys of a record (a dict display with a key that is no stage
    name: a JSON object's field names are contracts), and Textual's ``severity=``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            out.add(id(node.value))
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if any(k.value not in NAMES for k in keys):
                out.update(id(k) for k in keys)
        elif isinstance(node, ast.keyword) and node.arg == "severity":
            out.add(id(node.value))
    return out


def _literals(path: Path) -> Counter[str]:
    """Stage-name and snapshot-kind string literals in the code of one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _exempt(tree)
    return Counter(n.value for n in ast.walk(tree)
                   if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in NAMES
                   and id(n) not in skip)


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != REGISTRY)


def test_no_stage_literal_outside_the_registry():
    extra, stale = {}, {}
    for path in _sources():
        rel = path.relative_to(PACKAGE).as_posix()
        allowed = ALLOWED.get(rel, ({}, ""))[0]
        found = _literals(path)
        extra.update({(rel, v): n for v, n in found.items() if n > allowed.get(v, 0)})
        stale.update({(rel, v): n for v, n in allowed.items() if found[v] < n})
    assert not extra, ("stage-name literals outside irscope/compiler/stages.py (use its constants: TTGIR, "
                       f"KIND_MLIR, ...): {sorted(extra.items())}")
    assert not stale, f"allow-list counts larger than what the code holds (lower them): {sorted(stale.items())}"
    assert all((PACKAGE / rel).exists() for rel in ALLOWED)


def test_the_scan_sees_literals_and_skips_text(tmp_path):
    # The scan must be able to fail: a literal in code counts; the same word in a
    # docstring, an f-string's text, a record's field name or a severity does not.
    src = tmp_path / "m.py"
    src.write_text('"""About ttgir."""\n\n'
                   'def f(stage, app):\n'
                   '    """The ttgir stage."""\n'
                   '    app.notify("x", severity="error")\n'
                   '    rec = {"kernel": 1, "error": 2}\n'
                   '    fill = {"ttgir": 1, "sass": 2}\n'
                   '    return stage == "ttgir" or stage in ("llir", "mir") or f"{stage} ttgir"\n')
    assert _literals(src) == Counter({"ttgir": 2, "sass": 1, "llir": 1, "mir": 1})


_CONSTANTS = {name: value for name, value in vars(registry).items()
              if name.isupper() and isinstance(value, str)}
"""The registry's string constants by name (TTGIR -> "ttgir"), to see through them."""
_LANGUAGES = frozenset(s.language for s in registry.STAGES.values() if s.language) | {None}


def _value(node: ast.expr | None) -> object:
    """The string a dict key or value stands for: a literal, or a registry constant by
    name (``TTGIR``, ``stages.TTGIR``); a sentinel for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return _CONSTANTS.get(name, ...) if name is not None else ...


def _maps(kinds_to: frozenset, values: frozenset) -> list[str]:
    """Every dict display outside the registry with 2+ entries whose keys are all in
    ``kinds_to`` and whose values are all in ``values``: "path:line"."""
    out = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Dict) or len(node.keys) < 2:
                continue
            keys = [_value(k) for k in node.keys]
            vals = [_value(v) for v in node.values]
            if all(k in kinds_to for k in keys) and all(v in values for v in vals):
                out.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}")
    return out


def test_pass_kind_to_stage_is_written_once():
    assert {k: registry.pass_stage(k) for k in registry.SNAPSHOT_KINDS} == {
        "mlir": "mlir", "llvm": "llir", "mir": "llir"}
    assert _maps(frozenset(registry.SNAPSHOT_KINDS), frozenset(registry.STAGES)) == []


def test_stage_to_language_is_written_once():
    assert [registry.highlight_language(s) for s in ("source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn", "cubin")] == [
        "python", "mlir", "mlir", "llvm", "ptx", "sass", "amdgcn", None]
    assert (registry.highlight_language("mlir"), registry.highlight_language("llvm"), registry.highlight_language("mir")) == ("mlir", "llvm", None)
    assert _maps(NAMES, _LANGUAGES) == []


def test_the_map_scan_can_fail(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text('A = {"mlir": "mlir", KIND_LLVM: LLIR, "mir": "llir"}\nB = {TTIR: "mlir", "llir": LANG_LLVM}\n')
    here = sys.modules[__name__]
    monkeypatch.setattr(here, "_sources", lambda: [src])
    monkeypatch.setattr(here, "PACKAGE", tmp_path)
    assert _maps(frozenset(registry.SNAPSHOT_KINDS), frozenset(registry.STAGES)) == ["m.py:1"]
    assert _maps(NAMES, _LANGUAGES) == ["m.py:2"]  # A maps to stages, not languages


def test_snapshot_kinds():
    kinds = registry.SNAPSHOT_KINDS
    assert {k.name: k.when for k in kinds.values()} == {"mlir": "before", "llvm": "after", "mir": "after"}
    for k in kinds.values():
        assert registry.STAGES[k.stage].family == k.family
        assert registry.snapshot_kind(k.name) is k
    assert registry.snapshot_kind("ttgir") is None
    # Every stage whose passes close in its text names a known kind.
    assert {s.passes_kind for s in registry.STAGES.values() if s.passes_kind} <= set(kinds)


def test_every_parsed_stage_is_highlighted_and_named():
    for s in registry.STAGES.values():
        assert s.display_name
        if s.parsed:
            assert s.language is not None, s.name
    assert registry.display_name("ttgir") == "Triton GPU IR"
    assert registry.display_name("nope") == "nope"
    for name, value in _CONSTANTS.items():
        if not name.startswith(("FAMILY_", "KIND_", "LANG_")):
            assert value in registry.STAGES, name


def test_ir_is_no_second_front():
    import irscope.ir as ir

    assert not (PACKAGE / "ir" / "stages.py").exists()
    for name in ("STAGES", "StageInfo", "stage_info", "stage_for_extension"):
        assert not hasattr(ir, name), name
    assert ir.parse_as("ptx_ttgirloc", "").stage == "ptx"
    with pytest.raises(ValueError, match="unknown stage"):
        ir.parse_as("cubin", "")
