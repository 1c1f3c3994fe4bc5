"""The tensors of a compile-only run: torch's fake tensors (shapes, dtypes, strides,
devices; no data), with two additions real scripts need.

- ``torch.cuda``'s device queries answer for the target's device
  (:mod:`irscope_devices`' table), and a CUDA device guard exists
  (:mod:`irscope_cuda_guard`), so views, ``.contiguous()`` and autograd work.
- **Custom operators run their real implementation.** Under a plain
  ``FakeTensorMode`` an operator made with ``torch.library.custom_op``,
  ``triton_op`` or ``Library.impl(..., "CUDA")`` runs its *fake* implementation
  (its ``register_fake`` function), which only makes output shapes: the Triton
  kernels inside the real one never launch, so they are never compiled, and a
  script that launches two kernels would yield one. :class:`CompileOnlyMode`
  calls the operator's CUDA kernel (or its device-independent one, for an
  operator of the user's own namespace) instead, still on fake tensors, so its
  launches compile as any other launch does.

- **Values read after the first compile are placeholders.** Fake tensors hold no
  data, so a value read (``.item()``, ``.tolist()``, ``bool(t)``,
  ``torch.allclose``, ``torch.testing.assert_close``) has nothing to give. Before
  any kernel compiled, the read stops the script: the value may choose a config,
  and a made-up one would capture something a GPU run never compiles. After that,
  it is almost always a check of results (tutorials check, then benchmark more
  kernels), so the read gets a placeholder (``True`` for a check, 1 for a number)
  and the script goes on, capturing the kernels it launches later. The first
  read's line and the count are reported (``values.json`` in the spool) and every
  kernel compiled after it carries a note; ``--strict`` makes such a run fail.
  Past :data:`MAX_READS` reads (a loop waiting for a value to converge) the read
  stops the script as before.

Why fake tensors and not host-backed ones: fake tensors cost no memory for a
tensor's data (a model script with multi-GB weights captures on a laptop) and no
time for torch's math, and every Triton launch only reads shapes, strides, dtypes
and pointer alignment (docs/benchmarks.md measures both designs).

Standard library and torch only: this runs in the captured script's process.
"""

import json
import os
import sys
from types import FrameType

# Placeholder value reads allowed before a read stops the script (see the module notes).
MAX_READS = 10000
# How many values were read as placeholders (read by the hook's records), and where the
# first read was ("file:line" in the user's script).
READS = [0]
FIRST_READ = [""]

# Namespaces of torch's own operators: their fake implementations are exact, and
# their "real" ones are the CPU build's, which cannot take CUDA tensors.
_TORCH_NAMESPACES = frozenset({
    "aten", "prims", "prim", "debugprims", "rngprims", "_c10d_functional", "c10d", "c10d_functional",
    "_dtensor", "profiler", "quantized", "_quantized", "inductor", "mkldnn", "mkl", "onednn", "fbgemm",
    "_nested_tensor", "higher_order", "_test",
})


def real_kernel_key(func, torch):
    """The dispatch key whose kernel is ``func``'s real implementation for CUDA
    tensors, or None to keep the fake one. A CUDA kernel exists in a CPU build of
    torch only when the user (or a library) registered it; a device-independent
    (``CompositeExplicitAutograd``) one counts only outside torch's namespaces,
    where it is what ``custom_op`` without ``device_types`` and ``triton_op``
    register."""
    namespace = getattr(func, "namespace", None)
    if not namespace or namespace in _TORCH_NAMESPACES:
        return None
    keys = torch._C.DispatchKey
    for key in (keys.CUDA, keys.CompositeExplicitAutograd):
        if torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), key):
            return key
    return None


def make_mode(torch):
    """A ``FakeTensorMode`` that runs custom operators' real implementations."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    aten = torch.ops.aten
    value_reads = frozenset({aten._local_scalar_dense.default, aten.allclose.default, aten.equal.default})

    class CompileOnlyMode(FakeTensorMode):
        """Fake tensors; custom operators run for real (see the module notes)."""

        _real_keys: dict = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in value_reads and 0 < _compiled() and READS[0] < MAX_READS:
                return _placeholder(func, args, torch)
            try:
                key = self._real_keys[func]
            except KeyError:
                key = self._real_keys[func] = real_kernel_key(func, torch)
            except TypeError:  # an unhashable operator-like object: torch decides
                key = None
            if key is None:
                return super().__torch_dispatch__(func, types, args, kwargs or {})
            # Inside __torch_dispatch__ the mode is off; the implementation's own
            # factories (torch.empty(..., device="cuda")) need it back on.
            with self:
                return func._op_dk(key, *args, **(kwargs or {}))

    return CompileOnlyMode(allow_non_fake_inputs=True)


def _compiled():
    """How many kernels the hook has compiled so far in this process."""
    hook = sys.modules.get("irscope_child_hook")
    return hook._SEQ[0] if hook is not None else 0


def _placeholder(func, args, torch):
    """The value a read gets after the first compile: a check passes, a number is 1."""
    READS[0] += 1
    if READS[0] == 1:
        FIRST_READ[0] = _user_line()
        _write_reads()
        import atexit

        atexit.register(_write_reads)
    if func is not torch.ops.aten._local_scalar_dense.default:  # allclose, equal
        return True
    dtype = args[0].dtype
    if dtype == torch.bool:
        return True
    return 1.0 if (dtype.is_floating_point or dtype.is_complex) else 1


def _user_line():
    """``file:line`` of the innermost frame of the user's script (the running
    ``__main__``), or of the innermost frame outside torch and irscope."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    frame: FrameType | None = sys._getframe(2)
    fallback = ""
    while frame is not None:
        name = frame.f_code.co_filename
        if script and os.path.abspath(name) == script:
            return "%s:%d" % (os.path.basename(name), frame.f_lineno)
        if not fallback and os.sep + "torch" + os.sep not in name and "irscope" not in os.path.basename(name):
            fallback = "%s:%d" % (os.path.basename(name), frame.f_lineno)
        frame = frame.f_back
    return fallback


def _write_reads():
    """``values.json`` in the spool: the count and the first read's line, for the parent."""
    spool = os.environ.get("IRSCOPE_SPOOL")
    if not spool:
        return
    path = os.path.join(spool, "values.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"reads": READS[0], "first": FIRST_READ[0]}, f)
    os.replace(path + ".tmp", path)


def compile_only_context(target):
    """The context a compile-only script runs in: :class:`CompileOnlyMode`, with
    ``torch.cuda`` answering for ``target``'s device; a no-op without torch."""
    import contextlib

    try:
        import torch
    except ImportError:
        return contextlib.nullcontext()
    import irscope_cuda_guard  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
    import irscope_devices  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

    # Loaded (or not) by the hook at interpreter start, before torch was imported.
    why = irscope_cuda_guard.PROBLEM[0]
    if why:
        sys.stderr.write("irscope: compile-only: torch operations that need a CUDA device guard (.contiguous() of a "
                         "transposed tensor, autograd...) will fail: no guard could be built (%s)\n" % why)
    irscope_devices.patch_torch_cuda(torch, irscope_devices.device_for(target or "sm_90"))
    patch_tensor_from_data(torch)
    return make_mode(torch)


def patch_tensor_from_data(torch):
    """``torch.tensor(data, device="cuda")`` and ``torch.as_tensor(data, device="cuda")``
    make the tensor on the host, then move it: torch builds a tensor from Python data
    outside the fake mode, straight on the device, which a CPU build has no kernel for
    (``aten::empty_strided`` on 'CUDA'). Kernel libraries pass pointer and size tables
    this way (Triton's tutorial 08)."""
    if getattr(torch.tensor, "_irscope_from_data", False):
        return

    def on_host_then_move(make):
        def build(data, *args, **kwargs):
            device = kwargs.get("device")  # keyword-only in both
            if device is None or torch.device(device).type in ("cpu", "meta"):
                return make(data, *args, **kwargs)
            kwargs.pop("device", None)
            kwargs.pop("pin_memory", None)
            grad = kwargs.pop("requires_grad", False)
            t = make(data, *args, **kwargs).to(device)
            return t.requires_grad_() if grad else t

        build._irscope_from_data = True  # type: ignore[attr-defined]  # a marker: patch once
        build.__doc__ = make.__doc__
        return build

    torch.tensor = on_host_then_move(torch.tensor)
    torch.as_tensor = on_host_then_move(torch.as_tensor)
