"""Pick one capture from a bundle by kernel, target and variant (for every command)."""

from __future__ import annotations

from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle, CaptureRow


def select_capture(bundle: Bundle, kernel: str | None, target: str | None = None, variant: str | None = None) -> CaptureRow:
    """The capture named by ``kernel`` / ``target`` / ``variant``.

    Without target or variant: the first capture of that kernel. ``variant`` is
    a label (``BLOCK=1024,num_warps=4``), a unique prefix of one, or the 0-based
    index among the kernel's variants in capture order. ``kernel`` may also be a
    capture id (``#3`` or ``3``) as ``irscope ls`` prints it; ``None`` picks the
    bundle's first kernel when it holds only one.
    """
    rows = bundle.captures()
    if not rows:
        raise IrscopeError(f"{bundle.path} holds no captures")
    if kernel is None:
        names = list(dict.fromkeys(r.kernel for r in rows))
        if len(names) > 1:
            raise IrscopeError(f"{bundle.path} holds several kernels ({', '.join(names)}): name one")
        kernel = names[0]
    ident = kernel.lstrip("#")
    if ident.isdigit() and not any(r.kernel == kernel for r in rows):
        match = [r for r in rows if r.id == int(ident)]
        if not match:
            raise IrscopeError(f"no capture #{ident} in {bundle.path}")
        return match[0]
    of_kernel = [r for r in rows if r.kernel == kernel]
    if not of_kernel:
        names = ", ".join(dict.fromkeys(r.kernel for r in rows))
        raise IrscopeError(f"no kernel {kernel!r} in {bundle.path} (it has: {names})")
    chosen = of_kernel
    if target is not None:
        want = target.replace("sm", "sm_").replace("sm__", "sm_") if target.startswith("sm") else target
        chosen = [r for r in chosen if r.target == want]
        if not chosen:
            have = ", ".join(dict.fromkeys(r.target for r in of_kernel))
            raise IrscopeError(f"kernel {kernel!r} has no capture for target {target} (it has: {have})")
    if variant is not None:
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
