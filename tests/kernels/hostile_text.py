"""A tutorial-style kernel whose texts are hostile to terminal renderers.

Its file is copied under a folder whose name holds Rich markup, HTML, braces,
backslashes and non-ASCII text (tests/test_hostile_text.py); the same strings are
in its comments, its ``tl.device_print`` prefix and its variant labels (a
lowercase first constexpr, as ``stride_ak=1`` is, and a string constexpr), so
every view must print them verbatim.
"""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()

HOSTILE = "[bold]b[/bold] [/] [red]r <script>alert(1)</script> {x} \\back é✓"


@triton.jit
def hostile_kernel(x_ptr, out_ptr, n, mode: tl.constexpr, BLOCK: tl.constexpr):
    # comment: [bold]b[/bold] [/] [red]r <script>alert(1)</script> {x} \back é✓
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.device_print("[/bold] [red]<script>alert(1)</script> {x} \\back", x)  # Triton wants ASCII here
    tl.store(out_ptr + offs, x * 2, mask=m)


x = torch.rand(4096, device=DEVICE)
out = torch.empty_like(x)
for block in (256, 1024):  # two variants: only BLOCK differs
    hostile_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), mode=HOSTILE, BLOCK=block)
