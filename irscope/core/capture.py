"""One capture of one kernel (a variant on a target): everything the views read.

Reads are lazy and cached per capture: a stage's text is read and parsed on first
use, the pass list's changes are computed once, snapshots are read one at a time.
Safe to use from several threads: each thread reads the bundle through its own
connection (see :class:`irscope.core.bundle.Bundle`), and caches fill under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

from irscope.core import capture_passes
from irscope.core.capture_records import OpLinks, Run, Source
from irscope.core.resources import Resources, resources_of
from irscope.core.variant import Variant, compile_option
from irscope.errors import IrscopeError
from irscope.ir import Module, Op, parse_as
from irscope.ir.statements import Statement, StatementMap, statement_map
from irscope.store.bundle import CaptureRow, PassRow
from irscope.compiler.stages import EXACT_STAGES, LOWERING, PTX, SOURCE, stage

if TYPE_CHECKING:
    from irscope.core.bundle import Bundle
    from irscope.core.failure import Failure
    from irscope.core.conversions import Conversion
    from irscope.core.explain import Explanation
    from irscope.core.lines import LineOps
    from irscope.core.loops import Intensity, Loop
    from irscope.core.occupancy import Occupancy
    from irscope.core.origins import StageOrigins
    from irscope.core.passes import Pass
    from irscope.core.profile import HotProfile, ProfileStamp
    from irscope.core.remarks import RemarkSet
    from irscope.core.summary import CaptureSummary
    from irscope.core.user_functions import UserFunctions
    from irscope.link import CaptureLinks, LinkedOp
    from irscope.compiler.pass_order import Side
    from irscope.core.pass_steps import PassStep, StepCounts
    from irscope.irdiff.model import StageDiff
    from irscope.link.provenance import PassChange

_T = TypeVar("_T")

# Links, provenance and origins are imported on first use: opening a bundle to show
# one stage (the first screen of every view) needs none of them. The pass history's
# code is in irscope.core.capture_passes.


class Stage:
    """One stage of a capture: its text, and its module parsed on first use."""

    def __init__(self, capture: "Capture", name: str):
        self.capture = capture
        self.name = name
        self.info = stage(name)
        """The registry entry (display name, parser family, binary...)."""

    @property
    def text(self) -> str | bytes:
        """The final text (bytes for a binary stage)."""
        return self.capture._memo(("text", self.name), lambda: self.capture._read_stage(self.name))

    @property
    def binary(self) -> bool:
        return isinstance(self.text, bytes)

    @property
    def module(self) -> Module:
        """The parsed stage (once per capture). IrscopeError for a stage irscope does not parse."""
        def parse() -> Module:
            text = self.text
            if self.info is None or not self.info.parsed or isinstance(text, bytes):
                raise IrscopeError(f"stage {self.name} is not an IR irscope parses")
            return parse_as(self.name, text)
        return self.capture._memo(("module", self.name), parse)

    def __repr__(self) -> str:
        return f"<Stage {self.name} of capture #{self.capture.id}>"


class Capture:
    """One capture in a bundle. Get it from :meth:`Bundle.capture` or :meth:`Bundle.captures`."""

    def __init__(self, bundle: "Bundle", row: CaptureRow):
        self.bundle = bundle
        self.row = row
        """The store's listing row, read by the core's properties (:attr:`summary`,
        :attr:`file`, ...); the views read those, never the row."""
        self._cache: dict = {}
        self._lock = threading.RLock()

    # -- identity ------------------------------------------------------------
    id = property(lambda self: self.row.id)
    kernel = property(lambda self: self.row.kernel)
    target = property(lambda self: self.row.target)
    variant = property(lambda self: self.row.variant)
    """The variant label: constexprs and options, ``BLOCK=1024,num_warps=4``."""
    triton_version = property(lambda self: self.row.triton_version)
    failed = property(lambda self: bool(self.row.error))
    error = property(lambda self: self.row.error)

    # -- what the listing holds (the views read these, never the store's row) ----
    @property
    def run_id(self) -> int:
        """The id of the run that made the capture (see :attr:`run`)."""
        return self.row.run_id

    @property
    def file(self) -> str | None:
        """Path of the kernel's Python file as the compile saw it."""
        return self.row.file

    @property
    def pass_count(self) -> int:
        """How many pass snapshots the capture holds."""
        return self.row.passes

    @property
    def compile_seconds(self) -> float | None:
        """Wall time of the compile, when it was measured."""
        return self.row.compile_seconds

    @property
    def raw_bytes(self) -> int:
        """Bytes of IR text captured, before dedup and compression."""
        return self.row.raw_bytes

    @property
    def complete(self) -> bool:
        """False when the run that made it did not finish (interrupted, killed)."""
        return self.row.complete

    @property
    def failed_pass(self) -> str | None:
        """The pass a failed compile stopped in, when known."""
        return self.row.failed_pass

    @property
    def failed_stage(self) -> str | None:
        """The stage a failed compile stopped in, when known."""
        return self.row.failed_stage

    @property
    def failed_at(self) -> str | None:
        """Where a failed compile stopped: the pass, else the stage; None when it compiled."""
        return self.row.failed_pass or self.row.failed_stage

    @property
    def notes(self) -> tuple[str, ...]:
        """What the capture could not get (no SASS without the CUDA tools...)."""
        return self.row.notes

    @property
    def variant_info(self) -> "Variant":
        """The variant label with its fields (:class:`irscope.core.variant.Variant`)."""
        return Variant(self.row.variant)

    def compile_option(self, name: str) -> Any:
        """A compile option (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``), by
        one rule: the variant label's field (made from the compile options, so it agrees
        with them and costs no read), else the recorded compile options, else Triton's
        metadata (older bundles and failed compiles may have only one of them)."""
        value = self.variant_info.int_value(name)
        if value is not None:
            return value  # the label says it: no read of the capture's stored options
        return compile_option(self.variant, self.options, self.metadata, name)

    @property
    def num_stages(self) -> int | None:
        """Triton's ``num_stages`` (software pipelining depth), by :meth:`compile_option`."""
        value = self.compile_option("num_stages")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def summary(self) -> "CaptureSummary":
        """The facts every listing shows (``ls``, the app's browser, the report's index)."""
        from irscope.core.summary import summarise

        return self._memo("summary", lambda: summarise(self))

    @property
    def failure(self) -> "Failure | None":
        """Why the compile failed (stage, pass, telling lines, the user's line); None
        when it compiled. What the app's error panel and the report's failure panel show."""
        from irscope.core.failure import failure_of

        return self._memo("failure", lambda: failure_of(self))

    def __repr__(self) -> str:
        return f"<Capture #{self.id} {self.kernel} [{self.variant}] {self.target}>"

    def to_json(self) -> dict:
        """The ``irscope ls --json`` object: the listing row, with ``shared`` the bytes
        the launch uses (``shared_dynamic`` + ``shared_static``), ``occupancy``, and the
        summary's ``num_stages`` and ``occupancy_text`` (as the table says it)."""
        r = self.resources
        s = self.summary
        return self.row.to_json() | {"shared": r.shared, "shared_dynamic": r.shared_dynamic,
                                     "shared_static": r.shared_static,
                                     "occupancy": s.occupancy.to_json() if s.occupancy is not None else None,
                                     "occupancy_text": s.occupancy_text, "num_stages": s.num_stages}

    def title(self) -> str:
        """``kernel [variant] target``, how listings name a capture."""
        return f"{self.kernel} [{self.variant}] {self.target}"

    # -- cached reads --------------------------------------------------------
    def _memo(self, key: Hashable, make: Callable[[], _T]) -> _T:
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        value = make()  # outside the lock: another thread may read another stage meanwhile
        with self._lock:
            return self._cache.setdefault(key, value)

    def _store(self):
        return self.bundle._store()

    def _read_stage(self, name: str) -> str | bytes:
        if name not in self.row.stages:
            raise IrscopeError(f"{self.title()} has no stage {name!r} (it has: {', '.join(self.row.stages)})")
        return self._store().stage_text(self.id, name)

    # -- what it is ----------------------------------------------------------
    @property
    def info(self) -> dict:
        """Every stored column of the capture, JSON fields decoded."""
        return self._memo("info", lambda: self._store().capture_info(self.id))

    @property
    def metadata(self) -> dict:
        """Triton's metadata (the ``json`` stage): num_warps, shared, hash..."""
        return self.info.get("metadata") or {}

    @property
    def options(self) -> dict:
        return self.info.get("options") or {}

    @property
    def constexprs(self) -> dict:
        return self.info.get("constexprs") or {}

    @property
    def run(self) -> Run:
        """How the capture was made (command, mode, host, versions)."""
        return self.bundle.run(self.row.run_id)

    @property
    def source(self) -> Source:
        """The kernel's Python source."""
        def read() -> Source:
            text, first = self._store().kernel_source(self.id)
            return Source(self.row.file, first, text)
        return self._memo(SOURCE, read)

    @property
    def resources(self) -> Resources:
        """Registers, spills, shared memory (what the launch uses) and the rest."""
        def ptx() -> str | None:
            text = self.stage(PTX).text if PTX in self.row.stages else None
            return text if isinstance(text, str) else None
        return self._memo("resources", lambda: resources_of(self.row, ptx))

    @property
    def occupancy(self) -> "Occupancy | None":
        """Resident blocks and warps per SM for the capture's target, and what binds."""
        r = self.resources
        if r.num_warps is None:
            return None
        from irscope.core.occupancy import occupancy

        return occupancy(self.target, num_warps=r.num_warps, registers=r.registers, shared_bytes=r.shared,
                         threads_per_warp=r.threads_per_warp)

    # -- stages --------------------------------------------------------------
    @property
    def stages(self) -> tuple[str, ...]:
        """The stages the capture holds, in pipeline order."""
        return self.row.stages

    def stage(self, name: str) -> Stage:
        """One stage (``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``, ``source``...)."""
        if name not in self.row.stages:
            raise IrscopeError(f"{self.title()} has no stage {name!r} (it has: {', '.join(self.row.stages)})")
        return self._memo(("stage", name), lambda: Stage(self, name))

    def modules(self) -> dict[str, Module]:
        """Every parsed lowering stage the capture holds (and its ``--exact-links``
        twins), by name."""
        names = [s for s in (*LOWERING, *EXACT_STAGES.values()) if s in self.row.stages]
        out = {}
        for name in names:
            st = self.stage(name)
            if not st.binary:
                out[name] = st.module
        return out

    # -- passes (irscope.core.capture_passes) ---------------------------------
    def pass_rows(self) -> list[PassRow]:
        """The stored pass headers, in order."""
        return capture_passes.pass_rows(self)

    def pass_changes(self) -> list["PassChange"]:
        """What every pass did, in order (computed once)."""
        return capture_passes.pass_changes(self)

    def pass_steps(self) -> list["PassStep"]:
        """What every pass did, in order (:mod:`irscope.core.pass_steps`): built once
        per capture; each step's structural diff is computed on first use."""
        return capture_passes.pass_steps(self)

    def step_diff(self, index: int) -> "StageDiff | None":
        """The structural diff of the IR before and after pass ``index`` (computed
        once; None when a side is unknown or the two texts are equal)."""
        return capture_passes.step_diff(self, index)

    def step_counts(self, index: int) -> "StepCounts":
        """The counts of :meth:`step_diff` (computed once), without making the diff's
        changes unless it is made already: a view of every pass's counts (``irscope
        passes``) then pays for the pairing only."""
        return capture_passes.step_counts(self, index)

    def side_text(self, side: "Side") -> str:
        """The text on one side of a pass: a snapshot's, or a stage's."""
        return capture_passes.side_text(self, side)

    def side_module(self, side: "Side") -> Module:
        """The parsed text on one side of a pass."""
        return capture_passes.side_module(self, side)

    def passes(self, stage: str | None = None, changed: bool | None = None) -> list["Pass"]:
        """The pass timeline; ``stage`` keeps one stage's passes, ``changed`` only the
        passes that changed (True) or did not change (False) the IR. Indexes and
        changes are those of the whole list."""
        return capture_passes.passes(self, stage, changed)

    def pass_at(self, index: int) -> "Pass":
        """The pass at ``index`` of the whole list (what ``--pass N`` takes)."""
        return capture_passes.pass_at(self, index)

    def origins(self) -> dict[str, "StageOrigins"]:
        """Which pass made each op of the final TTIR, TTGIR (and LLVM IR, with
        ``--llvm-passes``), and which ops the stages' passes erased."""
        return capture_passes.origins(self)

    def _pass_text(self, blob: int) -> str:
        return capture_passes.pass_text(self, blob)

    def _pass_module(self, index: int) -> Module:
        return capture_passes.pass_module(self, index)

    # -- lines and links -----------------------------------------------------
    @property
    def statements(self) -> StatementMap:
        """Which statement each line of the kernel's source belongs to (the identity
        map when the capture stored no source, or it does not parse)."""
        return self._memo("statements", lambda: statement_map(self.source.text, self.source.first_line))

    def statement(self, line: int) -> Statement:
        """The statement that owns Python ``line``: its first line (where views show its
        ops), last line and own lines."""
        return self.statements.statement(line)

    def line_of(self, op: Op) -> int | None:
        """The Python line views show ``op`` on: the first line of the statement of its
        innermost user frame; None when it has no user frame in the kernel's file."""
        from irscope.core.lines import line_of

        return line_of(op, self.row.file, self.statements)

    def ops_at_line(self, line: int, *, call_sites: bool = False,
                    stages: tuple[str, ...] = LOWERING) -> "LineOps":
        """The ops of each lowering stage that belong to Python ``line`` of the
        kernel's file: those of every line of ``line``'s statement
        (:meth:`statement`), each op at the line of its innermost user frame
        (:mod:`irscope.ir.python_lines`); ``call_sites`` adds the ops inlined from a
        helper called there. The result is a dict by stage that also carries the
        statement's span (``first_line``, ``last_line``)."""
        from irscope.core.lines import LineOps, statement_ops

        unit = self.statement(line)
        out = LineOps(line, unit)
        file = self.row.file
        for name in stages:
            if name not in self.row.stages:
                continue
            st = self.stage(name)
            if st.binary:
                continue
            out[name] = statement_ops(st.module.ops(), unit, file, call_sites)
        return out

    def ops_by_line(self, stage: str) -> dict[int, list[Op]]:
        """Python line -> the ``stage`` ops of the statement starting there, each
        statement keyed by its first line (the per-line counts every view shows; one
        walk, cached). Empty for a binary stage."""
        def walk() -> dict[int, list[Op]]:
            from irscope.core.lines import ops_by_line

            st = self.stage(stage)
            if st.binary:
                return {}
            return ops_by_line(st.module.ops(), self.row.file, self.statements)
        return self._memo(("ops_by_line", stage), walk)

    def remarks(self) -> "RemarkSet":
        """Triton's remarks for this compile (``MLIR_ENABLE_DIAGNOSTICS=remarks``,
        recorded by ``irscope run`` with Triton 3.6+): each with its source position,
        severity, text, and the stage and pass that emitted it. ``available`` is False,
        with ``why_not`` saying why, for an older Triton, a ``--no-remarks`` run or an
        older bundle. ``.at_line(n, self.file)`` gives one line's remarks by the rule
        ops follow (:mod:`irscope.core.remarks`)."""
        from irscope.core.remarks import remarks_of

        return remarks_of(self)

    def user_functions(self, charge: str | None = None) -> "UserFunctions":
        """The kernel, then each ``@triton.jit`` helper whose ops the capture holds, with
        their source lines and per-line op counts; ``charge`` ``"call-line"`` counts a
        helper's ops on the kernel line that calls it (:mod:`irscope.core.user_functions`)."""
        from irscope.core.user_functions import OWN, user_functions

        return user_functions(self, charge or OWN)

    def conversions(self) -> "tuple[Conversion, ...]":
        """Every ``ttg.convert_layout`` of the final TTGIR: its TTGIR and Python lines,
        both layouts, how the data moves (``registers``, ``warp_shuffle`` or
        ``shared_memory``, by Triton's rule on the linear layouts), the scratch bytes and
        bank conflicts through shared memory, and Triton's own allocation where the
        capture holds it (:mod:`irscope.core.conversions`; computed once)."""
        from irscope.core.conversions import conversions_of

        return self._memo("conversions", lambda: conversions_of(self))

    def loops(self) -> "tuple[Loop, ...]":
        """Every ``scf.for`` of the final TTGIR that loads from global memory: whether
        Triton's software pipeliner pipelined it, its stages, the loads that became
        async or TMA copies, its prologue / steady state / epilogue, and the remark
        that explains it (:mod:`irscope.core.loops`; computed once)."""
        from irscope.core.loops import loops_of

        return self._memo("loops", lambda: loops_of(self, self.remarks().items))

    def intensity(self) -> "Intensity | None":
        """The main loop's dot FLOPs and global bytes per iteration, beside the
        target's ridge point (:mod:`irscope.core.loops`, :mod:`irscope.core.peaks`);
        None when no loop that loads has a dot (computed once)."""
        from irscope.core.loops import intensity_of

        return self._memo("intensity", lambda: intensity_of(self))

    def explain(self) -> "Explanation":
        """Why the kernel costs what it costs: per Python line, its remarks, global
        access widths, shared-memory and tensor-core instructions, spills and SASS
        classes; per kernel, loops, layout conversions, intensity and occupancy
        (:mod:`irscope.core.explain`; computed once)."""
        from irscope.core.explain import explain

        return explain(self)

    def links(self) -> "CaptureLinks":
        """Every link between the capture's stages (built once)."""
        from irscope.link import build_links

        return self._memo("links", lambda: build_links(self.modules()))

    def links_for_op(self, stage: str, line: int) -> "OpLinks":
        """What the op starting at ``line`` of ``stage`` became (or came from) in every
        other stage. IrscopeError when no op starts there."""
        links = self.links()
        if links.op(stage, line) is None:
            raise IrscopeError(f"no op starts at line {line} of the {stage} stage "
                               f"(see 'irscope cat BUNDLE {self.kernel} --stage {stage}')")
        got = links.links_for_op(stage, line)
        return OpLinks(stage, line, got["text"], got["links"], bool(links.exact))

    def profiles(self) -> "tuple[ProfileStamp, ...]":
        """The GPU profiles attached to the capture, oldest first (:mod:`irscope.core.profile`)."""
        from irscope.core.profile import profiles_of

        return profiles_of(self)

    def profile(self, which: int | None = None, call_sites: bool = False) -> "HotProfile | None":
        """Profile ``which`` (an id of :meth:`profiles`; the newest when None) charged to
        the user's lines and to each stage's ops; ``call_sites`` charges a helper's lines
        to the kernel lines that call it. None when the capture has no profile."""
        from irscope.core.profile import profile_of

        return profile_of(self, which, call_sites)

    def iter_ops(self, stage: str) -> Iterator[Op]:
        """Every op of one stage, in text order."""
        return self.stage(stage).module.ops()
