"""Pass timing reports (MLIR_ENABLE_TIMING, LLVM_ENABLE_TIMING) matched to pass snapshots."""

from pathlib import Path

from irscope.capture.timing import (assign_numbered_times, assign_times, parse_llvm_timing_reports,
                                    parse_timing_reports)

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


# The two reports LLVM's legacy pass manager printed for vector_add on sm_90 (Triton
# 3.6, LLVM_ENABLE_TIMING=1): the always-inline run, then the NVPTX codegen pipeline.
LLVM_REPORT = (Path(__file__).parent / "data" / "llvm_timing_report.txt").read_text()


def test_parse_llvm_reports_takes_the_wall_time_column():
    first, codegen = parse_llvm_timing_reports(LLVM_REPORT)
    assert set(first) == {"Module Verifier", "Inliner for always_inline functions"}
    assert codegen["NVPTX DAG->DAG Pattern Instruction Selection"] == 0.0012
    assert "Slot index numbering #2" in codegen and "Total" not in codegen
    assert len(codegen) > 100


def test_assign_numbered_times_counts_instances_per_report():
    reports = [{"Module Verifier": 0.5, "Inliner": 0.25},
               {"Module Verifier": 1.0, "Slot index numbering": 2.0, "Slot index numbering #2": 3.0}]
    names = ["Inliner", "Module Verifier", "Pre-ISel", "Module Verifier", "Slot index numbering",
             "Slot index numbering"]
    assert assign_numbered_times(names, reports) == [0.25, 0.5, None, 1.0, 2.0, 3.0]


def test_a_report_after_the_last_llvm_dump_is_not_part_of_it():
    from irscope.compiler.passdump import split_llvm_pass_dump

    body = "define void @k() {\n  ret void\n}\n"
    stream = ("# *** IR Dump After Machine code sinking (machine-sink) ***:\n" + body
              + "# *** IR Dump After NVPTX Assembly Printer (nvptx-asm-printer) ***:\n" + body
              + LLVM_REPORT)
    dump = split_llvm_pass_dump(stream)
    assert [s.text.strip() for s in dump] == [body.strip(), body.strip()]
    other = "\n".join(text for _, text in dump.other)
    assert "Pass execution timing report" in other and "Slot index numbering #2" in other
    assert len(parse_llvm_timing_reports(other)) == 2
