"""The rules of ``irscope check``: the typed model of a rules file, and its parser.

A rules file is TOML (docs/checks.md): one ``[[kernel]]`` table per capture, with
kernel-wide expectations, ``[[kernel.line]]`` tables (one Python statement each) and
``[[kernel.loop]]`` tables (one loop each). :func:`parse_rules` turns it into a
:class:`RuleSet` of frozen dataclasses, rejecting unknown keys and bad values with one
line (:class:`RuleError`); :mod:`irscope.core.checks` evaluates it against a capture.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscope.errors import IrscopeError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli (a dependency there)
    import tomli as tomllib

LOOP_KEYS = ("line", "pipelined", "min_stages", "min_async_loads")
"""The keys of a ``[[kernel.loop]]`` table."""


class RuleError(IrscopeError):
    """A rules file that cannot be checked: bad TOML, an unknown key, a bad value, or a
    kernel, line or loop the bundle does not have. Its message is one line."""


# -- the rule model ---------------------------------------------------------------

@dataclass(frozen=True)
class LineRule:
    """Expectations about one Python statement (``[[kernel.line]]``)."""

    line: int
    file: str | None = None
    """The file of the line, for a helper in another file; default: the kernel's."""
    uses: tuple[str, ...] = ()
    """Instructions that must be at the line: a shared-memory or tensor-core kind
    (``wgmma``, ``tcgen05.mma``, ``ldmatrix``, ``cp.async``, ``tma``...), a SASS
    instruction class (``mma``: any tensor-core math; ``local``...), or a PTX or SASS mnemonic
    (``wgmma.mma_async``, ``HGMMA``, ``LDGSTS``)."""
    not_uses: tuple[str, ...] = ()
    """Instructions that must not be at the line (named as ``uses``)."""
    min_load_bits: int | None = None
    min_store_bits: int | None = None
    full_width: bool = False
    """Every global access as wide as its layout allows (``elements == max_elements``)."""
    spills: int | None = None
    max_spills: int | None = None
    no_shared_memory_conversion: bool = False
    max_bank_conflicts: int | None = None
    """Through shared memory, no conversion of the line with more than N-way conflicts."""


@dataclass(frozen=True)
class LoopRule:
    """Expectations about the loop whose ``for`` is at ``line`` (``[[kernel.loop]]``)."""

    line: int
    pipelined: bool | None = None
    min_stages: int | None = None
    min_async_loads: int | None = None


@dataclass(frozen=True)
class KernelRule:
    """The expectations of one ``[[kernel]]`` table: one capture's."""

    name: str
    target: str | None = None
    variant: str | None = None
    spills: int | None = None
    """Exactly this many SASS spill instructions (``LDL`` + ``STL``) in the kernel."""
    max_spills: int | None = None
    min_occupancy_blocks: int | None = None
    max_registers: int | None = None
    no_shared_memory_conversion: bool = False
    lines: tuple[LineRule, ...] = ()
    loops: tuple[LoopRule, ...] = ()
    index: int = 1
    """1-based position among the file's ``[[kernel]]`` tables (for messages)."""


@dataclass(frozen=True)
class RuleSet:
    """A parsed rules file."""

    kernels: tuple[KernelRule, ...]
    source: str = "rules"


# -- parsing ----------------------------------------------------------------------

_KERNEL_KEYS = ("name", "target", "variant", "spills", "max_spills", "min_occupancy_blocks", "max_registers",
                "no_shared_memory_conversion", "line", "loop")
_LINE_KEYS = ("line", "file", "uses", "not_uses", "min_load_bits", "min_store_bits", "full_width", "spills",
              "max_spills", "no_shared_memory_conversion", "max_bank_conflicts")


def _int(table: dict, key: str, where: str, minimum: int = 0) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(f"{where}: {key} must be an integer, not {value!r}")
    if value < minimum:
        raise RuleError(f"{where}: {key} must be at least {minimum}, not {value}")
    return value


def _bool(table: dict, key: str, where: str) -> bool | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise RuleError(f"{where}: {key} must be true or false, not {value!r}")
    return value


def _flag(table: dict, key: str, where: str) -> bool:
    """A switch that only means something when true."""
    value = _bool(table, key, where)
    if value is False:
        raise RuleError(f"{where}: {key} = false expects nothing; leave the key out")
    return bool(value)


def _names(table: dict, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise RuleError(f"{where}: {key} must be a list of instruction names, like [\"wgmma\"], not {value!r}")
    return tuple(v.strip() for v in value)


def _text(table: dict, key: str, where: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and not value.strip()):
        raise RuleError(f"{where}: {key} must be a string, not {value!r}")
    return str(value)


def _known(table: dict, keys: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in keys:
            raise RuleError(f"{where}: unknown key {key!r} (known: {', '.join(keys)})")


def _tables(value: Any, key: str, where: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise RuleError(f"{where}: {key} must be tables written [[{key}]], not {value!r}")
    return value


def _spill_pair(table: dict, where: str) -> tuple[int | None, int | None]:
    spills, most = _int(table, "spills", where), _int(table, "max_spills", where)
    if spills is not None and most is not None:
        raise RuleError(f"{where}: give spills or max_spills, not both")
    return spills, most


def _line_rule(table: dict, where: str) -> LineRule:
    _known(table, _LINE_KEYS, where)
    line = _int(table, "line", where, minimum=1)
    if line is None:
        raise RuleError(f"{where}: line = N is required")
    where = f"{where} (line {line})"
    spills, most = _spill_pair(table, where)
    rule = LineRule(line=line, file=_text(table, "file", where), uses=_names(table, "uses", where),
                    not_uses=_names(table, "not_uses", where),
                    min_load_bits=_int(table, "min_load_bits", where, minimum=1),
                    min_store_bits=_int(table, "min_store_bits", where, minimum=1),
                    full_width=_flag(table, "full_width", where), spills=spills, max_spills=most,
                    no_shared_memory_conversion=_flag(table, "no_shared_memory_conversion", where),
                    max_bank_conflicts=_int(table, "max_bank_conflicts", where, minimum=1))
    if rule == LineRule(line=line, file=rule.file):
        raise RuleError(f"{where}: no expectation (give uses, min_load_bits, spills... : docs/checks.md)")
    return rule


def _loop_rule(table: dict, where: str) -> LoopRule:
    _known(table, LOOP_KEYS, where)
    line = _int(table, "line", where, minimum=1)
    if line is None:
        raise RuleError(f"{where}: line = N (the loop's for statement) is required")
    where = f"{where} (line {line})"
    rule = LoopRule(line=line, pipelined=_bool(table, "pipelined", where),
                    min_stages=_int(table, "min_stages", where, minimum=1),
                    min_async_loads=_int(table, "min_async_loads", where))
    if rule == LoopRule(line=line):
        raise RuleError(f"{where}: no expectation (give pipelined, min_stages or min_async_loads)")
    return rule


def _kernel_rule(table: dict, index: int, where: str) -> KernelRule:
    here = f"{where}: [[kernel]] #{index}"
    _known(table, _KERNEL_KEYS, here)
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RuleError(f"{here}: name = \"KERNEL\" is required")
    here = f"{where}: [[kernel]] {name}"
    spills, most = _spill_pair(table, here)
    return KernelRule(
        name=name.strip(), target=_text(table, "target", here), variant=_text(table, "variant", here),
        spills=spills, max_spills=most, min_occupancy_blocks=_int(table, "min_occupancy_blocks", here, minimum=1),
        max_registers=_int(table, "max_registers", here, minimum=1),
        no_shared_memory_conversion=_flag(table, "no_shared_memory_conversion", here),
        lines=tuple(_line_rule(t, f"{here} [[kernel.line]] #{i}")
                    for i, t in enumerate(_tables(table.get("line"), "kernel.line", here), 1)),
        loops=tuple(_loop_rule(t, f"{here} [[kernel.loop]] #{i}")
                    for i, t in enumerate(_tables(table.get("loop"), "kernel.loop", here), 1)),
        index=index)


def parse_rules(text: str, where: str = "rules") -> RuleSet:
    """The rules of a TOML text (``where`` names it in errors). :class:`RuleError`
    (one line) for bad TOML, an unknown key or a bad value."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{where}: not valid TOML: {' '.join(str(exc).split())}") from None
    _known(data, ("kernel",), where)
    tables = _tables(data.get("kernel"), "kernel", where)
    if not tables:
        raise RuleError(f"{where}: no [[kernel]] table: nothing to check")
    return RuleSet(tuple(_kernel_rule(t, i, where) for i, t in enumerate(tables, 1)), where)


def load_rules(path: str | Path) -> RuleSet:
    """The rules of a TOML file (:func:`parse_rules`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuleError(f"{p}: no such rules file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"{p}: cannot read it ({' '.join(str(exc).split())})") from None
    return parse_rules(text, str(p))
