"""Splitting MLIR_ENABLE_DUMP / LLVM_IR_ENABLE_DUMP streams into pass snapshots."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from irscope.ir import (ParseCache, parse_mlir, parse_snapshots, split_llvm_pass_dump,
                        split_mlir_pass_dump, split_pass_dump)

DATA = Path(__file__).parent / "data" / "ir"

# (version, case) -> (snapshots, internal dumps, nested tt.func dumps)
EXPECTED = {
    ("3.2.0", "add_sm90"): (50, 0, 1),
    ("3.2.0", "helper_sm80"): (54, 0, 7),
    ("3.6.0", "add_sm90"): (71, 2, 1),
    ("3.6.0", "helper_sm80"): (77, 2, 7),
    ("3.9.0", "add_sm90"): (78, 2, 1),
    ("3.9.0", "helper_sm80"): (85, 2, 7),
}


def stream(version: str, case: str, name: str = "mlir_passes.txt") -> str:
    return (DATA / version / case / name).read_text()


@pytest.mark.parametrize("version,case", sorted(EXPECTED))
def test_mlir_stream(version, case):
    text = stream(version, case)
    dump = split_mlir_pass_dump(text)
    total, internal, nested = EXPECTED[(version, case)]
    assert len(dump) == total
    kinds = Counter(s.kind for s in dump)
    assert kinds == Counter({"before": total - internal, **({"internal": internal} if internal else {})})
    assert sum(s.anchor_op == "tt.func" for s in dump) == nested
    assert [s.index for s in dump] == list(range(total))
    first = dump[0]
    assert first.argument == "inline" and first.anchor_op == "builtin.module"
    args = [s.argument for s in dump]
    assert "tritongpu-coalesce" in args and args[-1] == "enable-line-info"
    # the ttir -> ttgir conversion opens the second stage, before the coalescing
    assert args.index("convert-triton-to-tritongpu") < args.index("tritongpu-coalesce")
    if version == "3.9.0":  # 3.8+ header: "Pass: argument{options}"
        assert first.pass_name == "InlinerPass" and first.options.startswith("{default-pipeline=")
        canon = next(s for s in dump if s.argument == "canonicalize")
        assert canon.pass_name == "CanonicalizerPass" and "max-iterations=" in canon.options
    else:
        assert first.pass_name == "Inliner" and first.options == ""
    for s in dump:
        if s.kind == "internal":
            assert s.anchor_name == "SoftwarePipeliner"
            assert s.pass_name in ("LowerLoops", "ExpandLoops")
    nested_names = [s.anchor_name for s in dump if s.anchor_op == "tt.func"]
    assert nested_names[-1] in ("add_kernel", "helper_kernel")
    if case.startswith("helper"):  # helper functions not yet inlined get their own dumps
        assert any("cdiv" in n for n in nested_names) and any("_scale" in n for n in nested_names)
    # where each body lies in the stream
    lines = text.split("\n")
    for s in dump:
        assert lines[s.line_offset - 1] == s.header
        body = s.text.split("\n")
        assert body[0] == lines[s.line_offset]
        assert body[0].startswith(("#", "module"))
    # every snapshot parses completely
    cache = ParseCache()
    for s in dump:
        mod = parse_mlir(s.text, "mlir", cache)
        assert mod.coverage == 1.0 and len(mod.functions) >= 1


def test_warnings_are_kept_apart():
    dump = split_mlir_pass_dump(stream("3.9.0", "add_sm90"))
    assert [n for n, _ in dump.other] == [1, 2]
    assert "UserWarning" in dump.other[0][1]
    assert all("Warning" not in s.text for s in dump)


def test_synthetic_mlir_headers_and_stray_text():
    text = """noise before
// -----// IR Dump After TritonGPUPipeline Failed (tritongpu-pipeline) ('builtin.module' operation) //----- //
#loc = loc("/k.py":1:0)
module {
  tt.func @f() {
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/k.py":2:0)
a stray warning line


// -----// IR Dump After CSEPass: cse Failed ('tt.func' operation: @g(x, y)) //----- //
module {
}
// -----// WarpSpec internal IR Dump After: partition
module {
}
// -----// Mystery IR Dump format
not a module at all
"""
    dump = split_mlir_pass_dump(text)
    assert [(s.kind, s.pass_name, s.argument, s.anchor_op, s.anchor_name) for s in dump] == [
        ("after-failed", "TritonGPUPipeline", "tritongpu-pipeline", "builtin.module", ""),
        ("after-failed", "CSEPass", "cse", "tt.func", "g(x, y)"),
        ("internal", "partition", "", "", "WarpSpec"),
        ("unknown", "Mystery IR Dump format", "", "", ""),
    ]
    assert dump.snapshots[0].pass_name == "TritonGPUPipeline"
    # stray lines go to `other`, with their stream line numbers, not into a body
    assert dump.other == [(1, "noise before"), (10, "a stray warning line")]
    assert dump[0].text.endswith('#loc1 = loc("/k.py":2:0)\n')
    assert "stray" not in dump[0].text
    assert dump[3].text == "not a module at all\n"
    assert parse_mlir(dump[0].text).coverage == 1.0


def test_llvm_stream():
    text = stream("3.6.0", "add_sm80", "llvm_passes.txt")
    dump = split_llvm_pass_dump(text)
    assert len(dump) == 191
    assert Counter(s.family for s in dump) == {"llvm": 154, "mir": 37}
    first, last = dump[0], dump[-1]
    assert (first.pass_name, first.anchor_name, first.kind) == (
        "Annotation2MetadataPass", "[module]", "after")
    assert (last.pass_name, last.argument) == ("NVPTX Assembly Printer", "nvptx-asm-printer")
    legacy = next(s for s in dump if s.header.startswith("*** "))
    assert (legacy.pass_name, legacy.argument) == ("Inliner for always_inline functions",
                                                   "always-inline")
    cgscc = next(s for s in dump if s.pass_name == "PostOrderFunctionAttrsPass")
    assert cgscc.anchor_name == "(add_kernel)"  # a call-graph SCC
    # pass-manager chatter is kept apart with its line numbers
    assert dump.other and all(t.startswith(("Running", "Invalidating", "Clearing", "Skipping"))
                              for _, t in dump.other)
    lines = text.split("\n")
    assert all(lines[n - 1] == t for n, t in dump.other)
    assert not any("Running pass" in s.text for s in dump)
    for s in dump[:20]:
        assert lines[s.line_offset - 1] == s.header
    mods = parse_snapshots(dump)
    assert all(m.coverage == 1.0 for m in mods)
    assert len({id(m) for m in mods}) < len(mods)  # unchanged snapshots share a parse


def test_mixed_stream():
    mlir = stream("3.6.0", "add_sm90")
    llvm = stream("3.6.0", "add_sm80", "llvm_passes.txt")
    both = split_pass_dump(mlir + llvm)
    assert len(both) == 71 + 191
    assert [s.family for s in both][:71] == ["mlir"] * 71
    assert len(split_mlir_pass_dump(mlir + llvm)) == 71
    assert len(split_llvm_pass_dump(mlir + llvm)) == 191
    # the last MLIR snapshot ends where the LLVM dumps begin
    assert "IR Dump" not in both[70].text and "; ModuleID" not in both[70].text


def test_empty_and_headerless():
    assert len(split_mlir_pass_dump("")) == 0
    dump = split_llvm_pass_dump("hello\n\nworld")
    assert len(dump) == 0 and dump.other == [(1, "hello"), (3, "world")]
