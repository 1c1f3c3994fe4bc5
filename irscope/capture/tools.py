"""CUDA binary tools shipped in Triton's wheel: SASS and resource usage with no GPU.

``nvdisasm -g -c`` gives SASS with ``//## File`` line markers, ``cuobjdump
-res-usage`` the registers/shared/stack/local of the real cubin, and ``ptxas -v``
(re-run with Triton's own flags) the spill counts, which the cubin does not record.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

from irscope.compiler.records import Resources

#  Function add_kernel:
#  REG:26 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:408 TEXTURE:0 SURFACE:0 SAMPLER:0
RES_USAGE = re.compile(r"REG:(?P<reg>\d+) STACK:(?P<stack>\d+) SHARED:(?P<shared>\d+) LOCAL:(?P<local>\d+)")
# ptxas info    : Used 26 registers, used 1 barriers, 408 bytes cmem[0]
PTXAS_REGS = re.compile(r"Used (?P<reg>\d+) registers")
#     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
PTXAS_SPILLS = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads")

TOOL_TIMEOUT_S = 120


def parse_res_usage(text: str) -> dict[str, int]:
    """Parse ``cuobjdump -res-usage`` output (first function)."""
    m = RES_USAGE.search(text)
    return {k: int(v) for k, v in m.groupdict().items()} if m else {}


def parse_ptxas_log(text: str) -> dict[str, int]:
    """Parse a ``ptxas -v`` log into registers/stack/spill counts."""
    out: dict[str, int] = {}
    if m := PTXAS_REGS.search(text):
        out["reg"] = int(m["reg"])
    if m := PTXAS_SPILLS.search(text):
        out.update(stack=int(m["stack"]), stores=int(m["stores"]), loads=int(m["loads"]))
    return out


def _tool(tools_dir: str | None, name: str) -> str | None:
    for d in (tools_dir, *os.environ.get("PATH", "").split(os.pathsep)):
        if d and os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def _run(cmd: list[str]) -> tuple[int, str, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return (-1, "", str(exc))
    return (p.returncode, p.stdout, p.stderr)


def sass_with_lines(tools_dir: str | None, cubin: bytes) -> tuple[str | None, str]:
    """SASS of a cubin with line info (``nvdisasm -g -c``); (text or None, note)."""
    nvdisasm = _tool(tools_dir, "nvdisasm")
    if nvdisasm is None:
        return None, "nvdisasm not found"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        rc, out, err = _run([nvdisasm, "-g", "-c", f.name])
    if rc != 0:
        return None, "nvdisasm failed: " + (err.strip().splitlines() or ["?"])[-1]
    return out, ""


def resources_from_binary(tools_dir: str | None, cubin: bytes, ptx: str | None, arch: int, options: dict) -> Resources:
    """Resource usage with no GPU: cuobjdump on the cubin, ptxas -v for spills."""
    res = Resources(source="cuobjdump")
    cuobjdump = _tool(tools_dir, "cuobjdump")
    with tempfile.TemporaryDirectory() as tmp:
        binpath = os.path.join(tmp, "k.cubin")
        with open(binpath, "wb") as f:
            f.write(cubin)
        if cuobjdump:
            rc, out, err = _run([cuobjdump, "-res-usage", binpath])
            usage = parse_res_usage(out)
            if usage:
                res.registers, res.stack = usage["reg"], usage["stack"]
                res.shared, res.local = usage["shared"], usage["local"]
            else:
                res.notes.append("cuobjdump -res-usage gave nothing: " + err.strip()[:200])
        else:
            res.notes.append("cuobjdump not found")
        # Which ptxas Triton runs depends on its version (3.9 uses ptxas-blackwell from
        # sm_90 on, 3.6 from sm_100): try the usual one first, the other when it
        # refuses the PTX (an unsupported .version).
        names = ("ptxas-blackwell", "ptxas") if arch >= 100 else ("ptxas", "ptxas-blackwell")
        tools = [t for t in (_tool(tools_dir, n) for n in names) if t]
        failure = ""
        if tools and ptx:
            ptxpath = os.path.join(tmp, "k.ptx")
            with open(ptxpath, "w") as f:
                f.write(ptx)
        for ptxas in tools if ptx else ():
            # The same flags Triton's make_cubin uses, so the counts are the real ones.
            gpu = "sm_%da" % arch if arch >= 90 else "sm_%d" % arch
            cmd = [ptxas, "-lineinfo", "-v", "--gpu-name=%s" % gpu, ptxpath, "-o", os.path.join(tmp, "k.o")]
            if options.get("enable_fp_fusion") is False:
                cmd.insert(2, "--fmad=false")
            if options.get("ptx_options"):
                cmd[2:2] = str(options["ptx_options"]).split()
            rc, out, err = _run(cmd)
            log = parse_ptxas_log(out + err)
            if "stores" in log:
                res.spill_stores, res.spill_loads = log["stores"], log["loads"]
                if res.stack is None:
                    res.stack = log["stack"]
                res.source = "cuobjdump+ptxas"
                if res.registers is None and "reg" in log:
                    res.registers = log["reg"]
                break
            failure = (err.strip().splitlines() or ["no output"])[0][:200]
        else:
            if ptx and tools:
                res.notes.append(f"no spill counts: ptxas -v failed ({failure})")
    return res


# AMDGPU metadata in the .amdgcn text:   .vgpr_count:     24   /   .vgpr_spill_count: 0
AMD_FIELD = re.compile(r"^\s*\.(?P<key>vgpr_count|sgpr_count|vgpr_spill_count|sgpr_spill_count|group_segment_fixed_size|private_segment_fixed_size):\s+(?P<value>\d+)", re.M)


def amdgcn_resources(text: str) -> Resources:
    """VGPRs, spills, LDS and scratch of an AMD kernel, from its assembly's metadata."""
    fields = {m["key"]: int(m["value"]) for m in AMD_FIELD.finditer(text)}
    res = Resources(source="amdgcn metadata")
    res.registers = fields.get("vgpr_count")
    if "vgpr_spill_count" in fields:
        res.spill_stores = fields["vgpr_spill_count"] + fields.get("sgpr_spill_count", 0)
        res.spill_loads = 0
    res.shared = fields.get("group_segment_fixed_size")
    res.stack = fields.get("private_segment_fixed_size")
    if not fields:
        res.notes.append("no AMDGPU metadata found in the amdgcn text")
    return res
