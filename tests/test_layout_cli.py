"""``irscope layout``: the JSON it prints is checked against Triton's own layouts, for every kind.

Truth: Triton parses the encoding text itself (a one-op TTGIR module through
``ir.parse_mlir_module``), Gluon's builder reads the layout back off the tensor
(``get_gluon_layout_from_tensor``) and converts it (``to_linear_layout``); the
element -> owners map is then enumerated here from Triton's bases, with no
irscope code in the loop.  Shared layouts come from Triton 3.9's conversion
(3.6 aborts on shared layouts), run in its own venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from irscope.cli.main import main as cli_main

DATA = Path(__file__).parent / "data"
BUNDLE = DATA / "samples_sm90.irscope"
SAMPLES = json.loads((DATA / "layouts" / "sample_encodings.json").read_text())["entries"]
VENV_39 = Path(__file__).resolve().parent.parent / ".venvs" / "triton-3.9" / "bin" / "python"

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
MMA2 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
MMA3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
MFMA32 = "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>"
WMMA = {1: "#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [2, 2]}>",
        2: "#ttg.amd_wmma<{version = 2, isTranspose = true, warpsPerCTA = [1, 4], tilesPerWarp = [2, 2]}>",
        3: "#ttg.amd_wmma<{version = 3, isTranspose = false, warpsPerCTA = [2, 2], instrShape = [16, 16, 32]}>"}
B3 = "#ttg.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [2, 4, 4], warpsPerCTA = [2, 1, 2], order = [2, 1, 0]}>"


def _kind(text: str) -> str:
    name = text.split("<")[0].split(".")[-1]
    if name == "nvidia_mma":
        return "nvidia_mma_v" + text.split("versionMajor = ")[1][0]
    return name


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _from_samples(per_kind: int = 2) -> list[tuple[str, list[int], int]]:
    """The first small real encodings of each kind the sample kernels produced (4 targets)."""
    out, taken = [], {}
    for e in SAMPLES:
        if e["kind"] != "tensor" or _numel(e["shape"]) > 8192:
            continue
        k = _kind(e["encoding"])
        if taken.get(k, 0) < per_kind:
            taken[k] = taken.get(k, 0) + 1
            out.append((e["encoding"], e["shape"], 64 if any(t.startswith("gfx") for t in e["targets"]) else 32))
    return out


CASES = _from_samples() + [
    (BLOCKED, [16, 16], 32),  # smaller than the tile: replicated 4x across lanes
    (B3, [4, 8, 16], 32),  # 3-D: drawn per leading index
    (f"#ttg.slice<{{dim = 1, parent = {BLOCKED}}}>", [16], 32),
    (MMA2, [64, 64], 32),
    (f"#ttg.dot_op<{{opIdx = 1, parent = {MMA2}, kWidth = 2}}>", [16, 16], 32),
    (f"#ttg.dot_op<{{opIdx = 0, parent = {MFMA32}, kWidth = 4}}>", [64, 64], 64),
    (WMMA[1], [64, 64], 32), (WMMA[2], [64, 128], 32), (WMMA[3], [32, 32], 32),
    (f"#ttg.dot_op<{{opIdx = 0, parent = {WMMA[1]}, kWidth = 16}}>", [32, 32], 32),
    (f"#ttg.dot_op<{{opIdx = 0, parent = {MMA3}, kWidth = 2}}>", [64, 32], 32),
    (f"#ttg.dot_op<{{opIdx = 1, parent = {BLOCKED}}}>", [16, 64], 32),  # FMA operand: no kWidth
]
KINDS = {"blocked", "slice", "dot_op", "nvidia_mma_v2", "nvidia_mma_v3", "amd_mfma", "amd_wmma", "linear"}


def run(*args: str) -> tuple[int, str, str]:
    """``irscope layout ARGS`` in this process: (exit status, stdout, stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli_main(["layout", *args])
        except SystemExit as exc:  # argparse usage errors
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def layout_json(*args: str) -> dict:
    rc, out, err = run(*args, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


class TritonTruth:
    """Triton 3.6 parses TTGIR text and converts its layouts: owners enumerated from its bases."""

    def __init__(self, tmp: Path):
        pytest.importorskip("triton")
        try:
            from triton._C.libtriton import gluon_ir, ir
        except ImportError:  # pragma: no cover - Triton without Gluon (< 3.4)
            pytest.skip("this Triton has no Gluon builder")
        self.ir, self.tmp = ir, tmp
        self.ctx = ir.context()
        ir.load_dialects(self.ctx)
        self.b = gluon_ir.GluonOpBuilder(self.ctx)

    def _values(self, path: Path, name: str) -> list:
        mod = self.ir.parse_mlir_module(str(path), self.ctx)
        ops = []
        mod.walk(lambda op: ops.append(op) if op.get_name() == name else None)
        return ops

    def owners_many(self, cases: list[tuple[str, list[int], int]]) -> list[dict]:
        """One parse per threads-per-warp: every case is one constant of a probe function."""
        out: list = [None] * len(cases)
        for tpw in sorted({c[2] for c in cases}):
            picked = [i for i, c in enumerate(cases) if c[2] == tpw]
            body = "\n".join(f"    %c{i} = arith.constant dense<0.000000e+00> : "
                             f"tensor<{'x'.join(map(str, cases[i][1]))}xf32, {cases[i][0]}>" for i in picked)
            target = "hip:gfx942" if tpw == 64 else "cuda:90"
            path = self.tmp / f"probe{tpw}.ttgir"
            path.write_text(f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
                            f'ttg.target = "{target}", "ttg.threads-per-warp" = {tpw} : i32}} {{\n'
                            f"  tt.func public @probe() {{\n{body}\n    tt.return\n  }}\n}}\n")
            for i, op in zip(picked, self._values(path, "arith.constant")):
                out[i] = self.owners_of_value(op.get_result(0), cases[i][1])
        return out

    def owners_of_value(self, value, shape) -> dict:
        layout = self.b.get_gluon_layout_from_tensor(value)
        ll = self.b.to_linear_layout(layout._to_ir(self.b), list(shape))
        return enumerate_owners(ll.reg_bases, ll.lane_bases, ll.warp_bases, shape)


def _span(bases, rank):
    vals = [tuple([0] * rank)]
    for b in bases:
        vals += [tuple(x ^ y for x, y in zip(v, b)) for v in vals]
    return vals


def enumerate_owners(reg, lane, warp, shape) -> dict:
    """index -> sorted [(warp, lane, register)] from Triton's bases (bit i of an input XORs basis i)."""
    rank = len(shape)
    regs, lanes, warps = _span(reg, rank), _span(lane, rank), _span(warp, rank)
    owners: dict = {}
    for w, wv in enumerate(warps):
        for ln, lv in enumerate(lanes):
            for r, rv in enumerate(regs):
                idx = tuple(a ^ b ^ c for a, b, c in zip(wv, lv, rv))
                if all(i < n for i, n in zip(idx, shape)):
                    owners.setdefault(idx, []).append((w, ln, r))
    return {k: sorted(v) for k, v in owners.items()}


def json_owners(data: dict) -> dict:
    return {tuple(e["index"]): sorted((o["warp"], o["lane"], o["register"]) for o in e["owners"])
            for e in data["elements"]}


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
    return TritonTruth(tmp_path_factory.mktemp("truth"))


@pytest.fixture(scope="module")
def case_truth(truth):
    return truth.owners_many(CASES)


def test_cases_cover_every_distributed_kind():
    assert {_kind(t) for t, _, _ in CASES} >= KINDS
    parents = {_kind(t.split("parent = ")[1]) for t, _, _ in CASES if t.startswith("#ttg.dot_op")}
    assert {"nvidia_mma_v2", "nvidia_mma_v3", "amd_mfma", "amd_wmma", "blocked"} <= parents  # every parent family


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{_kind(t)}-{'x'.join(map(str, s))}" for t, s, _ in CASES])
def test_json_matches_triton(case_truth, i):
    text, shape, _ = CASES[i]
    data = layout_json(text, "--shape", "x".join(map(str, shape)))
    assert set(data) == {"shape", "elements"} and data["shape"] == shape
    assert len(data["elements"]) == _numel(shape)
    assert all(set(o) == {"warp", "lane", "register"} for e in data["elements"] for o in e["owners"])
    indices = [tuple(e["index"]) for e in data["elements"]]
    assert indices == sorted(indices)  # row-major
    assert json_owners(data) == case_truth[i]


def test_replication_lists_every_owner(case_truth):
    i = CASES.index((BLOCKED, [16, 16], 32))
    data = layout_json(BLOCKED, "--shape", "16x16")
    assert all(len(e["owners"]) == 4 for e in data["elements"])
    assert data["elements"][1]["owners"] == [{"warp": 0, "lane": lane, "register": 1} for lane in (0, 2, 4, 6)]
    assert json_owners(data) == case_truth[i]


# ------------------------------------------------------------------ a bundle's op
def _stage_text(tmp_path, kernel, variant=None) -> Path:
    path = tmp_path / f"{kernel}.ttgir"
    args = ["cat", str(BUNDLE), kernel, "--stage", "ttgir", "-o", str(path)] + (["--variant", variant] if variant else [])
    assert cli_main(args) == 0
    return path


def test_convert_layout_draws_both_sides_checked_by_triton(truth, tmp_path):
    data = layout_json(str(BUNDLE), "bias_gelu_rowsum_kernel", "--stage", "ttgir", "--op-line", "77")
    assert data["op"] == "ttg.convert_layout" and data["line"] == 77 and data["stage"] == "ttgir"
    src, dst = data["layouts"]
    assert (src["role"], src["value"], dst["role"], dst["value"]) == ("operand 0", "%b_43", "result 0", "%y")
    assert src["type"] == "tensor<128xf16, #blocked1>" and src["encoding"].startswith("#ttg.blocked<")
    assert set(src["layout"]) == {"shape", "elements"}
    # Triton parses the captured stage itself: the k-th convert_layout of the text is line 77.
    path = _stage_text(tmp_path, "bias_gelu_rowsum_kernel")
    lines = [n for n, t in enumerate(path.read_text().splitlines(), 1) if "ttg.convert_layout" in t]
    op = truth._values(path, "ttg.convert_layout")[lines.index(77)]
    assert json_owners(src["layout"]) == truth.owners_of_value(op.get_operand(0), src["layout"]["shape"])
    assert json_owners(dst["layout"]) == truth.owners_of_value(op.get_result(0), dst["layout"]["shape"])
    assert json_owners(src["layout"]) != json_owners(dst["layout"])


def test_dot_draws_operands_and_accumulator():
    rc, out, err = run(str(BUNDLE), "matmul_kernel", "--variant", "1", "--op-line", "156", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["op"] == "ttng.warp_group_dot"
    assert [s["role"] for s in data["layouts"]] == ["operand 0", "operand 1", "result 0"]
    assert [s["layout"]["shape"] for s in data["layouts"]] == [[128, 32], [32, 128], [128, 128]]
    assert "bank" in data["layouts"][0]["layout"]["elements"][0]  # shared operands: banks
    assert "owners" in data["layouts"][2]["layout"]["elements"][0]


def test_bundle_form_svg_and_png(tmp_path):
    svg, png = tmp_path / "conv.svg", tmp_path / "conv.png"
    assert run(str(BUNDLE), "bias_gelu_rowsum_kernel", "--op-line", "77", "-o", str(svg))[0] == 0
    root = ET.fromstring(svg.read_bytes())
    texts = "".join(root.itertext())
    assert "ttg.convert_layout" in texts and "%b_43" in texts and "%y" in texts
    assert run(str(BUNDLE), "bias_gelu_rowsum_kernel", "--op-line", "109", "-o", str(png))[0] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ shared layouts
SHARED = [
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>", [64, 64], "f16"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>", [128, 32], "f16"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 8}>", [32, 64], "i8"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 16}>", [64, 32], "f16"),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>", [64, 64], "f16"),
    ("#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [0, 1]}>", [32, 16], "f32"),
]

_PROBE_39 = r"""
import json, sys
from triton._C.libtriton import gluon_ir, ir
ctx = ir.context(); ir.load_dialects(ctx); b = gluon_ir.GluonOpBuilder(ctx)
cases = json.loads(sys.argv[2])
mod = ir.parse_mlir_module(sys.argv[1], ctx)
ops = []
mod.walk(lambda op: ops.append(op) if op.get_name() == "ttg.local_alloc" else None)
out = []
for op, (enc, shape, el) in zip(ops, cases):
    ll = b.to_linear_layout(b.get_gluon_layout_from_memdesc(op.get_result(0))._to_ir(b), shape)
    out.append(ll.offset_bases)
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def shared_truth(tmp_path_factory):
    """Triton 3.9's offset bases of each SHARED case (offset bit i -> index)."""
    if not VENV_39.exists():
        pytest.skip("no Triton 3.9 venv (.venvs/triton-3.9): shared layouts are only converted by Triton >= 3.9")
    tmp = tmp_path_factory.mktemp("shared")
    body = "\n".join(f"    %a{i} = ttg.local_alloc : () -> !ttg.memdesc<{'x'.join(map(str, s))}x{el}, {e}, "
                     f"#ttg.shared_memory, mutable>" for i, (e, s, el) in enumerate(SHARED))
    path = tmp / "probe.ttgir"
    path.write_text('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
                    f'"ttg.threads-per-warp" = 32 : i32}} {{\n  tt.func public @probe() {{\n{body}\n'
                    "    tt.return\n  }\n}\n")
    p = subprocess.run([str(VENV_39), "-c", _PROBE_39, str(path), json.dumps(SHARED)], capture_output=True, text=True,
                       timeout=120, check=False)
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT")), None)
    assert line, p.stderr[-2000:]
    return json.loads(line[len("RESULT"):])


@pytest.mark.parametrize("i", range(len(SHARED)), ids=[f"{e.split('<')[0][5:]}-{'x'.join(map(str, s))}{el}"
                                                         for e, s, el in SHARED])
def test_shared_json_matches_triton(shared_truth, i):
    text, shape, el = SHARED[i]
    data = layout_json(text, "--shape", "x".join(map(str, shape)) + "x" + el)
    bits = {"f16": 16, "i8": 8, "f32": 32}[el]
    assert set(data) == {"shape", "element_bits", "elements"} and data["element_bits"] == bits
    offset_of = {}
    for off, idx in enumerate(_span(shared_truth[i], len(shape))):
        offset_of.setdefault(idx, off)
    assert len(offset_of) == _numel(shape)
    got = {tuple(e["index"]): (e["offset"], e["bank"]) for e in data["elements"]}
    assert got == {idx: (off, off * bits // 8 // 4 % 32) for idx, off in offset_of.items()}


# ------------------------------------------------------------------ formats and files
def test_format_from_extension_and_defaults(tmp_path):
    rc, out, _ = run(BLOCKED, "--shape", "4x16")
    assert rc == 0 and json.loads(out)["shape"] == [4, 16]  # no -o: JSON on stdout
    for ext in ("svg", "png", "json", "dot"):
        path = tmp_path / f"x.{ext}"
        assert run(BLOCKED, "--shape", "16x16", "-o", str(path))[0] == 0
        data = path.read_bytes()
        if ext == "json":
            assert "elements" in json.loads(data)
        else:
            assert data.startswith({"svg": b"<?xml", "png": b"\x89PNG", "dot": b"digraph"}[ext])
    # --format wins over the extension; the folder holds no temporary files afterwards.
    assert run(BLOCKED, "--shape", "16x16", "--format", "json", "-o", str(tmp_path / "x.svg"))[0] == 0
    assert "elements" in json.loads((tmp_path / "x.svg").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.dot", "x.json", "x.png", "x.svg"]


def test_compact_is_automatic_for_big_shapes(tmp_path):
    mma3 = next(t for t, _, _ in CASES if _kind(t) == "nvidia_mma_v3")
    out = tmp_path / "big.svg"
    rc, _, err = run(mma3, "--shape", "64x128", "-o", str(out))
    assert rc == 0 and "compact" in err
    root = ET.fromstring(out.read_bytes())
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert not any(" l" in t and t.startswith("w") for t in texts)  # no owner text in cells
    rc, _, err = run(mma3, "--shape", "64x128", "--full", "-o", str(out))
    assert rc == 0 and "compact" not in err
    assert "w0 l0 r0" in "".join(ET.fromstring(out.read_bytes()).itertext())
    rc, _, err = run(mma3, "--shape", "256x128", "--full", "-o", str(out))
    assert rc == 1 and "--full" in err


BAD = [
    ([BLOCKED, "--shape", "64"], "rank"),
    ([BLOCKED, "--shape", "6x6"], "power-of-two"),
    ([BLOCKED, "--shape", "axb"], "not a shape"),
    ([BLOCKED, "--shape", "0x4"], "not a shape"),
    ([BLOCKED, "--shape", "64x64xfoo"], "element type"),
    ([BLOCKED], "--shape"),
    (["#ttg.blocked<{sizePerThread = [1, 8]", "--shape", "4x4"], "not a layout encoding"),
    (["#blocked", "--shape", "4x4"], "not a layout encoding"),
    (["#ttg.shared_memory", "--shape", "16x16"], "not drawn"),
    (["#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, unpacked = true>", "--shape", "128x64"], "not drawn"),
    (["#ttg.nvidia_mma<{versionMajor = 5, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [128, 256, 16]}>",
      "--shape", "128x256"], "v5"),
    (["blocked", "--shape", "4x4"], "starting with '#'"),
    ([BLOCKED, "--shape", "16x16", "--format", "png"], "-o FILE"),
    ([BLOCKED, "--shape", "16x16", "-o", "out.gif"], "cannot tell the format"),
    ([BLOCKED, "--shape", "16x16", "-o", "/nonexistent/dir/x.svg"], "cannot write"),
    ([BLOCKED, "--shape", "1024x1024", "-o", "big.svg"], "too many to draw"),
    ([BLOCKED, "--shape", "2048x2048"], "at most"),
    ([str(BUNDLE)], "--op-line"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--op-line", "3"], "no op starts at line 3"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--op-line", "99999"], "no op starts"),
    ([str(BUNDLE), "nope_kernel", "--op-line", "77"], "nope_kernel"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--stage", "ptx", "--op-line", "20"], "no op starts at line 20"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--stage", "sass", "--op-line", "20"], "no tensor result"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--stage", "cubin", "--op-line", "20"], "not an IR"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--stage", "ttir", "--op-line", "16"], "layouts appear in ttgir"),
    ([str(BUNDLE), "bias_gelu_rowsum_kernel", "--stage", "nope", "--op-line", "20"], "no nope stage"),
    ([str(DATA / "missing.irscope"), "k", "--op-line", "1"], "missing.irscope"),
]


@pytest.mark.parametrize("argv,needle", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_is_one_line(argv, needle):
    rc, out, err = run(*argv)
    assert rc == 1 and out == ""
    assert err.startswith("irscope: error: ") and err.count("\n") == 1, err
    assert needle in err
    assert "Traceback" not in err


def test_op_without_tensor_result(tmp_path):
    path = _stage_text(tmp_path, "add_kernel")
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "tt.store" in t)
    rc, _, err = run(str(BUNDLE), "add_kernel", "--op-line", str(line))
    assert rc == 1 and "has no tensor result" in err and err.count("\n") == 1


def _subprocess(args, env=None):
    return subprocess.run([sys.executable, "-m", "irscope", "layout", *args], capture_output=True, timeout=120,
                          env=env if env is not None else dict(os.environ), check=False)


def test_missing_dot_names_the_fix(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no dot on this PATH (python is run by absolute path)
    p = _subprocess([BLOCKED, "--shape", "16x16", "-o", str(tmp_path / "x.svg")], env)
    err = p.stderr.decode()
    assert p.returncode == 1 and err.count("\n") == 1 and "apt-get install graphviz" in err
    assert not (tmp_path / "x.svg").exists()
    p = _subprocess([BLOCKED, "--shape", "16x16"], env)  # JSON needs no dot
    assert p.returncode == 0 and json.loads(p.stdout)["shape"] == [16, 16]


# ------------------------------------------------------------------ hostile input
HOSTILE = [
    BLOCKED[:-2] + ', note = "<script>alert(1)</script>"}>',
    BLOCKED[:-2] + ', note = "[bold]red[/bold] {braces} \\N \\\\ \'q\'"}>',
    BLOCKED[:-2] + ", note = \"&amp; ]]> <!-- \"}>",
    "#ttg.blocked<{<script>}>",
    "#ttg.blocked<{sizePerThread = [1, 8] \"quoted\\\"}>",
    "#[bold]x[/bold]",
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_encodings_error_cleanly_or_draw_escaped(tmp_path, text):
    out = tmp_path / "h.svg"
    rc, _, err = run(text, "--shape", "16x16", "-o", str(out))
    if rc != 0:
        assert rc == 1 and err.startswith("irscope: error: ") and err.count("\n") == 1
        return
    root = ET.fromstring(out.read_bytes())  # well-formed XML
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "foreignObject")]
    drawn = "".join(root.itertext())
    assert "blocked" in drawn
    if "note" in text:  # the title carries the encoding as given: literally, as text (wrapped into lines)
        note = text[text.index("note"):]
        assert "".join(note.split()) in "".join(drawn.split())


def test_non_utf8_bytes_in_the_encoding(tmp_path):
    raw = BLOCKED[:-2].encode() + b', note = "\xff\xfe\x80 <b>"}>'
    out = tmp_path / "u.svg"
    p = subprocess.run([sys.executable, "-m", "irscope", "layout", raw, "--shape", "16x16", "-o", str(out)],
                       capture_output=True, timeout=120, check=False)
    if p.returncode:
        assert p.returncode == 1 and p.stderr.count(b"\n") == 1 and b"Traceback" not in p.stderr
        return
    data = out.read_bytes()
    data.decode("utf-8")  # valid UTF-8
    assert "\ufffd" in "".join(ET.fromstring(data).itertext())


def test_drawing_imports_no_triton_torch_or_capture(tmp_path):
    code = ("import sys\nfrom irscope.cli.main import main\n"
            f"assert main(['layout', {BLOCKED!r}, '--shape', '16x16', '-o', {str(tmp_path / 'x.svg')!r}]) == 0\n"
            f"assert main(['layout', {str(BUNDLE)!r}, 'bias_gelu_rowsum_kernel', '--op-line', '77', "
            f"'-o', {str(tmp_path / 'y.json')!r}]) == 0\n"
            "print([m for m in sys.modules if m.split('.')[0] in ('triton', 'torch') "
            "or m.startswith('irscope.capture')])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
