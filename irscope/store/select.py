"""Pick one capture by kernel, target and variant: the rule every command and the
core share."""

from __future__ import annotations

from typing import Sequence

from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle, CaptureRow


def normalise_target(target: str) -> str:
    """``sm90`` -> ``sm_90``; other spellings are kept."""
    if target.startswith("sm") and not target.startswith("sm_"):
        return "sm_" + target[2:]
    return target


def select_row(rows: Sequence[CaptureRow], where: str, kernel: str | None, target: str | None = None,
               variant: str | int | None = None) -> CaptureRow:
    """The capture of ``rows`` named by ``kernel`` / ``target`` / ``variant``.

    Without target or variant: the first capture of that kernel. ``variant`` is
    a label (``BLOCK=1024,num_warps=4``), a unique prefix of one, or the 0-based
    index among the kernel's variants in capture order. ``kernel`` may also be a
    capture id (``#3`` or ``3``) as ``irscope ls`` prints it; ``None`` picks the
    bundle's first kernel when it holds only one. ``where`` names the bundle in errors.
    """
    if not rows:
        raise IrscopeError(f"{where} holds no captures")
    if kernel is None:
        names = list(dict.fromkeys(r.kernel for r in rows))
        if len(names) > 1:
            raise IrscopeError(f"{where} holds several kernels ({', '.join(names)}): name one")
        kernel = names[0]
    ident = kernel.lstrip("#")
    if ident.isdigit() and not any(r.kernel == kernel for r in rows):
        match = [r for r in rows if r.id == int(ident)]
        if not match:
            raise IrscopeError(f"no capture #{ident} in {where}")
        return match[0]
    of_kernel = [r for r in rows if r.kernel == kernel]
    if not of_kernel:
        names = ", ".join(dict.fromkeys(r.kernel for r in rows))
        raise IrscopeError(f"no kernel {kernel!r} in {where} (it has: {names})")
    chosen = of_kernel
    if target is not None:
        want = normalise_target(target)
        chosen = [r for r in chosen if r.target == want]
        if not chosen:
            have = ", ".join(dict.fromkeys(r.target for r in of_kernel))
            raise IrscopeError(f"kernel {kernel!r} has no capture for target {target} (it has: {have})")
    if variant is not None:
        variant = str(variant)
        labels = list(dict.fromkeys(r.variant for r in chosen))
        if variant.isdigit() and variant not in labels:
            idx = int(variant)
            if idx >= len(labels):
                raise IrscopeError(f"kernel {kernel!r} has {len(labels)} variant(s); index {idx} is out of range")
            variant = labels[idx]
        exact = [r for r in chosen if r.variant == variant]
        if not exact:
            prefixed = [lab for lab in labels if lab.startswith(variant)]
            if len(prefixed) != 1:
                raise IrscopeError(f"kernel {kernel!r} has no single variant {variant!r} (it has: {'; '.join(labels)})")
            exact = [r for r in chosen if r.variant == prefixed[0]]
        chosen = exact
    return chosen[0]


def select_capture(bundle: Bundle, kernel: str | None, target: str | None = None, variant: str | None = None) -> CaptureRow:
    """:func:`select_row` over every capture of an open store bundle."""
    return select_row(bundle.captures(), bundle.path, kernel, target, variant)
