"""Kernels compiled in other processes the script starts are captured too
(as torch.compile's parallel compile workers do), through the sitecustomize
hook that every Python child inherits."""

import pytest

from conftest import VECTOR_ADD, irscope, ls_json, write_script

pytestmark = pytest.mark.slow

WORKER = VECTOR_ADD + '''
import subprocess, sys
code = """
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import importlib.util
spec = importlib.util.spec_from_file_location("k", %r)
k = importlib.util.module_from_spec(spec); spec.loader.exec_module(k)
sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
triton.compile(ASTSource(k.add_kernel, sig, constexprs={(4,): 256}), target=GPUTarget("cuda", 80, 32))
print("worker compiled")
""" % (__file__,)
if __name__ == "__main__":
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    print(out.stdout.strip(), out.stderr.strip()[-300:])
    assert out.returncode == 0
'''


def test_kernels_compiled_in_a_child_process(tmp_path):
    script = write_script(tmp_path, "spawner.py", WORKER)
    out = tmp_path / "w.irscope"
    p = irscope("run", script, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "worker compiled" in p.stdout + p.stderr
    (c,) = ls_json(out)
    assert c["kernel"] == "add_kernel" and c["target"] == "sm_80" and c["variant"].startswith("BLOCK=256")
    assert c["passes"] > 50 and "sass" in c["stages"]
