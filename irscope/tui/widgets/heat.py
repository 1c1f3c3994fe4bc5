"""The app's heat column and stall breakdown: how a measured profile
(:func:`irscope.core.profile.profile_of`) is drawn. Every number is a field of the core's
:class:`~irscope.core.profile.HotProfile` (a line's ``samples``, ``stalls`` and ``how``; a
stage's :meth:`~irscope.core.profile.HotProfile.stage_heat`); this module only chooses
how they look, so the app, ``irscope hot`` and the report show the same figures.

The column holds a line's share of the profile's samples (``12.3%``), tinted by how hot
it is: :data:`HOT` from :data:`HOT_SHARE` of the total, :data:`WARM` from
:data:`WARM_SHARE`, else :data:`COOL`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from irscope.core.profile import HotProfile, LineHeat, ProfileStamp
    from irscope.tui.widgets.ir_view import IRView

HOT, WARM, COOL = "hot", "warm", "cool"
LEVELS = (HOT, WARM, COOL)
HOT_SHARE = 0.10
"""A line or op with at least this share of the samples is drawn hot."""
WARM_SHARE = 0.02
"""... at least this share, warm; any sample at all, cool."""
HEAT_CELLS = 5
"""Cells of the share (``12.3%``, `` 0.4%``, ``<0.1%``, ``100%``)."""
HEAT_WIDTH = HEAT_CELLS + 1
"""The column's width in the gutter (the share and a space)."""
TOP_STALLS = 3
"""Stall reasons named on a status line (the why panel names them all)."""


def share(samples: float, total: float) -> float:
    """``samples`` as a fraction of ``total`` (0 for an empty profile)."""
    return samples / total if total > 0 else 0.0


def share_text(samples: float, total: float) -> str:
    """The column's cell for ``samples`` of ``total``: a percentage in
    :data:`HEAT_CELLS` cells, blank for no sample."""
    if samples <= 0:
        return " " * HEAT_CELLS
    pct = 100.0 * share(samples, total)
    if pct >= 99.95:
        return "100%".rjust(HEAT_CELLS)
    if pct < 0.05:
        return "<0.1%"
    return f"{pct:4.1f}%".rjust(HEAT_CELLS)


def level(samples: float, total: float) -> str | None:
    """:data:`HOT`, :data:`WARM`, :data:`COOL`, or None for no sample."""
    if samples <= 0:
        return None
    s = share(samples, total)
    return HOT if s >= HOT_SHARE else WARM if s >= WARM_SHARE else COOL


def samples_text(samples: float) -> str:
    """A sample count as the views print it: whole counts bare, a stage op's share of
    an instruction's samples (shared equally) with two decimals."""
    return str(int(samples)) if float(samples).is_integer() else f"{samples:.2f}"


def stalls_text(stalls: dict[str, int], top: int | None = None) -> str:
    """``long_scoreboard 120, wait 20`` (most first; the first ``top`` only when given)."""
    items = sorted(stalls.items(), key=lambda kv: (-kv[1], kv[0]))
    more = ""
    if top is not None and len(items) > top:
        more = f", +{len(items) - top} more"
        items = items[:top]
    return ", ".join(f"{k} {v}" for k, v in items) + more


def stamp_text(stamp: "ProfileStamp") -> str:
    """``ncu 2025.3.1.0 on NVIDIA H200, 6 launches, 2026-12-03``: what was measured."""
    tool = stamp.tool + (f" {stamp.tool_version}" if stamp.tool_version else "")
    parts = [tool + (f" on {stamp.gpu}" if stamp.gpu else "")]
    parts.append(f"{stamp.launches} launch{'es' if stamp.launches != 1 else ''}")
    if stamp.date:
        parts.append(stamp.date)
    return ", ".join(parts)


def legend(hot: "HotProfile") -> str:
    """The Python pane's frame legend while the column shows heat."""
    # The key first: a narrow frame cuts the end, the stamp is in the why panel too.
    return (f"heat: % of {hot.total_samples} samples  h: static costs  {hot.unattributed} on no line; "
            f"{stamp_text(hot.stamp)}")


def heat_text(hot: "HotProfile", heats: "list[tuple[str, LineHeat | None]]") -> Text:
    """The why panel's measured part: for each (label, line heat) of the statement
    under the cursor, its samples, share, how they were charged and every stall reason
    (the core's :class:`~irscope.core.profile.LineHeat`, printed as ``irscope hot``
    prints it)."""
    out = Text()
    out.append("measured: ", style="bold")
    out.append(f"{stamp_text(hot.stamp)}; {hot.total_samples} samples, {hot.unattributed} on no line\n",
               style="dim")
    if not any(lh is not None and lh.samples for _, lh in heats):
        out.append("heat: no sample on this line\n", style="dim")
        return out
    for label, lh in heats:
        if lh is None or not lh.samples:
            continue
        lv = level(lh.samples, hot.total_samples)
        out.append(f"heat {label}: ", style="bold")
        out.append(f"{lh.samples} samples ({100.0 * share(lh.samples, hot.total_samples):.1f}%)",
                   style="bold red" if lv == HOT else "yellow" if lv == WARM else "")
        out.append(f", charged {lh.how}\n", style="dim")
        if lh.stalls:
            out.append("  stalls: ", style="bold")
            out.append(stalls_text(lh.stalls) + "\n")
    return out


def heat_status(hot: "HotProfile | None", lh: "LineHeat | None") -> str:
    """The status line's field for the cursor's line: ``heat 153 samples (12.3%):
    long_scoreboard 120, wait 20`` ('' with no profile)."""
    if hot is None:
        return ""
    if lh is None or not lh.samples:
        return "heat: no sample"
    out = f"heat {lh.samples} samples ({100.0 * share(lh.samples, hot.total_samples):.1f}%)"
    return out + (f": {stalls_text(lh.stalls, TOP_STALLS)}" if lh.stalls else "")


def stage_heat(view: "IRView", stage: str | None, hot: "HotProfile | None") -> None:
    """Show ``hot``'s samples on the stage pane ``view`` holding ``stage`` (1-based
    stage lines of :meth:`~irscope.core.profile.HotProfile.stage_heat`, drawn on the
    pane's 0-based lines); hide the column with no profile, or a stage it does not cover
    (one the capture lacks, or a binary one)."""
    if hot is None or stage not in hot.stages:
        view.set_heat(None)
        return
    view.set_heat({line - 1: samples for line, samples in hot.stage_heat(stage).items()}, hot.total_samples)


def op_heat_status(samples: float, hot: "HotProfile | None") -> str:
    """The status line's field for the stage line under the cursor: ``stage line: 3.16
    samples (0.5%)``."""
    total = hot.total_samples if hot is not None else 0
    return f"stage line: {samples_text(samples)} samples ({100.0 * share(samples, total):.1f}%)"
