"""AMDGCN joins the lowering: its parser (``irscope.ir.amdgcn``), its location links,
``show --line``, ``links`` and the lineage, on a real gfx942 capture.

``tests/data/layer_norm_gfx942.irscope``: ``sample_kernels/layer_norm.py`` captured
compile-only with Triton 3.6 (``irscope run sample_kernels/layer_norm.py --target
gfx942``).
"""

from __future__ import annotations

import json

import pytest

import irscope
from irscope.compiler.stages import AMDGCN, LLIR, LOWERING, SASS, STAGES, TTGIR, line_links
from irscope.ir.amdgcn import A_DIRECTIVE, A_FILE, A_LOC, classify, parse_amdgcn
from irscope.ir.model import DIALECT_AMDGCN
from irscope.ir.parsers import parse_as
from irscope.ir.python_lines import python_line

from conftest import DATA
from conftest import irscope as run_cli

BUNDLE = DATA / "layer_norm_gfx942.irscope"
KERNEL = "_layer_norm_fwd_fused"
SUM_LINE = 41
"""``mean = tl.sum(_mean, axis=0) / N``: tl.sum is inlined from triton/language/standard.py."""
SQUARE_LINE = 48
"""``_var += x * x``: a few ops in every stage, so the lineage draws each one."""


@pytest.fixture(scope="module")
def cap():
    with irscope.open(str(BUNDLE)) as b:
        yield b.capture(KERNEL)


def _text_instructions(text: str, kernel: str) -> list[int]:
    """Lines of the kernel's body that are no directive, label or comment, read off the
    text by hand: the kernel label to ``.Lfunc_end0:``, minus the ``.amdhsa_kernel``
    descriptor (all dot-lines) the printer puts inside it."""
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith(kernel + ":"))
    end = next(i for i, l in enumerate(lines) if l.startswith(".Lfunc_end0:"))
    return [i + 1 for i in range(start + 1, end) if lines[i].strip() and not lines[i].strip().startswith((".", ";"))]


def test_the_registry_parses_amdgcn_and_links_it_by_chain():
    info = STAGES[AMDGCN]
    assert info.parsed and info.lowering and not info.line_links
    assert LOWERING.index(LLIR) < LOWERING.index(AMDGCN)
    # SASS is the stage whose locations give a line only; AMDGCN's give the whole chain.
    assert [s for s in LOWERING if line_links(s)] == [SASS]
    assert not line_links("no-such-stage")


def test_the_parser_reads_every_instruction_and_no_directive(cap):
    text = cap.stage(AMDGCN).text
    mod = parse_as(AMDGCN, text)
    assert mod.stage == AMDGCN and mod.coverage == 1.0 and mod.unknown == []
    assert [f.name for f in mod.functions] == [KERNEL]
    ops = list(mod.ops())
    assert [op.line for op in ops] == _text_instructions(text, KERNEL) and len(ops) > 100
    assert all(op.dialect == DIALECT_AMDGCN and op.name[0].isalpha() and op.name.islower() for op in ops)
    # Directives, the kernel descriptor, the DWARF tables and the metadata YAML are no ops.
    names = {op.name for op in ops}
    assert not any(n.startswith((".", "amdhsa")) for n in names)
    assert {"s_endpgm", "buffer_load_ushort", "v_add_f32_dpp", "s_waitcnt"} <= names
    dpp = next(op for op in ops if op.name == "v_add_f32_dpp")
    assert dpp.operands == ("v1", "v1", "v1") and dpp.attributes.startswith("row_shr:")
    # .LBB labels (and the printer's '; %bb.N:' comments) are blocks.
    labels = [b.label for b in mod.functions[0].blocks]
    assert ".LBB0_2" in labels and all(lb and lb.startswith((".LBB", "%bb.")) for lb in labels)


def test_locations_resolve_to_the_kernel_s_python_lines(cap):
    mod = parse_as(AMDGCN, cap.stage(AMDGCN).text)
    file = cap.row.file
    lines = {python_line(op.location, file) for op in mod.ops()} - {None}
    first, last = cap.source.first_line, cap.source.last_line
    assert lines and all(first <= n <= last for n in lines)
    assert {SUM_LINE, SQUARE_LINE, 39, 64} <= lines
    # tl.sum's instructions sit at standard.py, inlined at line 41: the chain of the
    # .loc comment is kept, and the library frame is known as library code.
    summed = [op for op in mod.ops() if op.location.frame and op.location.frame.is_library()]
    assert summed and {getattr(op.location.user_frame(), "line", None) for op in summed} <= {SUM_LINE, 49}
    inlined = summed[0].location
    assert inlined.kind == "callsite" and inlined.frames[0].file.endswith("/triton/language/standard.py")
    assert (inlined.frames[-1].line, inlined.frames[-1].col) == (SUM_LINE, 18)
    # Line 0 (LLVM's "no source line") is no location.
    assert all(op.location.frame is None or op.location.frame.line > 0 for op in mod.ops())


def test_classify_reads_both_file_forms_and_bare_locs():
    assert classify('\t.file\t1 "sample_kernels" "layer_norm.py"') == (A_FILE, 1, "sample_kernels/layer_norm.py")
    assert classify('\t.file\t3 "/abs/k.py" md5 0x0123') == (A_FILE, 3, "/abs/k.py")
    assert classify('\t.file\t2 "/abs/dir" "/other/k.py"') == (A_FILE, 2, "/other/k.py")
    assert classify("\t.loc\t1 37 27") == (A_LOC, 1, 37, 27, ())
    assert classify("\t.loc\t1 0 0 is_stmt 0                 ; :0:0")[:4] == (A_LOC, 1, 0, 0)
    assert classify("\t.amdhsa_next_free_vgpr 9") == (A_DIRECTIVE,)
    # Without the comment's chain, an op has its .loc frame alone.
    mod = parse_amdgcn('\t.text\nk:\n\t.file\t1 "d" "k.py"\n\t.loc\t1 5 3\n\ts_endpgm\n')
    (op,) = mod.ops()
    assert [tuple(f)[:3] for f in op.location.frames] == [("d/k.py", 5, 3)]


def test_show_line_json_lists_the_amdgcn_instructions_of_the_line(cap):
    for line in (SUM_LINE, SQUARE_LINE):
        shown = json.loads(run_cli("show", BUNDLE, KERNEL, "--line", line, "--json", check=True).stdout)
        want = [op.line for op in cap.ops_at_line(line)[AMDGCN]]
        assert want and [o["line"] for o in shown["stages"][AMDGCN]] == want
        assert list(shown["stages"]) == [s for s in LOWERING if s in shown["stages"]]
    text = run_cli("show", BUNDLE, KERNEL, "--line", SUM_LINE, check=True).stdout
    assert f"amdgcn: {len(cap.ops_at_line(SUM_LINE)[AMDGCN])} ops" in text


def test_links_tie_llvm_ir_to_amdgcn_by_location_chain(cap):
    links = cap.links()
    groups = {(g.src_stage, g.dst_stage): g for g in links.links.groups()}
    assert groups[(LLIR, AMDGCN)].kind == "same-location" and len(groups[(LLIR, AMDGCN)]) > 0
    assert links.counts()[AMDGCN] > 0.8 * len(cap.ops_at_line(SUM_LINE)[AMDGCN])
    # From the TTGIR add of tl.sum (line 41) down to AMDGCN, and back from an AMDGCN add.
    add = next(op for op in cap.ops_at_line(SUM_LINE)[TTGIR] if op.name == "arith.addf")
    down = json.loads(run_cli("links", BUNDLE, KERNEL, "--stage", TTGIR, "--op-line", add.line, "--json",
                              check=True).stdout)
    reached = {o["line"] for o in down["links"][AMDGCN]}
    v_adds = {op.line for op in cap.ops_at_line(SUM_LINE)[AMDGCN] if op.name.startswith("v_add_f32")}
    assert v_adds and v_adds <= reached
    assert {o["kind"] for o in down["links"][AMDGCN]} == {"same-location"}
    up = json.loads(run_cli("links", BUNDLE, KERNEL, "--stage", AMDGCN, "--op-line", min(v_adds), "--json",
                            check=True).stdout)
    assert add.line in {o["line"] for o in up["links"][TTGIR]}
    assert all(o["line"] in {op.line for op in cap.ops_at_line(SUM_LINE)[LLIR]} for o in up["links"][LLIR])


def test_the_views_agree_on_the_amdgcn_ops_of_a_line(cap):
    from irscope.export.lineage import lineage_graph
    from irscope.export.report.collect import stage_texts
    from irscope.tui.screen_data import index_stage

    want = [op.line for op in cap.ops_at_line(SQUARE_LINE)[AMDGCN]]
    # show --json
    shown = json.loads(run_cli("show", BUNDLE, KERNEL, "--line", SQUARE_LINE, "--json", check=True).stdout)
    assert [o["line"] for o in shown["stages"][AMDGCN]] == want
    # the lineage draws the same instructions, linked from LLVM IR
    g = lineage_graph(cap, SQUARE_LINE).graph
    drawn = sorted(a["line"] for _, a in g.nodes(data=True) if a.get("kind") == "op" and a["stage"] == AMDGCN)
    assert drawn == want
    assert any(u.startswith(f"{LLIR}:") and v.startswith(f"{AMDGCN}:") for u, v in g.edges)
    assert any(n.startswith(f"{LLIR} -> {AMDGCN}:") for n in g.graph["notes"])
    # the report's stage pane and the app's stage index
    (pane,) = [s for s in stage_texts(cap) if s.name == AMDGCN]
    assert pane.line_ops[SQUARE_LINE] == want
    assert [op.line for op in index_stage(cap, AMDGCN).by_python_line[SQUARE_LINE]] == want


def test_the_app_counts_and_marks_the_amdgcn_ops_of_a_line(cap):
    import asyncio

    from irscope.tui.app import make_app
    from irscope.tui.screens.kernel import KernelScreen
    from irscope.tui.widgets.ir_view import IRView
    from irscope.tui.widgets.stage_tabs import StageTabs

    want = cap.ops_at_line(SQUARE_LINE)[AMDGCN]

    async def go() -> None:
        with irscope.open(str(BUNDLE)) as b:
            app = make_app(b, kernel=KERNEL, keymap={})
            async with app.run_test(size=(120, 40)) as pilot:
                for _ in range(3):
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                screen = app.screen
                assert isinstance(screen, KernelScreen) and AMDGCN in screen.stages
                src = screen.query_one("#source", IRView)
                src.focus()
                src.goto_line(SQUARE_LINE - screen.first_line)
                for _ in range(3):
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                assert screen.query_one(StageTabs).count(AMDGCN) == len(want) > 0

    asyncio.run(go())
