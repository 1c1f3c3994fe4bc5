"""``irscope explain`` and the core's per-line costs, on real captures of small kernels
(tests/kernels/why_*.py, compile-only for sm_90 and sm_80: tests/data/why_sm90_sm80.irscope).

The access widths and spill counts are checked against the PTX and SASS text, read
here with regular expressions of the test's own, not with irscope's parsers.
"""

import json
import os
import re
from collections import Counter

import pytest

import irscope
from irscope.core.line_costs import line_costs, max_elements, ptx_access_bits
from irscope.ir.types import parse_type
from conftest import DATA, irscope as run_irscope

WHY = DATA / "why_sm90_sm80.irscope"
SAMPLES = DATA / "samples_sm90.irscope"
TARGETS = ("sm_90", "sm_80")
GATHER_LOAD, GATHER_STORE = 16, 17  # tests/kernels/why_gather.py
COPY_LOAD, COPY_STORE = 24, 25


@pytest.fixture(scope="module")
def why():
    with irscope.open(WHY) as b:
        yield b


def _accesses(ex, line):
    got = ex.line(line)
    assert got is not None, f"no facts at line {line}"
    return got.global_accesses


@pytest.mark.parametrize("target", TARGETS)
def test_gather_loads_are_narrow_where_the_layout_allows_128_bits(why, target):
    ex = why.capture("gather_kernel", target=target).explain()
    (load,) = _accesses(ex, GATHER_LOAD)
    assert (load.kind, load.bits, load.elements, load.max_elements, load.masked) == ("load", 16, 1, 8, False)
    assert load.narrow and load.max_bits == 128 and load.element_type == "f16" and load.op == "tt.load"
    assert load.instructions == 8  # eight elements per thread, one 16-bit load each
    (store,) = _accesses(ex, GATHER_STORE)  # the store is contiguous: one 128-bit store
    assert (store.kind, store.bits, store.elements, store.max_elements) == ("store", 128, 8, 8)


@pytest.mark.parametrize("target", TARGETS)
def test_contiguous_copy_loads_128_bits(why, target):
    ex = why.capture("copy_kernel", target=target).explain()
    (load,) = _accesses(ex, COPY_LOAD)
    assert (load.kind, load.bits, load.elements, load.max_elements, load.masked) == ("load", 128, 8, 8, True)
    assert not load.narrow and load.instructions == 1
    (store,) = _accesses(ex, COPY_STORE)
    assert (store.kind, store.bits, store.elements, store.masked) == ("store", 128, 8, True)


# -- the widths against the PTX text ------------------------------------------------

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_GLOBAL = re.compile(r"\b(ld|st)\.global\.(?:[\w:]+\.)*?(?:v(\d)\.)?[bfsu](\d+)\b")
_CP_ASYNC = re.compile(r"\bcp\.async\.c[ag]\.shared(?:::\w+)?\.global(?:\.\w+)*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-f]+|\d+)")


def ptx_widths(ptx: str, kernel_file: str) -> dict[int, Counter]:
    """Python line -> Counter of (kind, bits) of its global loads/stores/async copies,
    from the PTX text alone (``.loc`` lines of the kernel's file)."""
    files = {m.group(1): m.group(2) for m in map(_FILE.match, ptx.splitlines()) if m}
    out: dict[int, Counter] = {}
    line = None
    for raw in ptx.splitlines():
        m = _LOC.match(raw)
        if m:
            path = files.get(m.group(1), "")
            line = int(m.group(2)) if path.endswith(os.path.basename(kernel_file)) else None
            continue
        if line is None or raw.lstrip().startswith("//"):
            continue
        g = _GLOBAL.search(raw)
        if g:
            bits = int(g.group(3)) * int(g.group(2) or 1)
            out.setdefault(line, Counter())[("load" if g.group(1) == "ld" else "store", bits)] += 1
        c = _CP_ASYNC.search(raw)
        if c:
            out.setdefault(line, Counter())[("load", int(c.group(1), 0) * 8)] += 1
    return {k: v for k, v in out.items() if v}


def _explained_widths(ex) -> dict[int, Counter]:
    out: dict[int, Counter] = {}
    for ln in ex.lines:
        for a in ln.global_accesses:
            out.setdefault(ln.line, Counter())[(a.kind, a.bits)] += a.instructions
    return out


@pytest.mark.parametrize("bundle, kernel, target", [
    (WHY, "gather_kernel", "sm_90"), (WHY, "gather_kernel", "sm_80"), (WHY, "copy_kernel", "sm_90"),
    (WHY, "copy_kernel", "sm_80"), (WHY, "big_tile_gemm_kernel", "sm_90"), (WHY, "big_tile_gemm_kernel", "sm_80"),
    (SAMPLES, "add_kernel", "sm_90"), (SAMPLES, "matmul_kernel", "sm_90")])
def test_access_widths_agree_with_the_ptx_text(bundle, kernel, target):
    with irscope.open(bundle) as b:
        cap = b.capture(kernel, target=target)
        want = ptx_widths(cap.stage("ptx").text, cap.file)
        # The test counts PTX lines; irscope keys a statement by its first line.
        want_heads: dict[int, Counter] = {}
        for line, counts in want.items():
            want_heads.setdefault(cap.statement(line).first, Counter()).update(counts)
        assert want_heads, "the PTX has no global access at all"
        assert _explained_widths(cap.explain()) == want_heads


def test_ptx_access_bits():
    assert ptx_access_bits("ld.global.v4.b32") == 128
    assert ptx_access_bits("ld.global.nc.L1::evict_last.v2.b32") == 64
    assert ptx_access_bits("st.global.b16") == 16
    assert ptx_access_bits("atom.global.gpu.acq_rel.add.u32") == 32
    assert ptx_access_bits("atom.global.v2.f16x2.add.noftz") == 64
    assert ptx_access_bits("ld.global") is None


def test_max_elements_caps_at_128_bits_and_the_tensor_size():
    aliases = {"#b": "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                     "order = [1, 0]}>"}
    t = parse_type("tensor<64x64x!tt.ptr<f16>, #b>")
    assert max_elements(t, 16, aliases) == 8
    assert max_elements(t, 32, aliases) == 4  # eight f32 would be 256 bits
    narrow = parse_type("tensor<64x4x!tt.ptr<f16>, #b>")
    assert max_elements(narrow, 16, aliases) == 4  # only four elements along the row


# -- spills against the SASS text ---------------------------------------------------

_SPILL = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?(LDL|STL)\b", re.M)


@pytest.mark.parametrize("target", TARGETS)
def test_spills_per_line_plus_unattributed_equal_the_sass(why, target):
    cap = why.capture("big_tile_gemm_kernel", target=target)
    sass_total = len(_SPILL.findall(cap.stage("sass").text))
    assert sass_total > 100  # the 128x256 fp32 accumulator does not fit 4 warps' registers
    ex = cap.explain()
    assert sum(ln.spills for ln in ex.lines) + ex.unattributed_spills == sass_total == ex.total_spills
    assert max(ln.spills for ln in ex.lines) > 0


_SASS_LOC = re.compile(r'^\s*//## File "([^"]+)", line (\d+)(.*)$')
_INLINED = re.compile(r'inlined at "([^"]+)", line (\d+)')


def sass_spills_by_line(sass: str, kernel_file: str) -> Counter:
    """Python line -> LDL/STL instructions after its ``//## File`` marker (the innermost
    frame outside triton/language), read from the SASS text alone."""
    out: Counter = Counter()
    line = None
    for raw in sass.splitlines():
        m = _SASS_LOC.match(raw)
        if m:
            frames = [(m.group(1), int(m.group(2))), *((f, int(n)) for f, n in _INLINED.findall(m.group(3)))]
            user = next(((f, n) for f, n in frames if "triton/language" not in f), None)
            line = user[1] if user and user[0].endswith(os.path.basename(kernel_file)) else None
            continue
        if line is not None and _SPILL.match(raw):
            out[line] += 1
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_spills_per_line_agree_with_the_sass_markers(why, target):
    cap = why.capture("big_tile_gemm_kernel", target=target)
    want: Counter = Counter()
    for line, n in sass_spills_by_line(cap.stage("sass").text, cap.file).items():
        want[cap.statement(line).first] += n
    ex = cap.explain()
    assert ex.unattributed_spills >= 0
    assert {ln.line: ln.spills for ln in ex.lines if ln.spills} == dict(want)


def test_spills_add_up_on_every_sample():
    with irscope.open(SAMPLES) as b:
        for cap in b.captures():
            table = line_costs(cap)
            total = len(_SPILL.findall(cap.stage("sass").text))
            assert sum(lc.spills for lc in table.lines) + table.unattributed_spills == total == table.total_spills


def test_a_capture_with_neither_ptx_nor_sass_says_so():
    with irscope.open(DATA / "layer_norm_gfx942.irscope") as b:
        ex = b.captures()[0].explain()
    assert not ex.has_ptx and not ex.has_sass and ex.total_spills == ex.unattributed_spills == 0
    assert ex.lines and not any(ln.global_accesses for ln in ex.lines)  # the ops per stage are still there
    assert any(ln.costs.ops.get("ttgir") for ln in ex.lines)


def test_shared_and_tensor_core_instructions_per_line(why):
    ex = why.capture("big_tile_gemm_kernel", target="sm_90").explain()
    dot = ex.line(24).costs.shared_tensor  # acc += tl.dot(a, b)
    assert dot.get("wgmma", 0) > 0 and "mma" not in dot
    ex80 = why.capture("big_tile_gemm_kernel", target="sm_80").explain()
    assert ex80.line(24).costs.shared_tensor.get("mma", 0) > 0
    assert {a.path for a in ex.line(22).global_accesses} == {"cp.async"}  # pipelined loads


# -- the command line ---------------------------------------------------------------

def _json(*args):
    p = run_irscope("explain", *args, "--json", check=True)
    return json.loads(p.stdout)


def test_json_schema():
    out = _json(WHY, "gather_kernel", "--target", "sm_90")
    for key, kind in (("lines", list), ("unattributed_spills", int), ("loops", list), ("conversions", list),
                      ("hints", list)):
        assert isinstance(out[key], kind), key
    assert "intensity" in out and "occupancy" in out
    assert out["occupancy"]["blocks_per_sm"] >= 1
    assert out["hints_computed"] is True  # the hints themselves: tests/test_hints.py
    for ln in out["lines"]:
        assert isinstance(ln["line"], int) and isinstance(ln["file"], str)
        assert isinstance(ln["remarks"], list) and all(isinstance(r, str) for r in ln["remarks"])
        assert isinstance(ln["spills"], int) and isinstance(ln["sass_by_class"], dict)
        for a in ln["global_accesses"]:
            assert a["kind"] in ("load", "store")
            assert isinstance(a["bits"], int) and isinstance(a["elements"], int)
            assert isinstance(a["max_elements"], int) and isinstance(a["masked"], bool)
    load = next(ln for ln in out["lines"] if ln["line"] == GATHER_LOAD)["global_accesses"][0]
    assert (load["bits"], load["elements"], load["max_elements"]) == (16, 1, 8)


def test_json_line_keeps_one_statement():
    out = _json(WHY, "copy_kernel", "--target", "sm_80", "--line", str(COPY_LOAD))
    assert [ln["line"] for ln in out["lines"]] == [COPY_LOAD]


def test_remarks_reach_their_line():
    out = _json(WHY, "gather_kernel", "--target", "sm_90")
    assert out["remarks_available"], out["remarks_why_not"]  # captured with Triton 3.6
    remarks = next(ln for ln in out["lines"] if ln["line"] == GATHER_LOAD)["remarks"]
    assert any("vectorization fails" in r for r in remarks)


@pytest.mark.parametrize("columns", [80, 120])
def test_table_fits_and_cuts_no_number(columns):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["COLUMNS"] = str(columns)
    p = run_irscope("explain", WHY, "big_tile_gemm_kernel", "--target", "sm_80", env=env)
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert all(len(r) <= columns for r in rows)
    assert not any(re.search(r"\d…|…\d", r) for r in rows)  # an ellipsis may cut source text, never a figure
    ex = irscope.open(WHY).capture("big_tile_gemm_kernel", target="sm_80").explain()
    table = {int(r.split()[0]): r.split() for r in rows if re.match(r"\s+\d+\s+\d+/\d+/\d+\s", r)}
    for ln in ex.lines:
        cells = table[ln.line]
        assert cells[1] == "/".join(str(ln.costs.ops.get(s, 0)) for s in ("ttgir", "ptx", "sass"))
        assert (str(ln.spills) if ln.spills else "-") in cells
    assert f"spills: {ex.total_spills} SASS LDL/STL in all; {ex.unattributed_spills} on no line" in p.stdout
    assert "hints:" in p.stdout and f"{ex.total_spills} spill instructions" in p.stdout


@pytest.mark.parametrize("args, message", [
    (["--line", "0"], "lines start at 1"),
    (["--line", "999"], "past the kernel's source"),
    (["--variant", "9"], "out of range"),
])
def test_bad_input_is_one_line(args, message):
    p = run_irscope("explain", WHY, "gather_kernel", "--target", "sm_90", *args)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and message in p.stderr


def test_unknown_kernel_and_failed_compile_are_one_line():
    p = run_irscope("explain", WHY, "no_such_kernel")
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "no kernel" in p.stderr
    with irscope.open(DATA / "learner_sm90.irscope") as b:
        failed = next(c for c in b.captures() if c.failed)
    p = run_irscope("explain", DATA / "learner_sm90.irscope", f"#{failed.id}")
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "failed to compile" in p.stderr
