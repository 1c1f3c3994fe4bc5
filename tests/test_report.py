"""``irscope report``: the folder's structure, what its pages hold (checked against
the core API), escaping of hostile text, size, atomic replacement, CLI errors.

The samples report is built once per session (:func:`samples_report`, shared with
tests/test_report_browser.py); the hostile bundles are made from the real
add_kernel capture of the samples with hostile strings put into its texts."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shlex
from pathlib import Path

import pytest

import irscope
from conftest import DATA, irscope as irscope_cli
from irscope.core.summary import LIMIT_ABBREV
from irscope.export.report import MARKER, build_report
from irscope.export.report.embed import script_json, unpack
from irscope.store.bundle import Bundle
from irscope.compiler.records import CapturedKernel, PassRecord, Resources, RunInfo

SAMPLES = DATA / "samples_sm90.irscope"
HOSTILE = "[bold]b[/bold] [/] <script>alert(1)</script> \"dq\" 'sq' {x} {{y}} \\back é✓ </script><!-- &amp;"
SURROGATE = b"\xff\xfe".decode("utf-8", "surrogateescape")  # what os gives for non-UTF-8 file names
REPLACED = b"bad \xff\xfe bytes".decode("utf-8", "replace")  # what ingest makes of non-UTF-8 IR bytes
HOSTILE_KERNEL = "add_kernel<img src=x onerror=alert(2)>"
MARKUP = ("<script>alert", "<img src=x", "<!-- &amp;")


def samples_report(tmp_path_factory) -> Path:
    """The report of the samples bundle, built once per session (a second call, from
    another test module, reuses it). Without its pictures: drawing them takes
    longer than every other part of the build (benchmarks/bench_report.py times
    both); the hostile reports below draw theirs."""
    out = tmp_path_factory.getbasetemp() / "shared-samples-report"
    if not (out / MARKER).exists():
        build_report([str(SAMPLES)], str(out), command="irscope report samples_sm90.irscope -o report",
                     pictures=False)
    return out


def _hostile_kernel(cap, variant: str, file: str, extra_ttgir: str = "") -> CapturedKernel:
    """``cap`` (a real capture) with hostile text in its name, variant, path, source,
    stage texts, pass names and snapshots."""
    real_file = cap.row.file

    def spoil(text: str) -> str:
        text = text.replace(real_file, file) if real_file else text
        return f"// {HOSTILE} {REPLACED}\n{text}"

    stages = {}
    for name in cap.stages:
        text = cap.stage(name).text
        if isinstance(text, bytes):
            stages[name] = text
        else:
            stages[name] = spoil(text) + (extra_ttgir if name == "ttgir" else "")
    passes = []
    for i, row in enumerate(cap.pass_rows()):
        text = cap._pass_text(row.blob)
        name = f"Hostile{HOSTILE}Pass" if i == 1 else row.name
        passes.append(PassRecord(row.seq, row.stage, row.kind, row.when, name, row.argument, row.options,
                                 row.anchor, row.anchor_name, spoil(text), row.seconds))
    src = cap.source
    source = (src.text or "") + f"\n# {HOSTILE}\n"
    r = cap.resources
    return CapturedKernel(
        kernel=HOSTILE_KERNEL, file=file, first_line=src.first_line, source=source, target=cap.target,
        variant=variant, hash="h-" + variant, signature={}, constexprs={"mode": HOSTILE}, attrs={},
        options=dict(cap.options), versions={"triton": cap.triton_version}, host="h", argv=["k.py"],
        started="now", compile_seconds=0.5, stage_seconds={}, stages=stages, passes=passes,
        resources=Resources(registers=r.registers, spill_stores=0, spill_loads=0, shared=r.shared,
                            source="test"),
        metadata=dict(cap.metadata), mode="compile-only")


def make_hostile_bundle(path: Path, extra_ttgir: str = "") -> Path:
    """A bundle of two hostile variants of the samples' add_kernel."""
    # No quote or backslash in the path: MLIR would escape them in its locations, and
    # the ops would no longer name the kernel's file (the texts hold both anyway).
    file = "/tmp/dir [bold]b[/bold] <script>alert(1)</script> {x} é✓ </script><!-- &amp;/k.py"
    with irscope.open(str(SAMPLES)) as src:
        cap = src.capture("add_kernel")
        kernels = [_hostile_kernel(cap, f"mode={HOSTILE},BLOCK={n}", file, extra_ttgir) for n in (256, 1024)]
    with Bundle.open(str(path), create=True) as b:
        run = b.begin_run(RunInfo(["irscope", "run", HOSTILE], file, "/", "h", "compile-only", ["sm_90"], False,
                                  "0.1.0", "now", "python"))
        for k in kernels:
            b.add_capture(run, k)
        b.finish_run(run, complete=True, status="ok")
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return samples_report(tmp_path_factory)


def hostile_reports(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(bundle A, bundle B, report of both), built once per session: B's TTGIR has
    one more op than A's."""
    root = tmp_path_factory.getbasetemp() / "shared-hostile [bold]<b>"
    a, b = root / "a[bold]<i>.irscope", root / "b.irscope"
    out = root / f"report <script> {SURROGATE}"  # a non-UTF-8 folder name, and in the stamp
    if not (out / MARKER).exists():
        root.mkdir(exist_ok=True)
        make_hostile_bundle(a)
        extra = f'tt.print " {HOSTILE} " {{hex = false, isSigned = array<i32: 0>}} : tensor<1xi32>\n'
        make_hostile_bundle(b, extra_ttgir=extra)
        build_report([str(a), str(b)], str(out), command=f"irscope report {HOSTILE} {SURROGATE}")
    return a, b, out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path, Path]:
    return hostile_reports(tmp_path_factory)


def _kernel_data(page: Path) -> dict:
    html = page.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="kernel-data">(.*?)</script>', html, re.S)
    assert m, page
    return json.loads(m.group(1))


# -- structure ------------------------------------------------------------------

def test_index_lists_every_capture_with_its_metadata(report):
    html = (report / "index.html").read_text(encoding="utf-8")
    with irscope.open(str(SAMPLES)) as b:
        caps = b.captures()
        for c in caps:
            page = f"kernel-1-{c.id}.html"
            assert f'href="{page}"' in html and (report / page).is_file()
            r = c.resources
            row = html[html.index(f'href="{page}"'):].split("</tr>")[0]
            assert f"<td>{r.registers}</td>" in row and f"<td>{r.num_warps}</td>" in row
            assert f"<td>{c.options['num_stages']}</td>" in row
            occ = c.occupancy
            assert f"<td>{occ.blocks_per_sm}x{occ.num_warps}w {LIMIT_ABBREV[occ.limited_by]}</td>" in row
    marker = json.loads((report / MARKER).read_text())
    assert marker["generator"] == "irscope report" and len(marker["pages"]) == len(caps) + 1


def test_every_page_is_stamped_and_uses_only_local_files(report):
    pages = list(report.glob("*.html"))
    assert len(pages) >= 7
    for page in pages:
        html = page.read_text(encoding="utf-8")
        stamp = html[html.index('<footer class="stamp"'):]
        assert "irscope report samples_sm90.irscope -o report" in stamp
        assert f"irscope {irscope.__version__}" in stamp and "Triton 3.6.0" in stamp
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", stamp)
        # no server, no CDN: every src/href is a file of the report (or a fragment)
        for ref in re.findall(r'(?:src|href)="([^"]*)"', html):
            assert "://" not in ref and (ref.startswith("#") or (report / ref).exists()), (page, ref)
        assert "fetch(" not in html
    assert "fetch(" not in (report / "assets" / "report.js").read_text()


def test_kernel_page_links_python_lines_as_the_core_does(report):
    with irscope.open(str(SAMPLES)) as b:
        cap = b.capture("matmul_kernel")
        data = _kernel_data(report / f"kernel-1-{cap.id}.html")
        stages = {s["name"]: s for s in data["stages"]}
        assert list(stages) == ["ttir", "ttgir", "llir", "ptx", "sass"]
        for name, s in stages.items():
            assert unpack(s["text"]) == cap.stage(name).text
        lines = {int(k) for s in stages.values() for k in s["line_ops"]}
        assert len(lines) > 10
        for line in sorted(lines):
            expected = cap.ops_at_line(line)
            for name, s in stages.items():
                assert s["line_ops"].get(str(line), []) == sorted({op.line for op in expected[name]}), (line, name)
        assert data["source"]["first_line"] == cap.source.first_line
        assert data["source"]["lines"] == cap.source.text.splitlines()


def test_pass_timeline_holds_every_pass_and_each_changed_pass_diff(report):
    with irscope.open(str(SAMPLES)) as b:
        cap = b.capture("add_kernel")
        passes = json.loads(unpack(_kernel_data(report / f"kernel-1-{cap.id}.html")["passes"]))
        core = cap.passes()
        assert [p["name"] for p in passes] == [p.name for p in core]
        assert [p["changed"] for p in passes] == [p.changed for p in core]
        steps = {s.index: s.diff for s in cap.pass_steps() if s.diff is not None}
        assert steps
        for p in passes:
            d = steps.get(p["index"])
            if d is None:
                assert p["diff"] is None
                continue
            assert (p["diff"]["added"], p["diff"]["removed"], p["diff"]["changed"]) == (d.added, d.removed, d.changed)
            assert [c["op"] for c in p["diff"]["changes"]] == [c.op for c in d.changes[:200]]


def test_samples_report_is_a_few_mb(report):
    total = sum(f.stat().st_size for f in report.rglob("*") if f.is_file())
    with irscope.open(str(SAMPLES)) as b:
        raw = b.raw_bytes
    assert total < 3 * 2**20 and total < raw / 20, total


def test_single_bundle_of_one_version_and_target_has_no_compare_page(report):
    assert not (report / "compare.html").exists()
    assert "compare.html" not in (report / "index.html").read_text()


# -- escaping -------------------------------------------------------------------

def test_hostile_text_never_reaches_html_unescaped(hostile):
    _, _, out = hostile
    pages = sorted(out.glob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "compare.html", "diff-1.html"}
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for bad in MARKUP:
            assert bad not in html, (page.name, bad)
        # only the report's own elements: the data block and the script file
        assert html.count("<script") == (2 if page.name.startswith("kernel-") else 1)
        assert html.count("</script>") == html.count("<script")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or page.name.startswith("kernel-")


def test_hostile_text_survives_verbatim_in_the_data(hostile):
    _, _, out = hostile
    page = next(out.glob("kernel-1-*.html"))
    data = _kernel_data(page)
    ttgir = next(s for s in data["stages"] if s["name"] == "ttgir")
    assert unpack(ttgir["text"]).startswith(f"// {HOSTILE} {REPLACED}\n")
    assert f"# {HOSTILE}" in data["source"]["lines"]
    passes = json.loads(unpack(data["passes"]))
    assert passes[1]["name"] == f"Hostile{HOSTILE}Pass"
    html = page.read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", html).group(1)
    assert "add_kernel&lt;img src=x onerror=alert(2)&gt;" in title and "&lt;script&gt;" in title


def test_two_bundles_give_the_matrix_and_the_pair_diffs(hostile):
    _, _, out = hostile
    compare = (out / "compare.html").read_text(encoding="utf-8")
    assert compare.count('href="diff-') == 2  # both variants paired
    assert 'class="matrix"' in compare and "ops.ttgir" in compare
    diff = (out / "diff-1.html").read_text(encoding="utf-8")
    assert "tt.print" in diff and "1 added" in diff
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count('href="kernel-') == 4 and 'href="compare.html"' in index


def test_kernel_pages_carry_their_pictures_escaped(hostile):
    _, _, out = hostile
    data = _kernel_data(next(out.glob("kernel-1-*.html")))
    pictures = {k: unpack(v["data"]) for k, v in data["pictures"].items() if v["mime"] == "image/svg+xml"}
    pngs = {k: base64.b64decode(v["data"]) for k, v in data["pictures"].items() if v["mime"] == "image/png"}
    assert set(pictures) | set(pngs) == set(data["pictures"])
    assert all(png.startswith(b"\x89PNG\r\n") for png in pngs.values())
    assert {"ttgir", "pipeline"} <= set(pictures) and any(k.startswith("layout-") for k in data["pictures"])
    assert data["lineage"] and all(v in pictures for v in data["lineage"].values())
    for key, svg in pictures.items():
        assert svg.lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE")), key
        assert "<script" not in svg and "<img" not in svg, key
    assert "Hostile" in pictures["pipeline"]  # the hostile pass name is drawn, escaped
    html_text = next(out.glob("kernel-1-*.html")).read_text(encoding="utf-8")
    assert html_text.count('<img data-picture="') == sum(1 for k in data["pictures"] if not k.startswith("lineage-"))


def test_script_json_cannot_close_its_element():
    text = script_json({"x": "</script><script>alert(1)</script>", "y": "<!--", "z": "\u2028&"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": "</script><script>alert(1)</script>", "y": "<!--", "z": "\u2028&"}


# -- the folder: atomic, never over a user's folder --------------------------------

def test_rebuild_replaces_an_earlier_report_only(hostile, tmp_path):
    a, _, _ = hostile
    out = tmp_path / "rep"
    build_report([str(a)], str(out), command="first", pictures=False)
    (out / "stale.html").write_text("old")
    build_report([str(a)], str(out), command="second", pictures=False)
    assert not (out / "stale.html").exists() and "second" in (out / "index.html").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]  # no temporary folder left behind
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    p = irscope_cli("report", a, "-o", mine)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith("irscope: error: ") and "not an irscope report" in p.stderr
    assert [x.name for x in mine.iterdir()] == ["notes.txt"]


def test_cli_builds_a_report_and_reports_progress(hostile, tmp_path):
    a, _, _ = hostile
    out = tmp_path / "r"
    p = irscope_cli("report", a, "-o", out, "--no-pictures")
    assert p.returncode == 0, p.stderr
    assert "index.html" in p.stdout and "[1/2]" in p.stderr
    stamp = (out / "index.html").read_text(encoding="utf-8")
    assert html.escape(shlex.join(["irscope", "report", str(a), "-o", str(out), "--no-pictures"])) in stamp
    assert 'data-picture' not in (out / "kernel-1-1.html").read_text(encoding="utf-8")


def test_without_dot_the_report_has_no_pictures_and_says_so_once(hostile, tmp_path):
    a, _, _ = hostile
    bare = tmp_path / "bin"  # a PATH without dot
    bare.mkdir()
    out = tmp_path / "r"
    p = irscope_cli("report", a, "-o", out, env=dict(os.environ, PATH=str(bare)))
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("dot is not installed") == 1
    assert "data-picture" not in (out / "kernel-1-1.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("make", ["missing", "not-a-bundle", "folder", "file-as-output"])
def test_cli_errors_are_one_line(make, tmp_path):
    out = tmp_path / "r"
    bundle = str(SAMPLES)
    if make == "missing":
        bundle = str(tmp_path / "nope.irscope")
    elif make == "not-a-bundle":
        bundle = str(tmp_path / "x.irscope")
        Path(bundle).write_text("hello <script>")
    elif make == "folder":
        bundle = str(tmp_path)
    else:
        out.write_text("a file")
    p = irscope_cli("report", bundle, "-o", out, "-q")
    assert p.returncode == 1, p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscope: error: "), p.stderr
    assert not any(x.name.startswith(".r.") for x in tmp_path.iterdir())
