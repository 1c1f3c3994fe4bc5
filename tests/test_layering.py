"""The layers: data flows one way, the core stays free of UI libraries, and viewing
never needs Triton, torch, a GPU or the capture code."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "irscope"
ROOT = PKG.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# The layer order, top last, as pyproject.toml's import-linter contracts hold it
# (lint-imports checks every import: module-level, lazy and relative). capture sits
# above the core and imports neither the store nor the views (`irscope run` writes
# what it hands back); the views sit on top, the command line last (it starts all
# the others).
ORDER = ["errors", "text_guard", "compiler", "store", "ir", "profiles", "irdiff", "link", "core", "diff", "capture",
         "whatif", "export", "tui", "cli"]

# Importing these is all any viewing command needs.
VIEWER = ("irscope", "irscope.core", "irscope.cli.main", "irscope.cli.inspect_cmd", "irscope.cli.analyze_cmd",
          "irscope.cli.links_cmd", "irscope.cli.render")


def _fresh_modules(imports: str, probe: str) -> list[str]:
    """Modules matching ``probe`` (a Python predicate on name ``m``) loaded after
    ``imports`` in a fresh interpreter."""
    code = f"import sys\n{imports}\nprint([m for m in sys.modules if {probe}])"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return eval(p.stdout.strip())


def test_viewing_imports_no_triton_torch_or_capture():
    imports = "\n".join(f"import {m}" for m in VIEWER) + "\nimport irscope.core.bundle, irscope.core.capture"
    bad = _fresh_modules(imports, "m.split('.')[0] in ('triton', 'torch') or m.startswith('irscope.capture')")
    assert bad == []


def test_using_the_api_imports_no_triton_torch_or_capture(tmp_path):
    # Reading a plain IR file exercises the parsers, links and core end to end.
    ir = Path(__file__).parent / "data" / "ir" / "3.6.0" / "add_sm90" / "add_kernel.ttgir"
    imports = f"import irscope\nf = irscope.read_ir_file({str(ir)!r})\nlen(list(f.module.ops()))"
    bad = _fresh_modules(imports, "m.split('.')[0] in ('triton', 'torch') or m.startswith('irscope.capture')")
    assert bad == []


def test_core_imports_no_rich_or_textual():
    imports = "import irscope, irscope.core, irscope.core.bundle, irscope.core.capture, irscope.core.files"
    assert _fresh_modules(imports, "m.split('.')[0] in ('rich', 'textual')") == []


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package and pyproject.toml under ``root``."""
    assert LINT_IMPORTS.exists(), "lint-imports is missing: install the test extra (pip install -e '.[test]')"
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True)


def test_import_contracts_are_kept():
    p = _lint_imports(ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 broken" in p.stdout


def test_the_contracts_follow_the_layer_order():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")
    flat = [name for layer in reversed(layers["layers"]) for name in sorted(n.strip() for n in layer.split("|"))]
    assert flat == ["errors", "text_guard", "compiler", "store", "ir", "profiles", "irdiff", "link", "core", "diff",
                    "capture", "whatif", "export", "tui", "cli"] == ORDER
    assert layers.get("exhaustive") is True  # a new top-level module must be given a layer


def test_every_module_has_a_layer():
    loose = [p.name for p in PKG.iterdir() if p.suffix == ".py" and p.stem not in ORDER
             and p.stem not in ("__init__", "__main__")]
    folders = [p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__" and p.name not in ORDER]
    assert loose == [] and folders == []


# Each breaks one contract (named by the start of its name), written the ways a
# hand-written AST check misses: inside a function (lazy), relative, or through a
# module in between.
VIOLATIONS = [
    ("Data flows one way", "core/_probe.py", "def f():\n    from ..tui import app  # lazy and relative\n"),
    ("The core (and", "ir/_probe.py", "def f():\n    import rich.text\n"),
    ("The core (and", "link/_probe.py", "def f():\n    from irscope.tui.widgets import ir_view  # Rich, through the app\n"),
    ("Viewing never imports", "export/_probe.py", "def f():\n    from irscope.capture import session\n"),
    ("Viewing never imports", "tui/_probe.py", "def f():\n    import torch\n"),
    ("Only the app imports", "export/_probe.py", "from textual.widgets import Static\n"),
]


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory):
    """The package and its pyproject.toml, copied where a probe can be added."""
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(PKG, root / "irscope", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize("contract, rel, code", VIOLATIONS, ids=[v[1] for v in VIOLATIONS])
def test_a_broken_contract_fails(tree_copy, contract, rel, code):
    probe = tree_copy / "irscope" / rel
    probe.write_text(code)
    try:
        p = _lint_imports(tree_copy)
    finally:
        probe.unlink()
    assert p.returncode != 0, p.stdout + p.stderr
    broken = next(line for line in p.stdout.splitlines() if line.startswith(contract))
    kept_or_broken = p.stdout[p.stdout.index(broken):].split("KEPT")[0]
    assert "BROKEN" in kept_or_broken, p.stdout  # that contract, not another one
    assert "irscope." + rel.replace("/", ".").removesuffix(".py") in p.stdout


def test_child_hook_is_stdlib_only():
    """The hook runs inside other environments: only stdlib (and Triton/torch, lazily)."""
    allowed_third_party = {"triton", "torch"}
    for path in (PKG / "capture" / "child").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                mods = [node.module.split(".")[0]]
            for m in mods:
                assert m in sys.stdlib_module_names or m in allowed_third_party or m.startswith("irscope_"), (path.name, m)
