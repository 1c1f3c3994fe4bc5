"""A do-nothing CUDA device guard for a torch built without CUDA (compile-only runs).

Many torch operations (``.contiguous()`` of a transposed tensor, ``chunk``,
``bmm``, indexing, autograd's bookkeeping) take a *device guard* for their
tensors' device before torch's fake-tensor mode sees them. A CPU build of torch
has no guard for CUDA, so on compile-only CUDA tensors they fail with "PyTorch is
not linked with support for cuda devices", and autograd aborts the process
(SIGABRT). torch ships a do-nothing guard (``NoOpDeviceGuardImpl``); a tiny
library registers it for CUDA. It is built once per torch version with the C++
compiler on PATH and torch's own headers, and cached
(``$XDG_CACHE_HOME/irscope``, else ``~/.cache/irscope``). Without a compiler,
nothing changes and those operations fail as before.

Standard library and torch only: this runs in the captured script's process.
"""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

SOURCE = """\
#include <c10/core/impl/DeviceGuardImplInterface.h>
// irscope compile-only runs: a do-nothing device guard for CUDA in a torch built without CUDA.
C10_REGISTER_GUARD_IMPL(CUDA, c10::impl::NoOpDeviceGuardImpl<c10::DeviceType::CUDA>);
"""

BUILD_TIMEOUT_S = 120


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irscope")


def _library_path(torch):
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    key = hashlib.sha256(("%s|%s|%d|%s" % (torch.__version__, torch.__file__, abi, SOURCE)).encode()).hexdigest()[:16]
    return os.path.join(_cache_dir(), "cuda-guard-%s.so" % key), abi


def _build(torch, path, abi):
    """Compile the library to ``path``; the compiler's complaint, or "" when built."""
    compiler = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if compiler is None:
        return "no C++ compiler on PATH"
    root = os.path.dirname(torch.__file__)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="irscope-guard-") as tmp:
        src = os.path.join(tmp, "guard.cpp")
        with open(src, "w") as f:
            f.write(SOURCE)
        out = os.path.join(tmp, "guard.so")
        cmd = [compiler, "-O1", "-shared", "-fPIC", "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi,
               "-I", os.path.join(root, "include"), src, "-o", out, "-L", os.path.join(root, "lib"), "-lc10"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        if p.returncode != 0:
            return (p.stderr.strip().splitlines() or ["failed"])[-1]
        # Another run may build the same file at the same time: each renames its own.
        staged = "%s.%d.tmp" % (path, os.getpid())
        shutil.copyfile(out, staged)
        os.replace(staged, path)
    return ""


def install(torch):
    """Register the guard when torch has no CUDA of its own; returns "" when it is
    in place (or not needed), else why not."""
    if torch.backends.cuda.is_built():  # torch's own CUDA guard is there
        return ""
    path, abi = _library_path(torch)
    if not os.path.exists(path):
        why = _build(torch, path, abi)
        if why:
            return why
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        return str(exc)
    return ""
