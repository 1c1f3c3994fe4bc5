"""`irscope run` / `compile` / `ls` / `cat` end to end, with real Triton compiles (no GPU)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import SAMPLES, VECTOR_ADD, irscope, ls_json, write_script

pytestmark = pytest.mark.slow


def test_ls_json_fields_and_variants(sample_bundle):
    caps = ls_json(sample_bundle)
    for c in caps:
        for key in ("kernel", "variant", "target", "triton_version", "stages", "passes", "raw_bytes", "complete"):
            assert key in c
        assert c["target"] == "sm_90" and c["complete"] is True and c["triton_version"] == "3.6.0"
    add = [c for c in caps if c["kernel"] == "add_kernel"]
    assert len(add) == 1
    assert {"ttir", "ttgir", "llir", "ptx", "cubin", "sass", "json"} <= set(add[0]["stages"])
    assert add[0]["passes"] > 50 and add[0]["registers"] > 0 and add[0]["spill_stores"] == 0
    # first_line is the line of `def` (where the stored source starts), not of the decorator
    source_lines = (SAMPLES / "vector_add.py").read_text().splitlines()
    assert source_lines[add[0]["first_line"] - 1].startswith("def add_kernel(")
    # every autotune config is compiled and kept as its own variant
    mm = [c for c in caps if c["kernel"] == "matmul_kernel"]
    assert len(mm) >= 3 and len({c["variant"] for c in mm}) == len(mm)


def test_cat_stage_pass_and_sass_line_info(sample_bundle):
    ttgir = irscope("cat", sample_bundle, "add_kernel", "--stage", "ttgir", check=True).stdout
    assert "#ttg.blocked" in ttgir and "tt.func public @add_kernel" in ttgir and "loc(" in ttgir
    first = irscope("cat", sample_bundle, "add_kernel", "--pass", "0", check=True).stdout
    assert first.lstrip().startswith(("#loc", "module"))
    sass = irscope("cat", sample_bundle, "add_kernel", "--stage", "sass", check=True).stdout
    assert "//## File" in sass and "vector_add.py" in sass
    bad = irscope("cat", sample_bundle, "add_kernel", "--stage", "nope")
    assert bad.returncode != 0 and "no stage 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def test_passes_are_named_and_staged(sample_bundle):
    from irscope.store.bundle import Bundle

    with Bundle.open(str(sample_bundle)) as b:
        row = next(r for r in b.captures() if r.kernel == "add_kernel")
        passes = b.passes(row.id)
    stages = [p.stage for p in passes]
    assert stages == sorted(stages, key=["ttir", "ttgir", "llir"].index)  # in pipeline order
    args = {p.argument for p in passes}
    assert {"inline", "tritongpu-coalesce", "convert-triton-gpu-to-llvm"} <= args
    assert any(p.anchor == "tt.func" for p in passes)  # nested canonicalizer runs on the function


def test_two_targets_give_two_captures(tmp_path):
    out = tmp_path / "t.irscope"
    irscope("run", SAMPLES / "matmul_autotune.py", "--target", "sm_80", "--target", "sm_90", "-o", out, "-q", check=True)
    caps = ls_json(out)
    assert {c["target"] for c in caps} == {"sm_80", "sm_90"}
    t80 = irscope("cat", out, "matmul_kernel", "--target", "sm_80", "--variant", "0", check=True).stdout
    t90 = irscope("cat", out, "matmul_kernel", "--target", "sm_90", "--variant", "0", check=True).stdout
    assert "versionMajor = 2" in t80 and "versionMajor = 3" in t90


def test_output_adds_to_existing_bundle_and_records_provenance(tmp_path):
    out = tmp_path / "b.irscope"
    irscope("run", SAMPLES / "vector_add.py", "-o", out, "-q", check=True)
    irscope("run", SAMPLES / "fused_softmax.py", "-o", out, "-q", check=True)
    assert {c["kernel"] for c in ls_json(out)} >= {"add_kernel", "softmax_kernel"}
    runs = json.loads(irscope("ls", out, "--runs", "--json", check=True).stdout)
    assert len(runs) == 2 and all(r["complete"] for r in runs)
    assert runs[0]["env"]["MLIR_ENABLE_DUMP"] == "1" and "vector_add.py" in runs[0]["script"]


def test_llvm_passes_opt_in(tmp_path):
    out = tmp_path / "l.irscope"
    irscope("run", SAMPLES / "vector_add.py", "--llvm-passes", "-o", out, "-q", check=True)
    from irscope.store.bundle import Bundle

    with Bundle.open(str(out)) as b:
        passes = b.passes(b.captures()[0].id)
    llvm = [p for p in passes if p.kind in ("llvm", "mir")]  # LLVM IR, and machine IR of codegen passes
    # optimisation passes run while making llir, codegen (machine) passes while making ptx
    assert len(llvm) > 20 and {p.stage for p in llvm} == {"llir", "ptx"}
    assert any(p.name.startswith("InstCombine") for p in llvm)


def test_compile_matches_run(tmp_path, sample_bundle):
    out = tmp_path / "c.irscope"
    irscope("compile", f"{SAMPLES / 'vector_add.py'}::add_kernel",
            "--signature", "x_ptr:*fp32,y_ptr:*fp32,output_ptr:*fp32,n_elements:i32:16",
            "--constexpr", "BLOCK_SIZE=1024", "-o", out, check=True)
    compiled = irscope("cat", out, "add_kernel", "--stage", "ttgir", check=True).stdout
    launched = irscope("cat", sample_bundle, "add_kernel", "--stage", "ttgir", check=True).stdout
    # same specialisation as a real launch -> the same TTGIR
    assert compiled == launched


def test_compile_unwraps_an_autotuned_kernel(tmp_path):
    # Autotuner copies the kernel's arg_names: the child must unwrap it by kind.
    from irscope.store.bundle import Bundle

    out = tmp_path / "mm.irscope"
    irscope("compile", f"{SAMPLES / 'matmul_autotune.py'}::matmul_kernel",
            "--signature", "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
            "--constexpr", "BLOCK_SIZE_M=64", "--constexpr", "BLOCK_SIZE_N=64", "--constexpr", "BLOCK_SIZE_K=32",
            "--constexpr", "GROUP_SIZE_M=8", "--target", "sm_90", "-o", out, check=True)
    with Bundle.open(str(out)) as b:
        (row,) = b.captures()
    assert row.kernel == "matmul_kernel" and row.error is None and "BLOCK_SIZE_M=64" in row.variant


def test_compile_errors_are_one_line(tmp_path):
    p = irscope("compile", f"{SAMPLES / 'vector_add.py'}::nope", "--signature", "*fp32", "-o", tmp_path / "x.irscope")
    assert p.returncode != 0 and "no kernel named 'nope'" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "x.irscope").exists()
    p = irscope("compile", "vector_add.py", "-o", tmp_path / "x.irscope")
    assert p.returncode == 2 or "FILE::KERNEL" in p.stderr


def test_failed_compile_keeps_finished_stages(tmp_path):
    script = write_script(tmp_path, "bad_asm.py", VECTOR_ADD + '''
@triton.jit
def bad_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("not.a.ptx.instruction $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)

x = torch.zeros(128, device=DEVICE, dtype=torch.int32)
bad_kernel[(1,)](x, BLOCK=128)
''')
    out = tmp_path / "f.irscope"
    p = irscope("run", script, "-o", out)
    assert p.returncode != 0
    caps = ls_json(out)
    assert len(caps) == 1
    c = caps[0]
    assert c["error"] and c["failed_stage"] == "cubin"
    assert {"ttir", "ttgir", "llir", "ptx"} <= set(c["stages"]) and "cubin" not in c["stages"]
    assert "failed to compile" in p.stderr and "bad_kernel" in p.stderr


def test_frontend_error_names_the_stage(tmp_path):
    script = write_script(tmp_path, "fe.py", VECTOR_ADD + '''
@triton.jit
def broken(x_ptr):
    tl.store(x_ptr, undefined_name)

broken[(1,)](torch.zeros(4, device=DEVICE))
''')
    out = tmp_path / "fe.irscope"
    p = irscope("run", script, "-o", out)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (c,) = ls_json(out)
    assert c["kernel"] == "broken" and c["failed_stage"] == "frontend" and "undefined_name" in c["error"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no_such_script.py"], "no such script"),
        (["run", "{script}", "--target", "sm_xx"], "unknown target"),
        (["run", "{script}", "-o", "/nonexistent/dir/b.irscope"], "does not exist"),
        (["run", "{script}", "--python", "/no/such/python"], "not an executable"),
        (["ls", "{notbundle}"], "not an irscope bundle"),
        (["cat", "{notbundle}", "k"], "not an irscope bundle"),
    ],
)
def test_bad_input_one_line_errors(tmp_path, args, message):
    script = write_script(tmp_path, "ok.py", "print('hi')\n")
    notbundle = tmp_path / "notes.txt"
    notbundle.write_text("not a bundle")
    argv = [a.format(script=script, notbundle=notbundle) for a in args]
    p = irscope(*argv, cwd=tmp_path)
    assert p.returncode != 0
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert notbundle.read_text() == "not a bundle"


def test_syntax_error_script(tmp_path):
    script = write_script(tmp_path, "syn.py", "def broken(:\n")
    out = tmp_path / "s.irscope"
    p = irscope("run", script, "-o", out)
    assert p.returncode != 0 and "SyntaxError" in p.stderr and "syn.py:1" in p.stderr
    assert "Traceback" not in p.stderr and not out.exists()


def test_python_without_triton(tmp_path):
    base_python = os.path.join(sys.base_prefix, "bin", "python3")
    script = write_script(tmp_path, "k.py", VECTOR_ADD)
    p = irscope("run", script, "--python", base_python, "-o", tmp_path / "b.irscope")
    assert p.returncode != 0 and "no Triton" in p.stderr and "Traceback" not in p.stderr


def test_script_failure_after_captures_keeps_them(tmp_path):
    script = write_script(tmp_path, "late.py", VECTOR_ADD + '''
x = torch.rand(4096, device=DEVICE); out = torch.empty_like(x)
add_kernel[(4,)](x, x, out, 4096, BLOCK=1024)
raise RuntimeError("checked after launch")
''')
    out = tmp_path / "late.irscope"
    p = irscope("run", script, "-o", out)
    line = script.read_text().splitlines().index('raise RuntimeError("checked after launch")') + 1
    # A script that raised is a failure (no result check of compile-only mode): exit 3, the
    # run recorded `failed`, the exit and the record agree; the kernels are kept.
    assert p.returncode == 3, p.stderr
    (error,) = [ln for ln in p.stderr.splitlines() if ln.startswith("irscope: error:")]
    assert "checked after launch" in error and f"late.py:{line}" in error and "1 kernel(s) captured" in error
    assert "Traceback" not in p.stderr
    assert [c["kernel"] for c in ls_json(out)] == ["add_kernel"]
    (run,) = json.loads(irscope("ls", out, "--runs", "--json", check=True).stdout)
    assert run["status"] == "failed" and run["complete"] is True


SLOW_SCRIPT = VECTOR_ADD + '''
import sys
x = torch.rand(1 << 16, device=DEVICE); out = torch.empty_like(x)
for i in range(40):
    add_kernel[(1,)](x, x, out, x.numel() - i, BLOCK=2 ** (6 + i % 8))
    print("launched", i, flush=True)
'''


def _wait_for_captures(path, n, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            count = con.execute("SELECT count(*) FROM captures").fetchone()[0]
            con.close()
            if count >= n:
                return count
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    raise AssertionError("no captures appeared")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_capture_leaves_a_valid_bundle(tmp_path, sig):
    script = write_script(tmp_path, "many.py", SLOW_SCRIPT)
    out = tmp_path / "k.irscope"
    proc = subprocess.Popen([sys.executable, "-m", "irscope", "run", str(script), "-o", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    _wait_for_captures(out, 2)
    os.killpg(proc.pid, sig) if sig == signal.SIGKILL else proc.send_signal(sig)
    proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert proc.returncode == 130
    con = sqlite3.connect(out)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    caps = ls_json(out)
    assert 2 <= len(caps) < 40
    assert all(not c["complete"] for c in caps)
    # every stored capture is whole: its texts read back
    irscope("cat", out, "add_kernel", "--stage", "sass", "--variant", "0", check=True)


def test_exact_links_second_compile(tmp_path):
    out = tmp_path / "x.irscope"
    irscope("run", SAMPLES / "vector_add.py", "--exact-links", "-o", out, "-q", check=True)
    (c,) = ls_json(out)
    assert {"llir_ttgirloc", "ptx_ttgirloc", "sass_ttgirloc"} <= set(c["stages"])
    sass = irscope("cat", out, "add_kernel", "--stage", "sass_ttgirloc", check=True).stdout
    assert 'add_kernel.ttgir", line' in sass
    ttgir_lines = irscope("cat", out, "add_kernel", "--stage", "ttgir", check=True).stdout.count("\n")
    ptx = irscope("cat", out, "add_kernel", "--stage", "ptx_ttgirloc", check=True).stdout
    import re

    locs = [int(m) for m in re.findall(r"// add_kernel\.ttgir:(\d+):", ptx)]
    assert locs and all(1 <= n <= ttgir_lines for n in locs)
    # the normal stages keep their Python locations
    assert "vector_add.py" in irscope("cat", out, "add_kernel", "--stage", "ptx", check=True).stdout


def test_amd_target(tmp_path):
    out = tmp_path / "amd.irscope"
    p = irscope("run", SAMPLES / "vector_add.py", "--target", "gfx942", "-o", out)
    assert "AMD target" in p.stderr  # what is missing is said, not silently absent
    (c,) = ls_json(out)
    assert c["target"] == "gfx942" and {"ttir", "ttgir", "llir", "amdgcn", "hsaco"} <= set(c["stages"])
    assert "sass" not in c["stages"] and c["registers"] and c["resource_source"] == "amdgcn metadata"
    assert any("AMD" in n for n in c["notes"])
