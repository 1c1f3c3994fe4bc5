"""The core API over a real captured bundle (tests/data/samples_sm90.irscope: vector_add,
matmul_autotune and jit_helper_call compiled by Triton 3.6 for sm_90, no GPU)."""

import json
import threading
from pathlib import Path

import pytest

import irscope
from conftest import DATA, irscope as run_cli
from irscope.errors import IrscopeError
from irscope.ir import Op

BUNDLE = DATA / "samples_sm90.irscope"


@pytest.fixture(scope="module")
def bundle():
    with irscope.open(str(BUNDLE)) as b:
        yield b


def test_open_and_select(bundle):
    assert len(bundle.kernels()) == 3 and bundle.kernels()[:2] == ["add_kernel", "matmul_kernel"]
    mm = bundle.captures("matmul_kernel")
    assert len(mm) == 4 and len({c.variant for c in mm}) == 4
    assert bundle.capture("matmul_kernel", variant=2) is mm[2]
    assert bundle.capture("matmul_kernel", target="sm90", variant=mm[1].variant[:80]).id == mm[1].id
    assert bundle.capture(f"#{mm[3].id}") is mm[3]
    with pytest.raises(IrscopeError, match="no kernel 'nope'"):
        bundle.capture("nope")
    with pytest.raises(IrscopeError, match="out of range"):
        bundle.capture("matmul_kernel", variant=9)
    with pytest.raises(IrscopeError, match="no such bundle"):
        irscope.open(str(BUNDLE) + ".missing")


def test_metadata_resources_occupancy_and_provenance(bundle):
    big = max(bundle.captures("matmul_kernel"), key=lambda c: c.metadata["shared"])
    r = big.resources
    # What the launch requests: Triton's dynamic shared memory (cuobjdump's 1 KiB is the
    # per-block reserve, not an allocation: docs/gpu-check.md).
    assert r.shared == r.shared_dynamic == big.metadata["shared"] > 64 * 1024
    assert r.shared_static == 0 and big.row.shared == 1024
    assert r.registers == big.row.registers > 0 and r.num_warps == big.metadata["num_warps"]
    occ = big.occupancy
    assert occ.to_json().keys() == {"blocks_per_sm", "warps_per_sm", "limited_by"}
    assert occ.warps_per_sm == occ.blocks_per_sm * r.num_warps
    add = bundle.capture("add_kernel")
    assert add.resources.shared == 0 and add.occupancy.limited_by == "warps"
    run = add.run
    assert run.command[:2] == ("irscope", "run") and run.mode in ("compile-only", "auto")
    assert add.source.text.lstrip().startswith(("@triton.jit", "def add_kernel"))
    assert "tl.program_id" in "".join(add.source.line(n) or "" for n in range(add.source.first_line,
                                                                              add.source.last_line + 1))


def test_ls_json_fields(bundle):
    rows = json.loads(run_cli("ls", BUNDLE, "--json", check=True).stdout)
    by_id = {c.id: c for c in bundle.captures()}
    for row in rows:
        cap = by_id[row["id"]]
        assert row["shared"] == cap.resources.shared == row["shared_dynamic"] + row["shared_static"]
        assert row["occupancy"] == cap.occupancy.to_json()
        assert row["kernel"] == cap.kernel and row["variant"] == cap.variant


def test_stages_parse_once(bundle):
    cap = bundle.capture("matmul_kernel")
    ttgir = cap.stage("ttgir")
    assert ttgir.module is ttgir.module and cap.stage("ttgir") is ttgir
    assert ttgir.text == run_cli("cat", BUNDLE, "matmul_kernel", "--stage", "ttgir", check=True).stdout
    assert any(op.name == "ttng.warp_group_dot" for op in ttgir.module.ops())
    assert cap.stage("cubin").binary
    with pytest.raises(IrscopeError, match="not an IR"):
        cap.stage("cubin").module
    with pytest.raises(IrscopeError, match="has no stage 'amdgcn'"):
        cap.stage("amdgcn")
    assert set(cap.modules()) == {"ttir", "ttgir", "llir", "ptx", "sass"}


def test_passes_timeline(bundle):
    cap = bundle.capture("matmul_kernel")
    every = cap.passes()
    assert [p.index for p in every] == list(range(len(every)))
    changed = cap.passes(stage="ttgir", changed=True)
    assert changed and all(p.stage == "ttgir" and p.step.changed for p in changed)
    assert [p.index for p in changed] == [p.index for p in every if p.stage == "ttgir" and p.changed]
    p = changed[0]
    assert p.text == run_cli("cat", BUNDLE, "matmul_kernel", "--pass", p.index, check=True).stdout
    ops = [op for op in p.module.ops() if op.name != "<unknown>" and not op.name.startswith(("tt.func", "module"))]
    assert len(ops) >= p.step.ops_before > 0
    cli = json.loads(run_cli("passes", BUNDLE, "matmul_kernel", "--json", check=True).stdout)
    assert cli == [q.to_json() for q in every]
    with pytest.raises(IrscopeError, match="pass snapshots"):
        cap.pass_at(len(every))


def test_origins_match_the_cli(bundle):
    cap = bundle.capture("add_kernel")
    got = cap.origins()
    assert set(got) == {"ttir", "ttgir"}
    final = [op for op in cap.stage("ttgir").module.ops() if op.name != "<unknown>"]
    assert len(got["ttgir"].ops) == len(final)
    assert any(o.introduced_by and o.introduced_by.name == "TritonGPUCoalesce" for o in got["ttgir"].ops) or \
        any(e.introduced_by for e in got["ttgir"].erased)
    cli = json.loads(run_cli("passes", BUNDLE, "add_kernel", "--origins", "--json", check=True).stdout)
    assert cli["stages"] == {s: o.to_json() for s, o in got.items()}


def _line_of(cap, needle: str) -> int:
    src = cap.source
    for n in range(src.first_line, src.last_line + 1):
        if needle in (src.line(n) or ""):
            return n
    raise AssertionError(needle)


def test_ops_at_line_one_rule(bundle):
    cap = bundle.capture("matmul_kernel")
    dot_line = _line_of(cap, "tl.dot(")
    at = cap.ops_at_line(dot_line)
    assert set(at) == {"ttir", "ttgir", "llir", "ptx", "sass"}
    assert any(op.name == "tt.dot" for op in at["ttir"]) and at["sass"] and all(isinstance(o, Op) for o in at["sass"])
    cli = json.loads(run_cli("show", BUNDLE, "matmul_kernel", "--line", dot_line, "--json", check=True).stdout)
    assert {s: [o["line"] for o in ops] for s, ops in cli["stages"].items()} == \
        {s: [o.line for o in ops] for s, ops in at.items()}
    # Each op belongs to at most one line: per-line counts add up.
    ttgir = cap.stage("ttgir").module
    lines = range(cap.source.first_line, cap.source.last_line + 1)
    total = sum(len(cap.ops_at_line(n, stages=("ttgir",))["ttgir"]) for n in lines)
    assert total == sum(1 for op in ttgir.ops() if op.location.user_frame() is not None
                        and op.location.user_frame().line in lines)


def test_call_sites_flag(bundle):
    cap = bundle.capture("bias_gelu_rowsum_kernel")  # sample_kernels/jit_helper_call.py
    src = cap.source
    calls = [n for n in range(src.first_line, src.last_line + 1)
             if "_load_tile(" in (src.line(n) or "") or "helper" in (src.line(n) or "")]
    grew = [n for n in calls if len(cap.ops_at_line(n, call_sites=True, stages=("ttgir",))["ttgir"])
            > len(cap.ops_at_line(n, stages=("ttgir",))["ttgir"])]
    assert grew, calls
    n = grew[0]
    plain = run_cli("show", BUNDLE, cap.kernel, "--line", n, "--json", check=True).stdout
    wide = run_cli("show", BUNDLE, cap.kernel, "--line", n, "--call-sites", "--json", check=True).stdout
    assert len(json.loads(wide)["stages"]["ttgir"]) > len(json.loads(plain)["stages"]["ttgir"])


def test_links_for_op_match_the_cli(bundle):
    cap = bundle.capture("add_kernel")
    load = next(op for op in cap.stage("ttgir").module.ops() if op.name == "tt.load")
    got = cap.links_for_op("ttgir", load.line)
    assert got.links["ttir"] and got.links["ptx"] and not got.exact
    cli = json.loads(run_cli("links", BUNDLE, "add_kernel", "--op-line", load.line, "--json", check=True).stdout)
    assert cli == got.to_json()
    with pytest.raises(IrscopeError, match="no op starts at line 1 "):
        cap.links_for_op("ttgir", 1)


def test_reads_from_eight_threads():
    """Each thread reads stages, passes and snapshots of its own capture; every answer
    equals the one-thread answer."""
    with irscope.open(str(BUNDLE)) as b:
        expected = {c.id: _digest(c) for c in b.captures()}
    with irscope.open(str(BUNDLE)) as b:
        caps = b.captures()
        got, errors = {}, []

        def work(i):
            try:
                cap = caps[i % len(caps)]
                for _ in range(2):
                    got[(i, cap.id)] = _digest(cap)
            except Exception as exc:  # pragma: no cover - the failure is the assertion below
                errors.append(repr(exc))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert len(got) == 8 and all(expected[cid] == d for (_, cid), d in got.items())


def _digest(cap) -> tuple:
    passes = cap.passes()
    return (len(cap.stage("ttgir").module.all_ops), len(cap.stage("ptx").text), len(passes),
            sum(len(p.text) for p in passes[::7]), tuple(len(p.module.all_ops) for p in passes[::11]))


def test_plain_ir_files():
    root = DATA / "ir" / "3.6.0" / "add_sm90"
    for name, fmt in (("add_kernel.ttgir", "ttgir"), ("add_kernel.llir", "llir"), ("add_kernel.ptx", "ptx"),
                      ("add_kernel.sass", "sass"), ("mlir_passes.txt", "dump")):
        f = irscope.read_ir_file(str(root / name))
        assert f.format == fmt and len(list(f.module.ops())) > 5, name
    dump = irscope.read_ir_file(str(root / "mlir_passes.txt"))
    assert len(dump.snapshots) > 20 and dump.snapshot_module(0).functions
    named = irscope.parse_text((root / "add_kernel.ttgir").read_text(), "mlir")
    assert named.format == "mlir" and named.module.functions[0].name == "add_kernel"
    with pytest.raises(IrscopeError, match="binary file"):
        irscope.read_ir_file(str(BUNDLE))
    with pytest.raises(IrscopeError, match="--format"):
        irscope.read_ir_file(str(Path(__file__)))
    with pytest.raises(IrscopeError, match="is a directory"):
        irscope.read_ir_file(str(root))
    with pytest.raises(IrscopeError, match="unknown format"):
        irscope.read_ir_file(str(root / "add_kernel.ttgir"), format="cuda")


def test_def_use_and_graph_on_a_real_stage(bundle):
    mod = bundle.capture("matmul_kernel").stage("ttgir").module
    fn = mod.functions[0]
    du = fn.def_use()
    assert fn.def_use() is du and du.ssa
    dot = next(op for op in fn.ops() if op.name == "ttng.warp_group_dot")
    (acc,) = du.results(dot)
    assert acc.op is dot and acc.type(mod.encodings).encoding(mod.encodings).kind == "nvidia_mma"
    assert [u.op.name for u in acc.uses] and all(v is not None for v in du.operands(dot))
    loop = dot.parent
    assert loop.name == "scf.for" and any(
        v.owner is loop for v in du.values.values() if type(v).__name__ == "BlockArgument")
    g = mod.to_networkx()
    assert g.nodes[f"op{dot.line}"]["parent"] == loop.line
    assert any(g.has_edge(f"op{p.line}", f"op{dot.line}") for p in du.producers(dot) if p is not None)
    llir = bundle.capture("matmul_kernel").stage("llir").module.functions[0].def_use()
    phis = [r for op, rs in ((op, llir.results(op)) for op in llir.function.ops()) if op.name == "phi" for r in rs]
    assert phis and all(r.type_text for r in phis)


def test_api_needs_no_path_strings_from_views():
    """irscope's top level offers the core's names lazily."""
    assert irscope.Capture.__name__ == "Capture" and "open" in irscope.__all__
    with pytest.raises(AttributeError):
        irscope.no_such_name  # noqa: B018


def test_resources_equal_what_the_h200_reported(bundle):
    """Compile-only figures (cuobjdump, ptxas, the metadata, our occupancy model) against
    what the H200's driver and CUDA runtime reported for the same kernels and configs
    (scripts/gpu_occupancy_check.py; docs/gpu-check.md)."""
    records = json.loads((DATA / "h200_occupancy.json").read_text())["kernels"]
    checked = 0
    for cap in bundle.captures():
        mine = set(cap.variant.split(","))
        match = [r for r in records if r["kernel"] == cap.kernel and set(r["config"].split(",")) <= mine]
        assert len(match) == 1, (cap, match)
        gpu = match[0]
        r = cap.resources
        assert (r.registers, r.spills, r.local) == (gpu["n_regs"], gpu["n_spills"],
                                                     gpu["driver_func_attrs"]["local_size_bytes"]), cap
        assert r.shared == gpu["shared_dynamic"] + gpu["driver_func_attrs"]["shared_size_bytes"], cap
        assert r.shared_static == gpu["driver_func_attrs"]["shared_size_bytes"] == 0
        assert cap.occupancy.blocks_per_sm == gpu["cuda_blocks_per_sm"], cap
        checked += 1
    assert checked == 6
