"""Viewing never needs Triton, torch or a GPU; lower layers never import upper ones."""

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "irscope"
# capture -> store -> ir -> link -> cli: a module may import its own layer and lower ones.
ORDER = ["errors", "capture", "store", "ir", "link", "cli"]


def test_viewing_imports_no_triton_or_torch(tmp_path):
    code = (
        "import sys, irscope.cli.main, irscope.cli.inspect_cmd, irscope.store.bundle, irscope.store.select;"
        "bad = [m for m in ('triton', 'torch') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "irscope" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in ORDER else None


def test_lower_layers_never_import_upper_ones():
    violations = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        own = _layer(".".join(rel.parts))
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                other = _layer(name)
                if other and ORDER.index(other) > ORDER.index(own):
                    violations.append(f"{rel}: imports {name}")
    assert not violations, violations


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
