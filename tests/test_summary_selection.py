"""One answer per capture fact, and one selection rule for every command.

The ``ls`` table, the app's browser and the report's index are drawn from the core's
capture summary, so they give every capture the same figures; every command that
picks a capture reads ``--target`` and ``--variant`` through the core's one
selection, so ``90``, ``sm90`` and ``sm_90`` work everywhere, and a spelling that
fits several captures fails with one line that lists them.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

import irscope
from conftest import DATA, ROOT, irscope as irscope_cli
from irscope.cli.render import capture_table
from irscope.compiler.records import CapturedKernel, Resources, RunInfo
from irscope.compiler.units import human_bytes
from irscope.core import Target, normalise_target, occupancy_text
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle as StoreBundle
from irscope.tui.screen_data import browser_rows

SAMPLES = str(DATA / "samples_sm90.irscope")
FULL = ROOT / "out" / "samples.irscope"
BUNDLES = [SAMPLES] + ([str(FULL)] if FULL.is_file() else [])
SPELLINGS = ("90", "sm90", "sm_90")
AMBIGUOUS = "BLOCK_SIZE_M=128"
"""Fits matmul_kernel's variants 0 and 1 of the samples (BLOCK_SIZE_M=128, N=256 / 128)."""


# -- the one target normaliser ----------------------------------------------------

@pytest.mark.parametrize("text", ["90", "sm90", "sm_90", "SM_90", " sm_90 ", "sm_90a", "cuda:90"])
def test_every_nvidia_spelling_names_one_target(text):
    t = Target.parse(text)
    assert (t.name, t.vendor, t.arch, t.warp_size) == ("sm_90", "nvidia", 90, 32)
    assert normalise_target(text) == "sm_90"


def test_amd_targets_keep_their_gfx_name():
    t = Target.parse("gfx942")
    assert (t.name, t.vendor, t.arch, t.warp_size) == ("gfx942", "amd", "gfx942", 64)
    assert normalise_target("GFX950") == "gfx950"


@pytest.mark.parametrize("text", ["", "sm_xx", "foo", "sm_200", "sm_9", "gfx"])
def test_a_bad_target_is_one_line_error(text):
    with pytest.raises(IrscopeError) as err:
        Target.parse(text)
    assert "\n" not in str(err.value) and "target" in str(err.value)


def test_run_and_cat_share_the_normaliser():
    """``run --target`` fails on the spelling ``cat --target`` fails on, with the same line."""
    bad = irscope_cli("cat", SAMPLES, "add_kernel", "--target", "sm_xx")
    assert bad.returncode == 1 and bad.stderr.strip() == f"irscope: error: {_error('sm_xx')}"
    run = irscope_cli("run", str(ROOT / "sample_kernels" / "vector_add.py"), "--target", "sm_xx",
                      "-o", "/nonexistent/x.irscope")
    assert run.returncode != 0 and _error("sm_xx") in run.stderr


def _error(text: str) -> str:
    try:
        normalise_target(text)
    except IrscopeError as exc:
        return str(exc)
    raise AssertionError(f"{text!r} should not parse")


# -- one summary: ls, the app's browser and the report's index ------------------------

def _ls_rows(stdout: str) -> dict[int, str]:
    """Capture id -> its first line in the ``ls`` table."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^[\s│┃]*(\d+)[\s│┃]+\d+[\s│┃]", line)
        if m:
            out[int(m.group(1))] = line
    return out


def _index_rows(report: Path) -> dict[int, dict[str, str]]:
    """Capture id -> the report index's cells by column (kernel pages are kernel-B-ID.html)."""
    text = (report / "index.html").read_text(encoding="utf-8")
    heads = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", text.split("<tbody>")[0])]
    rows = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", text.split("<tbody>")[1].split("</tbody>")[0], re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        page = re.search(r'href="kernel-\d+-(\d+)\.html"', tr)
        assert page is not None, tr
        rows[int(page.group(1))] = dict(zip(heads, cells))
    return rows


@pytest.fixture(scope="module", params=BUNDLES, ids=lambda p: Path(p).name)
def views(request, tmp_path_factory):
    """(bundle path, ls --json by id, ls table lines by id, report index rows by id)."""
    path = request.param
    listing = {c["id"]: c for c in json.loads(irscope_cli("ls", path, "--json", check=True).stdout)}
    wide = {k: v for k, v in os.environ.items() if k != "LINES"} | {"COLUMNS": "400"}
    table = _ls_rows(irscope_cli("ls", path, env=wide, check=True).stdout)
    report = tmp_path_factory.mktemp("report") / "r"
    irscope_cli("report", path, "-o", str(report), "--no-pictures", "-q", check=True)
    return path, listing, table, _index_rows(report)


def test_ls_the_browser_and_the_report_index_agree(views):
    path, listing, table, index = views
    with irscope.open(path) as b:
        caps = b.captures()
        assert set(listing) == set(table) == set(index) == {c.id for c in caps}
        ls_cells = {c.id: row for c, row in zip(caps, capture_table(caps).rows)}
        browser = {r.capture.id: {k: v.plain for k, v in r.cells.items()} for r in browser_rows(b)}
        for c in caps:
            s = c.summary
            ls, app, rep, js = ls_cells[c.id], browser[c.id], index[c.id], listing[c.id]
            ls = {k: v.plain for k, v in ls.items() if not k.startswith("_")}
            # the whole label: ls --json, the report, the app's filter
            assert js["variant"] == rep["variant"] == s.variant == c.variant
            assert s.variant.lower() in next(r.haystack for r in browser_rows(b) if r.capture.id == c.id)
            # identity
            assert js["kernel"] == ls["kernel"] == app["kernel"] == rep["kernel"] == s.kernel
            assert js["target"] == ls["target"] == app["target"] == rep["target"] == s.target
            assert ls["triton"] == app["triton"] == rep["Triton"] == (s.triton_version or "-")
            # figures: one value, one wording
            regs = "-" if s.registers is None else str(s.registers)
            assert js["registers"] == s.registers and ls["regs"].rstrip("*") == app["regs"] == rep["regs"] == regs
            assert ls["spills"] == app["spills"] == rep["spills"] == human_bytes(s.spills)
            assert js["shared"] == s.shared and ls["shared"] == app["shared"] == rep["shared"] == human_bytes(s.shared)
            occ = occupancy_text(c.occupancy) or "-"
            assert ls["occupancy"] == app["occupancy"] == rep["occupancy"] == occ
            assert re.fullmatch(r"\d+x\d+w (regs|smem|warps|blocks)|-", occ)
            assert (js["occupancy_text"] or "-") == occ and js["num_stages"] == s.num_stages
            if js["occupancy"] is not None:
                assert occ.startswith(f"{js['occupancy']['blocks_per_sm']}x")
            assert app["warps"] == rep["warps"] == ("-" if s.num_warps is None else str(s.num_warps))
            assert app["stages"] == rep["stages"] == ("-" if s.num_stages is None else str(s.num_stages))
            assert s.num_stages == c.options.get("num_stages", c.metadata.get("num_stages"))
            assert s.num_warps == c.options.get("num_warps", c.metadata.get("num_warps"))
            if s.compile_seconds is not None:
                seconds = f"{s.compile_seconds:.2f}"
                assert ls["compile"] == app["compile"] == f"{seconds}s" and rep["compile"] == f"{seconds} s"
            assert ls["passes"] == rep["passes"] == str(s.passes) == str(js["passes"])
            assert ls["status"].split()[0] == app["status"].split()[0] == s.status
            assert rep["status"].split(":")[0] == s.status
            # what ls prints is the table's cells
            assert occ in table[c.id] and ls["shared"] in table[c.id]


# -- one selection: every selecting command ------------------------------------------

def _first_line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


@pytest.fixture(scope="module")
def add_lines():
    """(a Python line of add_kernel with ops, the TTGIR line of its first tt.load)."""
    with irscope.open(SAMPLES) as b:
        cap = b.capture("add_kernel")
        src = cap.source
        py = src.first_line + _first_line_of(src.text, "tl.load") - 1
        ttgir = cap.stage("ttgir").text
        assert isinstance(ttgir, str)
        return py, _first_line_of(ttgir, "tt.load")


def _command(name: str, kernel: str, target: str | None, variant: str | None, lines: tuple[int, int],
             tmp: Path) -> list[str]:
    """The argv of command ``name`` picking ``kernel`` (with ``target``/``variant``) of the samples."""
    flags = (["--target", target] if target else []) + (["--variant", variant] if variant else [])
    py, op = lines
    if name == "diff":
        spec = f"{SAMPLES}:{kernel}" + (f"@{target}" if target else "") + (f"#{variant}" if variant else "")
        return ["diff", spec, f"{SAMPLES}:{kernel}", "--stage", "ttir", "--json"]
    if name == "report":
        return ["report", SAMPLES, "--kernel", kernel, *flags, "--no-pictures", "-q", "-o", str(tmp / "report")]
    base = {"cat": ["--stage", "ttir"], "show": ["--line", str(py), "--json"], "passes": ["--json"],
            "links": ["--stage", "ttgir", "--op-line", str(op), "--json"],
            "export": ["--stage", "ttir", "-o", str(tmp / "out.svg")],
            "layout": ["--op-line", str(op), "--format", "json"], "open": [], "explain": ["--json"]}[name]
    return [name, SAMPLES, kernel, *flags, *base]


COMMANDS = ("cat", "show", "passes", "links", "diff", "export", "layout", "open", "report", "explain")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_selecting_command_accepts_every_target_spelling(name, add_lines, tmp_path):
    outs = []
    for spelling in SPELLINGS:
        p = irscope_cli(*_command(name, "add_kernel", spelling, None, add_lines, tmp_path))
        if name == "open":  # selection passed; then the app wants a terminal, which a test has not
            assert p.returncode == 1 and "needs a terminal" in p.stderr, p.stderr
            continue
        assert p.returncode == 0, (spelling, p.stderr)
        outs.append(p.stdout)
    if name not in ("report", "export", "open"):
        assert outs[0] == outs[1] == outs[2]  # the same capture each time
    bad = irscope_cli(*_command(name, "add_kernel", "sm_xx", None, add_lines, tmp_path))
    assert bad.returncode == 1 and bad.stderr.strip() == f"irscope: error: {_error('sm_xx')}"


@pytest.mark.parametrize("name", COMMANDS)
def test_an_ambiguous_variant_fails_listing_the_candidates(name, add_lines, tmp_path):
    p = irscope_cli(*_command(name, "matmul_kernel", None, AMBIGUOUS, add_lines, tmp_path))
    assert p.returncode == 1, p.stdout
    err = p.stderr.strip()
    assert "\n" not in err and err.startswith("irscope: error: ") and "ambiguous" in err, err
    with irscope.open(SAMPLES) as b:
        labels = list(dict.fromkeys(c.variant for c in b.captures("matmul_kernel")))
    fits = [lab for lab in labels if f",{AMBIGUOUS}," in f",{lab},"]
    assert len(fits) == 2
    for lab in fits:
        assert f"{labels.index(lab)}: {lab}" in err  # each candidate, whole, with its --variant N
    for lab in set(labels) - set(fits):
        assert lab not in err


def test_variant_fields_as_ls_shows_them_select_one_capture():
    with irscope.open(SAMPLES) as b:
        mm = b.captures("matmul_kernel")
        assert b.capture("matmul_kernel", variant="BLOCK_SIZE_M=128 BLOCK_SIZE_N=128").id == mm[1].id
        assert b.capture("matmul_kernel", target="90", variant="BLOCK_SIZE_N=32,num_stages=5").id == mm[3].id
        assert b.capture("matmul_kernel", target="sm90", variant=mm[2].variant[:70]).id == mm[2].id
        with pytest.raises(IrscopeError, match="no variant"):
            b.capture("matmul_kernel", variant="BLOCK_SIZE_M=999")


def _copy_of(cap: irscope.Capture) -> CapturedKernel:
    """``cap`` as a record to store again: its real stage texts, no pass snapshots."""
    r = cap.resources
    return CapturedKernel(
        kernel=cap.kernel, file=cap.file or "", first_line=cap.source.first_line or 1, source=cap.source.text or "",
        target=cap.target, variant=cap.variant, hash="h", signature={}, constexprs=dict(cap.constexprs), attrs={},
        options=dict(cap.options), versions={"triton": cap.triton_version}, host="h", argv=["k.py"],
        started="now", compile_seconds=0.5, stage_seconds={}, stages={s: cap.stage(s).text for s in cap.stages},
        passes=[], resources=Resources(registers=r.registers, spill_stores=0, spill_loads=0, shared=r.shared,
                                       source="test"),
        metadata=dict(cap.metadata), mode="compile-only")


@pytest.fixture(scope="module")
def twice(tmp_path_factory) -> str:
    """A bundle holding add_kernel's one variant twice: two runs appended to one bundle."""
    path = tmp_path_factory.mktemp("twice") / "twice.irscope"
    with irscope.open(SAMPLES) as src:
        record = _copy_of(src.capture("add_kernel"))
    with StoreBundle.open(str(path), create=True) as b:
        for _ in range(2):
            run = b.begin_run(RunInfo(["irscope", "run", "k.py"], "k.py", "/", "h", "compile-only", ["sm_90"], False,
                                      "0.1.0", "now", "python"))
            b.add_capture(run, record)
            b.finish_run(run, complete=True, status="ok")
    return str(path)


@pytest.mark.parametrize("flags", [["--target", "90"], ["--variant", "0"], ["--target", "sm_90", "--variant", "0"]])
def test_a_variant_held_twice_fails_naming_each_capture(twice, flags):
    p = irscope_cli("cat", twice, "add_kernel", *flags, "--stage", "ttir")
    err = p.stderr.strip()
    assert p.returncode == 1 and "\n" not in err and "ambiguous" in err, err
    with irscope.open(twice) as b:
        ids = [c.id for c in b.captures()]
    assert len(ids) == 2 and all(f"#{i} " in err for i in ids)
    # the id picks one; the kernel alone is its first capture, as every command's help says
    assert irscope_cli("cat", twice, f"#{ids[1]}", "--stage", "ttir").returncode == 0
    assert irscope_cli("cat", twice, "add_kernel", "--stage", "ttir").returncode == 0


def test_a_left_out_qualifier_among_several_is_named_on_stderr():
    """A kernel named alone still means its first capture, but never silently: stderr
    names the pick and how to choose another; stdout (and --json) is untouched."""
    bundle = DATA / "samples_sm90.irscope"
    caps = irscope.open(str(bundle)).captures("matmul_kernel")
    assert len(caps) > 1
    p = irscope_cli("show", bundle, "matmul_kernel", "--line", str(caps[0].source.first_line), "--json", check=True)
    assert p.stderr.count("\n") == 1 and f"showing #{caps[0].id}" in p.stderr and "--variant" in p.stderr
    json.loads(p.stdout)
    d = irscope_cli("diff", f"{bundle}:matmul_kernel", "--passes", "--json", check=True)
    assert f"showing #{caps[0].id}" in d.stderr
    one = irscope_cli("show", bundle, "matmul_kernel", "--variant", "1", "--line", str(caps[1].source.first_line),
                  check=True)
    assert one.stderr == ""
    alone = [c for c in irscope.open(str(bundle)).captures() if len(irscope.open(str(bundle)).captures(c.kernel)) == 1]
    if alone:
        q = irscope_cli("passes", bundle, alone[0].kernel, check=True)
        assert "showing" not in q.stderr


def test_the_views_read_no_store_row():
    """The views take the core's typed objects only: no ``.row`` of a capture (the
    store's record) is read in cli, tui, export or diff."""
    pkg = ROOT / "irscope"
    hits = []
    for layer in ("cli", "tui", "export", "diff"):
        for path in (pkg / layer).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"\b(cap|capture|c|self\.capture)\.row\b", line):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert hits == []
