"""The core: one Python API over bundles and plain IR files. Every view reads from it.

    import irscope
    b = irscope.open("mm.irscope")
    cap = b.capture("matmul_kernel", target="sm_90", variant=0)
    cap.resources.registers, cap.occupancy.blocks_per_sm
    ttgir = cap.stage("ttgir").module            # parsed once, cached
    for p in cap.passes(stage="ttgir", changed=True):
        print(p.name, p.step.counts.added, p.step.counts.removed)   # what the pass did
    cap.ops_at_line(77)["sass"]

The core never imports Rich or Textual, nor anything that captures (Triton, torch,
``irscope.capture``): tests hold it to that.
"""

from irscope.core.bundle import Bundle, open_bundle
from irscope.core.capture import Capture, OpLinks, Run, Source, Stage
from irscope.core.files import FORMATS, IRFile, parse_text, read_ir_file
from irscope.core.resources import Resources
from irscope.core.selection import select_capture
from irscope.core.summary import CaptureSummary, occupancy_text
from irscope.core.target import Target, normalise_target
from irscope.core.variant import Variant

_LAZY = {"Explanation": "explain", "LineExplanation": "explain", "LineCosts": "line_costs",
         "GlobalAccess": "line_costs", "Failure": "failure", "Occupancy": "occupancy", "ErasedOps": "origins", "OpOrigin": "origins", "PassRef": "origins", "StageOrigins": "origins",
         "Pass": "passes", "PassStep": "pass_steps", "StepCounts": "pass_steps", "LineOps": "lines",
         "UserFunctions": "user_functions", "Remark": "remarks", "RemarkSet": "remarks", "UserFunction": "user_functions", "FunctionLine": "user_functions",
         "Loop": "loops", "Intensity": "loops", "Peaks": "peaks", "Conversion": "conversions"}


def __getattr__(name: str):
    # Passes and origins pull in provenance: loaded when first named, not to show a stage.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"irscope.core.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'irscope.core' has no attribute {name!r}")

__all__ = ["Bundle", "Capture", "CaptureSummary", "Conversion", "ErasedOps", "Explanation", "GlobalAccess", "LineCosts",
           "LineExplanation", "FORMATS", "Failure", "IRFile", "Intensity", "LineOps", "Loop", "Occupancy", "OpLinks", "OpOrigin", "Pass", "Peaks",
           "PassRef", "PassStep", "StepCounts", "Remark", "RemarkSet", "Resources", "Run", "Source", "Stage", "StageOrigins", "Target", "UserFunction",
           "UserFunctions", "FunctionLine", "Variant",
           "normalise_target", "occupancy_text", "open_bundle", "parse_text", "read_ir_file", "select_capture"]
