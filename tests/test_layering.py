"""The layers: data flows one way, the core stays free of UI libraries, and viewing
never needs Triton, torch, a GPU or the capture code."""

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "irscope"
# A module may import its own layer and lower ones. capture sits above the core
# (it writes bundles through the store and reads nothing through the views); the
# views sit on top, the command line last (it starts all the others).
ORDER = ["errors", "text_guard", "compiler", "store", "ir", "irdiff", "link", "core", "diff", "capture", "export", "tui", "cli"]

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


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "irscope" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in ORDER else None


def test_every_module_has_a_layer():
    loose = [p.name for p in PKG.iterdir() if p.suffix == ".py" and p.stem not in ORDER
             and p.stem not in ("__init__", "__main__")]
    folders = [p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__" and p.name not in ORDER]
    assert loose == [] and folders == []


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
