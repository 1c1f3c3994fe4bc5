"""The one registry of what irscope knows about each stage.

Every other module asks here: which stages exist and in what order, which are
binary, which parser family reads each, which ones the links and ``show`` walk,
which stage text closes the passes of a compile step, which ``--exact-links``
stage repeats which normal one, how each stage is highlighted, and what each kind
of pass snapshot is (:data:`SNAPSHOT_KINDS`: its parse stage, and whether Triton
prints it before or after its pass).

Code elsewhere names a stage by the constants below (``TTGIR``, ``LLIR``...), a
parser family by ``FAMILY_*``, a snapshot kind by ``KIND_*`` and a highlighting
language by ``LANG_*``, never by a string literal: ``tests/test_stage_registry.py``
fails on a stage-name literal outside this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Stage names as bundles store them (the keys of STAGES).
SOURCE = "source"
TTIR = "ttir"
TTGIR = "ttgir"
LLIR = "llir"
PTX = "ptx"
AMDGCN = "amdgcn"
CUBIN = "cubin"
HSACO = "hsaco"
SASS = "sass"
LLIR_TTGIRLOC = "llir_ttgirloc"
PTX_TTGIRLOC = "ptx_ttgirloc"
SASS_TTGIRLOC = "sass_ttgirloc"
JSON = "json"
LOG = "log"
MLIR = "mlir"
"""Not a stored stage: the parse stage of MLIR pass snapshots and raw ``.mlir`` files."""
ERROR = "error"

# Parser families (Stage.family): which parser reads a text.
FAMILY_MLIR = "mlir"
FAMILY_LLVM = "llvm"
"""LLVM IR, and the MIR of codegen passes (the LLVM IR parser reads both)."""
FAMILY_PTX = "ptx"
FAMILY_SASS = "sass"
FAMILY_AMDGCN = "amdgcn"

# Kinds of pass snapshot (the bundle's ``passes.kind``; SNAPSHOT_KINDS describes each).
KIND_MLIR = "mlir"
KIND_LLVM = "llvm"
KIND_MIR = "mir"

# Highlighting languages (Stage.language): the tokenizers of the app's IR views.
LANG_PYTHON = "python"
LANG_MLIR = "mlir"
LANG_LLVM = "llvm"
LANG_PTX = "ptx"
LANG_SASS = "sass"
LANG_AMDGCN = "amdgcn"


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
    """Parser family that reads the text: ``mlir``, ``llvm``, ``ptx``, ``sass``,
    ``amdgcn``; None when irscope does not parse it (sources, binaries, JSON, logs)."""
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
    language: str | None = None
    """Highlighting language of its text (``LANG_*``); None when it is not highlighted."""
    line_links: bool = False
    """Its debug locations give only the innermost file and line (no column, no
    inlined-at chain: SASS from ``nvdisasm``), so links to and from it join on the
    Python line (``same-line``) instead of the whole location chain."""

    @property
    def short(self) -> str:
        """The name tables print."""
        return self.short_name or self.name

    @property
    def parsed(self) -> bool:
        """Whether irscope parses this stage into a module."""
        return self.family is not None


STAGES: dict[str, Stage] = {s.name: s for s in (
    Stage(SOURCE, 0, "Python source", short_name="src", language=LANG_PYTHON),
    Stage(TTIR, 1, "Triton IR", ".ttir", FAMILY_MLIR, lowering=True, passes_kind=KIND_MLIR, language=LANG_MLIR),
    Stage(TTGIR, 2, "Triton GPU IR", ".ttgir", FAMILY_MLIR, lowering=True, passes_kind=KIND_MLIR,
          language=LANG_MLIR),
    Stage(LLIR, 3, "LLVM IR", ".llir", FAMILY_LLVM, lowering=True, passes_kind=KIND_LLVM, language=LANG_LLVM),
    Stage(PTX, 4, "PTX", ".ptx", FAMILY_PTX, lowering=True, passes_input=LLIR, language=LANG_PTX),
    Stage(AMDGCN, 5, "AMDGCN assembly", ".amdgcn", FAMILY_AMDGCN, lowering=True, language=LANG_AMDGCN),
    Stage(CUBIN, 6, "CUDA binary", ".cubin", binary=True),
    Stage(HSACO, 7, "AMD code object", ".hsaco", binary=True),
    Stage(SASS, 8, "SASS", ".sass", FAMILY_SASS, lowering=True, language=LANG_SASS, line_links=True),
    Stage(LLIR_TTGIRLOC, 9, "LLVM IR (TTGIR locations)", "", FAMILY_LLVM, base=LLIR, language=LANG_LLVM),
    Stage(PTX_TTGIRLOC, 10, "PTX (TTGIR locations)", "", FAMILY_PTX, base=PTX, language=LANG_PTX),
    Stage(SASS_TTGIRLOC, 11, "SASS (TTGIR locations)", "", FAMILY_SASS, base=SASS, language=LANG_SASS,
          line_links=True),
    Stage(JSON, 12, "Triton metadata", ".json"),
    Stage(LOG, 13, "compile log"),
    Stage(MLIR, 14, "MLIR pass snapshot", ".mlir", FAMILY_MLIR, language=LANG_MLIR),
    Stage(ERROR, 15, "compile error detail"),
)}
"""Every stage by name, in pipeline order. ``mlir`` is not stored as a stage: it is
how per-pass MLIR snapshots (and raw ``.mlir`` files) are parsed."""

STAGE_ORDER: tuple[str, ...] = tuple(STAGES)
"""Stage names in pipeline order."""

LOWERING: tuple[str, ...] = tuple(s.name for s in STAGES.values() if s.lowering)
"""The stages ops are traced through, in order: ttir, ttgir, llir, ptx, amdgcn, sass
(a capture has PTX and SASS on NVIDIA, AMDGCN on AMD)."""

EXACT_STAGES: dict[str, str] = {s.base: s.name for s in STAGES.values() if s.base}
"""Normal stage -> the ``--exact-links`` stage that repeats it with TTGIR locations."""

BINARY_STAGES: tuple[str, ...] = tuple(s.name for s in STAGES.values() if s.binary)


def stage(name: str) -> Stage | None:
    """The registry entry of ``name``, or None for a name irscope does not know."""
    return STAGES.get(name)


def line_links(name: str) -> bool:
    """Whether links to or from stage ``name`` join on the Python line alone
    (:attr:`Stage.line_links`); False for an unknown name."""
    s = STAGES.get(name)
    return s.line_links if s is not None else False


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


def display_name(name: str) -> str:
    """The human-readable name of stage ``name`` (the name itself when unknown)."""
    s = STAGES.get(name)
    return s.display_name if s is not None else name


def highlight_language(name: str) -> str | None:
    """The highlighting language (``LANG_*``) of a stage or snapshot kind ``name``;
    None when it has no highlighter (binaries, logs, MIR) or is unknown."""
    s = STAGES.get(name)
    if s is not None:
        return s.language
    k = SNAPSHOT_KINDS.get(name)
    return k.language if k is not None else None


@dataclass(frozen=True, slots=True)
class SnapshotKind:
    """One kind of per-pass snapshot (the bundle's ``passes.kind``)."""

    name: str
    """``mlir``, ``llvm`` (LLVM IR) or ``mir`` (machine IR of codegen passes)."""
    when: Literal["before", "after"]
    """Whether its dump shows the IR before or after its pass: Triton's MLIR dumps
    (``MLIR_ENABLE_DUMP``) print ``IR Dump Before``; LLVM's print-after-all (IR and
    MIR) prints ``IR Dump After``. So the change of an MLIR pass is the next
    snapshot against this one, and of an LLVM pass this one against the previous."""
    family: str
    """Parser family that reads it (``FAMILY_MLIR``, ``FAMILY_LLVM``)."""
    stage: str
    """Stage name it is parsed and diffed as: ``mlir``, or ``llir`` for LLVM IR and MIR
    (the LLVM IR parser reads MIR functions too)."""
    display_name: str
    language: str | None
    """Highlighting language (``LANG_*``); None for MIR, which has no highlighter."""


SNAPSHOT_KINDS: dict[str, SnapshotKind] = {k.name: k for k in (
    SnapshotKind(KIND_MLIR, "before", FAMILY_MLIR, MLIR, "MLIR", LANG_MLIR),
    SnapshotKind(KIND_LLVM, "after", FAMILY_LLVM, LLIR, "LLVM IR", LANG_LLVM),
    SnapshotKind(KIND_MIR, "after", FAMILY_LLVM, LLIR, "machine IR", None),
)}
"""Every kind of pass snapshot by name."""


def snapshot_kind(name: str) -> SnapshotKind | None:
    """The entry of snapshot kind ``name`` (``mlir``, ``llvm``, ``mir``), or None."""
    return SNAPSHOT_KINDS.get(name)


def pass_stage(kind: str) -> str:
    """The stage name a snapshot of ``kind`` is parsed and diffed as (``mlir`` for an
    unknown kind: every stored MLIR kind is read that way)."""
    k = SNAPSHOT_KINDS.get(kind)
    return k.stage if k is not None else MLIR


def stage_kind(name: str) -> str | None:
    """The snapshot kind whose last pass ends in stage ``name``'s text (``ttgir`` ->
    ``mlir``, ``llir`` -> ``llvm``), or None for a stage no passes close."""
    s = STAGES.get(name)
    return s.passes_kind if s is not None else None
