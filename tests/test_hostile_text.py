"""Hostile text (Rich markup, HTML, braces, backslashes, non-ASCII) in a kernel's
path, source, ``device_print`` strings, variant labels and the bundle's name is
printed verbatim by every command: never parsed as markup, never dropped."""

from __future__ import annotations

import json
import os
import shutil

import pytest

import irscope
from conftest import irscope as irscope_cli

pytestmark = pytest.mark.slow

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTILE_DIR = "dir [bold]b[/bold] [/] [red]r <script>alert(1)</script> {x} \\back é✓"
WIDE = dict(os.environ, COLUMNS="2000")  # no wrapping: verbatim means on one line


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """(bundle path, script path): tests/kernels/hostile_text.py captured from a hostile folder."""
    root = tmp_path_factory.mktemp("hostile")
    folder = root / HOSTILE_DIR
    folder.mkdir(parents=True)
    script = folder / "k.py"
    shutil.copy(os.path.join(HERE, "kernels", "hostile_text.py"), script)
    (root / "m[bold]x[").mkdir()
    bundle = root / "m[bold]x[/bold]y.irscope"
    p = irscope_cli("run", script, "-o", bundle, env=dict(os.environ, COLUMNS="80"))
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "MarkupError" not in p.stderr
    return str(bundle), str(script), p


def _ok(*args):
    p = irscope_cli(*args, env=WIDE)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    return p.stdout


def test_run_summary_fits_80_and_keeps_variants(hostile):
    bundle, _, p = hostile
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 80, p.stdout
    assert "BLOCK=256" in p.stdout and "BLOCK=1024" in p.stdout


def test_ls_and_runs_print_paths_verbatim(hostile):
    bundle, script, _ = hostile
    out = _ok("ls", bundle)
    assert bundle in out  # the title: not "mxy.irscope"
    runs = _ok("ls", bundle, "--runs")
    assert script in runs and "[bold]b[/bold] [/] [red]r <script>alert(1)</script> {x} \\back é✓" in runs


def test_passes_titles_keep_variant_labels(hostile):
    bundle, _, _ = hostile
    with irscope.open(bundle) as b:
        caps = b.captures()
    assert len(caps) == 2 and all(c.variant.startswith("mode=[bold]b[/bold]") for c in caps)
    for n, c in enumerate(caps):
        out = _ok("passes", bundle, "hostile_kernel", "--variant", str(n))
        assert c.title() in out


def test_origins_show_links_cat_print_ir_text_verbatim(hostile):
    bundle, script, _ = hostile
    with irscope.open(bundle) as b:
        cap = b.capture("hostile_kernel")
        ttir = cap.stage("ttir").text
        prints = [op for op in cap.stage("ttir").module.ops() if op.name == "tt.print"]
        line = next(i for i in range(cap.source.first_line, cap.source.last_line + 1)
                    if "device_print" in (cap.source.line(i) or ""))
        source_line = cap.source.line(line).strip()
    assert prints and "<script>alert(1)</script>" in prints[0].text
    origins = _ok("passes", bundle, "hostile_kernel", "--origins")
    assert prints[0].text.strip()[:100] in origins
    for extra in ([], ["--all"]):
        shown = _ok("show", bundle, "hostile_kernel", "--line", line, *extra)
        assert f"{script}:{line}" in shown and source_line in shown
    js = json.loads(_ok("show", bundle, "hostile_kernel", "--line", line, "--json"))
    assert js["file"] == script and js["source"].strip() == source_line
    linked = _ok("links", bundle, "hostile_kernel", "--stage", "ttir", "--op-line", prints[0].line)
    assert prints[0].text.strip() in linked
    assert _ok("cat", bundle, "hostile_kernel", "--stage", "ttir") == ttir
    comment = "# comment: [bold]b[/bold] [/] [red]r <script>alert(1)</script> {x} \\back é✓"
    with irscope.open(bundle) as b:
        cap = b.capture("hostile_kernel")
        at = next(i for i in range(cap.source.first_line, cap.source.last_line + 1)
                  if comment in (cap.source.line(i) or ""))
    assert comment in _ok("show", bundle, "hostile_kernel", "--line", at)


def test_show_finds_the_ops_of_a_line_under_a_non_ascii_path(hostile):
    bundle, _, _ = hostile
    with irscope.open(bundle) as b:
        cap = b.capture("hostile_kernel")
        prints = [op for op in cap.stage("ttir").module.ops() if op.name == "tt.print"]
        line = prints[0].location.frames[0].line
    for extra in ([], ["--all"]):
        shown = _ok("show", bundle, "hostile_kernel", "--line", line, *extra)
        assert prints[0].text.strip()[:60] in shown


def test_errors_print_labels_verbatim(hostile):
    bundle, _, _ = hostile
    p = irscope_cli("cat", bundle, "hostile_kernel", "--variant", "[bold]nope")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    (line,) = p.stderr.splitlines()
    assert "[bold]nope" in line and "mode=[bold]b[/bold] [/] [r" in line


def test_explain_prints_titles_and_source_verbatim(hostile):
    bundle, _, _ = hostile
    with irscope.open(bundle) as b:
        cap = b.capture("hostile_kernel", variant="0")
        title = cap.title()
        line = next(i for i in range(cap.source.first_line, cap.source.last_line + 1)
                    if "device_print" in (cap.source.line(i) or ""))
        source_line = cap.source.line(line).strip()
    out = _ok("explain", bundle, "hostile_kernel", "--variant", "0")
    assert title in out and source_line in out
