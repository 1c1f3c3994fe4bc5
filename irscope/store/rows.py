"""The rows a bundle's readers return (store/bundle.py): a capture as ``irscope ls``
lists it, and a per-pass snapshot's header."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class CaptureRow:
    """One capture as listed by ``irscope ls``."""

    id: int
    run_id: int
    kernel: str
    file: str | None
    first_line: int | None
    variant: str
    target: str
    triton_version: str | None
    torch_version: str | None
    python_version: str | None
    stages: tuple[str, ...]
    passes: int
    raw_bytes: int
    complete: bool
    mode: str | None
    registers: int | None
    spill_stores: int | None
    spill_loads: int | None
    shared: int | None
    local: int | None
    stack: int | None
    resource_source: str | None
    compile_seconds: float | None
    error: str | None
    failed_stage: str | None
    failed_pass: str | None
    notes: tuple[str, ...] = ()
    shared_static: int | None = None
    """Statically sized shared arrays (from the PTX at capture; None in older bundles)."""
    shared_dynamic: int | None = None
    """Triton's ``metadata.shared``: the dynamic shared memory the launch requests."""
    num_warps: int | None = None
    warp_size: int | None = None
    error_detail: str | None = None
    """The failure in full (the compiler's message and traceback); None when it compiled."""

    def to_json(self) -> dict:
        """The ``irscope ls --json`` object."""
        return asdict(self) | {"stages": list(self.stages), "notes": list(self.notes)}


@dataclass(frozen=True, slots=True)
class PassRow:
    """One per-pass snapshot's header (its text is read on demand)."""

    seq: int
    stage: str
    kind: str
    when: str
    name: str
    argument: str
    options: str
    anchor: str
    anchor_name: str
    blob: int
    size: int
    seconds: float | None = None
