"""CUDA for a torch built without it, as compile-only runs need: a device guard that
does nothing, and torch's CUDA "hooks" saying CUDA is built.

Many torch operations (``.contiguous()`` of a transposed tensor, ``chunk``,
``bmm``, indexing, ``with torch.cuda.device(...)``) take a *device guard* for their
tensors' device before torch's fake-tensor mode sees them, and autograd's engine
asks for the accelerator's streams. A CPU build of torch has neither for CUDA, so on
compile-only CUDA tensors those operations fail with "PyTorch is not linked with
support for cuda devices", and autograd aborts the process (SIGABRT). A small
library registers a guard whose device is always ``cuda:0``, whose stream is the
default one and whose events do nothing, and hooks that say CUDA is built (nothing
else: no allocator, no generator). It must be loaded before torch is imported (torch
reads the hooks once), so the capture hook loads it at interpreter start.

It is built once per torch installation with the C++ compiler on PATH and torch's
own headers, and cached (``$XDG_CACHE_HOME/irscope``, else ``~/.cache/irscope``).
Without a compiler nothing changes, and those operations fail as before.

Standard library only: this runs in the captured script's process, before torch.
"""

import ctypes
import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile

SOURCE = """\
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <ATen/detail/CUDAHooksInterface.h>
// irscope compile-only runs, torch built without CUDA: CUDA tensors are fake, so the
// device guard does nothing (one device, cuda:0, its default stream, events that are
// never waited on) and the hooks only say that CUDA is built.
namespace {
using c10::Device;
using c10::DeviceIndex;
using c10::DeviceType;
using c10::EventFlag;
using c10::Stream;
constexpr DeviceType kCuda = DeviceType::CUDA;
struct CompileOnlyGuard final : c10::impl::DeviceGuardImplInterface {
  DeviceType type() const override { return kCuda; }
  Device exchangeDevice(Device) const override { return Device(kCuda, 0); }
  Device getDevice() const override { return Device(kCuda, 0); }
  void setDevice(Device) const override {}
  void uncheckedSetDevice(Device) const noexcept override {}
  Stream getStream(Device) const noexcept override { return Stream(Stream::DEFAULT, Device(kCuda, 0)); }
  Stream getDefaultStream(Device) const override { return Stream(Stream::DEFAULT, Device(kCuda, 0)); }
  Stream getNewStream(Device, int) const override { return Stream(Stream::DEFAULT, Device(kCuda, 0)); }
  Stream exchangeStream(Stream) const noexcept override { return Stream(Stream::DEFAULT, Device(kCuda, 0)); }
  DeviceIndex deviceCount() const noexcept override { return 1; }
  void record(void**, const Stream&, const DeviceIndex, const EventFlag) const override {}
  void block(void*, const Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const DeviceIndex) const noexcept override {}
  void synchronizeEvent(void*) const override {}
  bool queryStream(const Stream&) const override { return true; }
  void synchronizeStream(const Stream&) const override {}
  void synchronizeDevice(const DeviceIndex) const override {}
  void recordDataPtrOnStream(const c10::DataPtr&, const Stream&) const override {}
};
}  // namespace
C10_REGISTER_GUARD_IMPL(CUDA, CompileOnlyGuard);
namespace at {
namespace {
struct CUDAHooks : CUDAHooksInterface {  // the registry's key is the class name
  explicit CUDAHooks(CUDAHooksArgs) {}
  bool isBuilt() const override { return true; }
  bool hasPrimaryContext(DeviceIndex) const override { return true; }
};
}  // namespace
REGISTER_CUDA_HOOKS(CUDAHooks);
}  // namespace at
"""

BUILD_TIMEOUT_S = 120


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irscope")


def cpu_only_torch_root():
    """The folder of the torch this interpreter would import, when that torch has no
    GPU backend of its own (no ``libc10_cuda``/``libc10_hip``); else None. Found
    without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    lib = os.path.join(root, "lib")
    if not os.path.isdir(os.path.join(root, "include")) or not os.path.isdir(lib):
        return None
    names = os.listdir(lib)
    if any(n.startswith(("libc10_cuda", "libc10_hip")) for n in names):
        return None
    return root


def _library_path(root):
    try:
        stamp = str(os.stat(os.path.join(root, "lib", "libtorch_cpu.so")).st_mtime_ns)
    except OSError:
        stamp = ""
    key = hashlib.sha256(("%s|%s|%s" % (root, stamp, SOURCE)).encode()).hexdigest()[:16]
    return os.path.join(_cache_dir(), "cuda-compile-only-%s.so" % key)


def _cxx11_abi(root):
    """torch's libstdc++ ABI (``_GLIBCXX_USE_CXX11_ABI``): 1 when its libc10 has the new
    ABI's ``std::__cxx11`` symbols (torch 2.7 and later), else 0."""
    try:
        with open(os.path.join(root, "lib", "libc10.so"), "rb") as f:
            return 1 if b"St7__cxx11" in f.read() else 0
    except OSError:
        return 1


def _build(root, path):
    """Compile the library to ``path``; the compiler's complaint, or "" when built."""
    compiler = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if compiler is None:
        return "no C++ compiler on PATH"
    lib = os.path.join(root, "lib")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="irscope-guard-") as tmp:
        src = os.path.join(tmp, "guard.cpp")
        with open(src, "w") as f:
            f.write(SOURCE)
        out = os.path.join(tmp, "guard.so")
        cmd = [compiler, "-O1", "-shared", "-fPIC", "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=%d" % _cxx11_abi(root),
               "-I", os.path.join(root, "include"), src, "-o", out, "-L", lib, "-Wl,-rpath," + lib,
               "-lc10", "-ltorch_cpu"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        if p.returncode != 0:
            errors = [ln for ln in p.stderr.splitlines() if "error" in ln] or p.stderr.strip().splitlines() or ["failed"]
            return errors[0][:300]
        # Another run may build the same file at the same time: each renames its own.
        staged = "%s.%d.tmp" % (path, os.getpid())
        shutil.copyfile(out, staged)
        os.replace(staged, path)
    return ""


PROBLEM = [""]
"""Why the library is not loaded, when it was needed and could not be ("" otherwise)."""


def install():
    """Before torch is imported: load the library when the torch to be imported has no
    CUDA of its own. Returns (and keeps in ``PROBLEM``) why it could not, or ""."""
    import sys

    if "torch" in sys.modules:  # too late for the hooks; say so rather than half-work
        PROBLEM[0] = "torch was imported before irscope's hook ran"
        return PROBLEM[0]
    root = cpu_only_torch_root()
    if root is None:  # no torch, or one with its own GPU backend
        return ""
    path = _library_path(root)
    why = "" if os.path.exists(path) else _build(root, path)
    if not why:
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            why = str(exc)
    PROBLEM[0] = why
    return why
