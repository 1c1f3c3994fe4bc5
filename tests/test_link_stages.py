"""irscope.link (op-to-op links across stages), the core's link queries and ``irscope links``."""

import json

import pytest

from conftest import DATA, SAMPLES, irscope
from irscope.ir import parse_stage
from irscope.core import open_bundle
from irscope.link import link_by_location, link_ttir_ttgir, normalise_instruction

TTIR = '''#loc = loc("/a/k.py":1:0)
module {
  tt.func public @k(%p: !tt.ptr<f32> loc("p"(#loc))) attributes {noinline = false} {
    %0 = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>> loc(#loc1)
    %1 = tt.load %0 : tensor<4x!tt.ptr<f32>> loc(#loc2)
    %2 = tt.load %0 : tensor<4x!tt.ptr<f32>> loc(#loc3)
    tt.return loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/a/k.py":2:8)
#loc2 = loc("/a/k.py":3:8)
#loc3 = loc("/a/k.py":4:8)
#loc4 = loc("/a/k.py":5:4)
'''

# The same kernel after TTGIR lowering, printed from another directory (relative path).
TTGIR = '''#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#loc = loc("k.py":1:0)
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%p: !tt.ptr<f32> loc("p"(#loc))) attributes {noinline = false} {
    %0 = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>, #blocked> loc(#loc1)
    %1 = tt.load %0 : tensor<4x!tt.ptr<f32>, #blocked> loc(#loc2)
    %2 = ttg.convert_layout %1 : tensor<4xf32, #blocked> -> tensor<4xf32, #blocked> loc(#loc2)
    %3 = tt.load %0 : tensor<4x!tt.ptr<f32>, #blocked> loc(#loc3)
    tt.return loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":2:8)
#loc2 = loc("k.py":3:8)
#loc3 = loc("k.py":4:8)
#loc4 = loc("k.py":5:4)
'''


def _by(links, src_line):
    return {(lk.dst_line, lk.kind) for lk in links if lk.src_line == src_line}


def test_ttir_to_ttgir_same_op_derived_and_paths_ignored():
    links = link_ttir_ttgir(parse_stage("ttir", TTIR), parse_stage("ttgir", TTGIR))
    assert _by(links, 4) == {(5, "same-op")}  # splat
    assert _by(links, 5) == {(6, "same-op"), (7, "derived")}  # load, plus the layout conversion TTGIR added
    assert _by(links, 6) == {(8, "same-op")}  # the second load, not the first
    assert _by(links, 7) == {(9, "same-op")}  # tt.return


def test_location_links_by_chain_and_sass_by_line():
    ptx = parse_stage("ptx", '''.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(
	.param .u64 k_param_0
)
{
	.loc	1 3 8
	ld.global.b32 	%r1, [%rd1];
	.loc	1 4 9
	ld.global.b32 	%r2, [%rd1];
	ret;
}
	.file	1 "/b/k.py"
''')
    ttgir = parse_stage("ttgir", TTGIR)
    links = link_by_location("ttgir", ttgir, "ptx", ptx)
    got = {(lk.src_line, lk.dst_line, lk.kind) for lk in links}
    assert (6, 9, "same-location") in got and (7, 9, "same-location") in got
    assert not any(d == 11 for _, d, _ in got)  # column 9 is not column 8


def test_normalise_instruction_strips_debug_refs():
    assert normalise_instruction("%8 = shl i32 %7, 10, !dbg !8") == normalise_instruction("%8 = shl i32 %7, 10, !dbg !31")


@pytest.mark.parametrize("stage", ["llir", "ptx"])
@pytest.mark.parametrize("renumber", [False, True])
def test_exact_alignment_of_twins_that_differ(stage, renumber):
    """A real --exact-links capture's twin with one instruction dropped (and every
    numbered value renamed): the dropped one pairs with nothing, and the others
    with their counterparts (with instructions of their shape, when renumbered)."""
    import re

    from irscope.link.exact import align_ttgirloc

    with open_bundle(str(DATA / "vector_add_exact.irscope")) as b:
        cap = b.captures()[0]
        normal, twin_text = cap.stage(stage).module, cap.stage(f"{stage}_ttgirloc").text
    ops, captured = list(normal.ops()), list(parse_stage(stage, twin_text).ops())
    assert align_ttgirloc(normal, parse_stage(stage, twin_text))[1]  # identical as captured
    d = len(captured) // 2
    lines = twin_text.split("\n")
    del lines[captured[d].line - 1]
    text = "\n".join(lines)
    if renumber:
        text = re.sub(r"%([a-z]*)(\d+)\b", lambda m: f"%{m.group(1)}{int(m.group(2)) + 1}", text)
    # op k of the normal stage is op k of the twin as captured, one line up after the dropped one
    truth = {op.line: tw.line - (k > d) for k, (op, tw) in enumerate(zip(ops, captured)) if k != d}
    twin = parse_stage(stage, text)
    pairs, identical, ratio = align_ttgirloc(normal, twin)
    assert not identical and ratio == 2 * len(pairs) / (2 * len(ops) - 1)
    if not renumber:  # every pair is right; only users of the dropped value may lose theirs
        assert all(truth.get(x) == y for x, y in pairs.items()) and len(pairs) >= 0.95 * len(truth)
        return
    # Renumbered, a run of instructions of one shape (four 'mov.u32 %rN, 0x0') is
    # ambiguous; every pair still joins two instructions of one shape, and most pair.
    erase = re.compile(r"%[a-z]*\d+\b|!dbg !\d+|!\d+")
    by_line = {op.line: op for op in twin.ops()}
    assert all(erase.sub("", by_line[y].text) == erase.sub("", op.text) for op in ops
               for y in [pairs.get(op.line)] if y is not None)
    assert len(pairs) >= 0.6 * len(truth)


@pytest.fixture(scope="session")
def exact_bundles(tmp_path_factory):
    """vector_add and the helper-call kernel captured with --exact-links (compile-only)."""
    out = {}
    for name in ("vector_add", "jit_helper_call"):
        path = tmp_path_factory.mktemp("links") / f"{name}.irscope"
        irscope("run", SAMPLES / f"{name}.py", "--exact-links", "-o", path, "-q")
        with open_bundle(str(path)) as b:
            caps = b.captures()
            assert caps and {"llir_ttgirloc", "ptx_ttgirloc"} <= set(caps[0].stages), caps
            out[name] = (path, caps[0].id, caps[0].links(), caps[0].row)
    return out


def _op_line(mod, name, contains):
    return next(op.line for op in mod.ops() if op.name == name and contains in op.text)


@pytest.mark.slow
def test_vector_add_ttir_load_links_to_its_own_ttgir_load(exact_bundles):
    _, _, cl, _ = exact_bundles["vector_add"]
    ttir, ttgir = cl.modules["ttir"], cl.modules["ttgir"]
    x_ir, y_ir = _op_line(ttir, "tt.load", "%x_3"), _op_line(ttir, "tt.load", "%y_5")
    x_gir, y_gir = _op_line(ttgir, "tt.load", "%x_3"), _op_line(ttgir, "tt.load", "%y_5")
    got = cl.links_for_op("ttir", x_ir)["links"]["ttgir"]
    assert [(o.line, o.kind) for o in got] == [(x_gir, "same-op")]
    assert y_gir not in {o.line for o in got}
    assert [o.line for o in cl.links_for_op("ttir", y_ir)["links"]["ttgir"]] == [y_gir]


@pytest.mark.slow
def test_vector_add_exact_ttgir_load_reaches_ld_global(exact_bundles):
    _, _, cl, _ = exact_bundles["vector_add"]
    assert cl.exact["ptx"].identical and cl.exact["llir"].identical
    ttgir = cl.modules["ttgir"]
    x_load, y_load = _op_line(ttgir, "tt.load", "%x_3"), _op_line(ttgir, "tt.load", "%y_5")
    ptx_x = cl.links_for_op("ttgir", x_load)["links"]["ptx"]
    ptx_y = cl.links_for_op("ttgir", y_load)["links"]["ptx"]
    assert all(o.kind == "exact" for o in ptx_x)
    loads_x = [o for o in ptx_x if "ld.global" in o.text]
    assert len(loads_x) == 2  # two 128-bit loads per thread
    assert not {o.line for o in ptx_x} & {o.line for o in ptx_y}
    # ... and back: each of those PTX loads names that one TTGIR op.
    for o in loads_x:
        assert [g.line for g in cl.links_for_op("ptx", o.line)["links"]["ttgir"]] == [x_load]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vector_add", "jit_helper_call"])
def test_exact_mode_every_located_ptx_instruction_has_a_ttgir_op(exact_bundles, name):
    _, _, cl, _ = exact_bundles[name]
    located = [op for op in cl.modules["ptx"].ops() if op.location.frames]
    missing = [op.text for op in located if not cl.follow("ptx", op.line).get("ttgir")]
    assert located and not missing
    exact = [op for op in located
             if any(k == "exact" for k in cl.follow("ptx", op.line).get("ttgir", {}).values())]
    assert len(exact) == len(located)


@pytest.mark.slow
def test_helper_call_inlined_ops_link_through_the_call_site(exact_bundles):
    _, _, cl, _ = exact_bundles["jit_helper_call"]
    ttgir = cl.modules["ttgir"]
    # The tile load of _load_tile (line 21) inlined at the kernel's call on line 41.
    load = next(op for op in ttgir.ops() if op.name == "tt.load"
                and [(f.line) for f in op.location.frames] == [21, 41])
    res = cl.links_for_op("ttgir", load.line)["links"]
    assert [o.kind for o in res["ttir"]] == ["same-op"]
    assert any("ld.global" in o.text for o in res["ptx"])
    for o in res["llir"]:  # the normal LLIR keeps the inlined-at chain 21 <- 41
        assert [f.line for f in cl.op("llir", o.line).location.frames] == [21, 41]
    # The Python call line reaches the inlined ops as call-site ops.
    at41 = cl.links_for_python_line(41)
    assert load.line in {o.line for o in at41["ttgir"] if o.kind == "call-site"}
    assert any(o.kind == "call-site" for o in at41["ptx"])


@pytest.mark.slow
def test_bundle_api_and_cli_json(exact_bundles):
    path, cid, cl, row = exact_bundles["vector_add"]
    ttgir = cl.modules["ttgir"]
    x_load = _op_line(ttgir, "tt.load", "%x_3")
    with open_bundle(str(path)) as b:
        cap = b.capture(f"#{cid}")
        api = cap.links_for_op("ttgir", x_load).to_json()
        py = cap.ops_at_line(22)
    assert {o.line for o in py["ttgir"]} >= {x_load}
    p = irscope("links", path, "add_kernel", "--stage", "ttgir", "--op-line", x_load, "--json", check=True)
    data = json.loads(p.stdout)
    assert data["stage"] == "ttgir" and data["line"] == x_load and "tt.load" in data["text"]
    assert data == api
    assert set(data["links"]) == {"ttir", "llir", "ptx", "sass"}
    bad = irscope("links", path, "add_kernel", "--stage", "ttgir", "--op-line", 1)
    assert bad.returncode == 1 and "no op starts at line 1" in bad.stderr
