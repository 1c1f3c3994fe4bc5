"""MLIR pass timing reports (MLIR_ENABLE_TIMING) matched to pass snapshots."""

import pytest

from irscope.capture.timing import assign_times, parse_timing_reports

# As Triton 3.6 printed it for a small kernel's ttir stage (real output, trimmed).
REPORT = """\
===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0018 seconds

  ----Wall Time----  ----Name----
    0.0005 ( 29.0%)  Inliner
    0.0000 (  1.4%)    (A) CallGraph
    0.0003 ( 14.5%)  'tt.func' Pipeline
    0.0003 ( 14.3%)    Canonicalizer
    0.0000 (  1.0%)  TritonRewriteTensorPointer
    0.0000 (  2.8%)  Canonicalizer
    0.0006 ( 32.1%)  TritonReorderBroadcast
    0.0000 (  0.0%)    (A) DominanceInfo
    0.0002 ( 13.0%)  Rest
    0.0018 (100.0%)  Total
"""


def test_parse_report_skips_analyses_pipelines_and_totals():
    (report,) = parse_timing_reports("noise\n" + REPORT + "more noise\n")
    assert report == [("Inliner", 0.0005), ("Canonicalizer", 0.0003), ("TritonRewriteTensorPointer", 0.0),
                      ("Canonicalizer", 0.0), ("TritonReorderBroadcast", 0.0006)]


def test_assign_in_order_with_nested_dumps():
    (report,) = parse_timing_reports(REPORT)
    names = ["Inliner", "Canonicalizer", "Canonicalizer", "Canonicalizer", "TritonRewriteTensorPointer",
             "Canonicalizer", "TritonReorderBroadcast"]
    nested = [False, True, True, True, False, False, False]  # one canonicalizer dump per function
    assert assign_times(names, report, nested) == [0.0005, 0.0003, None, None, 0.0, 0.0, 0.0006]


def test_an_unmatched_entry_does_not_shift_the_rest():
    report = [("A", 1.0), ("Ghost", 9.0), ("B", 2.0)]
    assert assign_times(["A", "X", "B", "C", "D", "E", "Ghost"], report) == [1.0, None, 2.0, None, None, None, None]
