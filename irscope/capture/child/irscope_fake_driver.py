"""A stand-in Triton driver for compile-only captures (no GPU needed).

Runs inside the captured script's interpreter, so it uses only the standard
library, Triton and torch. It answers what ``kernel[grid](...)`` asks of a driver
(target, device, stream, binary loading, launching) so that every launch compiles
its kernel exactly as a real launch would (same argument specialisation), and then
skips the launch itself.
"""

import os


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

        return 5 if "n_max_threads" in inspect.getsource(CompiledKernel._init_handles) else 4
    except (ImportError, OSError, TypeError):
        return 5


class _FakeUtils:
    def __init__(self, backend):
        self.backend = backend
        self.arity = _load_binary_arity()

    def load_binary(self, name, kernel, shared, device):
        # (module, function, n_regs, n_spills[, n_max_threads]): resource usage is
        # read from the cubin by irscope afterwards, not from a driver.
        return (None, None, 0, 0, 1024)[: self.arity]

    def get_device_properties(self, device):
        # Generous limits so the shared-memory check never rejects a kernel that a
        # real device would run; irscope reports the real usage from the binary.
        return {
            "max_shared_mem": 1 << 30,
            "max_num_regs": 65536,
            "multiprocessor_count": 132,
            "warpSize": 64 if self.backend == "hip" else 32,
            "sm_clock_rate": 1980000,
            "mem_clock_rate": 3201000,
            "mem_bus_width": 5120,
            "arch": "",
        }

    def unload_module(self, module):
        return None

    def fill_tma_descriptor(self, *args, **kwargs):
        raise RuntimeError("irscope compile-only mode: host TMA descriptors need a real GPU")

    def fill_1d_tma_descriptor(self, *args, **kwargs):
        self.fill_tma_descriptor()

    def fill_2d_tma_descriptor(self, *args, **kwargs):
        self.fill_tma_descriptor()


def _fake_benchmarker(kernel_call, quantiles=None, **kwargs):
    """Autotuning stand-in: run the call once (which compiles the config) and
    report equal times, so every config is compiled and the first one is kept."""
    kernel_call()
    if quantiles:
        return [1.0 for _ in quantiles]
    return 1.0


class FakeDriver:
    """Implements the subset of Triton's ``DriverBase`` used by launches and autotune."""

    def __init__(self, target_text):
        from triton.backends.compiler import GPUTarget

        backend, arch, warp = parse_target(target_text)
        self.target = GPUTarget(backend, arch, warp)
        self.backend = backend
        self.utils = _FakeUtils(backend)
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
    # Triton <= 3.1's autotuner imports triton.testing.do_bench into its module and
    # calls it directly, not through the driver: it would time the first config on a
    # GPU that is not there and end the script, so the other configs never compiled.
    try:
        import triton.runtime.autotuner as autotuner
    except Exception:  # noqa: BLE001 - a Triton without the module has nothing to patch
        autotuner = None
    if autotuner is not None and hasattr(autotuner, "do_bench"):
        autotuner.do_bench = _fake_benchmarker
        if hasattr(autotuner, "do_bench_cudagraph"):
            autotuner.do_bench_cudagraph = lambda fn, **kw: _fake_benchmarker(fn)
    os.environ.setdefault("TRITON_IRSCOPE_FAKE_DRIVER", "1")
    return fake
