"""The one registry of what irscope knows about each stage.

Every other module asks here: which stages exist and in what order, which are
binary, which parser family reads each, which ones the links and ``show`` walk,
which stage text closes the passes of a compile step, and which ``--exact-links``
stage repeats which normal one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of the compiler's output as a bundle stores it."""

    name: str
    """Registry key as stored in bundles: ``ttir``, ``ttgir``, ``llir``, ``ptx``..."""
    order: int
    """Position in the pipeline (how listings sort stages)."""
    display_name: str
    """Human-readable name."""
    extension: str = ""
    """File extension Triton writes (``.ttgir``); '' when the stage is no Triton file."""
    family: str | None = None
    """Parser family that reads the text: ``mlir``, ``llvm``, ``ptx``, ``sass``; None
    when irscope does not parse it (sources, binaries, JSON, logs, AMDGCN)."""
    binary: bool = False
    """Stored as bytes (cubin, hsaco), not text."""
    lowering: bool = False
    """A step of the lowering that ops are traced through (links, ``show``)."""
    passes_kind: str | None = None
    """Kind of pass snapshot (``mlir``/``llvm``) whose last pass's result is this
    stage's final text, so the text closes the stage's pass list."""
    base: str | None = None
    """For an ``--exact-links`` stage (``llir_ttgirloc``): the normal stage it repeats."""
    passes_input: str | None = None
    """The stage whose final text is the input of this stage's first LLVM pass:
    ``make_ptx``'s codegen pipeline starts from the llir file."""
    short_name: str = ""
    """How tables abbreviate it ('' for the name itself)."""

    @property
    def short(self) -> str:
        """The name tables print."""
        return self.short_name or self.name

    @property
    def parsed(self) -> bool:
        """Whether irscope parses this stage into a module."""
        return self.family is not None


STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage("source", 0, "Python source", short_name="src"),
    Stage("ttir", 1, "Triton IR", ".ttir", "mlir", lowering=True, passes_kind="mlir"),
    Stage("ttgir", 2, "Triton GPU IR", ".ttgir", "mlir", lowering=True, passes_kind="mlir"),
    Stage("llir", 3, "LLVM IR", ".llir", "llvm", lowering=True, passes_kind="llvm"),
    Stage("ptx", 4, "PTX", ".ptx", "ptx", lowering=True, passes_input="llir"),
    Stage("amdgcn", 5, "AMDGCN assembly", ".amdgcn"),
    Stage("cubin", 6, "CUDA binary", ".cubin", binary=True),
    Stage("hsaco", 7, "AMD code object", ".hsaco", binary=True),
    Stage("sass", 8, "SASS", ".sass", "sass", lowering=True),
    Stage("llir_ttgirloc", 9, "LLVM IR (TTGIR locations)", "", "llvm", base="llir"),
    Stage("ptx_ttgirloc", 10, "PTX (TTGIR locations)", "", "ptx", base="ptx"),
    Stage("sass_ttgirloc", 11, "SASS (TTGIR locations)", "", "sass", base="sass"),
    Stage("json", 12, "Triton metadata", ".json"),
    Stage("log", 13, "compile log"),
    Stage("mlir", 14, "MLIR pass snapshot", ".mlir", "mlir"),
    Stage("error", 15, "compile error detail"),
)}
"""Every stage by name, in pipeline order. ``mlir`` is not stored as a stage: it is
how per-pass MLIR snapshots (and raw ``.mlir`` files) are parsed."""

STAGE_ORDER: tuple[str, ...] = tuple(STAGES)
"""Stage names in pipeline order."""

LOWERING: tuple[str, ...] = tuple(s.name for s in STAGES.values() if s.lowering)
"""The stages ops are traced through, in order: ttir, ttgir, llir, ptx, sass."""

EXACT_STAGES: dict[str, str] = {s.base: s.name for s in STAGES.values() if s.base}
"""Normal stage -> the ``--exact-links`` stage that repeats it with TTGIR locations."""

BINARY_STAGES: tuple[str, ...] = tuple(s.name for s in STAGES.values() if s.binary)


def stage(name: str) -> Stage | None:
    """The registry entry of ``name``, or None for a name irscope does not know."""
    return STAGES.get(name)


def stage_rank(name: str) -> int:
    """Sort key of a stage name (unknown names last)."""
    s = STAGES.get(name)
    return s.order if s is not None else len(STAGES)


def for_extension(ext: str) -> Stage | None:
    """The parsed stage whose files end with ``ext`` (``.ptx`` or ``ptx``), or None."""
    ext = ext if ext.startswith(".") else "." + ext
    for s in STAGES.values():
        if s.extension == ext and s.parsed:
            return s
    return None
