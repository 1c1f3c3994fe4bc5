"""What a capture produces: plain dataclasses handed to the store, and read back."""

from __future__ import annotations

from dataclasses import dataclass, field

from .remarks import Remark


@dataclass(slots=True)
class Resources:
    """Resource usage of one compiled kernel; None where unknown."""

    registers: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    shared: int | None = None
    """As the tool reported it (cuobjdump counts the 1 KiB reserved per block)."""
    shared_static: int | None = None
    """Bytes of statically sized ``.shared`` arrays (from the PTX)."""
    local: int | None = None
    stack: int | None = None
    source: str = ""  # where the numbers came from: 'cuobjdump+ptxas', 'driver', ...
    notes: list[str] = field(default_factory=list)

    @property
    def spills(self) -> int | None:
        """Spilled bytes (stores + loads), as the summary table shows them."""
        if self.spill_stores is None:
            return None
        return self.spill_stores + (self.spill_loads or 0)


@dataclass(slots=True)
class PassRecord:
    """One per-pass snapshot, placed in the pipeline.

    ``stage`` is the stage whose compile step ran the pass (ttir, ttgir, llir).
    ``kind`` is 'mlir' or 'llvm'; ``when`` 'before', 'after', 'after-failed' or
    'internal'.
    """

    seq: int
    stage: str
    kind: str
    when: str
    name: str
    argument: str
    options: str
    anchor: str
    anchor_name: str
    text: str
    seconds: float | None = None  # from MLIR's timing report, when it names this pass


@dataclass(slots=True)
class RunInfo:
    """How a capture run was made (recorded once per ``irscope run``)."""

    command: list[str]
    script: str
    cwd: str
    host: str
    mode: str  # 'gpu' or 'compile-only'
    targets: list[str]
    llvm_passes: bool
    irscope_version: str
    started: str
    python_executable: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FunctionSource:
    """The Python source of one ``@triton.jit`` helper a kernel calls, read when the
    kernel was captured (the views show it beside the kernel's own source)."""

    name: str
    file: str
    """Path as the compiler's locations name it."""
    first_line: int
    """Line of its ``def``."""
    source: str
    """The function's lines, from its ``def`` to its last line."""


@dataclass(slots=True)
class CapturedKernel:
    """Everything kept for one compile of one kernel variant on one target."""

    kernel: str
    file: str | None
    first_line: int | None
    source: str | None
    target: str
    variant: str
    hash: str | None
    signature: dict
    constexprs: dict
    attrs: dict
    options: dict
    versions: dict  # python, triton, torch
    host: str
    argv: list[str]
    started: str
    compile_seconds: float
    stage_seconds: dict[str, float]
    stages: dict[str, str | bytes]  # stage name -> final text (bytes for binaries)
    passes: list[PassRecord]
    resources: Resources
    metadata: dict  # Triton's metadata JSON
    mode: str
    error: str | None = None  # one paragraph; None when the compile succeeded
    error_detail: str | None = None  # full traceback/diagnostics
    failed_stage: str | None = None
    failed_pass: str | None = None
    notes: list[str] = field(default_factory=list)  # what is missing, and why
    helpers: list["FunctionSource"] = field(default_factory=list)  # the @triton.jit helpers it calls
    remarks: list[Remark] = field(default_factory=list)  # Triton's remarks, warnings and errors, in order
    remarks_status: str | None = None  # compiler/remarks.py: RECORDED, OFF or UNSUPPORTED (None: not known)
    launch: dict | None = None  # the launch that compiled it: grid, argument shapes/dtypes/values (store.bundle.LAUNCH)
    globals: dict | None = None  # the module-level values the kernel reads, as Python (store.bundle.GLOBALS)

    @property
    def raw_bytes(self) -> int:
        """Size of the IR text kept, before dedup and compression."""
        n = sum(len(t.encode()) if isinstance(t, str) else len(t) for t in self.stages.values())
        return n + sum(len(p.text.encode()) for p in self.passes)
