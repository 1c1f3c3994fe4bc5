"""The static HTML report (``irscope report``): an index of the kernels, a page per
capture (stages with linked Python lines, the pass timeline with each pass's diff,
graphs and layouts), and, across bundles, the matrix and the diffs. Opens from
``file://`` with no server."""

from irscope.export.report.build import MARKER, ReportResult, build_report

__all__ = ["MARKER", "ReportResult", "build_report"]
