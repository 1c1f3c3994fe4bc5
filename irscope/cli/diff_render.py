"""Rich renderings of ``irscope diff``: every external string goes in as ``Text``."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from irscope.compiler.stages import SOURCE
from irscope.diff.change_list import Fold, change_list
from irscope.diff.compare import Comparison
from irscope.diff.dialect_counts import dialect_text
from irscope.irdiff.model import ADDED, CHANGED, MOVED, REMOVED, StageDiff

MARK = {ADDED: ("+", "green"), REMOVED: ("-", "red"), CHANGED: ("~", "yellow"), MOVED: (">", "cyan")}
FOLD_CONTEXT = 0


def summary_table(cmp: Comparison) -> Table:
    """1. per stage: ops matched, added, removed, moved, changed; ops per dialect."""
    t = Table(title=Text("IR, op by op (SSA renaming ignored)"), header_style="bold", title_justify="left")
    for col in ("stage", "matched", "+added", "-removed", ">moved", "~changed", "ops", "dialects before -> after"):
        t.add_column(col, justify="right" if col not in ("stage", "dialects before -> after") else "left")
    for stage, d in cmp.stages.items():
        before, after = sum(d.ops_by_dialect_before.values()), sum(d.ops_by_dialect_after.values())
        dialects = dialect_text(d.ops_by_dialect_before, d.ops_by_dialect_after)
        t.add_row(Text(stage), str(d.matched), _count(d.added, "green"), _count(d.removed, "red"),
                  _count(d.moved, "cyan"), _count(d.changed, "yellow"), f"{before} -> {after}", Text(dialects))
    return t


def _count(n: int, style: str) -> Text:
    return Text(str(n), style=style) if n else Text("0", style="dim")


def metadata_table(cmp: Comparison) -> Table | None:
    """2. metadata and resources that differ."""
    rows = [d for d in cmp.metadata if d.changed]
    if not rows:
        return None
    t = Table(title=Text("Compile options, constexprs, resources, occupancy"), header_style="bold",
              title_justify="left")
    for col in ("", "before", "after", "delta"):
        t.add_column(col, justify="left" if not col or col == "" else "right")
    for d in rows:
        t.add_row(Text(d.name), Text(d.before_text), Text(d.after_text), Text(d.delta_text))
    return t


def mix_table(cmp: Comparison) -> Table | None:
    """3. PTX and SASS instructions by class, where they differ."""
    rows = [(s, c) for s, m in cmp.instruction_mix.items() for c in m.classes if c.changed]
    if not rows:
        return None
    t = Table(title=Text("Instruction mix"), header_style="bold", title_justify="left")
    for col in ("stage", "class", "before", "after", "delta"):
        t.add_column(col, justify="right" if col in ("before", "after", "delta") else "left")
    for s, c in rows:
        t.add_row(s, Text(c.name), str(c.before), str(c.after), Text(f"{c.delta:+d}",
                                                                    style="green" if c.delta < 0 else "red"))
    return t


def pipeline_lines(cmp: Comparison, limit: int = 6) -> list[Text]:
    """4. passes added, removed, reordered, and passes whose effect changed."""
    if cmp.passes is None:
        return []
    out = []
    for s in cmp.passes.stages:
        if s.identical and not s.effect_changed:
            continue
        head = Text(f"{s.stage}: {s.passes_before} -> {s.passes_after} passes", style="bold")
        out.append(head)
        for label, items, style in (("added", s.added, "green"), ("removed", s.removed, "red"),
                                    ("reordered", s.reordered, "cyan"), ("effect changed", s.effect_changed,
                                                                         "yellow")):
            if items:
                names = ", ".join(str(getattr(p, "name", p)) for p in items[:limit])
                more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
                out.append(Text(f"  {label}: ", style=style) + Text(names + more))
    return out


def lines_table(cmp: Comparison, limit: int = 30) -> Table | None:
    """5. per-Python-line op counts that changed."""
    if not cmp.lines:
        return None
    stages = [c.name for c in cmp.lines[0].counts]
    t = Table(title=Text("Python lines whose op counts changed"), header_style="bold", title_justify="left")
    t.add_column("line", justify="right")
    t.add_column(SOURCE, overflow="ellipsis", no_wrap=True, max_width=48)
    for s in stages:
        t.add_column(s, justify="right")
    for ln in cmp.lines[:limit]:
        cells = []
        for c in ln.counts:
            cells.append(Text(f"{c.before}->{c.after}", style="yellow") if c.changed else Text(str(c.before),
                                                                                               style="dim"))
        t.add_row(str(ln.line), Text((ln.text or "").strip()), *cells)
    if len(cmp.lines) > limit:
        t.caption = f"{len(cmp.lines) - limit} more lines (--json has all)"
    return t


def heat_table(cmp: Comparison, limit: int = 40) -> Table | None:
    """The measured samples per Python line on both sides (both captures profiled),
    beside the op change of the line's statement."""
    h = cmp.heat
    if h is None or not h.lines:
        return None
    t = Table(title=Text(f"Measured samples per Python line (A: {h.total_before} samples, "
                         f"B: {h.total_after})"), header_style="bold", title_justify="left")
    t.add_column("line", justify="right")
    t.add_column(SOURCE, overflow="ellipsis", no_wrap=True, max_width=40)
    t.add_column("samples A->B", justify="right")
    t.add_column("share A->B", justify="right")
    t.add_column("ops changed", overflow="fold", max_width=36)
    for ln in h.lines[:limit]:
        moved = ln.share_after - ln.share_before
        style = "red" if moved >= 0.02 else "green" if moved <= -0.02 else ""
        ops = ", ".join(f"{c.name} {c.before}->{c.after}" for c in ln.ops if c.changed)
        t.add_row(str(ln.line), Text((ln.text or "").strip()), Text(f"{ln.before}->{ln.after}"),
                  Text(f"{100 * ln.share_before:.1f}%->{100 * ln.share_after:.1f}%", style=style),
                  Text(ops, style="yellow" if ops else ""))
    more = f"{len(h.lines) - limit} more lines (--json has all); " if len(h.lines) > limit else ""
    t.caption = Text(f"{more}no line: {h.unattributed_before}->{h.unattributed_after} samples; "
                     f"A: profile #{h.a.id} ({h.a.tool}), B: profile #{h.b.id} ({h.b.tool})")
    return t


def fold_text(count: int) -> str:
    """The line a folded run of unchanged ops is shown as."""
    return f"    ⋯ {count} unchanged op(s)"


def aligned_diff(d: StageDiff, limit: int | None = 40) -> list[Text]:
    """6. the changes of one stage in the new side's order, unchanged runs folded
    (:func:`irscope.diff.change_list.change_list`, what the app's diff screens draw)."""
    out: list[Text] = []
    if d.note:
        out.append(Text(d.note, style="yellow"))
    if d.identical:
        return out
    listed = change_list(d, limit)
    for item in listed.items:
        if isinstance(item, Fold):
            out.append(Text(fold_text(item.count), style="dim"))
            continue
        c = item.change
        sym, style = MARK[c.kind]
        where = f"py {c.python_line}" if c.python_line else ""
        if c.kind in (CHANGED, MOVED) and c.before is not None and c.after is not None:
            out.append(Text(f"{sym} ", style=style) + Text(f"{c.before.line:>5} ", style="dim")
                       + Text(c.before.text, style="red") + Text(f"  {where}", style="dim"))
            out.append(Text("  ") + Text(f"{c.after.line:>5} ", style="dim") + Text(c.after.text, style="green"))
        else:
            ref = c.after if c.after is not None else c.before
            assert ref is not None  # a change has at least one side
            out.append(Text(f"{sym} ", style=style) + Text(f"{ref.line:>5} ", style="dim")
                       + Text(ref.text, style=style) + Text(f"  {where}", style="dim"))
        for det in c.details:
            out.append(Text("        " + det, style="italic"))
    if listed.left_out:
        out.append(Text(f"    … {listed.left_out} more change(s): --all shows them, --json has all",
                        style="dim"))
    return out


def print_comparison(console: Console, cmp: Comparison, *, limit: int | None = 40) -> None:
    """The whole report for one pair, in the documented order."""
    console.print(Text("A: ", style="bold") + Text(cmp.a))
    console.print(Text("B: ", style="bold") + Text(cmp.b))
    for note in cmp.notes:
        console.print(Text("note: " + note, style="yellow"))
    console.print(summary_table(cmp))
    for part in (metadata_table(cmp), mix_table(cmp)):
        if part is not None:
            console.print(part)
    lines = pipeline_lines(cmp)
    if lines:
        console.print(Text("Pass pipeline", style="bold"))
        for ln in lines:
            console.print(ln)
    for table in (lines_table(cmp), heat_table(cmp)):
        if table is not None:
            console.print(table)
    for stage, d in cmp.stages.items():
        if d.identical:
            continue
        console.print(Text(f"── {stage} ", style="bold cyan") + Text(
            f"{d.added} added, {d.removed} removed, {d.moved} moved, {d.changed} changed", style="dim"))
        for ln in aligned_diff(d, limit):
            console.print(ln, soft_wrap=True)
    if all(d.identical for d in cmp.stages.values()):
        console.print(Text("The IR is the same up to renaming.", style="green"))
