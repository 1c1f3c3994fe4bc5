"""The compile hook's record of the module-level names a kernel reads
(``capture/child/irscope_child_globals.py``), on real ``@triton.jit`` functions
(nothing compiles: the walk reads the functions and their modules)."""

import importlib.util
import sys
import textwrap
import types

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "irscope" / "capture" / "child"))
from irscope_child_globals import used_globals  # noqa: E402  # a child script, on the child's sys.path

triton = pytest.importorskip("triton")

HELPERS = textwrap.dedent('''
    import triton
    import triton.language as tl

    DEPTH = tl.constexpr(5)


    @triton.jit
    def inner(x):
        return x + DEPTH


    @triton.jit
    def outer(x):
        return inner(x) * 2
''')

KERNEL = textwrap.dedent('''
    import enum
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice as ld
    import kernel_helpers
    from kernel_helpers import outer as twice_outer

    BLOCK = tl.constexpr(128)
    DT = tl.float16
    NEG = tl.constexpr(float("-inf"))
    DEFAULT = tl.constexpr(3)


    class Mode(enum.IntEnum):
        FAST = 1


    MODE = Mode.FAST
    UNUSED = tl.constexpr(9)


    @triton.jit
    def kernel(x_ptr, K: tl.constexpr = DEFAULT):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, other=NEG)
        y = twice_outer(ld.exp(x)) + kernel_helpers.inner(x) + MODE
        tl.store(x_ptr + offs, tl.sum(y, axis=0).to(DT))
''')


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("globals")
    (tmp / "kernel_helpers.py").write_text(HELPERS)
    (tmp / "kernel_mod.py").write_text(KERNEL)
    sys.path.insert(0, str(tmp))
    try:
        spec = importlib.util.spec_from_file_location("kernel_mod", tmp / "kernel_mod.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(tmp))
    return used_globals(types.SimpleNamespace(fn=mod.kernel))


def test_values_imports_and_defaults_are_recorded_as_python(recorded):
    assert recorded["BLOCK"] == {"expr": "tl.constexpr(128)"}
    assert recorded["DT"] == {"expr": "triton.language.float16"}
    assert recorded["NEG"] == {"expr": "tl.constexpr(float('-inf'))"}
    assert recorded["DEFAULT"] == {"expr": "tl.constexpr(3)"}  # read by a default value
    assert recorded["ld"] == {"import": "import triton.language.extra.libdevice as ld"}
    assert "UNUSED" not in recorded and "tl" not in recorded and "triton" not in recorded


def test_helpers_are_walked_through_aliases_and_user_modules(recorded):
    # each helper names the module it is defined in (``of``) and keeps its source
    outer = recorded["twice_outer"]
    assert (outer["alias"], outer["of"], outer["noinline"]) == ("outer", "kernel_helpers", False)
    assert outer["jit"].startswith("def outer(x):")
    helpers = recorded["kernel_helpers"]
    assert helpers["module"] == "kernel_helpers" and list(helpers["attrs"]) == ["inner"]
    assert helpers["attrs"]["inner"]["alias"] == "inner" and helpers["attrs"]["inner"]["of"] == "kernel_helpers"
    assert recorded["DEPTH"] == {"expr": "tl.constexpr(5)"}  # read by a helper of a helper, in its own module
    # a helper under its own name: its source (a compile whose constexprs prune the call names it nowhere else)
    assert recorded["inner"]["jit"].startswith("def inner(x):") and recorded["inner"]["noinline"] is False


def test_a_value_no_expression_rebuilds_keeps_its_repr(recorded):
    assert recorded["MODE"] == {"repr": "<Mode.FAST: 1>"}
