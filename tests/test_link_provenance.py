"""irscope.link.provenance (pure) and the ``irscope passes`` / ``irscope show`` commands."""

import json

import pytest

from conftest import SAMPLES, irscope
from irscope.link.provenance import (PassInput, ProvenanceCache, diff_summaries, normalise_op_text,
                                     pass_changes, stage_origins, summarise_module_ops)
from irscope.ir import parse_stage

# Real TTIR of vector add (Triton 3.6), before and after the canonicalizer folded the
# frontend's constant/extsi noise, and with SSA names renumbered.
BEFORE = '''#loc = loc("k.py":17:0)
module {
  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %c1024_i32 = arith.constant 1024 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc2)
    %block_start = arith.muli %pid, %c1024_i32 : i32 loc(#loc3)
    %c1024_i32_0 = arith.constant 1024 : i32 loc(#loc1)
    %offsets = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32> loc(#loc4)
    %x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>> loc(#loc5)
    tt.return loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("k.py":18:24)
#loc3 = loc("k.py":19:24)
#loc4 = loc("k.py":20:41)
#loc5 = loc("k.py":21:21)
#loc6 = loc("k.py":22:4)
'''

AFTER = '''#loc = loc("k.py":17:0)
module {
  tt.func public @add_kernel(%arg0: !tt.ptr<f32> loc("x_ptr"(#loc)), %arg1: i32 loc("n"(#loc))) attributes {noinline = false} {
    %c1024_i32 = arith.constant 1024 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc3)
    %1 = arith.muli %0, %c1024_i32 : i32 loc(#loc4)
    %2 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32> loc(#loc5)
    %3 = tt.splat %arg0 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>> loc(#loc6)
    %4 = ttg.convert_layout %3 : tensor<1024x!tt.ptr<f32>> -> tensor<1024x!tt.ptr<f32>> loc(#loc6)
    tt.return loc(#loc7)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc3 = loc("k.py":18:24)
#loc4 = loc("k.py":19:24)
#loc5 = loc("k.py":20:41)
#loc6 = loc("k.py":21:21)
#loc7 = loc("k.py":22:4)
'''


def summary(text):
    return summarise_module_ops(parse_stage("mlir", text).ops())


def test_normalise_ignores_names_and_locations():
    a = '    %offsets_1 = arith.addi %offsets_0, %offsets : tensor<1024xi32> loc(#loc22)'
    b = '    %7 = arith.addi %5, %4 : tensor<1024xi32> loc("k.py"(#loc3))'
    assert normalise_op_text(a) == normalise_op_text(b) == "% = arith.addi %, % : tensor<1024xi32>"
    # An op whose name ends in 'loc(' is not a location.
    assert "alloc(" in normalise_op_text("%0 = my.alloc(%1) : i32")
    assert normalise_op_text("cf.br ^bb3(%4 : i32) loc(#loc9)") == "cf.br ^(% : i32)"


def test_diff_counts_added_removed_modified():
    before, after = summary(BEFORE), summary(AFTER)
    d = diff_summaries(before, after)
    # One duplicate constant gone, a convert_layout new; nothing else moved.
    assert (d.added, d.removed, d.modified) == (1, 1, 0)
    assert d.by_name == {"arith.constant": (0, 1, 0), "ttg.convert_layout": (1, 0, 0)}
    assert d.added - d.removed == after.total - before.total
    assert after.dialects == {"tt": 4, "arith": 2, "ttg": 1}
    # A rewritten op of the same name counts as modified, not added+removed.
    changed = AFTER.replace("start = 0 : i32", "start = 8 : i32")
    d2 = diff_summaries(after, summary(changed))
    assert (d2.added, d2.removed, d2.modified) == (0, 0, 1)
    assert diff_summaries(before, before).added == 0


def test_pass_changes_chain_and_memo():
    passes = [
        PassInput("ttir", "Inliner", "inline", "before", "mlir", BEFORE),
        PassInput("ttir", "Canonicalizer", "canonicalize", "before", "mlir", BEFORE),
        PassInput("ttir", "CSE", "cse", "before", "mlir", AFTER),
    ]
    cache = ProvenanceCache()
    changes = pass_changes(passes, {"ttir": AFTER}, cache)
    assert [c.changed for c in changes] == [False, True, False]
    assert [c.after_known for c in changes] == [True, True, True]
    assert changes[1].added == 1 and changes[1].removed == 1
    assert changes[1].introduces == ["ttg.convert_layout"]
    assert changes[2].ops_by_dialect["ttg"] == 1
    # Two distinct texts: parsed twice, whatever the number of passes.
    assert len(cache.summaries) == 2
    origins = stage_origins(passes, changes)["ttir"]
    assert origins.introduced["ttg.convert_layout"] == 1
    assert origins.introduced["tt.splat"] is None  # in the stage's input


def test_pass_changes_unknown_after_and_erasure():
    no_splat = "\n".join(line for line in AFTER.splitlines() if "tt.splat" not in line and "convert_layout" not in line)
    passes = [
        PassInput("llir", "A", "a", "before", "mlir", AFTER),
        PassInput("llir", "B", "b", "before", "mlir", no_splat),
    ]
    # The llir stage's final text is LLVM IR: the last MLIR pass has no comparable result.
    changes = pass_changes(passes, {"llir": "define void @f() {\n  ret void\n}\n"})
    assert changes[0].changed and changes[0].removed == 2
    assert sorted(changes[0].erases) == ["tt.splat", "ttg.convert_layout"]
    assert not changes[1].after_known and not changes[1].changed and changes[1].ops_by_dialect == {}


@pytest.fixture(scope="session")
def vector_add_bundle(tmp_path_factory):
    """vector_add captured for real (compile-only on this machine)."""
    path = tmp_path_factory.mktemp("prov") / "b.irscope"
    irscope("run", SAMPLES / "vector_add.py", "-o", path, "-q", check=True)
    return path


@pytest.fixture(scope="session")
def vector_add_passes(vector_add_bundle):
    return json.loads(irscope("passes", vector_add_bundle, "add_kernel", "--json", check=True).stdout)


@pytest.mark.slow
def test_passes_json_fields(vector_add_passes):
    assert vector_add_passes
    for p in vector_add_passes:
        for key in ("stage", "name", "argument", "changed", "added", "removed", "modified", "ops_by_dialect"):
            assert key in p
        assert isinstance(p["changed"], bool) and isinstance(p["ops_by_dialect"], dict)
    assert {p["stage"] for p in vector_add_passes} >= {"ttir", "ttgir", "llir"}
    # MLIR's pass timing names most passes (not repeats of nested ones, not LLVM passes)
    timed = [p for p in vector_add_passes if p["seconds"] is not None]
    assert len(timed) > len(vector_add_passes) / 2 and all(p["seconds"] >= 0 for p in timed)


@pytest.mark.slow
def test_passes_real_vector_add(vector_add_passes):
    by_arg = {}
    for p in vector_add_passes:
        by_arg.setdefault(p["argument"], []).append(p)
    coalesce = by_arg["tritongpu-coalesce"][0]
    assert coalesce["changed"] and coalesce["added"] > 0
    assert coalesce["ops_by_dialect"].get("ttg", 0) > 0
    assert "ttg.convert_layout" in coalesce["introduces"]
    assert by_arg["convert-triton-to-tritongpu"][0]["changed"]
    to_llvm = by_arg["convert-triton-gpu-to-llvm"][0]
    assert to_llvm["changed"] and to_llvm["ops_by_dialect"].get("llvm", 0) > 0
    cleanups = [p for p in vector_add_passes if p["argument"] in ("canonicalize", "cse") and p["after_known"]]
    unchanged = [p for p in cleanups if not p["changed"]]
    assert len(unchanged) > len(cleanups) / 2


@pytest.mark.slow
def test_ttir_op_balance(vector_add_bundle, vector_add_passes):
    from irscope.store.bundle import Bundle

    # top-level passes (not internal, not run inside another) chain from the first snapshot to the final text
    ttir = [p for p in vector_add_passes if p["stage"] == "ttir" and p["depth"] == 0]
    with Bundle.open(str(vector_add_bundle)) as b:
        row = b.captures()[0]
        first = b.text(b.passes(row.id)[0].blob)
        final = b.stage_text(row.id, "ttir")
    delta = summary(final).total - summary(first).total
    assert delta != 0  # the canonicalizer folds the frontend's noise
    assert sum(p["forms"]["added"] - p["forms"]["removed"] for p in ttir) == delta
    assert ttir[0]["ops_before"] == summary(first).total and ttir[-1]["ops_after"] == summary(final).total


@pytest.mark.slow
def test_passes_table_and_errors(vector_add_bundle):
    p = irscope("passes", vector_add_bundle, "add_kernel", check=True)
    assert "tritongpu-coalesce" in p.stdout and "changed" in p.stdout
    bad = irscope("passes", vector_add_bundle, "no_such_kernel")
    assert bad.returncode == 1 and bad.stderr.startswith("irscope: error:") and len(bad.stderr.splitlines()) == 1


@pytest.mark.slow
def test_show_line_maps_every_stage(vector_add_bundle):
    # Line 25 of vector_add.py is the tl.store.
    out = json.loads(irscope("show", vector_add_bundle, "add_kernel", "--line", 25, "--json", check=True).stdout)
    assert out["line"] == 25 and "tl.store" in out["source"]
    stages = out["stages"]
    assert set(stages) == {"ttir", "ttgir", "llir", "ptx", "sass"}
    assert any("tt.store" in op["text"] for op in stages["ttir"])
    assert any("st.global" in op["text"] for op in stages["ptx"])
    assert any("STG" in op["text"] for op in stages["sass"])
    for ops in stages.values():
        assert all(isinstance(op["line"], int) and op["text"] for op in ops)
    # A line with no code (the decorator) maps to nothing; the table form runs too.
    empty = json.loads(irscope("show", vector_add_bundle, "--line", 16, "--json", check=True).stdout)
    assert not any(empty["stages"].values())
    assert "ttir: " in irscope("show", vector_add_bundle, "--line", 25, check=True).stdout


@pytest.mark.slow
def test_origins_of_every_final_op(vector_add_bundle, vector_add_passes):
    data = json.loads(irscope("passes", vector_add_bundle, "add_kernel", "--origins", "--json", check=True).stdout)
    stage_of = {p["index"]: p["stage"] for p in vector_add_passes}
    ttgir = data["stages"]["ttgir"]
    loads = [op for op in ttgir["ops"] if op["name"] == "tt.load"]
    # the TTGIR stage rewrote every typed op with a layout: its passes changed them in
    # place (the structural diff pairs them), so they keep their origin in the stage's input
    assert len(loads) == 2 and all(op["changed_by"] for op in loads)
    touched = {op[k]["argument"] for op in ttgir["ops"] for k in ("introduced_by", "changed_by") if op[k]}
    assert touched & {"convert-triton-to-tritongpu", "tritongpu-coalesce", "tritongpu-remove-layout-conversions"}
    for stage, d in data["stages"].items():
        for op in d["ops"]:
            for k in ("introduced_by", "changed_by"):
                if op[k]:
                    assert stage_of[op[k]["index"]] == stage
        for e in d["erased"]:
            assert stage_of[e["erased_by"]["index"]] == stage
    # the TTIR canonicalizer folds away the frontend's bounds arithmetic (the runs the
    # inliner makes count as the inliner's: they are nested in it)
    assert any(e["erased_by"]["argument"] in ("inline", "canonicalize") for e in data["stages"]["ttir"]["erased"])
    # per instance: an erased op made by a pass was made before it was erased
    for d in data["stages"].values():
        for e in d["erased"]:
            assert e["count"] >= 1
            if e["introduced_by"]:
                assert e["introduced_by"]["index"] < e["erased_by"]["index"]


def _snap(text: str, name: str) -> PassInput:
    return PassInput("ttir", name, name.lower(), "before", "mlir", text)


def test_llvm_scope_changes_are_not_pass_changes():
    """LLVM passes print the whole module or just one function: declarations come and
    go between snapshots without any pass touching them."""
    from pathlib import Path

    module = (Path(__file__).parent / "data" / "ir" / "3.6.0" / "add_sm90" / "add_kernel.llir").read_text()
    start = module.index("define ")
    function = module[start:module.index("\n}\n", start) + 3]
    assert "declare" in module and "declare" not in function

    def snap(name, text):
        return PassInput("ptx", name, name.lower(), "after", "llvm", text)

    changes = pass_changes([snap("A", module), snap("B", function), snap("C", module)], {"llir": module})
    # A's input is the llir file (the ptx stage starts from it); none of them changed an op
    assert [c.after_known for c in changes] == [True, True, True]
    assert [c.changed for c in changes] == [False, False, False]
    assert all(c.added == c.removed == c.modified == 0 for c in changes)
    assert changes[0].ops_after == changes[1].ops_after  # declarations are not counted
    # a real edit in a function-level dump still shows
    edited = function.replace("fadd", "fsub", 1)
    c = pass_changes([snap("A", module), snap("B", edited)], {"llir": module})[1]
    assert c.changed and (c.added, c.removed, c.modified) == (1, 1, 0)
    assert c.by_name == {"fadd": (0, 1, 0), "fsub": (1, 0, 0)}


@pytest.mark.slow
def test_llvm_passes_capture_diffs_times_and_origins(tmp_path):
    """With --llvm-passes: LLVM and MIR passes diffed, codegen passes timed, and the
    final LLVM IR's ops traced to the LLVM passes that made them."""
    path = tmp_path / "l.irscope"
    irscope("run", SAMPLES / "vector_add.py", "-o", path, "-q", "--llvm-passes", check=True)
    passes = json.loads(irscope("passes", path, "add_kernel", "--json", check=True).stdout)
    by_index = {p["index"]: p for p in passes}
    kinds = {p["kind"] for p in passes}
    assert {"mlir", "llvm", "mir"} <= kinds
    codegen = [p for p in passes if p["stage"] == "ptx"]
    assert codegen and all(p["seconds"] is not None for p in codegen)  # LLVM_ENABLE_TIMING report
    # LLVM IR passes: the first one is compared with the llir file; MIR ones with the
    # previous MIR dump (instruction selection, the first, turns IR into MIR: unknown)
    assert all(p["after_known"] for p in codegen if p["kind"] == "llvm")
    mir = [p for p in codegen if p["kind"] == "mir"]
    assert not mir[0]["after_known"] and all(p["after_known"] for p in mir[1:])
    assert any(p["changed"] and p["removed"] for p in mir)
    # module-level and function-level dumps alternate; that alone is no change: the
    # verifier changes nothing
    verifier = [p for p in codegen if p["name"] == "Module Verifier"]
    assert verifier and not any(p["changed"] for p in verifier)
    origins = json.loads(irscope("passes", path, "add_kernel", "--origins", "--json", check=True).stdout)
    llir = origins["stages"]["llir"]
    makers = {op["introduced_by"]["name"] for op in llir["ops"] if op["introduced_by"]}
    assert "InstCombinePass" in makers
    for op in llir["ops"]:
        if op["introduced_by"]:
            p = by_index[op["introduced_by"]["index"]]
            assert p["stage"] == "llir" and p["kind"] == "llvm"


def test_dialect_of():
    from irscope.link.provenance import dialect_of

    assert dialect_of("ttg.convert_layout") == "ttg"
    assert dialect_of("fadd") == "llvm"
    assert dialect_of("COPY") == "mir" and dialect_of("LD_i32") == "mir"


@pytest.mark.slow
def test_passes_filters(vector_add_bundle, vector_add_passes):
    got = json.loads(irscope("passes", vector_add_bundle, "add_kernel", "--stage", "ttgir", "--changed", "--json",
                             check=True).stdout)
    want = [p for p in vector_add_passes if p["stage"] == "ttgir" and p["changed"]]
    assert got == want and got  # same objects: indexes and diffs are those of the whole list
    bad = irscope("passes", vector_add_bundle, "add_kernel", "--stage", "nope")
    assert bad.returncode == 1 and "no passes in stage 'nope'" in bad.stderr and "Traceback" not in bad.stderr
    import re
    out = irscope("passes", vector_add_bundle, "add_kernel", "--stage", "ttir", check=True).stdout
    assert re.search(rf"{sum(p['stage'] == 'ttir' for p in vector_add_passes)} of {len(vector_add_passes)} passes", out)


def test_origins_do_not_cross_snapshot_kinds():
    """The ptx stage runs LLVM IR passes, then machine-IR ones: instruction selection
    turning every IR opcode into machine opcodes is not one pass erasing `fadd` and
    introducing `COPY`, since the IR before it is not printed."""
    from pathlib import Path
    from irscope.compiler.passdump import split_llvm_pass_dump

    dump = split_llvm_pass_dump((Path(__file__).parent / "data" / "ir" / "3.6.0" / "add_sm80"
                                 / "llvm_passes.txt").read_text())
    snaps = [PassInput("ptx", s.pass_name, s.argument, "after", s.family, s.text) for s in dump
             if s.family in ("llvm", "mir")]
    kinds = [s.kind for s in snaps]
    assert "llvm" in kinds and "mir" in kinds
    changes = pass_changes(snaps, {})
    for c in changes:
        names = set(c.introduces) | set(c.erases)
        if c.kind == "mir":
            assert not any(n[:1].islower() for n in names), (c.name, names)
        else:
            assert not any(n[:1].isupper() for n in names), (c.name, names)
