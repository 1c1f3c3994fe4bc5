"""TTIR -> TTGIR links: the same location chain, the same op or a known rename."""

from __future__ import annotations

from collections import defaultdict

from irscope.compiler.stages import TTGIR, TTIR
from irscope.ir import Module, Op

from .keys import _index, chain_key, units
from .model import StageLink

RENAMES: dict[str, frozenset[str]] = {
    # TTIR op -> the TTGIR ops it may become (the same name always counts).
    "tt.dot": frozenset({"ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttg.dot"}),
    "tt.dot_scaled": frozenset({"ttng.tc_gen5_mma_scaled"}),
    "tt.load": frozenset({"ttg.async_copy_global_to_local", "ttg.local_load", "ttg.async_commit_group",
                          "ttg.async_wait"}),
    "tt.descriptor_load": frozenset({"ttng.async_tma_copy_global_to_local", "ttg.local_load"}),
    "tt.descriptor_store": frozenset({"ttng.async_tma_copy_local_to_global"}),
    "tt.trans": frozenset({"ttg.memdesc_trans"}),
    "tt.reshape": frozenset({"ttg.memdesc_reshape"}),
}
"""Known renames between TTIR and TTGIR (Triton 3.x lowering and pipelining)."""

# Dialects whose ops only TTGIR has: such an op at a TTIR location is "derived".
_GPU_DIALECTS = ("ttg", "ttng", "amdgpu", "nvgpu", "nvws")


def link_ttir_ttgir(ttir: Module, ttgir: Module) -> list[StageLink]:
    """Links from TTIR ops to the TTGIR ops at the same full location chain.

    Per TTGIR op, only its strongest tie is kept: ``same-op`` to the TTIR op(s) of the
    same name (or a :data:`RENAMES` source); else ``derived`` to every TTIR op there if
    it is a GPU-dialect op TTIR lacks; else ``same-location``. When both sides have the
    same number of same-name ops at one location they pair in order (TTGIR keeps the
    order); otherwise every such pair links (a layout split duplicates ``make_range``).
    """
    src = _index(units(ttir), chain_key)
    dst = _index(units(ttgir), chain_key)
    links: list[StageLink] = []
    for key, gops in dst.items():
        tops = src.get(key)
        if not tops:
            continue
        by_name: dict[str, list[Op]] = defaultdict(list)
        for t in tops:
            by_name[t.name].append(t)
        g_by_name: dict[str, list[Op]] = defaultdict(list)
        for g in gops:
            g_by_name[g.name].append(g)
        for g in gops:
            same = by_name.get(g.name)
            if same:
                peers = g_by_name[g.name]
                if len(peers) == len(same):
                    same = [same[peers.index(g)]]
                links.extend(StageLink(TTIR, t.line, TTGIR, g.line, "same-op") for t in same)
                continue
            renamed = [t for t in tops if g.name in RENAMES.get(t.name, ())]
            if renamed:
                links.extend(StageLink(TTIR, t.line, TTGIR, g.line, "same-op") for t in renamed)
                continue
            kind = "derived" if getattr(g, "dialect", "") in _GPU_DIALECTS else "same-location"
            links.extend(StageLink(TTIR, t.line, TTGIR, g.line, kind) for t in tops)
    return links

