"""The user functions of a capture (irscope.core.user_functions): the kernel, then each
@triton.jit helper with its real lines and per-line op counts, in both charge modes, on
real captures (tests/data/learner_sm90.irscope's RMSNorm, samples_sm90's bias+GELU)."""

from __future__ import annotations

import pytest

from irscope.compiler.stages import STAGES
from irscope.core import open_bundle
from irscope.core.user_functions import CALL_LINE, OWN, function_line_ops, op_place, user_functions
from irscope.errors import IrscopeError

from conftest import DATA, ROOT, irscope

LEARNER = DATA / "learner_sm90.irscope"
SAMPLES = DATA / "samples_sm90.irscope"


@pytest.fixture(scope="module")
def rmsnorm():
    with open_bundle(str(LEARNER)) as b:
        yield b.capture("rmsnorm_kernel")


@pytest.fixture(scope="module")
def gelu():
    with open_bundle(str(SAMPLES)) as b:
        yield b.capture("bias_gelu_rowsum_kernel")


def def_line(path, name: str) -> int:
    """The line of ``def name`` in a file (the fixture's real line numbers)."""
    lines = (ROOT / path).read_text().splitlines()
    return next(i for i, t in enumerate(lines, 1) if t.startswith(f"def {name}("))


def test_rmsnorm_lists_the_kernel_then_its_two_helpers_with_their_lines(rmsnorm):
    uf = user_functions(rmsnorm)
    assert [f.name for f in uf.functions] == ["rmsnorm_kernel", "_mean_square", "_rsqrt_eps"]
    assert uf.kernel.kernel and not any(h.kernel for h in uf.helpers)
    src = "tests/kernels/rmsnorm_helpers.py"
    for fn in uf.helpers:
        assert fn.file == src and fn.has_source
        assert fn.first_line == def_line(src, fn.name)
        assert fn.lines[0].text.startswith(f"def {fn.name}(")
        assert [ln.line for ln in fn.lines] == list(range(fn.first_line, fn.last_line + 1))
    mean, rsqrt = uf.helpers
    assert (mean.first_line, mean.last_line) == (11, 13) and (rsqrt.first_line, rsqrt.last_line) == (17, 18)
    call = def_line(src, "rmsnorm_kernel") + 5  # inv = _rsqrt_eps(_mean_square(x, N), eps)
    assert "_rsqrt_eps(_mean_square(" in uf.kernel.lines[call - uf.kernel.first_line].text
    assert mean.call_lines == rsqrt.call_lines == (call,)
    # library code is no section: tl.sum's and tl.sqrt's frames are triton/language's
    assert not any("triton/language" in (f.file or "") for f in uf.functions)
    assert mean.count(13, "ttgir") > 0 and rsqrt.count(18, "ttgir") > 0


def test_bias_gelu_helpers_and_the_kernel_counts_agree_with_the_line_rule(gelu):
    uf = user_functions(gelu)
    assert [f.name for f in uf.functions] == ["bias_gelu_rowsum_kernel", "_load_tile", "_gelu"]
    load, g = uf.helpers
    assert (load.first_line, g.first_line) == (def_line("sample_kernels/jit_helper_call.py", "_load_tile"),
                                               def_line("sample_kernels/jit_helper_call.py", "_gelu"))
    assert load.call_lines == (41,) and g.call_lines == (43,)
    # the kernel's own lines count what every other view counts (Capture.ops_by_line)
    for stage in uf.stages:
        by_line = gelu.ops_by_line(stage)
        for ln in uf.kernel.lines:
            assert ln.counts.get(stage, 0) == (len(by_line.get(ln.line, [])) if ln.statement == ln.line else 0)


@pytest.mark.parametrize("which", ["rmsnorm", "gelu"])
def test_charging_helpers_to_the_call_line_moves_their_ops_and_keeps_the_totals(which, request):
    cap = request.getfixturevalue(which)
    own, charged = user_functions(cap, OWN), user_functions(cap, CALL_LINE)
    assert [f.heading() for f in own.functions] == [f.heading() for f in charged.functions]
    for stage in own.stages:
        assert own.total(stage) == charged.total(stage), stage
    # SASS lines carry no inlined-at chain: a helper called from one line charges there
    for stage in own.stages:
        for h in charged.helpers:
            assert h.total(stage) == 0, (h.name, stage)
        for line in {n for h in own.helpers for n in h.call_lines}:
            reaching = [h for h in own.helpers if line in h.call_lines]
            want = own.kernel.count(line, stage) + sum(h.total(stage) for h in reaching)
            assert charged.kernel.count(line, stage) == want, (line, stage)
            assert want > own.kernel.count(line, stage)
            if not STAGES[stage].line_links:  # `show --call-sites` follows the same chains
                assert want == len(cap.ops_at_line(line, call_sites=True)[stage]), (line, stage)


def test_the_ops_of_a_helper_line_and_where_an_op_is_charged(rmsnorm):
    uf = user_functions(rmsnorm)
    mean = uf.helpers[0]
    ops = function_line_ops(rmsnorm, mean, 13)
    assert len(ops["ttgir"]) == mean.count(13, "ttgir") > 0
    for op in ops["ttgir"]:
        assert op_place(rmsnorm, "ttgir", op) == ("tests/kernels/rmsnorm_helpers.py", 11, 13)
        assert op_place(rmsnorm, "ttgir", op, CALL_LINE) == ("tests/kernels/rmsnorm_helpers.py", 22, 27)
    charged = function_line_ops(rmsnorm, uf.kernel, 27, CALL_LINE)["ttgir"]
    assert {id(o) for o in ops["ttgir"]} <= {id(o) for o in charged}
    assert function_line_ops(rmsnorm, mean, 13, CALL_LINE)["ttgir"] == []
    with pytest.raises(IrscopeError):
        user_functions(rmsnorm, "elsewhere")
    # the same answer from the Capture
    assert rmsnorm.user_functions(CALL_LINE) == user_functions(rmsnorm, CALL_LINE)
    assert rmsnorm.user_functions() == uf


def test_a_kernel_with_no_helpers_is_its_own_only_section():
    with open_bundle(str(SAMPLES)) as b:
        uf = user_functions(b.capture("add_kernel"))
    assert len(uf.functions) == 1 and uf.kernel.name == "add_kernel"
    assert uf.to_json()["functions"][0]["name"] == "add_kernel"


HELPER_MODULE = """import triton
import triton.language as tl


@triton.jit
def _twice(x):
    return _plus_one(x) * 2.0


@triton.jit
def _plus_one(x):
    return x + 1.0
"""

TWO_FILE_KERNEL = """import torch
import triton
import triton.language as tl
from helper_module import _twice

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def twice_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, _twice(x))


x = torch.randn(128, device=DEVICE)
twice_kernel[(1,)](x, torch.empty_like(x), BLOCK=128)
"""


@pytest.mark.slow
def test_a_helper_in_another_file_is_stored_and_named_by_its_file(tmp_path):
    (tmp_path / "helper_module.py").write_text(HELPER_MODULE)
    (tmp_path / "two_files.py").write_text(TWO_FILE_KERNEL)
    out = tmp_path / "two.irscope"
    irscope("run", "two_files.py", "-o", out.name, "-q", "--no-open", check=True, cwd=tmp_path)
    (tmp_path / "helper_module.py").unlink()
    with open_bundle(str(out)) as b:
        cap = b.capture("twice_kernel")
        own, charged = user_functions(cap), user_functions(cap, CALL_LINE)
    assert [f.name for f in own.functions] == ["twice_kernel", "_twice", "_plus_one"]
    twice, plus = own.helpers
    assert twice.file.endswith("helper_module.py") and twice.file != cap.file
    assert (twice.first_line, twice.last_line) == (6, 7) and twice.lines[1].text == "    return _plus_one(x) * 2.0"
    assert twice.heading().startswith("_twice  ") and "helper_module.py:6-7" in twice.heading()
    call = cap.source.first_line + 3  # tl.store(out_ptr + offs, _twice(x))
    # the nested helper charges to the outermost call, in the kernel
    assert twice.call_lines == plus.call_lines == (call,)
    assert (plus.first_line, plus.last_line) == (11, 12)
    assert twice.count(7, "ttgir") > 0 and plus.count(12, "ttgir") > 0
    assert charged.kernel.count(call, "ttgir") == \
        own.kernel.count(call, "ttgir") + twice.count(7, "ttgir") + plus.count(12, "ttgir")
    assert charged.helpers[0].total("ttgir") == charged.helpers[1].total("ttgir") == 0


@pytest.mark.slow
def test_a_capture_stores_its_helpers_sources_for_when_the_file_is_gone(tmp_path):
    """``irscope run`` stores each helper's source beside the kernel's: the sections keep
    their text after the script is deleted (a bundle opened on another machine)."""
    script = tmp_path / "rms.py"
    script.write_text((ROOT / "tests/kernels/rmsnorm_helpers.py").read_text())
    out = tmp_path / "rms.irscope"
    irscope("run", script.name, "-o", out.name, "-q", "--no-open", check=True, cwd=tmp_path)
    script.unlink()
    with open_bundle(str(out)) as b:
        cap = b.capture("rmsnorm_kernel")
        stored = b._store().helper_sources(cap.id)
        assert [(name, first) for name, _file, first, _src in stored] == [("_mean_square", 11), ("_rsqrt_eps", 17)]
        uf = user_functions(cap)
    mean, rsqrt = uf.helpers
    assert mean.has_source and mean.lines[-1].text.strip() == "return tl.sum(x * x, axis=0) / N"
    assert rsqrt.lines[0].text == "def _rsqrt_eps(ms, eps):" and rsqrt.last_line == 18
