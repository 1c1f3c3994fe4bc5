"""The pass catalog describes every pass the sample kernels run (Triton 3.2, 3.6, 3.9).

The fixture files are written by ``scripts/pass_names.py`` from real compiles, one
``kind<TAB>name<TAB>argument`` line per distinct pass.
"""

import re
from pathlib import Path

import pytest

from irscope.compiler.pass_catalog import all_passes, candidates, describe, keys_of
from irscope.compiler.passdump import split_llvm_pass_dump

FIXTURES = Path(__file__).parent / "data" / "pass_names"
# A real LLVM_IR_ENABLE_DUMP stream (add_kernel, Triton 3.6, sm_80): LLVM's own passes.
LLVM_DUMP = Path(__file__).parent / "data" / "ir" / "3.6.0" / "add_sm80" / "llvm_passes.txt"
VERSIONS = ("3.2", "3.6", "3.9")
PLACEHOLDER = re.compile(r"\b(TODO|TBD|FIXME|XXX|lorem|placeholder|description)\b|\.\.\.$", re.I)


def seen(version):
    lines = (FIXTURES / f"{version}.txt").read_text().splitlines()
    return [tuple(line.split("\t")) for line in lines if line]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_seen_pass_is_described(version):
    names = seen(version)
    assert len(names) > 30  # a real pipeline, not an empty fixture
    missing = [(n, a) for kind, n, a in names if describe(n, a, family=kind) is None]
    assert missing == []


@pytest.mark.parametrize("version", VERSIONS)
def test_seen_names_resolve_without_their_argument(version):
    # the class name alone (as the timeline shows it) finds the same entry
    for kind, name, arg in seen(version):
        assert describe(name, family=kind) is describe(name, arg, family=kind), name


def test_descriptions_are_real_sentences():
    entries = all_passes()
    assert len(entries) >= 250
    for e in entries:
        assert e.summary and e.source, e.name
        assert 40 <= len(e.summary) <= 400, e.name
        assert e.summary.endswith("."), e.name
        assert not PLACEHOLDER.search(e.summary), e.name
        # one or two sentences (a learner's note, not a manual page)
        assert len(re.findall(r"[.!?](?:\s|$)", e.summary)) <= 3, e.name
    summaries = [e.summary for e in entries]
    assert len(set(summaries)) == len(summaries)


def test_llvm_passes_of_a_real_dump_are_described():
    dump = split_llvm_pass_dump(LLVM_DUMP.read_text())
    assert len(dump) > 100
    found = {(s.pass_name, s.argument, s.family): describe(s.pass_name, s.argument, family=s.family)
             for s in dump}
    assert len(found) > 100
    assert [k for k, info in found.items() if info is None or info.family != "llvm"] == []
    # both LLVM spellings of one pass meet in one entry
    assert describe("Early CSE", "early-cse", family="llvm") is describe("EarlyCSEPass", family="llvm")
    assert describe("RequireAnalysisPass<llvm::GlobalsAA, llvm::Module>", family="llvm").source == "LLVM"


def test_family_picks_between_mlir_and_llvm_namesakes():
    assert describe("InlinerPass").source == "MLIR core"
    assert describe("InlinerPass", family="llvm").source == "LLVM"
    assert describe("SCCPPass", family="mlir").family == "mlir"
    assert describe("SCCPPass", family="mir").family == "llvm"


def test_no_two_entries_claim_one_name():
    owner = {}
    for e in all_passes():
        for k in keys_of(e):
            assert owner.setdefault((e.family, k), e.name) == e.name, (k, owner[(e.family, k)], e.name)


@pytest.mark.parametrize("label, expected", [
    ("TritonGPUPipeline", "TritonGPUPipeline"),
    ("tritongpu-pipeline", "TritonGPUPipeline"),
    ("TritonGPUPipeline (tritongpu-pipeline)", "TritonGPUPipeline"),
    ("CanonicalizerPass: canonicalize{max-iterations=10 region-simplify=normal}", "Canonicalizer"),
    ("CSEPass", "CSE"),
    ("cse", "CSE"),
    ("(anonymous namespace)::VerifyWarpSpecializationPartitions: "
     "unknown<(anonymous namespace)::VerifyWarpSpecializationPartitions>", "VerifyWarpSpecializationPartitions"),
    ("  ↳ LowerLoops", "LowerLoops"),
    ("TritonNvidiaGPUTMALoweringPass", "TritonNvidiaGPUTMALoweringPass"),
])
def test_name_variants(label, expected):
    info = describe(label)
    assert info is not None and info.name == expected


def test_unknown_names():
    assert describe("") is None
    assert describe("NoSuchPassAnywhere") is None
    assert candidates("Foo (foo-bar)") == ["foobar", "foo", "foofoobar"]


def test_catalog_ships_as_package_data():
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert "compiler/*.json" in pyproject
