"""A kernel variant's label, read one way by every view.

The label is what the capture stored (``BLOCK_SIZE_M=128,...,num_warps=8,num_stages=3``):
the constexprs and the compile options that change the code. ``--json`` output, the
report and error messages give it whole; tables that are short of room show the
fields that differ between a kernel's variants (:func:`differing_fields`), and
``--variant N`` counts variants as :func:`variant_index` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

_FIELD = re.compile(r",(?=[A-Za-z_][\w.]*=)")


def variant_fields(label: str) -> list[str]:
    """``'BLOCK=64,num_warps=4'`` -> ``['BLOCK=64', 'num_warps=4']`` (a value holding a
    comma, like a tuple's ``(1, 2)``, stays whole: fields start at ``name=``)."""
    return [f for f in _FIELD.split(label or "") if f]


@dataclass(frozen=True, slots=True)
class Variant:
    """One variant label and its fields."""

    label: str
    """The label as stored: never cut, the same in every view and in ``--json``."""

    @property
    def fields(self) -> list[str]:
        """The label's ``name=value`` fields, in order."""
        return variant_fields(self.label)

    def value(self, name: str) -> str | None:
        """The text of field ``name`` (``num_stages`` -> ``'3'``), or None. The last
        such field wins: the compile options follow the constexprs in a label."""
        found = None
        for f in self.fields:
            key, _, value = f.partition("=")
            if key == name:
                found = value
        return found

    def int_value(self, name: str) -> int | None:
        """Field ``name`` as an integer, or None when absent or not a number."""
        value = self.value(name)
        return int(value) if value is not None and value.isdigit() else None

    def __str__(self) -> str:
        return self.label


def differing_fields(labels: Iterable[str], omit: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Label -> its fields that differ between ``labels`` (one kernel's variants); a
    field missing from some labels differs. A lone label keeps no field. Fields named
    in ``omit`` are left out (a view with its own column for them)."""
    split = {lab: variant_fields(lab) for lab in dict.fromkeys(labels)}
    counts: dict[str, int] = {}
    for fields in split.values():
        for f in dict.fromkeys(fields):
            counts[f] = counts.get(f, 0) + 1
    n = len(split)
    return {lab: [f for f in fields if counts[f] < n and f.partition("=")[0] not in omit]
            for lab, fields in split.items()}


def variant_labels(pairs: Iterable[tuple[str, str]], target: str | None = None) -> list[str]:
    """The distinct labels of ``(target, label)`` pairs (one kernel's captures, in
    capture order), optionally of one target: what ``--variant N`` indexes."""
    return list(dict.fromkeys(lab for t, lab in pairs if target is None or t == target))


def compile_option(label: str, options: Mapping[str, Any], metadata: Mapping[str, Any], name: str) -> Any:
    """A compile option (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``) by the
    one rule every view uses: the variant label's field (the label is made from the
    compile options, so it agrees with them, and reading it costs no query), else the
    recorded compile options, else Triton's metadata (older bundles and failed compiles
    may have only one of them). None when none has it."""
    value = Variant(label).int_value(name)
    if value is not None:
        return value
    if name in options:
        return options[name]
    return metadata.get(name)
