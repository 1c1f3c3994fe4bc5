#!/usr/bin/env python3
"""Occupancy of every sample kernel as the CUDA driver computes it, against irscope's model.

Runs on a machine with an NVIDIA GPU, Triton and torch (nothing else: irscope's own
dependencies need not be installed; only ``irscope.core.occupancy`` is imported, from this
checkout). For every ``sample_kernels/*.py`` it runs the script's ``main()`` (real launches,
numeric check included), then takes every compiled kernel (every autotune config) from the
JIT caches and asks the driver, through ctypes on libcuda:

* ``CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`` (static shared), ``NUM_REGS``, ``LOCAL_SIZE_BYTES``;
* ``cuOccupancyMaxActiveBlocksPerMultiprocessor(func, num_warps * 32, metadata.shared)``,
  i.e. the launch Triton makes (its launcher passes ``metadata.shared`` as the dynamic
  shared size; its loader already set MAX_DYNAMIC_SHARED_SIZE_BYTES above 48 KiB);

and compares with ``occupancy(target, num_warps, registers=n_regs, shared_bytes=dynamic +
static)``. Two sweeps widen the check beyond the launches the samples make: every kernel at
block sizes of 1..32 warps, and three kernels over dynamic shared sizes placed at the
model's block-count boundaries (where an off-by-one in the reserved 1 KiB or the 128-byte
granularity would show).

Writes ``$OUT/h200_occupancy.json`` (``--out`` to change) and prints a table.
Usage: ``python scripts/gpu_occupancy_check.py [--out FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# A fresh cache: every kernel is compiled (and loaded) in this process, none comes from an old run.
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="irscope-occ-cache-"))

from irscope.core.occupancy import limits_for, occupancy  # noqa: E402

# cuda.h enums (checked against the cuda.h Triton ships).
FUNC_ATTR = {"max_threads_per_block": 0, "shared_size_bytes": 1, "local_size_bytes": 3, "num_regs": 4,
             "binary_version": 6, "max_dynamic_shared_size_bytes": 8, "preferred_shared_memory_carveout": 9}
FUNC_ATTR_MAX_DYNAMIC_SHARED = 8
DEV_ATTR = {"max_threads_per_block": 1, "max_shared_memory_per_block": 8, "warp_size": 10,
            "max_registers_per_block": 12, "multiprocessor_count": 16, "max_threads_per_multiprocessor": 39,
            "compute_capability_major": 75, "compute_capability_minor": 76,
            "max_shared_memory_per_multiprocessor": 81, "max_registers_per_multiprocessor": 82,
            "max_shared_memory_per_block_optin": 97, "max_blocks_per_multiprocessor": 106,
            "reserved_shared_memory_per_block": 111}


class Driver:
    """The few libcuda entry points this check needs, on the context torch/Triton made current."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
        self.lib.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [
            ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        self.lib.cuDeviceGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
        self.lib.cuCtxGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUresult {rc}")

    def func_attrs(self, func: int) -> dict[str, int]:
        out = {}
        for name, attr in FUNC_ATTR.items():
            v = ctypes.c_int()
            self._check(self.lib.cuFuncGetAttribute(ctypes.byref(v), attr, ctypes.c_void_p(func)), name)
            out[name] = v.value
        return out

    def set_max_dynamic_shared(self, func: int, size: int) -> int:
        return self.lib.cuFuncSetAttribute(ctypes.c_void_p(func), FUNC_ATTR_MAX_DYNAMIC_SHARED, size)

    def occupancy(self, func: int, threads: int, dynamic_shared: int) -> tuple[int, int]:
        """(CUresult, blocks per SM) of cuOccupancyMaxActiveBlocksPerMultiprocessor."""
        n = ctypes.c_int(-1)
        rc = self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), ctypes.c_void_p(func), threads,
                                                                  dynamic_shared)
        return rc, n.value

    def device_attrs(self) -> dict[str, int]:
        dev = ctypes.c_int()
        self._check(self.lib.cuCtxGetDevice(ctypes.byref(dev)), "cuCtxGetDevice")
        out = {}
        for name, attr in DEV_ATTR.items():
            v = ctypes.c_int()
            self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(v), attr, dev.value), name)
            out[name] = v.value
        ver = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(ver))
        out["driver_api_version"] = ver.value
        return out


def static_shared_cuda_python(func: int) -> int | None:
    """The same attribute through cuda-python, where installed (a second reading of it)."""
    try:
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]
        err, value = cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                           cu.CUfunction(func))
        return int(value) if int(err) == 0 else None
    except Exception:  # not installed, or another API generation: the ctypes figure stands alone
        return None


def cuobjdump_shared(cubin: bytes) -> int | None:
    """SHARED from ``cuobjdump --dump-resource-usage`` (what a compile-only capture records)."""
    import triton
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    exe = str(tool) if tool.exists() else shutil.which("cuobjdump")
    if not exe:
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        p = subprocess.run([exe, "--dump-resource-usage", f.name], capture_output=True, text=True)
    m = re.search(r"SHARED:(\d+)", p.stdout)
    return int(m.group(1)) if m else None


def load_sample(path: Path):
    spec = importlib.util.spec_from_file_location(f"irscope_sample_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compiled_kernels(module):
    """(JITFunction, CompiledKernel) for every kernel the module's launches compiled."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction
    seen = set()
    for obj in vars(module).values():
        fn = obj.fn if isinstance(obj, Autotuner) else obj
        if not isinstance(fn, JITFunction) or id(fn) in seen:
            continue
        seen.add(id(fn))
        # device_caches is a defaultdict: iterate it, never index it (that would add devices).
        for cache in list(fn.device_caches.values()):
            for kernel in cache[0].values():
                yield fn, kernel


def config_label(fn, kernel) -> str:
    """The constexpr arguments and the num_warps / num_stages options of one compiled variant."""
    consts = getattr(kernel.src, "constants", {}) or {}
    parts = []
    for i, param in enumerate(fn.params):
        if param.is_constexpr and (i,) in consts:
            parts.append(f"{param.name}={consts[(i,)]}")
    md = kernel.metadata
    parts += [f"num_warps={md.num_warps}", f"num_stages={md.num_stages}"]
    return ",".join(parts)


def sweep_shared_points(target: str, static: int, max_dynamic: int) -> list[int]:
    """Dynamic shared sizes around every block-count boundary of the model (and a few fixed ones)."""
    lim = limits_for(target)
    pts = {0, 1, 127, 128, 129, 1023, 1024, 1025, 48 * 1024, max_dynamic, max_dynamic + 1}
    for n in range(1, lim.max_blocks_per_sm + 1):
        edge = lim.shared_per_sm // n - lim.reserved_shared_per_block - static  # largest fitting n blocks, roughly
        for d in (-128, -1, 0, 1, 128):
            pts.add(edge + d)
    return sorted(p for p in pts if 0 <= p <= max_dynamic + 1)


def measure(drv: Driver, target: str, script: str, fn, kernel, records: list) -> tuple:
    """Append one record (driver figures vs the model) for one compiled kernel; return it for the sweeps."""
    kernel._init_handles()
    label = config_label(fn, kernel)
    attrs = drv.func_attrs(kernel.function)
    md = kernel.metadata
    dynamic, static = int(md.shared), attrs["shared_size_bytes"]
    rc, cuda_blocks = drv.occupancy(kernel.function, md.num_warps * 32, dynamic)
    ours = occupancy(target, num_warps=md.num_warps, registers=kernel.n_regs, shared_bytes=dynamic + static)
    records.append({
        "script": script, "kernel": kernel.name, "config": label, "num_warps": md.num_warps,
        "n_regs": kernel.n_regs, "n_spills": kernel.n_spills, "shared_dynamic": dynamic,
        "shared_static": static, "shared_static_cuda_python": static_shared_cuda_python(kernel.function),
        "shared_cuobjdump": cuobjdump_shared(kernel.asm["cubin"]), "driver_func_attrs": attrs,
        "cuda_rc": rc, "cuda_blocks_per_sm": cuda_blocks, "ours_blocks_per_sm": ours.blocks_per_sm,
        "ours_limited_by": ours.limited_by, "ours": ours.detail_json(),
        "match": rc == 0 and cuda_blocks == ours.blocks_per_sm,
    })
    return script, kernel, label, attrs


def _point(sweep: str, drv: Driver, target: str, kernel, label: str, warps: int, dyn: int, static: int,
           **extra) -> dict:
    rc, cuda_blocks = drv.occupancy(kernel.function, warps * 32, dyn)
    ours = occupancy(target, num_warps=warps, registers=kernel.n_regs, shared_bytes=dyn + static)
    return {"sweep": sweep, "kernel": kernel.name, "config": label, "num_warps": warps, "n_regs": kernel.n_regs,
            "shared_dynamic": dyn, "shared_static": static, **extra, "cuda_rc": rc,
            "cuda_blocks_per_sm": cuda_blocks, "ours_blocks_per_sm": ours.blocks_per_sm,
            "ours_limited_by": ours.limited_by, "match": rc == 0 and cuda_blocks == ours.blocks_per_sm}


def run_sweeps(drv: Driver, target: str, kernels: list) -> list[dict]:
    """Block sizes 1..32 warps for every kernel; dynamic shared boundaries for three of them."""
    sweeps = []
    for script, kernel, label, attrs in kernels:
        dynamic, static = int(kernel.metadata.shared), attrs["shared_size_bytes"]
        for warps in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32):
            sweeps.append(_point("block_size", drv, target, kernel, label, warps, dynamic, static))
    # A low-, a mid- and a high-register kernel, so the shared limit meets different register limits.
    optin = drv.device_attrs()["max_shared_memory_per_block_optin"]
    picked = {}
    for script, kernel, label, attrs in kernels:
        key = "low" if kernel.n_regs < 48 else "mid" if kernel.n_regs < 128 else "high"
        picked.setdefault(key, (script, kernel, label, attrs))
    for script, kernel, label, attrs in picked.values():
        static = attrs["shared_size_bytes"]
        max_dynamic = optin - static
        # Lets the query ask for up to the opt-in maximum (Triton sets this only above 48 KiB).
        set_rc = drv.set_max_dynamic_shared(kernel.function, max_dynamic)
        for dyn in sweep_shared_points(target, static, max_dynamic):
            sweeps.append(_point("dynamic_shared", drv, target, kernel, label, kernel.metadata.num_warps, dyn,
                                 static, set_max_dynamic_rc=set_rc))
    return sweeps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "out"), "h200_occupancy.json"))
    args = ap.parse_args()

    import torch
    import triton
    torch.cuda.init()
    drv = Driver()
    major, minor = torch.cuda.get_device_capability()
    target = f"sm_{major}{minor}"
    props = torch.cuda.get_device_properties(0)
    torch_props = {k: getattr(props, k, None) for k in (
        "name", "multi_processor_count", "max_threads_per_multi_processor", "regs_per_multiprocessor",
        "shared_memory_per_multiprocessor", "shared_memory_per_block_optin", "shared_memory_per_block", "warp_size")}

    records, sweeps, errors = [], [], []
    kernels = []  # (script, kernel, label, func attrs), kept for the sweeps
    for script in sorted((ROOT / "sample_kernels").glob("*.py")):
        buf = io.StringIO()
        try:
            module = load_sample(script)
            with contextlib.redirect_stdout(buf):
                module.main()
            torch.cuda.synchronize()
        except Exception:
            errors.append({"script": script.name, "error": traceback.format_exc(limit=3)})
            continue
        print(f"{script.name}: {buf.getvalue().strip()}")
        for fn, kernel in compiled_kernels(module):
            try:
                kernels.append(measure(drv, target, script.name, fn, kernel, records))
            except Exception:
                errors.append({"script": script.name, "kernel": kernel.name, "error": traceback.format_exc(limit=3)})

    try:
        sweeps = run_sweeps(drv, target, kernels)
    except Exception:
        errors.append({"script": "(sweeps)", "error": traceback.format_exc(limit=3)})
    dev = drv.device_attrs()

    lim = limits_for(target)
    result = {
        "target": target, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "triton": triton.__version__, "python": sys.version.split()[0], "driver_device_attrs": dev,
        "torch_device_props": torch_props, "model_limits": lim.to_json() if lim else None,
        "kernels": records, "sweeps": sweeps, "errors": errors,
        "summary": {"kernels": len(records), "kernels_matching": sum(r["match"] for r in records),
                    "sweep_points": len(sweeps), "sweep_matching": sum(s["match"] for s in sweeps),
                    "sweep_cuda_errors": sum(s["cuda_rc"] != 0 for s in sweeps)},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")

    head = f"{'kernel':<24} {'config':<62} {'warps':>5} {'regs':>4} {'dyn+static':>14} {'cuda':>4} {'ours':>4} {'limited by':<10} match"
    print(head)
    for r in records:
        short = ",".join(p for p in r["config"].split(",") if not p.startswith("stride"))
        print(f"{r['kernel']:<24} {short:<62} {r['num_warps']:>5} {r['n_regs']:>4} "
              f"{str(r['shared_dynamic']) + '+' + str(r['shared_static']):>14} {r['cuda_blocks_per_sm']:>4} "
              f"{r['ours_blocks_per_sm']:>4} {r['ours_limited_by']:<10} {'yes' if r['match'] else 'NO'}")
    for s in sweeps:
        if not s["match"]:
            print("sweep mismatch:", json.dumps(s))
    for e in errors:
        print("error:", e["script"], e["error"])
    print("summary:", json.dumps(result["summary"]))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
