"""Peak throughput of each target's reference GPU: dense matrix (tensor-core) FLOP/s by
operand type, and DRAM bandwidth. Their ratio is the target's *ridge point* (FLOP per
byte): a tile whose dots do more FLOPs per byte it loads is compute-bound.

One GPU per target, the same parts as the device table of compile-only captures
(``irscope.capture.child.irscope_devices``; docs/user-guide.md lists both). The figures
are the vendors' published datasheet numbers, *dense* (NVIDIA's datasheets print the
2:4-sparse figure first; it is twice these), at boost clock:

- V100 SXM2: NVIDIA Tesla V100 datasheet (125 TFLOP/s fp16 tensor, 900 GB/s).
- T4: NVIDIA T4 datasheet (65 fp16 mixed, 130 int8, 320 GB/s).
- A100 SXM4 80GB: NVIDIA A100 datasheet (312 fp16/bf16, 156 tf32, 624 int8, 2039 GB/s).
- A10: NVIDIA A10 datasheet (125 fp16/bf16, 62.5 tf32, 250 int8, 600 GB/s).
- L40S: NVIDIA L40S datasheet (362 fp16/bf16, 183 tf32, 733 fp8 and int8, 864 GB/s).
- H200 SXM: NVIDIA H200 datasheet (989 fp16/bf16, 494 tf32, 1979 fp8 and int8, 4.8 TB/s).
- B200: NVIDIA HGX B200 datasheet, per GPU (2250 fp16/bf16, 1100 tf32, 4500 fp8, 8 TB/s).
- RTX 5090: NVIDIA RTX Blackwell GPU architecture whitepaper (209.5 fp16 with fp32
  accumulate, 419 fp8, 1792 GB/s).
- MI250X, one GCD (what a process sees as one device): AMD Instinct MI250X datasheet
  halved (191.5 fp16/bf16, 191.5 int8, 1638 GB/s).
- MI300X: AMD Instinct MI300X datasheet (1307 fp16/bf16, 654 tf32, 2615 fp8 and int8,
  5.3 TB/s).
- MI355X: AMD Instinct MI355X datasheet (2517 fp16/bf16, 5033 fp8, 8 TB/s).

``fp32`` is the non-tensor FMA rate (a ``tt.dot`` with ``inputPrecision = ieee`` on f32
runs on the FMA units). Standard library only: the core imports it without Triton or torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from irscope.core.target import Target
from irscope.errors import IrscopeError


@dataclass(frozen=True, slots=True)
class Peaks:
    """One target's reference GPU: dense matrix TFLOP/s by operand class, and DRAM GB/s."""

    target: str
    device: str
    tflops: dict[str, float]
    """``fp16`` (fp16 and bf16), ``tf32``, ``fp8``, ``int8``, ``fp32`` (FMA, not tensor cores)."""
    bandwidth_gbs: float
    """DRAM bandwidth, GB/s (10^9 bytes per second)."""
    source: str

    def ridge(self, dtype: str) -> float | None:
        """FLOP per byte at which a kernel of operand class ``dtype`` stops being
        memory-bound on this GPU; None when the table has no peak for that class."""
        peak = self.tflops.get(dtype)
        if peak is None:
            return None
        return peak * 1e12 / (self.bandwidth_gbs * 1e9)


def _p(target: str, device: str, bandwidth: float, source: str, **tflops: float) -> Peaks:
    return Peaks(target, device, dict(tflops), bandwidth, source)


PEAKS: dict[str, Peaks] = {p.target: p for p in (
    _p("sm_70", "Tesla V100-SXM2-32GB", 900, "NVIDIA Tesla V100 datasheet", fp16=125, fp32=15.7),
    _p("sm_75", "Tesla T4", 320, "NVIDIA T4 datasheet", fp16=65, int8=130, fp32=8.1),
    _p("sm_80", "NVIDIA A100-SXM4-80GB", 2039, "NVIDIA A100 datasheet",
       fp16=312, tf32=156, int8=624, fp32=19.5),
    _p("sm_86", "NVIDIA A10", 600, "NVIDIA A10 datasheet", fp16=125, tf32=62.5, int8=250, fp32=31.2),
    _p("sm_89", "NVIDIA L40S", 864, "NVIDIA L40S datasheet",
       fp16=362.05, tf32=183, fp8=733, int8=733, fp32=91.6),
    _p("sm_90", "NVIDIA H200", 4800, "NVIDIA H200 datasheet",
       fp16=989, tf32=494, fp8=1979, int8=1979, fp32=67),
    _p("sm_100", "NVIDIA B200", 8000, "NVIDIA HGX B200 datasheet, per GPU",
       fp16=2250, tf32=1100, fp8=4500, fp32=75),
    _p("sm_120", "NVIDIA GeForce RTX 5090", 1792, "NVIDIA RTX Blackwell GPU architecture whitepaper",
       fp16=209.5, fp8=419, fp32=104.8),
    _p("gfx90a", "AMD Instinct MI250X (one GCD)", 1638, "AMD Instinct MI250X datasheet, halved per GCD",
       fp16=191.5, int8=191.5, fp32=47.9),
    _p("gfx942", "AMD Instinct MI300X", 5300, "AMD Instinct MI300X datasheet",
       fp16=1307.4, tf32=653.7, fp8=2614.9, int8=2614.9, fp32=163.4),
    _p("gfx950", "AMD Instinct MI355X", 8000, "AMD Instinct MI355X datasheet",
       fp16=2516.6, fp8=5033.2, fp32=157.3),
)}


def peaks_for(target: str) -> Peaks | None:
    """The table's entry for ``target`` (any spelling :class:`Target` reads, ``sm_90a``
    included); None for a target the table does not hold."""
    try:
        name = Target.parse(target.split(":")[0] if target.startswith("gfx") else target).name
    except IrscopeError:
        return None
    return PEAKS.get(name)
