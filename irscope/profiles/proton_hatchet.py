"""Proton's PC-sampling tree (``proton.hatchet``, ``mode="pcsampling"``), parsed per kernel.

The file is JSON: ``[root, device_info]``. Under the root, one node per kernel NAME
(every launch and every variant of that name merged, ``metrics.count`` launches);
under a Triton kernel, one node per source line named ``<path>:<line>@<kernel>``
(the innermost line: inlined library code is on the library's own line). A kernel
without line info (torch, cuBLAS) carries its samples on its own node.

Per line, ``num_samples`` is all samples and ``num_stalled_samples`` the stalled
ones, which the 18 ``stalled_*`` metrics split by reason; the rest are
``not_stalled`` (the shared reason names of :mod:`irscope.profiles.model`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from irscope.errors import IrscopeError

from .model import NOT_STALLED, STALL_REASONS, UNLISTED, KernelProfile, SampledLine

#: Proton metric names that are not ``stalled_<shared name>``.
_RENAMED = {"dispatch_stall": "dispatch", "not_selected": "not_selected"}
_LINE_NAME_RE = re.compile(r"^(.*):(\d+)@(.+)$")


@dataclass(frozen=True)
class ProtonKernel:
    """One kernel name's samples: ``lines`` (sorted by file, line), ``launches``
    (Proton's count), ``unplaced`` (samples on the kernel's own node: no line)."""

    kernel: str
    launches: int
    lines: tuple[SampledLine, ...]
    unplaced: int

    @property
    def total_samples(self) -> int:
        """Every sample of the kernel: its lines' and its own node's."""
        return sum(ln.samples for ln in self.lines) + self.unplaced


@dataclass(frozen=True)
class ProtonProfile:
    """A whole hatchet file: its kernels by name, and what it says of the device
    (``"sm_90, 132 SMs"``; None when the file has no device entry)."""

    kernels: dict[str, ProtonKernel]
    device: str | None


def looks_like_hatchet(text: str) -> bool:
    """Whether ``text`` starts like a Proton hatchet (a JSON list of nodes)."""
    head = text.lstrip("\ufeff \t\r\n")[:4096]
    return head.startswith("[") and '"frame"' in head


def parse_proton_hatchet(text: str, name: str = "hatchet") -> ProtonProfile:
    """Parse a Proton PC-sampling hatchet; :class:`IrscopeError` (one line) when the
    text is not one (``name`` names the file in it)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise IrscopeError(f"{name}: not a Proton hatchet (not JSON: {exc})") from None
    root, device = _root_and_device(data, name)
    acc: dict[str, dict[str, Any]] = {}  # kernel -> {"launches", "lines": {(file, line): [samples, stalls]}, "unplaced"}
    _walk(root, None, acc, name)
    kernels = {}
    for kernel, a in acc.items():
        lines = tuple(SampledLine(f, ln, s, st) for (f, ln), (s, st) in sorted(a["lines"].items()))
        if lines or a["unplaced"]:
            kernels[kernel] = ProtonKernel(kernel, a["launches"], lines, a["unplaced"])
    return ProtonProfile(kernels, device)


def _root_and_device(data: Any, name: str) -> tuple[dict[str, Any], str | None]:
    """The tree's root node and the device description of a hatchet's JSON."""
    if isinstance(data, dict) and "frame" in data:
        return data, None
    if not (isinstance(data, list) and data and isinstance(data[0], dict) and "frame" in data[0]):
        raise IrscopeError(f"{name}: not a Proton hatchet (expected a list whose first item is the root node)")
    device = None
    if len(data) > 1 and isinstance(data[1], dict):
        for backend in data[1].values():
            if isinstance(backend, dict):
                for info in backend.values():
                    if isinstance(info, dict) and info.get("arch"):
                        sms = info.get("num_sms")
                        device = f"sm_{info['arch']}" + (f", {sms} SMs" if sms else "")
                        break
            if device:
                break
    return data[0], device


def _walk(node: Any, kernel: str | None, acc: dict[str, dict[str, Any]], name: str) -> None:
    """Add ``node`` and its subtree to ``acc``; ``kernel`` is the enclosing kernel node's name."""
    if not isinstance(node, dict) or not isinstance(node.get("frame"), dict):
        raise IrscopeError(f"{name}: not a Proton hatchet (a node without a frame)")
    frame_name = str(node["frame"].get("name", ""))
    metrics = node.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise IrscopeError(f"{name}: node {frame_name!r} has metrics that are not an object")
    m = _LINE_NAME_RE.match(frame_name)
    if m and kernel is not None:
        file, line, owner = m.group(1), int(m.group(2)), m.group(3)
        a = _entry(acc, owner)
        samples, stalls = _samples(metrics, frame_name, name)
        slot = a["lines"].setdefault((file, line), [0, {}])
        slot[0] += samples
        for k, v in stalls.items():
            slot[1][k] = slot[1].get(k, 0) + v
    elif frame_name != "ROOT" and kernel is None:
        a = _entry(acc, frame_name)
        a["launches"] += _int(metrics.get("count", 0), frame_name, name)
        a["unplaced"] += _samples(metrics, frame_name, name)[0]
        kernel = frame_name
    elif kernel is not None:
        # A deeper node that is not a line (a scope): its own samples have no line.
        acc[kernel]["unplaced"] += _samples(metrics, frame_name, name)[0]
    children = node.get("children") or []
    if not isinstance(children, list):
        raise IrscopeError(f"{name}: node {frame_name!r} has children that are not a list")
    for child in children:
        _walk(child, kernel, acc, name)


def _entry(acc: dict[str, dict[str, Any]], kernel: str) -> dict[str, Any]:
    return acc.setdefault(kernel, {"launches": 0, "lines": {}, "unplaced": 0})


def _samples(metrics: dict[str, Any], node: str, name: str) -> tuple[int, dict[str, int]]:
    """A node's samples and stalls by shared reason name (zeros left out)."""
    samples = _int(metrics.get("num_samples", 0), node, name)
    stalled = _int(metrics.get("num_stalled_samples", 0), node, name)
    stalls: dict[str, int] = {}
    for key, value in metrics.items():
        if not key.startswith("stalled_"):
            continue
        n = _int(value, node, name)
        if not n:
            continue
        reason = key[len("stalled_"):].lower()
        reason = _RENAMED.get(reason, reason)
        if reason not in STALL_REASONS:
            reason = UNLISTED  # a reason a newer Proton adds: kept, not lost
        stalls[reason] = stalls.get(reason, 0) + n
    listed = sum(stalls.values())
    if stalled > listed:
        stalls[UNLISTED] = stalls.get(UNLISTED, 0) + stalled - listed
    if samples > max(stalled, listed):
        stalls[NOT_STALLED] = samples - max(stalled, listed)
    return samples, stalls


def _int(value: Any, node: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IrscopeError(f"{name}: node {node!r} has a metric {value!r} that is not a number")
    return int(value)


def kernel_profile(pk: ProtonKernel, *, source: str, tool_version: str | None = None, gpu: str | None = None,
                   date: str | None = None, notes: tuple[str, ...] = ()) -> KernelProfile:
    """The :class:`KernelProfile` of one kernel name of a Proton tree."""
    merged = (f"Proton merges every launch and variant of {pk.kernel} "
              f"({pk.launches} launch{'es' if pk.launches != 1 else ''})",)
    return KernelProfile(tool="proton", tool_version=tool_version, gpu=gpu, date=date, launches=pk.launches,
                         kernel=pk.kernel, instructions=(), lines=pk.lines, unplaced=pk.unplaced,
                         total_samples=pk.total_samples, source=source, notes=merged + notes)
