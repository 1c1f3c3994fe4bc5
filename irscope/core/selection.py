"""Pick one capture by kernel, target and variant: the rule every command shares.

``cat``, ``show``, ``passes``, ``links``, ``diff BUNDLE:KERNEL@TARGET#VARIANT``,
``export``, ``layout``, ``open`` and the Python API (:meth:`irscope.Bundle.capture`)
all call :func:`select_capture`, so they accept the same spellings:

* ``kernel``: a name, or a capture id (``#3`` or ``3``) as ``irscope ls`` prints it;
  left out, the bundle's only kernel;
* ``target``: any spelling :class:`irscope.core.target.Target` reads (``90``,
  ``sm90``, ``sm_90``, ``gfx942``);
* ``variant``: a label, a unique prefix of one, some of its ``name=value`` fields
  (``BLOCK_SIZE_M=64 num_warps=4``, as ``irscope ls`` shows them) that only one
  label holds, or the 0-based index among the kernel's variants (on ``target`` when
  given) in capture order.

A qualifier left out takes the first in capture order: a kernel alone names its
first capture (``v`` 0 of its first target), as the help of every command says. A
spelling that is given must name one thing: a variant prefix or fields that fit
several labels, or a (kernel, target, variant) the bundle holds more than once (two runs
appended to one bundle), fails with one line that lists the candidates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

from irscope.core.target import normalise_target, target_key
from irscope.core.variant import variant_fields, variant_labels
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from irscope.core.capture import Capture

_MAX_LISTED = 8
"""Candidates an error names before it says how many more there are."""


def _listing(items: list[str]) -> str:
    shown = items[:_MAX_LISTED]
    more = len(items) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more else "")


_FIELD_BREAK = re.compile(r"[,\s]+(?=[A-Za-z_][\w.]*=)")


def fields_fit(text: str, labels: list[str]) -> list[str]:
    """The labels holding every ``name=value`` field of ``text`` (fields split by
    commas or spaces, as ``irscope ls`` prints the fields that differ)."""
    want = [f.strip() for f in _FIELD_BREAK.split(text.strip()) if f.strip()]
    if not want or not all("=" in f for f in want):
        return []
    return [lab for lab in labels if set(want) <= set(variant_fields(lab))]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def select_capture(captures: Sequence["Capture"], where: str, kernel: str | None,
                   target: str | None = None, variant: str | int | None = None) -> "Capture":
    """The capture of ``captures`` (one bundle's, in capture order) named by ``kernel``,
    ``target`` and ``variant`` (see the module's rule). ``where`` names the bundle in
    errors. IrscopeError (one line) when nothing matches or a spelling is ambiguous."""
    if not captures:
        raise IrscopeError(f"{where} holds no captures")
    if kernel is None:
        names = list(dict.fromkeys(c.kernel for c in captures))
        if len(names) > 1:
            raise IrscopeError(f"{where} holds several kernels ({', '.join(names)}): name one")
        kernel = names[0]
    ident = kernel.lstrip("#")
    if ident.isdigit() and not any(c.kernel == kernel for c in captures):
        match = [c for c in captures if c.id == int(ident)]
        if not match:
            raise IrscopeError(f"no capture #{ident} in {where}")
        return match[0]
    of_kernel = [c for c in captures if c.kernel == kernel]
    if not of_kernel:
        known = ", ".join(dict.fromkeys(c.kernel for c in captures))
        raise IrscopeError(f"no kernel {kernel!r} in {where} (it has: {known})")
    chosen = of_kernel
    if target is not None:
        want = normalise_target(str(target))
        chosen = [c for c in chosen if target_key(c.target) == want]
        if not chosen:
            have = ", ".join(dict.fromkeys(c.target for c in of_kernel))
            raise IrscopeError(f"kernel {kernel!r} has no capture for target {want} (it has: {have})")
    if variant is None:
        if target is None:
            return chosen[0]
        # The target's first variant, unless its first label was captured more than once.
        label = chosen[0].variant
        return _only(kernel, [c for c in chosen if c.variant == label])
    text = str(variant)
    labels = variant_labels((c.target, c.variant) for c in chosen)
    if text.isdigit() and text not in labels:
        idx = int(text)
        if idx >= len(labels):
            raise IrscopeError(f"kernel {kernel!r} has {len(labels)} variant(s)"
                               f"{' on ' + chosen[0].target if target is not None else ''}; "
                               f"index {idx} is out of range")
        text = labels[idx]
    if text not in labels:
        fits = [lab for lab in labels if lab.startswith(text)] or fields_fit(text, labels)
        if not fits:
            raise IrscopeError(_one_line(f"kernel {kernel!r} has no variant {text!r} "
                                         f"(it has: {_listing([f'{i}: {lab}' for i, lab in enumerate(labels)])})"))
        if len(fits) > 1:
            raise IrscopeError(_one_line(
                f"variant {text!r} of kernel {kernel!r} is ambiguous, it fits {len(fits)} labels "
                f"({_listing([f'{labels.index(lab)}: {lab}' for lab in fits])}): give more of it, "
                f"or the index with --variant N"))
        text = fits[0]
    chosen = [c for c in chosen if c.variant == text]
    if target is None:
        # A variant on several targets: the first target's, unless that one is held twice.
        first = chosen[0].target
        chosen = [c for c in chosen if c.target == first]
    return _only(kernel, chosen)


def _only(kernel: str, chosen: list["Capture"]) -> "Capture":
    """The one capture left, or an error naming each by id: the bundle holds the same
    variant on the same target more than once, and only the id tells them apart."""
    if len(chosen) == 1:
        return chosen[0]
    c0 = chosen[0]
    listed = [f"#{c.id} (Triton {c.triton_version or '?'}, run {c.run_id})" for c in chosen]
    raise IrscopeError(_one_line(
        f"kernel {kernel!r} variant {c0.variant!r} on {c0.target} is ambiguous, the bundle holds it "
        f"{len(chosen)} times ({_listing(listed)}): name one by its id, e.g. '#{c0.id}'"))


def variant_index(capture: "Capture") -> int:
    """The ``N`` of ``--target T --variant N`` that selects ``capture`` (T its target):
    the position of its label among its kernel's labels on that target, in capture
    order, as :func:`select_capture` counts. Without ``--target`` the count is over
    every target, the same number whenever each target has the same variants."""
    labels = variant_labels(((c.target, c.variant) for c in capture.bundle.captures(capture.kernel)),
                            capture.target)
    return labels.index(capture.variant) if capture.variant in labels else 0


def default_pick_note(capture: "Capture", kernel: str | None, target: str | None,
                      variant: str | int | None) -> str | None:
    """One line naming the capture a left-out qualifier picked, when the kernel has
    others it could have meant; None when the selection named exactly one.

    The default (the kernel's first capture) is kept so that ``KERNEL`` alone works
    for one-variant kernels and scripts; this note keeps it from being a silent pick."""
    if kernel is not None and kernel.lstrip("#").isdigit() and capture.kernel != kernel:
        return None  # a capture id names one capture
    if target is not None and variant is not None:
        return None
    others = [c for c in capture.bundle.captures(capture.kernel) if c is not capture
              and (target is None or target_key(c.target) == target_key(capture.target))
              and (variant is None or c.variant == capture.variant)]
    if not others:
        return None
    other_target = any(c.target != capture.target for c in others)
    other_variant = any(c.variant != capture.variant for c in others)
    left_out = " and ".join(n for n, v, differs in (("--target", target, other_target),
                                                      ("--variant", variant, other_variant)) if v is None and differs)
    return _one_line(f"note: {capture.kernel!r} has {len(others) + 1} captures; showing #{capture.id} "
                     f"({capture.target}, variant {variant_index(capture)}: {capture.variant or '-'}); "
                     f"choose another with {left_out} (irscope ls lists them)")
