"""Splitting the per-pass dump stream as ingest uses it (header formats of Triton 3.2-3.9)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from irscope.compiler.passdump import split_pass_dump


def split_dump_stream(text):
    d = split_pass_dump(text)
    return list(d), "".join(t + "\n" for _, t in d.other)

MODULE = 'module {\n  tt.func public @k() {\n    tt.return loc(#loc1)\n  } loc(#loc)\n} loc(#loc)\n#loc = loc("/k.py":3:0)\n#loc1 = loc("/k.py":4:4)\n'

HEADERS = [
    # <= 3.7
    ("// -----// IR Dump Before TritonGPUCoalesce (tritongpu-coalesce) ('builtin.module' operation) //----- //",
     ("before", "TritonGPUCoalesce", "tritongpu-coalesce", "", "builtin.module", "")),
    # 3.8+, with options and a nested anchor whose name has parentheses (3.2 helper names)
    ("// -----// IR Dump Before CanonicalizerPass: canonicalize{cse-between-iterations=false max-iterations=10} "
     "('tt.func' operation: @triton.language.standard.zeros__Tc128T_cfp32) //----- //",
     ("before", "CanonicalizerPass", "canonicalize", "{cse-between-iterations=false max-iterations=10}", "tt.func",
      "triton.language.standard.zeros__Tc128T_cfp32")),
    ("// -----// IR Dump Before Canonicalizer (canonicalize) ('tt.func' operation: @zeros____0cconstexpr_(constexpr_32_,)__1cconstexpr_fp32_) //----- //",
     ("before", "Canonicalizer", "canonicalize", "", "tt.func", "zeros____0cconstexpr_(constexpr_32_,)__1cconstexpr_fp32_")),
    ("// -----// IR Dump After ConvertTritonGPUToLLVM Failed (convert-triton-gpu-to-llvm) ('builtin.module' operation) //----- //",
     ("after-failed", "ConvertTritonGPUToLLVM", "convert-triton-gpu-to-llvm", "", "builtin.module", "")),
    ("// -----// SoftwarePipeliner internal IR Dump After: LowerLoops",
     ("internal", "LowerLoops", "", "", "", "SoftwarePipeliner")),
]


def test_mlir_headers_of_every_version():
    stream = "".join(h + "\n" + MODULE for h, _ in HEADERS)
    snaps, noise = split_dump_stream(stream)
    assert noise == ""
    assert [(s.kind, s.pass_name, s.argument, s.options, s.anchor_op, s.anchor_name) for s in snaps] == [e for _, e in HEADERS]
    assert all(s.text == MODULE for s in snaps)


def test_llvm_headers_and_pass_manager_trace():
    ir = 'define void @k() {\n  ret void\n}\n'
    stream = (
        "; *** IR Dump After InstCombinePass on add_kernel ***\n" + ir
        + "Running pass: SROAPass on add_kernel (3 instructions)\n"
        + "; *** IR Dump After VerifierPass on [module] ***\n" + ir
        + "*** IR Dump After Inliner for always_inline functions (always-inline) ***\n" + ir
        + "# *** IR Dump After Prologue/Epilogue Insertion & Frame Finalization (prologepilog) ***:\n# Machine code\n"
    )
    snaps, noise = split_dump_stream(stream)
    assert [(s.family, s.pass_name, s.argument, s.anchor_name) for s in snaps] == [
        ("llvm", "InstCombinePass", "", "add_kernel"),
        ("llvm", "VerifierPass", "", "[module]"),
        ("llvm", "Inliner for always_inline functions", "always-inline", ""),
        ("mir", "Prologue/Epilogue Insertion & Frame Finalization", "prologepilog", ""),
    ]
    assert snaps[0].text == ir and "Running pass: SROAPass" in noise


def test_foreign_output_is_not_glued_to_a_snapshot():
    stream = "warning: before\n" + HEADERS[0][0] + "\n" + MODULE + "some warning printed by a pass\n"
    snaps, noise = split_dump_stream(stream)
    assert snaps[0].text == MODULE
    assert "warning: before" in noise and "some warning printed by a pass" in noise


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([h for h, _ in HEADERS] + MODULE.splitlines() + ["noise", "", "; *** IR Dump After X on f ***"]), max_size=60))
def test_never_raises_and_loses_no_line(lines):
    text = "\n".join(lines) + "\n"
    snaps, noise = split_dump_stream(text)
    kept = "".join(s.header + "\n" + s.text for s in snaps) + noise
    # every non-blank line is either in a snapshot (header or body) or in the noise
    assert sorted(ln for ln in kept.splitlines() if ln.strip()) == sorted(ln for ln in text.splitlines() if ln.strip())
