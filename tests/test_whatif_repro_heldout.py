"""``irscope repro`` on the held-out kernels of tests/kernels/heldout_a_*.py: kernels
defined in a function (a closure over a local constexpr and helper) or as a
staticmethod, helpers reached through a nested package with relative imports and a
``noinline`` helper of that package, ``tl.inline_asm_elementwise``, libdevice three
ways, ``associative_scan`` and ``reduce`` with user combine functions, static asserts
and ranges, atomics and a spin lock, ``tl.range`` options, int8 and fp8 dots, cache
and eviction hints, ``noinline`` helpers with string and None constexprs, launches with
``num_ctas``, ``maxnreg`` and ``enable_fp_fusion=False``, an autotune over heuristics,
``tl.tensor`` and string annotations, constexpr defaults from another module, a
function passed as a constexpr, ``debug=True`` asserts, and a library module's kernel
with a ``noinline`` helper, a runtime default and a tuple constexpr global.

All of them are captured compile-only for sm_90 in one ``irscope run`` from a copy of
their files, the copy is then deleted, and every capture's reproducer runs in one more
``irscope run``: each compile must equal the original (TTIR, TTGIR, LLVM IR, PTX up to
locations and file names; registers, spills, shared memory).
"""

import shutil

import pytest

import irscope
from irscope.whatif.compile_spec import FunctionRef, _unwrapped, spec_of
from irscope.whatif.equivalence import compile_differences
from irscope.whatif.repro import _literal, repro_script
from irscope.whatif.spec_scopes import scoped_modules
from irscope.whatif.spec_source import _module_source, _user_module_lines

from conftest import ROOT, irscope as run_cli
from test_whatif_repro import DRIVER

KERNELS = ROOT / "tests" / "kernels"
SCRIPTS = sorted(p.name for p in KERNELS.glob("heldout_a_*.py")
                 if p.name not in ("heldout_a_consts.py", "heldout_a_lib.py"))  # modules the scripts import
# Two helpers named ``leaky`` in two modules, each reading its own ``SLOPE``: the
# reproducer defines each module's in a scope of its own.
CLASHING = "same_name_kernel"

RUN_ALL = '''
import runpy, sys
for name in sys.argv[1:]:
    sys.argv = [name]
    runpy.run_path(name, run_name="__main__")
'''


# -- fast: how values and modules are written ------------------------------------------------

def test_a_function_passed_as_a_constexpr_is_written_as_its_name():
    got = _unwrapped("JITFunction(__main__:relu)")
    assert isinstance(got, FunctionRef) and got == "JITFunction(__main__:relu)"  # JSON and labels unchanged
    assert got.name == "relu" and _literal(got) == "relu"
    assert _literal({"ACT": got}) == "{'ACT': relu}"
    assert _unwrapped("JITFunction(mylib.ops:Ops.gelu)").name == "gelu"
    assert not isinstance(_unwrapped("relu"), FunctionRef)


def test_a_nested_package_is_built_module_by_module():
    attrs = {"sub": {"module": "pkg.sub", "attrs": {
        "act": {"module": "pkg.sub.act", "attrs": {"leaky": {"alias": "leaky"}, "K": {"expr": "tl.constexpr(2)"}}},
        "np_math": {"import": "math"}}}}
    assert _user_module_lines("pkg", "pkg", attrs, {"leaky"}) == [
        "pkg = types.ModuleType('pkg')",
        "pkg.sub = types.ModuleType('pkg.sub')",
        "pkg.sub.act = types.ModuleType('pkg.sub.act')",
        "pkg.sub.act.K = tl.constexpr(2)",
        "pkg.sub.act.leaky = leaky",
        "pkg.sub.np_math = importlib.import_module('math')",
    ]
    assert _user_module_lines("pkg", "pkg", attrs, set()) is None  # a helper it names is not defined


def test_helpers_reached_through_modules_come_from_their_recorded_sources():
    """A Triton before 3.3 keeps no source IR: a helper the kernel reaches as
    ``pkg.sub.act.leaky(x)`` is written from the source recorded with the module, and
    what it reads is defined too."""
    recorded = {
        "pkg": {"module": "pkg", "attrs": {"sub": {"module": "pkg.sub", "attrs": {"act": {"module": "pkg.sub.act",
                "attrs": {"leaky": {"alias": "leaky", "jit": "def leaky(x):\n    return x * SLOPE\n",
                                    "noinline": False}}}}}}},
        "SLOPE": {"expr": "tl.constexpr(0.125)"},
    }
    kernel = "def k(x_ptr):\n    tl.store(x_ptr, pkg.sub.act.leaky(tl.load(x_ptr)))\n"
    source, notes = _module_source(kernel, "k", [], {}, None, recorded)
    assert notes == []
    lines = source.splitlines()
    for line in ("def leaky(x):", "SLOPE = tl.constexpr(0.125)", "pkg.sub.act.leaky = leaky", "import types"):
        assert line in lines, line
    assert lines.index("def leaky(x):") < lines.index("def k(x_ptr):") < lines.index("pkg.sub.act.leaky = leaky")


def test_clashing_modules_get_scopes_in_the_order_they_read_each_other():
    """``b`` reads ``a``'s helper: ``a``'s scope comes first; two scopes that read each
    other's helpers cannot be ordered, and the script keeps the note instead."""
    leaky = "def leaky(x):\n    return x * SLOPE\n"
    recorded = {
        "#kernel_module": "__main__",
        "#scopes": {
            "__main__": {"functions": {}, "names": {}},
            "pkg.b": {"functions": {"leaky": {"jit": leaky, "noinline": True}},
                      "names": {"SLOPE": {"expr": "tl.constexpr(2)"}, "lk": {"alias": "leaky", "of": "pkg.a"}}},
            "pkg.a": {"functions": {"leaky": {"jit": leaky, "noinline": False}},
                      "names": {"SLOPE": {"expr": "tl.constexpr(1)"}}},
        },
    }
    got = scoped_modules(recorded, {"leaky", "SLOPE"})
    assert got is not None and got.modules == ["pkg.a", "pkg.b"] and got.functions == {"leaky"}
    assert got.refs == {("pkg.b", "leaky"): "_scope_1['leaky']", ("pkg.a", "leaky"): "_scope_2['leaky']"}
    lines = got.text.splitlines()
    assert lines.index("def _scope_2():  # pkg.a") < lines.index("def _scope_1():  # pkg.b")
    for line in ("    lk = _scope_2['leaky']", "    @triton.jit(noinline=True)",
                 "    leaky.__module__, leaky.__qualname__ = 'pkg.b', 'leaky'", "_scope_1 = _scope_1()"):
        assert line in lines, line
    recorded["#scopes"]["pkg.a"]["names"]["lb"] = {"alias": "leaky", "of": "pkg.b"}
    assert scoped_modules(recorded, {"leaky", "SLOPE"}) is None


# -- slow: capture, delete the files, reproduce, compare ----------------------------------------

@pytest.fixture(scope="module")
def heldout(tmp_path_factory):
    """(original, recompiled) for every capture of the held-out kernels (sm_90), the
    reproducers written with the kernels' files deleted."""
    tmp = tmp_path_factory.mktemp("heldout_a")
    src = tmp / "src"
    src.mkdir()
    for path in KERNELS.glob("heldout_a_*"):
        if path.is_dir():
            shutil.copytree(path, src / path.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(path, src / path.name)
    (src / "run_all.py").write_text(RUN_ALL)
    bundle = tmp / "a.irscope"
    run_cli("run", src / "run_all.py", "--target", "sm_90", "-o", bundle, "-q", "--no-open", "--", *SCRIPTS,
            check=True, cwd=src)
    shutil.rmtree(src)  # the reproducers get nothing from the files
    originals = irscope.open(str(bundle)).captures()
    rt = tmp / "rt"
    rt.mkdir()
    scripts = []
    for i, cap in enumerate(originals):
        path = rt / f"r{i}_{cap.kernel}.py"
        path.write_text(repro_script(spec_of(cap), str(bundle)))
        scripts.append(path)
    (rt / "driver.py").write_text(DRIVER)
    out = tmp / "b.irscope"
    run_cli("run", rt / "driver.py", "-o", out, "-q", "--no-open", "--", *scripts, check=True, cwd=rt)
    again = irscope.open(str(out)).captures()
    assert len(again) == len(originals)
    return list(zip(originals, again))


@pytest.mark.slow
def test_every_held_out_kernel_was_captured(heldout):
    kernels = {a.kernel for a, _ in heldout}
    assert kernels >= {"closure_kernel", "method_kernel", "nested_pkg_kernel", "asm_kernel", "libdevice_kernel",
                       "scan_reduce_kernel", "static_kernel", "histogram_kernel", "locked_sum_kernel",
                       "range_kernel", "dot8_kernel", "dot_fp8_kernel", "hinted_copy_kernel", "mode_kernel",
                       "fma_kernel", "tuned_sum_kernel", "annotated_kernel", "fnarg_kernel", "lib_kernel", CLASHING}
    assert not any(a.failed for a, _ in heldout)


@pytest.mark.slow
def test_held_out_reproducers_give_the_same_compile(heldout):
    for original, again in heldout:
        assert (again.kernel, again.target) == (original.kernel, original.target)
        differences = [str(d) for d in compile_differences(original, again)]
        assert differences == [], f"#{original.id} {original.kernel} {original.variant}: {differences}"


@pytest.mark.slow
def test_the_specs_need_no_file(heldout):
    """Every spec is complete from the bundle alone: its notes are empty. The kernel
    whose two modules define ``leaky`` and ``SLOPE`` differently gets one scope per
    module."""
    for original, _ in heldout:
        spec = spec_of(original)
        assert spec.notes == (), f"{original.kernel}: {spec.notes}"
    clash = spec_of(next(a for a, _ in heldout if a.kernel == CLASHING)).source.splitlines()
    for line in ("def _scope_1():  # heldout_a_pkg.sub.act", "def _scope_2():  # heldout_a_pkg.sub.alt",
                 "    SLOPE = tl.constexpr(0.5)", "    consts.SLOPE = tl.constexpr(0.125)",
                 "acts.leaky = _scope_1['leaky']", "alt.leaky = _scope_2['leaky']"):
        assert line in clash, line
    assert not any(ln.startswith("def leaky") for ln in clash)  # no module-level leaky: it would be one of the two
    nested = spec_of(next(a for a, _ in heldout if a.kernel == "nested_pkg_kernel"))
    lines = nested.source.splitlines()
    for line in ("heldout_a_pkg.sub.act = types.ModuleType('heldout_a_pkg.sub.act')",
                 "heldout_a_pkg.sub.act.leaky_clipped = leaky_clipped", "base.clip = clip",
                 "scalar_gain.__module__, scalar_gain.__qualname__ = 'heldout_a_pkg.sub.base', 'scalar_gain'",
                 "@triton.jit(noinline=True)", "SLOPE = tl.constexpr(0.125)"):
        assert line in lines, line
    lib = spec_of(next(a for a, _ in heldout if a.kernel == "lib_kernel"))
    assert "lib_gain.__module__, lib_gain.__qualname__ = 'heldout_a_lib', 'lib_gain'" in lib.source.splitlines()
    relu = next(a for a, _ in heldout if a.kernel == "fnarg_kernel" and "relu" in str(a.info["constexprs"]["ACT"]))
    assert "    'ACT': relu," in repro_script(spec_of(relu))
