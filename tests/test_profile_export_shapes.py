"""What a held-out Nsight Compute export may look like, read from the real H200 exports of
tests/data/profiles/ reshaped the way ncu or a shell prints them: CRLF line ends, a byte
order mark, UTF-16 from a PowerShell redirect, ``==PROF==`` banners, columns added or in
another order, no stall columns, metric names for column labels, a CUDA-source view
before or after the SASS view (``--print-source cuda,sass``), source-line rows without an
address inside a block, a kernel name other than the Triton function's. Each must read
to the same records as the export itself, or fail with one line that says what to do.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from irscope.cli.main import main
from irscope.errors import IrscopeError
from irscope.profiles.model import UNLISTED
from irscope.profiles.ncu_source import decode_export, parse_ncu_source

PROFILES = Path(__file__).resolve().parent / "data" / "profiles"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_kernels"
HINT = "--page source --csv --print-source sass"


def _csv(name: str) -> str:
    return (PROFILES / name / "sass.csv").read_text()


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _write(rows: list[list[str]], end: str = "\n") -> str:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator=end)
    for row in rows:
        w.writerow(row)
    return out.getvalue()


def _per_block(text: str, columns: Callable[[list[str]], list[int]], rename: dict[str, str] | None = None) -> str:
    """Each block's header and rows with their columns picked (and reordered) by
    ``columns(header)``; -1 adds a column of ncu's that irscope does not read."""
    out, header = [], None
    for row in _rows(text):
        if row and row[0] == "Kernel Name":
            out.append(row)
            header = None
            continue
        if header is None:
            header = row
            out.append([(rename or {}).get(header[i], header[i]) if i >= 0 else "Extra Metric" for i in columns(row)])
            continue
        out.append([row[i] if i >= 0 else "1" for i in columns(header)])
    return _write(out)


def _cuda_view(script: Path) -> str:
    """A CUDA-source view of ``script`` as ncu prints it (``--print-source cuda``: the
    file's name, then each line with its number; no addresses, no samples)."""
    rows = [["File Name", f"/work/main/sample_kernels/{script.name}"], ["Line No", "Source"]]
    rows += [[str(i), line] for i, line in enumerate(script.read_text().splitlines(), 1)]
    return _write(rows)


def _source_rows_inside(text: str) -> str:
    """A source line's row (no address, the line's text) before every fourth instruction,
    as a ``cuda,sass`` view interleaves them."""
    out = []
    for row in _rows(text):
        if row and row[0].startswith("0x") and int(row[0], 16) % 0x40 == 0:
            out.append(["", "    output = x + y", *["0"] * (len(row) - 2)])
        out.append(row)
    return _write(out)


def _blocks(text: str) -> list[list[list[str]]]:
    """The export's blocks: each its kernel line, its header, its rows."""
    blocks: list[list[list[str]]] = []
    for row in _rows(text):
        if row and row[0] == "Kernel Name":
            blocks.append([])
        blocks[-1].append(row)
    return blocks


def _file_by_file(text: str) -> str:
    """Each launch's instructions split into two files' sections, each under a "File Name"
    line and the block's header, as a ``cuda,sass`` view may print a kernel whose code
    comes from the user's file and from Triton's library (a source line's row, without an
    address, before each part)."""
    out: list[list[str]] = []
    for kernel_line, header, *body in _blocks(text):
        out.append(kernel_line)
        for part, file in ((0, "/work/main/sample_kernels/flash_attention.py"),
                           (1, "/opt/torch/.venv/lib/python3.12/site-packages/triton/language/standard.py")):
            out += [["File Name", file], header, ["", "  42  source line", *["0"] * (len(header) - 2)]]
            out += [r for r in body if (int(r[0], 16) // 0x40) % 2 == part]
    return _write(out)


def _cuda_sass(text: str) -> str:
    """The ``--print-source cuda,sass`` layout: per launch and source file, a "File Path"
    and a "Function Name" line, the header "Line No","Source","Address","Source",...,
    each source line's row (its number and text, no address: "-") followed by its SASS
    rows (no line number, the address and the instruction). Two files per launch here,
    their instructions interleaved (the user's file and Triton's library)."""
    out: list[list[str]] = []
    for kernel_line, header, *body in _blocks(text):
        kernel, metrics = kernel_line[1], header[2:]
        for part, file in ((0, "/work/main/sample_kernels/k.py"),
                           (1, "/opt/torch/.venv/lib/python3.12/site-packages/triton/language/standard.py")):
            out += [["File Path", file], ["Function Name", kernel], ["Line No", "Source", "Address", "Source", *metrics]]
            out.append(["42", "    x = tl.load(x_ptr + offs)", "-", "-", *["0"] * len(metrics)])
            out += [["", "", r[0], r[1], *r[2:]] for r in body if (int(r[0], 16) // 0x40) % 2 == part]
    return _write(out)


RESHAPED: dict[str, Callable[[str], str]] = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
    "banners": lambda t: "==PROF== Connected to process 4242 (/usr/bin/python3.12)\n==WARNING== Unable to access "
                         "the following 6 metrics\n" + t + "==PROF== Disconnected from process 4242\n",
    "a line before the csv": lambda t: "[4242] python3.12@127.0.0.1\n" + t,
    "extra columns": lambda t: _per_block(t, lambda h: [-1, *range(len(h)), -1]),
    "columns reversed": lambda t: _per_block(t, lambda h: list(range(len(h)))[::-1]),
    "cuda view first": lambda t: _cuda_view(SAMPLES / "flash_attention.py") + t,
    "cuda view last": lambda t: t + _cuda_view(SAMPLES / "flash_attention.py"),
    "source rows inside": _source_rows_inside,
    "file by file": _file_by_file,
    "cuda,sass": _cuda_sass,
}


def _records(text: str) -> list[tuple]:
    """What a parse gives, but for the flag that the export held a CUDA view too."""
    return [(b.index, b.kernel, b.base_address, b.instructions) for b in parse_ncu_source(text, "x.csv")]


@pytest.mark.parametrize("shape", list(RESHAPED))
@pytest.mark.parametrize("name", ["flash_attention", "matmul_autotune"])
def test_reshaped_exports_read_the_same(shape: str, name: str) -> None:
    """flash_attention's export (two launches, two variants) and matmul's (two launches of
    one variant, at the same addresses) in each shape: the same blocks."""
    text = _csv(name)
    assert _records(RESHAPED[shape](text)) == _records(text)


def test_utf16_from_powershell_reads_the_same() -> None:
    text = _csv("vector_add")
    data = codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le")
    decoded = decode_export(data)
    assert decoded is not None and parse_ncu_source(decoded) == parse_ncu_source(text)
    assert decode_export(b"\xff\xfe\x00\xd8") is None and decode_export(b"\xc3\x28") is None


def test_without_stall_columns_every_sample_is_unlisted() -> None:
    """An export without the per-reason columns keeps every sample, under ``unlisted``."""
    text = _csv("flash_attention")
    bare = _per_block(text, lambda h: [i for i, c in enumerate(h) if not c.startswith("stall_")])
    for got, want in zip(parse_ncu_source(bare), parse_ncu_source(text)):
        assert [(i.offset, i.samples, i.executed) for i in got.instructions] == [
            (i.offset, i.samples, i.executed) for i in want.instructions]
        assert all(i.stalls == ({UNLISTED: i.samples} if i.samples else {}) for i in got.instructions)


def test_metric_names_for_column_labels_read_the_same() -> None:
    """Columns labelled by metric name (the raw page's names for the same counters) read
    to the same samples, executions and stall reasons."""
    names = {"# Samples": "smsp__pcsamp_sample_count", "Instructions Executed": "inst_executed",
             "stall_dispatch": "smsp__pcsamp_warps_issue_stalled_dispatch_stall",
             "stall_no_inst": "smsp__pcsamp_warps_issue_stalled_no_instructions",
             "stall_long_sb": "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
             "stall_wait": "smsp__pcsamp_warps_issue_stalled_wait",
             "stall_long_sb (Not Issued)": "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued"}
    text = _csv("flash_attention")
    keep = {"Address", "Source", *names}
    relabelled = _per_block(text, lambda h: [i for i, c in enumerate(h) if c in keep], names)
    plain = _per_block(text, lambda h: [i for i, c in enumerate(h) if c in keep])
    assert "smsp__pcsamp_sample_count" in relabelled and "# Samples" not in relabelled
    assert parse_ncu_source(relabelled) == parse_ncu_source(plain)


@pytest.mark.parametrize("text, says", [
    (_cuda_view(SAMPLES / "vector_add.py"), "a CUDA-source view only"),
    # ncu's details page (--page details --csv), its header as ncu 2025.3 prints it
    ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
     '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
     '"2","630","python3.12","127.0.0.1","add_kernel","1","7","(128, 1, 1)","(97, 1, 1)","0","9.0",'
     '"GPU Speed Of Light Throughput","Duration","us","2.46"\n', "details or raw page"),
    # a source view whose rows are source lines only (no instruction address)
    ('"#","Address","Source","Warp Stall Sampling (All Samples)"\n"1","","  float v = x[i];","70"\n',
     "no instruction rows"),
    # a report collected without PC sampling (no SourceCounters section)
    ('"Kernel Name","add_kernel",\n"Address","Source","Instructions Executed"\n"0x7f00","      EXIT","4"\n',
     "--set full"),
])
def test_exports_without_samples_say_what_to_do(text: str, says: str) -> None:
    with pytest.raises(IrscopeError) as exc:
        parse_ncu_source(text, "x.csv")
    message = str(exc.value)
    assert says in message and "\n" not in message and message.startswith("x.csv")


# -- through the command: what `profile import` makes of the shapes -------------------

def _import(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kernel: str, export: str | bytes,
            ) -> tuple[int, list[dict], str]:
    bundle = tmp_path / f"{name}.irscope"
    shutil.copy(PROFILES / name / "gpu.irscope", bundle)
    path = tmp_path / "sass.csv"
    if isinstance(export, bytes):
        path.write_bytes(export)
    else:
        path.write_text(export, newline="")
    rc = main(["profile", "import", str(bundle), kernel, str(path), "--date", "2026-12-03", "--json"])
    out = capsys.readouterr()
    return rc, json.loads(out.out) if rc == 0 else [], out.err


@pytest.mark.parametrize("ncu_name", ["_Z10add_kernelPfS_S_i", "add_kernel_0d1d2d3de",
                                      "void add_kernel(float *, float *, float *, int)"])
def test_a_kernel_named_otherwise_is_found_by_its_sass(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       ncu_name: str) -> None:
    """ncu printing the kernel mangled, suffixed or with its signature: the launch whose
    name holds the Triton function's is taken when its SASS is the capture's, with a note."""
    text = _csv("vector_add").replace('"Kernel Name","add_kernel",', f'"Kernel Name","{ncu_name}",')
    rc, attached, err = _import(tmp_path, capsys, "vector_add", "add_kernel", text)
    assert rc == 0, err
    (one,) = attached
    assert one["total_samples"] == 79 and any(ncu_name[:40] in n for n in one["notes"])


def test_a_whole_export_in_windows_shape_gives_each_variant_its_launch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """UTF-16, CRLF, a banner and a CUDA view around flash_attention's export: by kernel
    name, STAGE=1 and STAGE=3 each get their own launch, as from the plain export."""
    text = "==PROF== Connected to process 4242\n" + _cuda_view(SAMPLES / "flash_attention.py") + _csv("flash_attention")
    data = codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le")
    rc, attached, err = _import(tmp_path, capsys, "flash_attention", "_attn_fwd", data)
    assert rc == 0, err
    assert [(a["capture_id"], a["total_samples"]) for a in attached] == [(1, 922), (2, 634)]


def test_a_launch_without_samples_is_attached_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A launch too short to be sampled (every count 0) is attached, and the note says why
    it may have none."""
    rows = _rows(_csv("vector_add"))
    at = rows[1].index("# Samples")
    stalls = [i for i, c in enumerate(rows[1]) if c.startswith(("stall_", "Warp Stall"))]
    zeroed = rows[:2] + [[("0" if i in stalls or i == at else v) for i, v in enumerate(r)] for r in rows[2:]]
    rc, attached, err = _import(tmp_path, capsys, "vector_add", "add_kernel", _write(zeroed))
    assert rc == 0, err
    assert attached[0]["total_samples"] == 0 and any("--set full" in n for n in attached[0]["notes"])


@pytest.mark.parametrize("content, says", [
    (b"", "an empty file"),
    (b"\xff\xfe\x00\xd8", "not a profile"),
    (_cuda_view(SAMPLES / "vector_add.py").encode(), "a CUDA-source view only"),
])
def test_unreadable_exports_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes,
                                         says: str) -> None:
    rc, _, err = _import(tmp_path, capsys, "vector_add", "add_kernel", content)
    assert rc != 0 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_mixed_view_that_does_not_match_says_to_export_sass_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``cuda,sass`` view that leaves out an instruction (one with no source line, here
    the entry) cannot be placed: the one line says to export the SASS view alone."""
    lines = _csv("vector_add").splitlines(keepends=True)
    assert lines[2].startswith('"0x7f63a37e8300"')  # the entry
    text = _cuda_view(SAMPLES / "vector_add.py") + "".join(lines[:2] + lines[3:])
    rc, _, err = _import(tmp_path, capsys, "vector_add", "add_kernel", text)
    assert rc != 0 and "SASS differs" in err and "--print-source sass) and import that" in err
    assert len(err.strip().splitlines()) == 1


def test_quotes_and_commas_in_the_sass_text_are_read_as_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ncu quotes every field and doubles a quote inside one: an instruction text holding
    commas and a quote reads back as written; the import refuses it (not the capture's
    text) in one line that quotes it."""
    text = _csv("vector_add")
    entry = '"0x7f63a37e8300","      LDC R1, c[0x0][0x28]",'
    assert entry in text
    odd = text.replace(entry, '"0x7f63a37e8300","      LDC R1, c[0x0][0x28], ""odd"", x",', 1)
    (block,) = parse_ncu_source(odd)
    assert block.instructions[0].text == '      LDC R1, c[0x0][0x28], "odd", x'
    assert block.instructions[1:] == parse_ncu_source(text)[0].instructions[1:]
    rc, _, err = _import(tmp_path, capsys, "vector_add", "add_kernel", odd)
    assert rc != 0 and 'profile `LDC R1, c[0x0][0x28], "odd", x`' in err and len(err.strip().splitlines()) == 1


def test_a_cuda_sass_export_imports_as_the_sass_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--print-source cuda,sass``: each variant gets its own launch, the same samples."""
    rc, attached, err = _import(tmp_path, capsys, "flash_attention", "_attn_fwd", _cuda_sass(_csv("flash_attention")))
    assert rc == 0, err
    assert [(a["capture_id"], a["total_samples"]) for a in attached] == [(1, 922), (2, 634)]
