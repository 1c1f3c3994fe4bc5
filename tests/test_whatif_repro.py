"""``irscope repro``: the compile spec read from a capture, the reproducer script, the
location-blind comparison of two compiles, and the round trip (repro, then ``irscope
run``) on real captures of two targets.

Bundles: tests/data/samples_sm90.irscope (vector_add, the four autotuned matmuls with
arguments Triton specialised to 1, the helper-calling kernel; sm_90) and
tests/data/why_sm90_sm80.irscope (a gather, a copy and a big-tile GEMM, each on sm_90
and sm_80). The round trip runs every reproducer in one ``irscope run`` process.
"""

import ast
import re
import shutil
import subprocess

import pytest

import irscope
from irscope.errors import IrscopeError
from irscope.store.attachments import attachments, remove_attachment
from irscope.store.bundle import GLOBALS
from irscope.store.bundle import Bundle as StoreBundle
from irscope.whatif.compile_spec import _attrs_by_name, spec_of
from irscope.whatif.equivalence import compile_differences, stage_difference, without_locations
from irscope.whatif.repro import _literal, repro_script
from irscope.whatif.repro import round_trip as run_round_trip

from conftest import DATA, SAMPLES, VENVS, irscope as run_cli

SAMPLES_SM90 = DATA / "samples_sm90.irscope"
SM90_SM80 = DATA / "why_sm90_sm80.irscope"
ROUND_TRIP_BUNDLES = (SAMPLES_SM90, SM90_SM80)


def _cap(path, kernel, **kw):
    return irscope.open(str(path)).capture(kernel, **kw)


# -- the spec ------------------------------------------------------------------------

def test_spec_of_matmul_keeps_the_specialisation():
    spec = spec_of(_cap(SAMPLES_SM90, "matmul_kernel", variant="0"))
    assert not spec.launch_known and spec.grid is None  # a bundle older than launch records
    assert spec.target == "sm_90"
    assert spec.equal_to_1 == ("stride_ak", "stride_bn", "stride_cn")
    assert {"a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am"} <= set(spec.divisible)
    assert spec.declared_constexprs == {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64,
                                        "GROUP_SIZE_M": 8}
    assert spec.constexprs["stride_ak"] == 1
    assert spec.signature["a_ptr"] == "*fp16" and spec.signature["M"] == "i32"
    assert spec.options["num_warps"] == 8 and spec.options["num_stages"] == 3
    assert "arch" not in spec.options and "extern_libs" not in spec.options  # follow from the target
    assert spec.helpers == () and spec.notes == ()


def test_spec_of_brings_the_helpers_and_a_module_that_defines_everything():
    spec = spec_of(_cap(SAMPLES_SM90, "bias_gelu_rowsum_kernel"))
    assert spec.helpers == ("_load_tile", "_gelu")
    tree = ast.parse(spec.source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert [d.name for d in defs] == ["_load_tile", "_gelu", "bias_gelu_rowsum_kernel"]
    assert all(ast.unparse(d.decorator_list[0]) == "triton.jit" for d in defs)
    assert spec.notes == ()


def test_with_changes_sets_constexprs_options_and_target():
    spec = spec_of(_cap(SAMPLES_SM90, "matmul_kernel", variant="0"))
    other = spec.with_changes(constexprs={"BLOCK_SIZE_M": 64}, options={"num_stages": 2}, target="80")
    assert other.declared_constexprs["BLOCK_SIZE_M"] == 64 and other.options["num_stages"] == 2
    assert other.target == "sm_80" and other.equal_to_1 == spec.equal_to_1
    assert spec.declared_constexprs["BLOCK_SIZE_M"] == 128  # the original is untouched


@pytest.mark.parametrize("change, message", [
    ({"constexprs": {"BLOCK": 64}}, "has no constexpr BLOCK (constexprs: BLOCK_SIZE_M, BLOCK_SIZE_N"),
    ({"constexprs": {"stride_ak": 2}}, "has no constexpr stride_ak"),  # specialised to 1, not declared
    ({"options": {"num_warpz": 4}}, "unknown compile option num_warpz (options: num_warps"),
    ({"target": "sm_1"}, "unknown target 'sm_1'"),
])
def test_with_changes_refuses_what_the_kernel_does_not_have(change, message):
    spec = spec_of(_cap(SAMPLES_SM90, "matmul_kernel", variant="0"))
    with pytest.raises(IrscopeError) as err:
        spec.with_changes(**change)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_retargeted_spec_is_the_spec_of_a_capture_for_that_target():
    both = irscope.open(str(SM90_SM80))
    for kernel in ("big_tile_gemm_kernel", "gather_kernel"):
        moved = spec_of(both.capture(kernel, target="sm_90")).with_changes(target="sm_80")
        real = spec_of(both.capture(kernel, target="sm_80"))
        assert (moved.target, moved.source, moved.args, moved.options) == \
            (real.target, real.source, real.args, real.options)


def test_attrs_of_older_tritons_are_read_by_name():
    """Triton 3.0 stores its AttrsDescriptor as a repr (indices over every parameter),
    3.2 keys properties by name; both as irscope captured them from the matmul sample."""
    params = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
              "stride_cm", "stride_cn", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M"]
    v30 = _attrs_by_name("AttrsDescriptor(divisible_by_16=(0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 13, 14), "
                         "equal_to_1=(9, 11, 7))", params)
    assert v30["stride_ak"] == [["tt.equal_to", 1]] and v30["M"] == [["tt.divisibility", 16]]
    assert "stride_am" in v30 and "GROUP_SIZE_M" not in v30
    v32 = {"M": [["tt.divisibility", 16]], "stride_ak": [["tt.equal_to", 1]]}
    assert _attrs_by_name(v32, params) is v32


# -- the script -----------------------------------------------------------------------

@pytest.mark.parametrize("bundle", ROUND_TRIP_BUNDLES, ids=lambda p: p.stem)
def test_every_capture_gives_a_script_that_parses_and_states_its_compile(bundle):
    for cap in irscope.open(str(bundle)).captures():
        spec = spec_of(cap)
        text = repro_script(spec, str(bundle))
        ast.parse(text)
        arch = int(cap.target[3:])
        assert f"TARGET = ('cuda', {arch}, 32)" in text
        assert f"KERNEL = {cap.kernel!r}" in text
        for name in spec.divisible:
            assert repr(name) in text.split("DIVISIBLE = ")[1].split("\n")[0]
        assert repro_script(spec, str(bundle)) == text  # pure


def test_non_finite_values_are_written_as_floats():
    """A constexpr of -inf (a softmax's mask value) has no literal: the script spells it."""
    assert _literal(float("-inf")) == "float('-inf')"
    assert eval(_literal([1.5, float("inf")])) == [1.5, float("inf")]


# -- comparing compiles up to locations ---------------------------------------------------

def _moved(text: str) -> str:
    """The same IR as if compiled from another file, every line 7 lower."""
    text = re.sub(r'loc\("[^"]*":(\d+)', lambda m: f'loc("elsewhere/x.py":{int(m.group(1)) + 7}', text)
    text = re.sub(r"(\.loc\s+\d+\s+)(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) + 7}", text)
    text = re.sub(r'(\.file\s+\d+\s+)"[^"]*"', r'\1"elsewhere/x.py"', text)
    return re.sub(r"line: (\d+)", lambda m: f"line: {int(m.group(1)) + 7}", text)


@pytest.mark.parametrize("stage", ["ttir", "ttgir", "llir", "ptx"])
def test_locations_and_file_names_are_not_differences(stage):
    text = _cap(SAMPLES_SM90, "bias_gelu_rowsum_kernel").stage(stage).text
    moved = _moved(text)
    assert moved != text
    assert stage_difference(stage, text, moved) is None
    assert len(without_locations(stage, text)) > 20


@pytest.mark.parametrize("stage, old, new", [
    ("ttgir", '"ttg.num-warps" = 4', '"ttg.num-warps" = 8'),
    ("ttir", "arith.addf", "arith.subf"),
    ("llir", "fadd", "fsub"),
    ("ptx", "add.s32", "sub.s32"),
])
def test_a_changed_op_is_a_difference(stage, old, new):
    text = _cap(SAMPLES_SM90, "bias_gelu_rowsum_kernel").stage(stage).text
    assert old in text
    got = stage_difference(stage, text, text.replace(old, new, 1))
    assert got is not None and got.what == stage and "line" in got.detail


@pytest.mark.parametrize("stage", ["ttir", "ttgir"])
def test_value_names_are_not_differences_but_a_moved_value_is(stage):
    """A compile from an IR file names a loop's induction variable and iteration
    arguments ``%argN`` (MLIR prints no location for them to take a name from), and a
    name may be reused in another region: neither is a difference. A value used in
    another place is."""
    text = _cap(SAMPLES_SM90, "matmul_kernel", variant="0").stage(stage).text
    iv, arg = re.search(r"scf\.for (%\w+) = .*?iter_args\((%\w+) = ", text).groups()
    renamed = re.sub(re.escape(iv) + r"\b", "%arg9", re.sub(re.escape(arg) + r"\b", "%arg10", text))
    assert renamed != text and stage_difference(stage, text, renamed) is None
    x, y = re.search(r"arith\.addi (%\w+), (%\w+)", text).groups()
    swapped = text.replace(f"arith.addi {x}, {y}", f"arith.addi {y}, {x}", 1)
    got = stage_difference(stage, text, swapped)
    assert got is not None and f"{x}, {y}" in got.detail  # shown with the real names


def test_two_different_kernels_differ_in_every_stage_and_resource():
    a, b = _cap(SAMPLES_SM90, "add_kernel"), _cap(SAMPLES_SM90, "matmul_kernel", variant="0")
    got = {d.what for d in compile_differences(a, b)}
    assert {"ttir", "ttgir", "llir", "ptx", "registers", "shared"} <= got
    assert compile_differences(a, a) == []


# -- the command ------------------------------------------------------------------------

def test_cli_writes_the_script(tmp_path):
    out = tmp_path / "repro.py"
    p = run_cli("repro", SAMPLES_SM90, "matmul_kernel", "--variant", "2", "-o", out)
    assert p.returncode == 0, p.stderr
    assert f"wrote {out}" in p.stdout
    text = out.read_text()
    assert "'num_stages': 4" in text and "'BLOCK_SIZE_M': 64" in text


def test_cli_target_without_a_capture_compiles_the_first_capture_for_it(tmp_path):
    out = tmp_path / "repro.py"
    p = run_cli("repro", SAMPLES_SM90, "add_kernel", "--target", "sm80", "-o", out)
    assert p.returncode == 0, p.stderr
    assert "add_kernel has no sm_80 capture: the script compiles capture #1 (sm_90) for sm_80" in p.stderr
    assert "TARGET = ('cuda', 80, 32)" in out.read_text()


@pytest.mark.parametrize("args, message", [
    (["nokernel"], "no kernel 'nokernel'"),
    (["add_kernel", "--target", "sm_1"], "unknown target 'sm_1'"),
    (["add_kernel", "--variant", "9"], "variant"),
    (["add_kernel", "--target", "sm_80", "--check"], "--check compares with a capture for the same target"),
])
def test_cli_bad_input_is_one_line(tmp_path, args, message):
    out = tmp_path / "repro.py"
    p = run_cli("repro", SAMPLES_SM90, *args, "-o", out)
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscope: error:") and message in lines[0], p.stderr
    assert not out.exists()


def test_cli_unwritable_output_is_one_line(tmp_path):
    p = run_cli("repro", SAMPLES_SM90, "add_kernel", "-o", tmp_path / "no" / "such" / "dir.py")
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "cannot write" in p.stderr


# -- the round trip: repro, then irscope run, gives the same compile ----------------------------

DRIVER = '''
import runpy, sys
for path in sys.argv[1:]:
    sys.argv = [path, "--compile-only"]
    runpy.run_path(path, run_name="__main__")
'''


@pytest.fixture(scope="session")
def helper_bundle(tmp_path_factory):
    """The helper-calling sample captured from a copy of its script that is then
    deleted: the bundle (schema 6) is all that holds the helpers' sources."""
    tmp = tmp_path_factory.mktemp("helpers")
    script = tmp / "helper_call.py"
    shutil.copy(SAMPLES / "jit_helper_call.py", script)
    bundle = tmp / "h.irscope"
    run_cli("run", script, "-o", bundle, "-q", "--no-open", check=True, cwd=tmp)
    script.unlink()
    return bundle


GLOBALS_KERNEL = """
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice as ld
from scale_util import twice as tw
import scale_util

SCALE = tl.constexpr(3)
OFFSET: tl.constexpr = tl.constexpr(7)
DEFAULT_BLOCK = tl.constexpr(64)
LIMIT = tl.constexpr(6.0)
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, tw(ld.exp(x)) * SCALE + OFFSET, mask=offs < n)


@triton.jit
def clamp(x):
    return tl.minimum(tl.maximum(x, -LIMIT), LIMIT)


@triton.jit
def tuple_kernel(ptrs, n, cfg, BLOCK: tl.constexpr = DEFAULT_BLOCK, CLAMP: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(ptrs[0] + offs, mask=offs < n)
    if CLAMP:  # pruned: clamp is never called, so the source IR does not name it
        x = clamp(x)
    tl.store(ptrs[1] + offs, scale_util.thrice(x) * cfg[0] + cfg[1][1], mask=offs < n)


x = torch.randn(1000, device=DEVICE)
scale_kernel[(8,)](x, 1000, BLOCK=128)
tuple_kernel[(16,)]((x, torch.empty_like(x)), 1000, (2.0, (1, 3)))
"""
SCALE_UTIL = """
import triton
import triton.language as tl

THREE = tl.constexpr(3)


@triton.jit
def twice(x):
    return x * 2


@triton.jit
def thrice(x):
    return x * THREE
"""


@pytest.fixture(scope="session")
def globals_bundle(tmp_path_factory):
    """A kernel that reads module-level constexprs, an imported module by an alias and
    a helper of another file by an alias; another that takes tuples, reads a global as
    a default constexpr and calls a helper as an attribute of the user's module, which
    reads that module's constexpr. The helpers' sources are stored; the names are
    recorded in the bundle (and are in the files on disk)."""
    tmp = tmp_path_factory.mktemp("globals")
    (tmp / "scale.py").write_text(GLOBALS_KERNEL)
    (tmp / "scale_util.py").write_text(SCALE_UTIL)
    bundle = tmp / "g.irscope"
    run_cli("run", tmp / "scale.py", "-o", bundle, "-q", "--no-open", check=True, cwd=tmp)
    return bundle


@pytest.fixture(scope="session")
def round_trip(tmp_path_factory, helper_bundle, globals_bundle):
    """(original, recompiled) for every capture of the round-trip bundles, of
    ``helper_bundle`` and of ``globals_bundle``: every reproducer runs in one
    ``irscope run`` process."""
    tmp = tmp_path_factory.mktemp("repro")
    # Two captures of one compile (the helper sample is in two bundles) give one
    # script: Triton's cache would answer the second without compiling.
    originals, scripts, index = [], [], {}
    for bundle in (*ROUND_TRIP_BUNDLES, helper_bundle, globals_bundle):
        for cap in irscope.open(str(bundle)).captures():
            spec = spec_of(cap)
            key = (spec.source, tuple(spec.signature.items()), tuple(spec.constexprs.items()), spec.divisible,
                   tuple(sorted(spec.options.items())), spec.target)
            if key not in index:
                index[key] = len(scripts)
                path = tmp / f"r{len(scripts)}_{cap.kernel}.py"
                path.write_text(repro_script(spec, str(bundle)))
                scripts.append(path)
            originals.append((cap, index[key]))
    driver = tmp / "driver.py"
    driver.write_text(DRIVER)
    out = tmp / "round_trip.irscope"
    run_cli("run", driver, "-o", out, "-q", "--no-open", "--", *scripts, check=True)
    again = irscope.open(str(out)).captures()
    assert len(again) == len(scripts)
    return [(cap, again[i]) for cap, i in originals]


@pytest.mark.slow
def test_round_trip_covers_two_targets_and_every_capture(round_trip, helper_bundle, globals_bundle):
    assert {a.target for a, _ in round_trip} == {"sm_90", "sm_80"}
    n = sum(len(irscope.open(str(b)).captures()) for b in (*ROUND_TRIP_BUNDLES, helper_bundle, globals_bundle))
    assert len(round_trip) == n


@pytest.mark.slow
def test_round_trip_gives_the_same_compile(round_trip):
    for original, again in round_trip:
        assert (again.kernel, again.target) == (original.kernel, original.target)
        assert again.variant == original.variant
        differences = [str(d) for d in compile_differences(original, again)]
        assert differences == [], f"#{original.id} {original.kernel} {original.target}: {differences}"


@pytest.mark.slow
def test_stored_helpers_suffice_when_the_script_is_gone(helper_bundle, round_trip):
    """With the script deleted, the reproducer still defines the helpers (from the
    bundle), and its compile is the captured one (checked with the round trip)."""
    cap = irscope.open(str(helper_bundle)).capture("bias_gelu_rowsum_kernel")
    spec = spec_of(cap)
    assert spec.helpers == ("_load_tile", "_gelu") and spec.notes == ()
    assert any(a.bundle.path == cap.bundle.path and a.id == cap.id for a, _ in round_trip)


@pytest.mark.slow
def test_the_launch_is_recorded_and_the_script_launches_it(helper_bundle):
    """The sample launches on a (1000, 1536) fp16 x with grid cdiv(1000, 32): the
    capture keeps that, and the reproducer allocates and launches the same."""
    spec = spec_of(irscope.open(str(helper_bundle)).capture("bias_gelu_rowsum_kernel"))
    assert spec.grid == (32,) and spec.launch_known
    x = spec.arg("x_ptr")
    assert (x.shape, x.stride, x.dtype) == ((1000, 1536), (1536, 1), "float16")
    assert spec.arg("bias_ptr").shape == (1536,) and spec.arg("rowsum_ptr").dtype == "float32"
    assert (spec.arg("M").value, spec.arg("N").value, spec.arg("stride_xm").value) == (1000, 1536, 1536)
    text = repro_script(spec)
    assert "GRID = (32,)  # as captured" in text
    assert "'x_ptr': ((1000, 1536), (1536, 1), 'float16')," in text
    assert "'M': 1000," in text


@pytest.mark.slow
def test_check_says_same_and_round_trip_catches_a_changed_option(tmp_path):
    """``repro --check`` on vector_add says it is the same compile; the same script
    with num_warps 8 instead of 4 is caught by the comparison, with the TTGIR line."""
    out = tmp_path / "add.py"
    p = run_cli("repro", SAMPLES_SM90, "add_kernel", "-o", out, "--check")
    assert p.returncode == 0, p.stderr
    assert "check: the same compile as capture #1 (ttir, ttgir, llir, ptx up to locations; registers 26" in p.stdout
    text = out.read_text()
    assert "'num_warps': 4," in text
    changed = tmp_path / "add8.py"
    changed.write_text(text.replace("'num_warps': 4,", "'num_warps': 8,"))
    got = run_round_trip(_cap(SAMPLES_SM90, "add_kernel"), str(changed), str(tmp_path / "c.irscope"))
    assert got.error is None and not got.same
    assert {d.what for d in got.differences} >= {"ttgir", "ptx"}
    assert any("warpsPerCTA = [4]" in d.detail and "warpsPerCTA = [8]" in d.detail
               for d in got.differences if d.what == "ttgir")


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.0", "3.2"])
def test_the_script_compiles_with_a_triton_before_3_3(tmp_path, version):
    """Before 3.3 the arguments equal to 1 are typed in the signature and marked in an
    AttrsDescriptor (3.0's lists indices): the matmul's three such strides."""
    exe = VENVS / f"triton-{version}" / "bin" / "python"
    assert exe.exists(), f"{exe} missing: run scripts/setup.sh"
    out = tmp_path / "mm.py"
    out.write_text(repro_script(spec_of(_cap(SAMPLES_SM90, "matmul_kernel", variant="0"))))
    p = subprocess.run([str(exe), str(out), "--compile-only", "--target", "sm_80"], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "compiled matmul_kernel for GPUTarget(backend='cuda', arch=80, warp_size=32)" in p.stdout


@pytest.mark.slow
def test_module_globals_come_from_the_bundle_and_else_from_the_file(globals_bundle, round_trip, tmp_path):
    """The names the kernel reads are recorded at compile time and written from the
    bundle, with or without the kernel's file (the round trip compiles the script). A
    bundle without that record (made before it) copies their lines from the file, and
    names them when the file is gone."""
    older = tmp_path / "older.irscope"
    shutil.copy(globals_bundle, older)
    store = StoreBundle.open(str(older), create=True)
    try:
        for row in attachments(store, kind=GLOBALS):
            remove_attachment(store, row.id)
    finally:
        store.close()
    spec = spec_of(irscope.open(str(globals_bundle)).capture("scale_kernel"))
    assert spec.notes == () and spec.helpers == ("twice",)
    for line in ("import triton.language.extra.libdevice as ld", "SCALE = tl.constexpr(3)",
                 "OFFSET = tl.constexpr(7)", "tw = twice"):
        assert line in spec.source.splitlines()
    assert "DEVICE" not in spec.source and "torch" not in spec.source and "scale_util" not in spec.source
    from_file = spec_of(irscope.open(str(older)).capture("scale_kernel"))
    assert from_file.notes == ()
    for line in ("from triton.language.extra import libdevice as ld", "OFFSET: tl.constexpr = tl.constexpr(7)"):
        assert line in from_file.source.splitlines()
    script = globals_bundle.parent / "scale.py"
    moved = script.with_name("elsewhere.py")
    script.rename(moved)
    try:
        gone = spec_of(irscope.open(str(globals_bundle)).capture("scale_kernel"))
        older_gone = spec_of(irscope.open(str(older)).capture("scale_kernel"))
    finally:
        moved.rename(script)
    assert gone.source == spec.source and gone.notes == ()
    assert older_gone.notes == ("the kernel uses module-level names the bundle does not hold: OFFSET, SCALE, ld, tw",)
    tup = spec_of(irscope.open(str(globals_bundle)).capture("tuple_kernel"))
    assert tup.notes == () and tup.helpers == ("thrice",)
    assert tup.arg("ptrs").elements == ("*fp32", "*fp32") and tup.arg("cfg").elements == ("fp32", ("constexpr", "i32"))
    assert tup.tuple_constexprs == (((2, 1, 0), 1),) and tup.tuple_divisible == ((0, 0), (0, 1))
    assert tup.declared_constexprs == {"BLOCK": 64, "CLAMP": False}  # BLOCK: the global tl.constexpr, unwrapped
    lines = tup.source.splitlines()
    for line in ("DEFAULT_BLOCK = tl.constexpr(64)", "THREE = tl.constexpr(3)",
                 "scale_util = types.ModuleType('scale_util')", "scale_util.thrice = thrice",
                 "def clamp(x):", "LIMIT = tl.constexpr(6.0)"):  # an uncalled helper, and what it reads
        assert line in lines
