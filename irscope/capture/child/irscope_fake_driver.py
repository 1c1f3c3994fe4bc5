"""A stand-in Triton driver for compile-only captures (no GPU needed).

Runs inside the captured script's interpreter, so it uses only the standard
library, Triton and torch. It answers what ``kernel[grid](...)`` asks of a driver
(target, device, stream, binary loading, launching) so that every launch compiles
its kernel exactly as a real launch would (same argument specialisation), and then
skips the launch itself.
"""

import os
import re
import threading


def parse_target(text):
    """'sm_90' / 'sm90' / '90' -> ('cuda', 90, 32); 'gfx942' -> ('hip', 'gfx942', 64)."""
    t = text.strip().lower()
    if t.startswith("gfx"):
        return ("hip", t, 64)
    if t.startswith("sm_"):
        t = t[3:]
    elif t.startswith("sm"):
        t = t[2:]
    t = t.rstrip("a")  # sm_90a is the same Triton target as sm_90
    if not t.isdigit():
        raise ValueError("unknown target %r (expected e.g. sm_90, sm_80, gfx942)" % text)
    return ("cuda", int(t), 32)


class _FakeLauncher:
    """Launch stand-in: the kernel is compiled, never executed."""

    def __init__(self, src, metadata):
        self.src = src
        self.metadata = metadata

    def __call__(self, *args, **kwargs):
        return None


def _load_binary_arity():
    """4 values up to Triton 3.2, 5 (n_max_threads added) after."""
    import inspect

    try:
        from triton.compiler.compiler import CompiledKernel

        # (unwrapped: irscope's hook wraps the method)
        return 5 if "n_max_threads" in inspect.getsource(inspect.unwrap(CompiledKernel._init_handles)) else 4
    except (ImportError, OSError, TypeError):
        return 5


# cuobjdump -res-usage:  REG:26 STACK:0 SHARED:0 LOCAL:0 ...
_RES_USAGE = re.compile(rb"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def cubin_registers(cubin):
    """(registers, spills) of a cubin as a CUDA driver reports them to Triton:
    ``CU_FUNC_ATTRIBUTE_NUM_REGS``, and the per-thread local memory (stack frame
    and local) in 4-byte words. Read with ``cuobjdump -res-usage`` from Triton's
    wheel, the tool irscope's own resource figures come from; (0, 0) without it."""
    import subprocess
    import tempfile

    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.access(tool, os.X_OK):
        return (0, 0)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            out = subprocess.run([tool, "-res-usage", f.name], capture_output=True, timeout=120).stdout
        except (OSError, subprocess.TimeoutExpired):
            return (0, 0)
    m = _RES_USAGE.search(out)
    if m is None:
        return (0, 0)
    return (int(m.group(1)), (int(m.group(2)) + int(m.group(4))) // 4)


def _msgpack_uint(data, key):
    """The unsigned integer after the msgpack string ``key`` (the AMDGPU metadata
    note of a code object), or None."""
    tag = bytes([0xA0 | len(key)]) + key
    at = data.find(tag)
    if at < 0:
        return None
    i = at + len(tag)
    if i >= len(data):
        return None
    b = data[i]
    if b < 0x80:
        return b
    size = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}.get(b)
    if size is None or i + 1 + size > len(data):
        return None
    return int.from_bytes(data[i + 1:i + 1 + size], "big")


def hsaco_registers(hsaco):
    """(registers, spills) of an AMD code object as HIP reports them to Triton:
    VGPRs, and the private segment (scratch) in 4-byte words."""
    regs = _msgpack_uint(hsaco, b".vgpr_count") or 0
    private = _msgpack_uint(hsaco, b".private_segment_fixed_size") or 0
    return (regs, private // 4)


class _FakeUtils:
    def __init__(self, backend, device):
        self.backend = backend
        self.device = device
        self.arity = _load_binary_arity()
        self._loaded = {}  # binary -> (n_regs, n_spills): Triton <= 3.1 loads again at each launch

    def load_binary(self, name, kernel, shared, device):
        # (module, function, n_regs, n_spills[, n_max_threads]): no module is loaded,
        # the counts are the binary's own, as a real driver would give them.
        counts = self._loaded.get(kernel)
        if counts is None:
            counts = hsaco_registers(kernel) if self.backend == "hip" else cubin_registers(kernel)
            self._loaded[kernel] = counts
        return (None, None, counts[0], counts[1], self.device.max_threads_per_block)[: self.arity]

    def get_device_properties(self, device):
        # The target's device (irscope_devices): a launch that needs more shared
        # memory than it has is refused (OutOfResources) as on that GPU.
        d = self.device
        props = {
            "max_shared_mem": d.shared_memory_per_block_optin,
            "max_num_regs": d.regs_per_multiprocessor,
            "multiprocessor_count": d.multi_processor_count,
            "warpSize": d.warp_size,
            "sm_clock_rate": d.clock_rate,
            "mem_clock_rate": d.memory_clock_rate,
            "mem_bus_width": d.memory_bus_width,
            "arch": d.gcnArchName,
        }
        if self.backend == "hip":
            # HIP's driver (Triton >= 3.2) gives these too; tutorial 02 sizes its grid
            # on AMD from max_threads_per_sm.
            props["max_threads_per_sm"] = d.max_threads_per_multi_processor
            props["cooperativeLaunch"] = 1
        return props

    def unload_module(self, module):
        return None

    def fill_tma_descriptor(self, *args, **kwargs):
        raise RuntimeError("irscope compile-only mode: host TMA descriptors need a real GPU")

    def fill_1d_tma_descriptor(self, *args, **kwargs):
        # Triton 3.2/3.3's experimental_descriptor (tutorial 09) fills a 128-byte host
        # buffer that only a launch would read: in a compile-only run nothing is launched,
        # so the buffer is left as it is and the kernel taking it compiles.
        return None

    def fill_2d_tma_descriptor(self, *args, **kwargs):
        return None


# Set while the stand-in benchmarker runs the function it times: a kernel compiled
# then was compiled for timing (an autotuner's config), and its record says the
# timing was not measured.
_BENCHING = threading.local()
FAKE_MS = 1.0
"""What the stand-in benchmarker reports for every call, in milliseconds."""


def benchmarking():
    """Whether the stand-in benchmarker is running a function on this thread."""
    return getattr(_BENCHING, "depth", 0) > 0


def _run_timed(fn):
    _BENCHING.depth = getattr(_BENCHING, "depth", 0) + 1
    try:
        fn()
    finally:
        _BENCHING.depth -= 1


def _fake_benchmarker(kernel_call, quantiles=None, **kwargs):
    """Autotuning stand-in: run the call once (which compiles the config) and
    report equal times, so every config is compiled and the first one is kept."""
    _run_timed(kernel_call)
    if quantiles:
        return [FAKE_MS for _ in quantiles]
    return FAKE_MS


def fake_do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, *args, return_mode="mean", **kwargs):
    """``triton.testing.do_bench`` (and its CUDA-graph and Proton forms) with no GPU:
    ``fn`` runs once (its kernels compile), and the time is ``FAKE_MS``, whatever
    the arguments (``warmup``, ``rep``, ``quantiles``, ``return_mode``)."""
    _run_timed(fn)
    if quantiles:
        return [FAKE_MS for _ in quantiles]
    if return_mode == "all":
        return [FAKE_MS]
    return FAKE_MS


class FakeDriver:
    """Implements the subset of Triton's ``DriverBase`` used by launches and autotune."""

    def __init__(self, target_text):
        from triton.backends.compiler import GPUTarget

        import irscope_devices  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

        backend, arch, warp = parse_target(target_text)
        self.target = GPUTarget(backend, arch, warp)
        self.backend = backend
        self.device = irscope_devices.device_for(target_text)
        self.utils = _FakeUtils(backend, self.device)
        self.launcher_cls = _FakeLauncher

    # -- DriverBase API -------------------------------------------------
    def is_active(self):
        return True

    def get_current_target(self):
        return self.target

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda", 0)

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        return None

    def get_current_stream(self, device=None):
        return 0

    def get_benchmarker(self):
        return _fake_benchmarker

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(1024, dtype=torch.int8, device="cuda")

    def clear_cache(self, cache):
        return None

    def map_python_to_cpp_type(self, ty):
        return ty

    def assemble_tensormap_to_arg(self, tensormaps_info, args):
        return args


def install(target_text):
    """Make the fake driver Triton's active driver. Returns it."""
    import sys

    import triton.runtime.driver  # noqa: F401  (the module; its name is shadowed below)

    fake = FakeDriver(target_text)
    drv = sys.modules["triton.runtime.driver"].driver
    if hasattr(drv, "set_active"):
        drv.set_active(fake)
    else:  # Triton 3.0/3.1 keep the active driver in a private slot
        drv.default = fake
        drv.active = fake
    _replace_do_bench()
    _replace_cublas()
    os.environ.setdefault("TRITON_IRSCOPE_FAKE_DRIVER", "1")
    return fake


class CompileOnlyCublasLt:
    """Stands in for ``triton._C.libtriton.nvidia.cublas.CublasLt``: the real one loads
    ``libcublas.so`` when it is made (Triton's tutorials 09 and 10 make one whenever
    ``torch.cuda.is_available()``), and its calls would run on the tensors' memory.
    In a compile-only run nothing executes on the device, cuBLAS's calls neither:
    they return as a launch does, leaving the output tensor as it was."""

    def __init__(self, workspace=None, *args, **kwargs):
        self.workspace = workspace

    def __getattr__(self, name):  # matmul, gemm, block_scaled_matmul_*... whatever the Triton has
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


def _replace_cublas():
    try:
        from triton._C.libtriton import nvidia
    except ImportError:  # a Triton built without the NVIDIA backend
        return
    cublas = getattr(nvidia, "cublas", None)
    if cublas is not None and hasattr(cublas, "CublasLt"):
        cublas.CublasLt = CompileOnlyCublasLt


def _replace_do_bench():
    """Every way of timing a kernel gets the stand-in: ``triton.testing``'s
    functions (scripts and autotuners given ``warmup=``/``rep=`` call them
    directly), and Triton <= 3.1's autotuner, which imported ``do_bench`` into its
    own module. The real ones would time the first config on a GPU that is not
    there and end the script, so the other configs would never compile."""
    import importlib

    names = ("do_bench", "do_bench_cudagraph", "do_bench_proton", "do_bench_cudagraph_proton")
    for module_name in ("triton.testing", "triton.runtime.autotuner"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a Triton without the module has nothing to patch
            continue
        for name in names:
            if callable(getattr(module, name, None)):
                setattr(module, name, fake_do_bench)
