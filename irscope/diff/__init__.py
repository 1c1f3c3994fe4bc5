"""Compare: a structural IR diff robust to SSA renaming, and the capture-level deltas
(metadata, resources, instruction mix, pass pipeline, per-Python-line counts).

Pure functions over the core's model (:mod:`irscope.core`, :mod:`irscope.ir`);
the views (``irscope diff``, the TUI's diff screen) render what they return.

    from irscope.diff import compare_captures, compare_passes, compare_files, diff_modules

The names below load their module when first used, so importing one submodule
(``irscope.diff.mix`` for the summary) does not pull in the whole comparison.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real types for a type checker; at run time they load on first use
    from irscope.diff.compare import Comparison, compare_captures, compare_files, compare_passes
    from irscope.irdiff.engine import diff_modules
    from irscope.irdiff.model import StageDiff

# Public name -> the module that defines it. diff_modules is the structural engine
# (irscope.irdiff), re-exported because the comparison is where users look for it.
_LAZY: dict[str, str] = {
    "Comparison": "irscope.diff.compare",
    "compare_captures": "irscope.diff.compare",
    "compare_passes": "irscope.diff.compare",
    "compare_files": "irscope.diff.compare",
    "diff_modules": "irscope.irdiff.engine",
    "StageDiff": "irscope.irdiff.model",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'irscope.diff' has no attribute {name!r}")


__all__ = sorted(_LAZY)
