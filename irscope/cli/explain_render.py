"""How ``irscope explain`` lays out an :class:`irscope.core.explain.Explanation`:
a per-line table that fits 80 and 120 columns (a cell holds one fact per line and is
never wrapped, so no count is split or cut; the source text is the column that gives
way), then the remarks and the kernel's facts. Every string from the capture reaches
Rich as :class:`~rich.text.Text`, never as markup."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from irscope.compiler.stages import PTX, SASS, TTGIR
from irscope.core import Capture
from irscope.core.explain import Explanation, LineExplanation
from irscope.core.hints import Hint
from irscope.core.line_costs import PATH_ATOMIC, PATH_CP_ASYNC, PATH_TMA, GlobalAccess
from irscope.core.summary import occupancy_text

_STAGE_COLUMNS = tuple((stage, stage) for stage in (TTGIR, PTX, SASS))


def access_text(a: GlobalAccess) -> str:
    """``ld 16b×8 of 128b``: the verb, bits per instruction, instructions, and (when
    narrower) the widest the layout allows."""
    verb = {PATH_CP_ASYNC: "cp", PATH_TMA: "tma", PATH_ATOMIC: "atom"}.get(a.path, "ld" if a.kind == "load" else "st")
    if a.bits is None:
        return f"{verb}×{a.instructions}"
    out = f"{verb} {a.bits}b×{a.instructions}"
    if a.narrow and a.max_bits is not None:
        out += f" of {a.max_bits}b"
    return out


def _source_texts(cap: Capture) -> dict[tuple[str | None, int], str]:
    out: dict[tuple[str | None, int], str] = {}
    for fn in cap.user_functions().functions:
        for fl in fn.lines:
            out[(fn.file, fl.line)] = fl.text
    return out


def _table(cap: Capture, ex: Explanation, lines: tuple[LineExplanation, ...], width: int) -> Table:
    texts = _source_texts(cap)
    rows = []
    for ln in lines:
        c = ln.costs
        label = str(ln.line) if ln.function == cap.kernel else f"{ln.function}:{ln.line}"
        counts = "/".join(str(c.ops.get(s, 0)) for s, _ in _STAGE_COLUMNS)
        glob = Text()
        for i, a in enumerate(c.global_accesses):
            if i:
                glob.append("\n")
            glob.append(access_text(a), style="bold yellow" if a.narrow else "")
        shared = Text("\n".join(f"{k} {n}" for k, n in c.shared_tensor.items()))
        spills = Text(str(c.spills) if c.spills else "-", style="bold red" if c.spills else "dim")
        rem = Text(str(len(ln.remarks)) if ln.remarks else "-", style="bold" if ln.remarks else "dim")
        source = Text((texts.get((ln.file, ln.line)) or "").strip(), style="dim")
        rows.append((Text(label), Text(counts), glob, shared, spills, rem, source))
    headers = ("line", "/".join(name for _, name in _STAGE_COLUMNS), "global", "smem / tensor core", "spills", "rem", "source")
    t = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, expand=False)
    used = 0
    for i, h in enumerate(headers[:-1]):
        cells = [r[i] for r in rows]
        natural = max([len(h)] + [len(line) for c in cells for line in c.plain.split("\n")])
        used += natural + 3  # a padding space each side and the divider
        numeric = h in ("line", "spills", "rem")
        # One fact per line of a cell, never wrapped: a count is never split from its name.
        t.add_column(h, justify="right" if numeric else "left", min_width=natural, no_wrap=True)
    room = width - used - 1
    with_source = room >= 10  # a column too narrow to read is left out
    if with_source:
        t.add_column("source", no_wrap=True, overflow="ellipsis", max_width=room)
    function = None
    for ln, r in zip(lines, rows):
        if function is not None and ln.function != function:
            t.add_section()  # a helper's lines after the kernel's
        function = ln.function
        if with_source and len(r[-1]) > room:
            r[-1].truncate(room, overflow="ellipsis")
        t.add_row(*(r if with_source else r[:-1]))
    return t


def render(cap: Capture, ex: Explanation, lines: tuple[LineExplanation, ...], one_line: bool) -> None:
    """Print the per-line table of ``lines``, the remarks, and (unless ``one_line``)
    the kernel's spills, loops, conversions, intensity, occupancy and hints."""
    from irscope.cli.render import stdout_console

    console = stdout_console()
    width = console.width
    console.print(Text(f"{cap.title()}: per line", style="bold"))
    if lines:
        console.print(_table(cap, ex, lines, width))
        console.print(Text("global: ld/st/cp/atom/tma, bits per instruction × instructions; 'of N' = the widest "
                           "the layout allows (narrower: yellow). ttgir/ptx/sass: ops per stage.", style="dim"))
    else:
        console.print(Text("No op of any stage, and no remark, belongs to that line.", style="dim"))
    _remarks(console, ex, lines)
    if not ex.has_ptx:
        console.print(Text("global accesses: not read (the capture has no PTX)", style="dim"))
    if not ex.has_sass:
        console.print(Text("spills: unknown (the capture has no SASS)", style="dim"))
    elif not one_line:
        console.print(Text(f"spills: {ex.total_spills} SASS LDL/STL in all; {ex.unattributed_spills} on no line"))
    if one_line:
        shown = {ln.line for ln in lines}
        _hints(console, ex, [h for h in ex.hints if h.line in shown])
        return
    _loops(console, ex)
    _conversions(console, ex)
    _intensity(console, ex)
    occ = ex.occupancy
    console.print(Text("occupancy: ", style="bold") + Text(
        "unknown" if occ is None else f"{occupancy_text(occ)} ({_n(occ.blocks_per_sm, 'block')} of "
                                      f"{_n(occ.num_warps, 'warp')} per SM, limited by {occ.limited_by}; "
                                      f"{occ.fraction:.0%} of the warp slots)"))
    _hints(console, ex, list(ex.hints))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _remarks(console: Console, ex: Explanation, lines: tuple[LineExplanation, ...]) -> None:
    if not ex.remarks_available:
        console.print(Text(ex.remarks_why_not or "remarks: not available", style="dim"))
        return
    shown = [(ln, r) for ln in lines for r in ln.remarks]
    if not shown and not ex.unplaced_remarks:
        console.print(Text("remarks: ", style="bold") + Text("none (Triton emitted no remark)", style="dim"))
        return
    console.print(Text("remarks:", style="bold"))
    for ln, r in shown:
        console.print(Text(f"  {ln.line}: ", style="bold") + Text(f"{r.severity}: {r.text}"), soft_wrap=False)
    for r in ex.unplaced_remarks:
        where = f"{r.file}:{r.line}" if r.line else "(no position)"
        console.print(Text(f"  {where}: ", style="dim") + Text(f"{r.severity}: {r.text}"))


def _loops(console: Console, ex: Explanation) -> None:
    if not ex.loops:
        console.print(Text("loops: ", style="bold") + Text("none holding global loads", style="dim"))
        return
    console.print(Text("loops:", style="bold"))
    for lp in ex.loops:
        where = f"line {lp.line}" if lp.line is not None else f"ttgir line {lp.ttgir_line}"
        how = (f"pipelined, {lp.stages} stages, {lp.async_loads} of {_n(lp.loads, 'load')} asynchronous"
               if lp.pipelined else f"not pipelined ({_n(lp.loads, 'load')})")
        console.print(Text(f"  {where}: ") + Text(how, style="green" if lp.pipelined else "yellow"))
        if lp.remark:
            console.print(Text("    remark: ", style="dim") + Text(lp.remark))


def _conversions(console: Console, ex: Explanation) -> None:
    if not ex.conversions:
        console.print(Text("conversions: ", style="bold") + Text("none", style="dim"))
        return
    console.print(Text("conversions:", style="bold"))
    for c in ex.conversions:
        at = f"line {c.python_line}" if c.python_line is not None else "no line"
        via = str(c.via).replace("_", " ")
        extra = ""
        if c.via == "shared_memory":
            extra = f", {c.scratch_bytes} B scratch"
            if c.bank_conflicts is not None:
                extra += f", {c.bank_conflicts}-way bank conflicts"
        console.print(Text(f"  ttgir {c.ttgir_line} ({at}): ") + Text(f"via {via}{extra}"))


def _intensity(console: Console, ex: Explanation) -> None:
    it = ex.intensity
    if it is None:
        console.print(Text("intensity: ", style="bold") + Text("no main loop with a dot", style="dim"))
        return
    ratio = "?" if it.ratio is None else f"{it.ratio:.1f}"
    ridge = "" if it.ridge is None else f" against a ridge of {it.ridge:.0f} ({it.device}, {it.dtype})"
    verdict = f": {it.verdict}" if it.verdict else ""
    console.print(Text("intensity: ", style="bold") + Text(
        f"{it.flops_per_iter} FLOP / {it.bytes_per_iter} B per iteration = {ratio} FLOP/B{ridge}{verdict}"))


def _hints(console: Console, ex: Explanation, hints: list[Hint]) -> None:
    if not hints:
        console.print(Text("hints: ", style="bold") + Text("none (no rule found anything to say)", style="dim"))
        return
    console.print(Text("hints:", style="bold"))
    for h in hints:
        # Text, never markup: a hint quotes argument names, IR and remarks from the capture.
        console.print(Padding(Text("- ") + Text(h.text), (0, 0, 0, 2), expand=False))
        for e in h.evidence:
            console.print(Padding(Text(e.text, style="dim"), (0, 0, 0, 6), expand=False))  # wrapped, never cut
