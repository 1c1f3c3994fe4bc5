"""What a replay asks for, and whether it can be done: the request, the options a
replay can set, the passes it can leave out, and the one-line errors for the rest
(checked before any child starts). :mod:`irscope.whatif.replay` runs the requests."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from irscope.capture.session import check_python
from irscope.compiler.stages import LLIR, TTGIR, TTIR
from irscope.core.passes import droppable_passes
from irscope.core.target import Target
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from irscope.core.capture import Capture

FROM_STAGES = (TTIR, TTGIR)
"""The stages a replay can start from."""


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """One replay: which capture, from which stage, and what changes."""

    bundle: str
    """Path of the bundle holding the original capture."""
    capture_id: int
    """The original capture's id in that bundle."""
    from_stage: str = TTIR
    """``ttir`` (the TTGIR pipeline runs again) or ``ttgir`` (the LLVM lowering onwards)."""
    sets: tuple[tuple[str, str], ...] = ()
    """Compile options to change, as written (``("num_stages", "2")``)."""
    target: str | None = None
    """Another target (``sm_80``); None keeps the captured one."""
    without: tuple[str, ...] = ()
    """Passes to leave out, by their MLIR argument (``tritongpu-pipeline``)."""
    python: str | None = None
    """Another Python (with its own Triton) to compile with; None: irscope's own."""

    def label(self) -> str:
        """What the replay changes, in one short line (``from ttir, num_stages=2, -tritongpu-pipeline``)."""
        parts = [f"from {self.from_stage}"]
        parts += [f"{k}={v}" for k, v in self.sets]
        if self.target:
            parts.append(f"target {self.target}")
        parts += [f"-{p}" for p in self.without]
        if self.python:
            parts.append(f"python {self.python}")
        return ", ".join(parts)


EDITED_STAGE = {TTIR: TTGIR, TTGIR: LLIR}
"""The stage whose pass pipeline a replay from each stage runs, and can edit."""


# Options the target decides (or paths into one Triton's wheel): a replay lets the
# compiler derive them again rather than carry the captured values over.
_DERIVED_OPTIONS = frozenset({"arch", "backend_name", "warp_size", "extern_libs", "supported_fp8_dtypes",
                              "deprecated_fp8_dot_operand_dtypes", "allowed_dot_input_precisions", "ir_override",
                              "ptx_version"})
# Options that act in the TTGIR pipeline: a replay from TTGIR (that pipeline has run) cannot change them.
_TTGIR_PIPELINE_OPTIONS = ("num_warps", "num_stages", "num_ctas")
# Options only the frontend reads (Python to TTIR: Triton 3.2 to 3.9's code generator and
# semantic layer; no backend stage reads them): their captured values are in the IR a
# replay starts from, so setting them would change nothing.
FRONTEND_OPTIONS = frozenset({"debug", "sanitize_overflow", "default_dot_input_precision",
                              "max_num_imprecise_acc_default"})


def known_passes(cap: "Capture", stage: str = TTGIR) -> tuple[str, ...]:
    """The passes of ``cap``'s captured ``stage`` pipeline that a replay can leave
    out, by MLIR argument, in pipeline order, each once (the rule:
    :func:`irscope.core.passes.droppable_passes`)."""
    return droppable_passes(cap.passes(stage))


def parse_set(item: str) -> tuple[str, str]:
    """``'num_stages=2'`` -> ``('num_stages', '2')``; IrscopeError (one line) otherwise."""
    key, eq, value = item.partition("=")
    if not eq or not key.strip() or not value.strip():
        raise IrscopeError(f"--set {item!r}: expected KEY=VALUE, e.g. num_stages=2")
    return key.strip(), value.strip()


def option_value(text: str) -> Any:
    """A ``--set`` value as the compiler takes it: an int, a float, a bool, else the text."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _kind(value: Any) -> str:
    """What sort of value an option takes, in words."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    return "text"


def settable_options(cap: "Capture") -> tuple[str, ...]:
    """The compile options a replay of ``cap`` can set: the captured ones that are
    scalars and not derived from the target."""
    return tuple(sorted(k for k, v in cap.options.items()
                        if k not in _DERIVED_OPTIONS and (v is None or isinstance(v, (bool, int, float, str)))))


def check_request(req: ReplayRequest, cap: "Capture") -> None:
    """IrscopeError (one line) when ``req`` cannot replay ``cap``: a ``python`` that is
    not an interpreter, a stage it cannot start from, an option it cannot set, a pass
    its pipeline does not have."""
    if req.python is not None:
        check_python(req.python)
    if req.from_stage not in FROM_STAGES:
        raise IrscopeError(f"cannot replay from {req.from_stage!r}: choose one of {', '.join(FROM_STAGES)}")
    if req.from_stage not in cap.stages:
        raise IrscopeError(f"#{cap.id} {cap.kernel} has no {req.from_stage} stage to replay from"
                           + (f" (it failed: {cap.error})" if cap.error else ""))
    if req.target is not None:
        target = Target.parse(req.target)
        if req.from_stage == TTGIR and target.name != cap.target:
            raise IrscopeError(f"--target {target.name} needs --from ttir: the captured TTGIR's layouts are made "
                               f"for {cap.target}")
    valid = tuple(k for k in settable_options(cap) if k not in FRONTEND_OPTIONS)
    for key, value in req.sets:
        if key in FRONTEND_OPTIONS:
            raise IrscopeError(f"{key} acts in the frontend (Python to TTIR), which a replay does not run: the "
                               f"captured IR holds {key}={cap.options.get(key)}; compile the script with it "
                               f"(irscope repro writes one to edit)")
        if key in cap.constexprs and not (key in valid and loop_stages_constexpr(cap, key)):
            raise IrscopeError(f"{key} is a constexpr of {cap.kernel}, fixed in the captured IR: a replay sets "
                               f"compile options only ({', '.join(valid)}); irscope tune compiles other values")
        if key not in valid:
            raise IrscopeError(f"{key!r} is not a compile option of this capture (options: {', '.join(valid)})")
        captured = cap.options.get(key)
        given = _kind(option_value(value))
        if captured is not None and given != _kind(captured) and (given, _kind(captured)) != ("an integer", "a number"):
            raise IrscopeError(f"--set {key}={value}: expected {_kind(captured)} (captured: {key}={captured})")
        if key == "maxnreg" and (isinstance(option_value(value), bool) or not isinstance(option_value(value), int)):
            raise IrscopeError(f"--set maxnreg={value}: expected an integer (registers per thread)")
        if req.from_stage == TTGIR and key in _TTGIR_PIPELINE_OPTIONS:
            raise IrscopeError(f"{key} acts in the TTGIR pipeline, which a replay --from ttgir does not run: "
                               f"use --from ttir")
    stage = EDITED_STAGE[req.from_stage]
    known = known_passes(cap, stage)
    unknown = [p for p in req.without if p not in known]
    if unknown:
        raise IrscopeError(f"unknown pass {unknown[0]!r} in the {stage} pipeline of #{cap.id} {cap.kernel} "
                           f"(a replay --from {req.from_stage} can leave out: {', '.join(known) or 'none'})")


def loop_stages_constexpr(cap: "Capture", name: str) -> bool:
    """Whether the kernel's constexpr ``name`` is also the option ``num_stages`` and is
    used only as the ``num_stages=`` of its loops (Triton's softmax tutorial passes
    its ``num_stages`` both ways, ``tl.range(..., num_stages=num_stages)``), and every
    loop's ``num_stages=`` is that constexpr: then the captured TTIR holds the value
    only as its loops' ``tt.num_stages`` attributes, and a replay can set both."""
    if name != "num_stages" or not isinstance(cap.source.text, str):
        return False
    try:
        tree = ast.parse(textwrap.dedent(cap.source.text))
    except SyntaxError:
        return False
    as_stages = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "num_stages":
            if not (isinstance(node.value, ast.Name) and node.value.id == name):
                return False  # a loop with stages of its own: its attribute cannot be told apart
            as_stages += 1
    uses = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == name)
    return as_stages > 0 and uses == as_stages
