"""Compiles one kernel (unless HANG_NO_KERNEL is set), writes its pid to
argv[1], then stays in a call that does not return to Python on Ctrl-C, the way
a long native compile step does (SIGINT ignored), for up to 60 s."""
import os
import signal
import sys
import time

if not os.environ.get("HANG_NO_KERNEL"):
    import torch
    import triton
    import triton.language as tl

    DEVICE = triton.runtime.driver.active.get_active_torch_device()

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    x = torch.rand(256, device=DEVICE)
    add_kernel[(1,)](x, x, x, 256, BLOCK=256)

signal.signal(signal.SIGINT, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
