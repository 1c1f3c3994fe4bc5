"""The profile parsers and the SASS check on the real H200 data of tests/data/profiles/.

Every figure asserted here was read off the checked-in files (and, for sums, checked
against the raw page of the same ncu report when the fixtures were made; see
/tests/data/README.md): Nsight Compute's source exports (``sass.csv``), Proton's
PC-sampling trees (``proton.hatchet``) and the captures made on the same GPU.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import irscope
from irscope.errors import IrscopeError
from irscope.profiles.model import ALL_STALL_KEYS, NOT_STALLED, UNLISTED, KernelProfile
from irscope.profiles.ncu_source import merge_blocks, parse_ncu_source
from irscope.profiles.proton_hatchet import kernel_profile, parse_proton_hatchet
from irscope.profiles.sass_match import capture_sass, sass_mismatch

PROFILES = Path(__file__).resolve().parent / "data" / "profiles"
KERNELS = {"vector_add": "add_kernel", "fused_softmax": "softmax_kernel",
           "jit_helper_call": "bias_gelu_rowsum_kernel", "layer_norm": "_layer_norm_fwd_fused",
           "flash_attention": "_attn_fwd", "matmul_autotune": "matmul_kernel"}
# (sample, block index among the kernel's blocks) -> the capture id whose code it ran.
BLOCK_CAPTURE = {("vector_add", 0): 1, ("fused_softmax", 0): 1, ("jit_helper_call", 0): 1,
                 ("layer_norm", 0): 1, ("flash_attention", 0): 1, ("flash_attention", 1): 2,
                 ("matmul_autotune", 0): 1, ("matmul_autotune", 1): 1}


def _csv(name: str) -> str:
    return (PROFILES / name / "sass.csv").read_text()


def _blocks(name: str):
    return [b for b in parse_ncu_source(_csv(name), "sass.csv") if b.kernel == KERNELS[name]]


def _capture_code(name: str, capture_id: int):
    with irscope.open(str(PROFILES / name / "gpu.irscope")) as bundle:
        cap = bundle.capture(f"#{capture_id}")
        return capture_sass(cap.stage("sass").module, cap.kernel)


# -- ncu source export ---------------------------------------------------------------

@pytest.mark.parametrize("name", list(KERNELS))
def test_ncu_blocks_are_the_captures_instructions(name: str) -> None:
    """Each block: one row per capture instruction, offsets 0, 16, 32..., every stall
    dict summing to the instruction's samples (unlisted makes up HGMMA's gap)."""
    for k, block in enumerate(_blocks(name)):
        code = _capture_code(name, BLOCK_CAPTURE[(name, k)])
        assert [i.offset for i in block.instructions] == [c.offset for c in code.instructions]
        assert [i.offset for i in block.instructions] == list(range(0, 16 * len(block.instructions), 16))
        for ins in block.instructions:
            assert sum(ins.stalls.values()) == ins.samples, (name, ins)
            assert set(ins.stalls) <= ALL_STALL_KEYS and all(v > 0 for v in ins.stalls.values())
            assert 0 <= ins.not_issued <= ins.samples
            assert ins.executed is not None and ins.executed >= 0


def test_ncu_vector_add_rows_as_exported() -> None:
    """The rows the formats note quotes, field by field."""
    (block,) = _blocks("vector_add")
    assert block.base_address == 0x7F63A37E8300 and block.total_samples == 79
    by = {i.offset: i for i in block.instructions}
    ldc, fadd, bra = by[0x0], by[0x1C0], by[0x290]
    assert (ldc.text, ldc.samples, ldc.not_issued, ldc.executed, ldc.stalls) == (
        "      LDC R1, c[0x0][0x28]", 9, 9, 388, {"no_instruction": 9})
    assert (fadd.samples, fadd.stalls) == (44, {"long_scoreboard": 44})
    assert bra.text == "      BRA 0x7f63a37e8590" and bra.stalls == {"drain": 1, "wait": 1}
    assert bra.executed == 0


def test_ncu_softmax_counts_and_the_whole_file() -> None:
    """fused_softmax's export is whole (torch launches too): six launches in launch
    order, and the tl.max FMNMX row (standard.py:170) as exported."""
    blocks = parse_ncu_source(_csv("fused_softmax"))
    assert [b.total_samples for b in blocks] == [841, 1014, 633, 442, 342, 346]
    assert [b.kernel for b in blocks][1] == "softmax_kernel"
    assert blocks[0].kernel.startswith("void at::native::")
    fmnmx = next(i for i in blocks[1].instructions if i.offset == 0x540)
    assert fmnmx.text.split() == ["FMNMX", "R19,", "R7,", "R6,", "!PT"]
    assert (fmnmx.samples, fmnmx.not_issued, fmnmx.stalls) == (397, 372, {"long_scoreboard": 396, "selected": 1})


def test_ncu_unlisted_reason_on_hgmma_rows() -> None:
    """ncu has no column for warpgroup_arrive: those samples are 'unlisted', not lost."""
    first, second = _blocks("flash_attention")
    unlisted = [i for i in first.instructions if UNLISTED in i.stalls]
    assert sum(i.stalls[UNLISTED] for i in unlisted) == 7
    assert all(i.text.split()[0].startswith("HGMMA") for i in unlisted)
    assert sum(i.stalls.get(UNLISTED, 0) for i in second.instructions) == 6


def test_ncu_duplicate_block_dropped_two_launches_kept() -> None:
    """A block printed twice back to back is one launch; two launches of one code
    (matmul's autotune runs: same addresses, other samples) stay two."""
    text = _csv("vector_add")
    lines = text.splitlines(keepends=True)
    doubled = "".join(lines) + "".join(lines)
    assert len(parse_ncu_source(doubled)) == 1
    blocks = _blocks("matmul_autotune")
    assert [b.total_samples for b in blocks] == [56, 59]
    assert blocks[0].base_address == blocks[1].base_address
    merged = merge_blocks("matmul_kernel", blocks, source="sass.csv")
    assert merged.launches == 2 and merged.total_samples == 115 and merged.unplaced == 0
    assert [i.samples for i in merged.instructions] == [a.samples + b.samples for a, b in
                                                       zip(blocks[0].instructions, blocks[1].instructions)]
    assert all(sum(i.stalls.values()) == i.samples for i in merged.instructions)


def test_ncu_columns_found_by_name() -> None:
    """The same block with its columns in another order parses to the same records."""
    rows = list(csv.reader(io.StringIO(_csv("layer_norm"))))
    order = [0, 1] + list(range(len(rows[1]) - 1, 1, -1))  # Address, Source, then the rest reversed
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(rows[0])
    for row in rows[1:]:
        w.writerow([row[i] for i in order])
    assert parse_ncu_source(out.getvalue()) == parse_ncu_source(_csv("layer_norm"))


@pytest.mark.parametrize("text, says", [
    ("", "no 'Address','Source' header"),
    ("hello,world\n1,2\n", "row 1"),
    ('"Kernel Name","k",\n"Address","Source","# Samples"\n"0xzz","NOP","1"\n', "not hexadecimal"),
    ('"Kernel Name","k",\n"Address","Source","# Samples"\n"0x10","NOP","many"\n', "is not a count"),
    ('"Kernel Name","k",\n"Address","Function"\n"0x10","f"\n', "header with no 'Source' column"),
    ('"Kernel Name","k",\n"Address","Source","Instructions Executed"\n"0x10","NOP","4"\n', "no '# Samples' column"),
    ('"Kernel Name","k",\n"Address","Source","# Samples"\n"0x10","NOP"\n', "2 fields under a 3-column header"),
])
def test_ncu_bad_input_is_one_line(text: str, says: str) -> None:
    with pytest.raises(IrscopeError) as exc:
        parse_ncu_source(text, "x.csv")
    assert says in str(exc.value) and "\n" not in str(exc.value) and str(exc.value).startswith("x.csv")


# -- Proton hatchet --------------------------------------------------------------------

@pytest.mark.parametrize("name", list(KERNELS))
def test_proton_lines_conserve_samples(name: str) -> None:
    """Per line: stalls (reasons + not_stalled) sum to its samples, as the tree's
    num_samples / num_stalled_samples say; the kernel's total is its lines'."""
    raw = json.loads((PROFILES / name / "proton.hatchet").read_text())
    tree = parse_proton_hatchet((PROFILES / name / "proton.hatchet").read_text())
    pk = tree.kernels[KERNELS[name]]
    node = next(n for n in raw[0]["children"] if n["frame"]["name"] == KERNELS[name])
    assert pk.total_samples == sum(c["metrics"]["num_samples"] for c in node["children"])
    assert len(pk.lines) == len(node["children"]) and pk.unplaced == 0
    assert pk.launches == node["metrics"]["count"]
    for ln in pk.lines:
        assert sum(ln.stalls.values()) == ln.samples and set(ln.stalls) <= ALL_STALL_KEYS
    assert tree.device == "sm_90, 132 SMs"


def test_proton_fused_softmax_lines() -> None:
    """The library line tl.max inlines (standard.py:170) and a user line, by value."""
    pk = parse_proton_hatchet((PROFILES / "fused_softmax" / "proton.hatchet").read_text()).kernels["softmax_kernel"]
    by = {(Path(ln.file).name, ln.line): ln for ln in pk.lines}
    assert len(by) == 18 and pk.total_samples == 3062 and pk.launches == 1
    mx = by[("standard.py", 170)]
    assert mx.file == "/opt/torch/.venv/lib/python3.12/site-packages/triton/language/standard.py"
    assert mx.samples == 1072 and mx.stalls[NOT_STALLED] == 502 and mx.stalls["long_scoreboard"] == 391
    assert by[("fused_softmax.py", 29)].samples == 487


def test_proton_merges_variants_and_keeps_unlined_kernels() -> None:
    """flash: both STAGE variants in one node (count 2); matmul: 90 launches; a torch or
    cuBLAS kernel with no line info keeps its samples as unplaced, not dropped."""
    flash = parse_proton_hatchet((PROFILES / "flash_attention" / "proton.hatchet").read_text())
    assert flash.kernels["_attn_fwd"].launches == 2
    gemm = next(k for n, k in flash.kernels.items() if n.startswith("sm80_xmma_gemm_f32f32_f32f32_f32_nn"))
    assert gemm.lines == () and gemm.unplaced == 25265 and gemm.total_samples == 25265
    matmul = parse_proton_hatchet((PROFILES / "matmul_autotune" / "proton.hatchet").read_text())
    prof = kernel_profile(matmul.kernels["matmul_kernel"], source="proton.hatchet")
    assert prof.launches == 90 and prof.tool == "proton" and prof.instructions == ()
    assert prof.total_samples == sum(ln.samples for ln in prof.lines) + prof.unplaced == 54209


@pytest.mark.parametrize("text, says", [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a list whose first item is the root node"),
    ('[{"frame": {"name": "ROOT"}, "children": [{"frame": {"name": "k"}, "metrics": {"num_samples": "x"}}]}]',
     "not a number"),
])
def test_proton_bad_input_is_one_line(text: str, says: str) -> None:
    with pytest.raises(IrscopeError) as exc:
        parse_proton_hatchet(text, "p.hatchet")
    assert says in str(exc.value) and "\n" not in str(exc.value)


# -- the stored form -----------------------------------------------------------------

def test_kernel_profile_json_round_trip() -> None:
    blocks = _blocks("flash_attention")
    prof = merge_blocks("_attn_fwd", blocks[:1], source="sass.csv", tool_version="2025.3.1.0",
                        gpu="NVIDIA H200", date="2026-12-03T16:40:00Z", notes=("n",))
    again = KernelProfile.from_json(json.loads(json.dumps(prof.to_json())))
    assert again == prof and again.total_samples == 922
    pk = parse_proton_hatchet((PROFILES / "layer_norm" / "proton.hatchet").read_text()).kernels
    proton = kernel_profile(pk["_layer_norm_fwd_fused"], source="proton.hatchet")
    assert KernelProfile.from_json(json.loads(json.dumps(proton.to_json()))) == proton


@pytest.mark.parametrize("data", [None, [], {"tool": "ncu"}, {"format": 99},
                                  {"tool": "gprof", "instructions": [], "lines": [], "launches": 1, "kernel": "k",
                                   "unplaced": 0, "total_samples": 0, "source": "s"}])
def test_kernel_profile_bad_json_is_one_line(data: object) -> None:
    with pytest.raises(IrscopeError) as exc:
        KernelProfile.from_json(data)
    assert "\n" not in str(exc.value)


# -- the SASS check --------------------------------------------------------------------

@pytest.mark.parametrize("name", list(KERNELS))
def test_every_profiled_launch_matches_its_capture(name: str) -> None:
    """Each launch matches the capture of its variant, with branch targets compared as
    offsets and LDGSTS operands in either order (matmul has 36 LDGSTS rows), and
    without a base address too (targets masked)."""
    for k, block in enumerate(_blocks(name)):
        code = _capture_code(name, BLOCK_CAPTURE[(name, k)])
        assert sass_mismatch(KERNELS[name], block.instructions, code, block.base_address) is None
        assert sass_mismatch(KERNELS[name], block.instructions, code, None) is None
    if name == "matmul_autotune":
        assert sum(i.text.split()[0].startswith("LDGSTS") for i in _blocks(name)[0].instructions) == 36


def test_another_variant_is_refused_with_the_offset() -> None:
    """matmul's 128x256 launch against the 128x128 config; flash's STAGE=1 against STAGE=3."""
    block = _blocks("matmul_autotune")[0]
    why = sass_mismatch("matmul_kernel", block.instructions, _capture_code("matmul_autotune", 2),
                        block.base_address)
    assert why == ("matmul_kernel: SASS differs at offset 0x0010: profile `LDC.64 R2, c[0x0][0x228]`, "
                   "capture `LDC.64 R4, c[0x0][0x228]`")
    flash1 = _blocks("flash_attention")[0]
    why = sass_mismatch("_attn_fwd", flash1.instructions, _capture_code("flash_attention", 2), flash1.base_address)
    assert why is not None and "0x0010" in why and "\n" not in why


def test_a_wrong_branch_target_is_a_mismatch() -> None:
    """The export's first BRA (``@P0 BRA 0x7f02a52b9e60``, offset 0x140) jumps to an
    absolute address, the capture's to a label at the same offset; moved one
    instruction further, the check names the branch's offset."""
    text = _csv("layer_norm")
    block = parse_ncu_source(text)[0]
    bra = next(i for i in block.instructions if "BRA" in i.text.split())
    assert (bra.offset, bra.text) == (0x140, "@P0   BRA 0x7f02a52b9e60")
    target = int(bra.text.split()[-1], 16)
    moved = text.replace(bra.text, bra.text.replace(hex(target), hex(target + 16)), 1)
    changed = parse_ncu_source(moved)[0]
    code = _capture_code("layer_norm", 1)
    assert sass_mismatch("k", block.instructions, code, block.base_address) is None
    why = sass_mismatch("k", changed.instructions, code, changed.base_address)
    assert why is not None and f"offset 0x{bra.offset:04x}" in why


def test_ldgsts_operands_still_compared() -> None:
    """LDGSTS operands may come in either order, but another operand is a mismatch."""
    text = _csv("matmul_autotune")
    block = parse_ncu_source(text)[0]
    ld = next(i for i in block.instructions if i.text.split()[0].startswith("LDGSTS"))
    wrong = text.replace(ld.text, ld.text.replace("[R", "[R1", 1), 1)
    why = sass_mismatch("matmul_kernel", parse_ncu_source(wrong)[0].instructions,
                        _capture_code("matmul_autotune", 1), block.base_address)
    assert why is not None and f"offset 0x{ld.offset:04x}" in why


def test_memory_operands_in_another_order_match_but_registers_keep_theirs() -> None:
    """ncu may print a memory instruction's operands in its own order (LDGSTS's
    destination last): any instruction with a ``[...]`` operand is compared as a multiset
    (vector_add's STG with its address last here); another register is still a
    mismatch, and so are an ALU instruction's operands swapped."""
    text = _csv("vector_add")
    block = parse_ncu_source(text)[0]
    code = _capture_code("vector_add", 1)
    stg = next(i for i in block.instructions if "STG.E.128 desc[" in i.text)
    head, _, value = stg.text.rpartition(", ")
    address = head.split()[-1]
    swapped = stg.text.replace(f"{address}, {value}", f"{value}, {address}")
    got = parse_ncu_source(text.replace(stg.text, swapped, 1))[0]
    assert sass_mismatch("add_kernel", got.instructions, code, got.base_address) is None
    other = parse_ncu_source(text.replace(stg.text, stg.text.replace(value, "R99"), 1))[0]
    why = sass_mismatch("add_kernel", other.instructions, code, other.base_address)
    assert why is not None and f"offset 0x{stg.offset:04x}" in why
    alu = next(i for i in block.instructions if i.text.split()[0].startswith("IMAD") and i.text.count(",") >= 3)
    ops = alu.text.split(None, 1)[1].split(", ")
    assert ops[1] != ops[2]  # IMAD.WIDE R2, R0, 0x4, R2
    flipped = alu.text.replace(", ".join(ops), ", ".join([ops[0], ops[2], ops[1], *ops[3:]]))
    bad = parse_ncu_source(text.replace(alu.text, flipped, 1))[0]
    why = sass_mismatch("add_kernel", bad.instructions, code, bad.base_address)
    assert why is not None and f"offset 0x{alu.offset:04x}" in why


def test_a_shorter_profile_is_a_mismatch() -> None:
    block = _blocks("vector_add")[0]
    code = _capture_code("vector_add", 1)
    why = sass_mismatch("add_kernel", block.instructions[:-3], code, block.base_address)
    assert why is not None and "0x0350" in why and "53 instructions against the capture's 56" in why


def test_ncu_other_kernels_rows_cannot_stop_an_import() -> None:
    """Reading one kernel's blocks skips the others' rows (a damaged torch row here),
    and keeps the launch's position among all blocks."""
    text = _csv("fused_softmax")
    lines = text.splitlines(keepends=True)
    assert lines[2].startswith('"0x7f17bf7a0000"')  # the first torch launch's first row
    damaged = "".join(lines[:2]) + lines[2].replace('"0x7f17bf7a0000"', '"0xzz"', 1) + "".join(lines[3:])
    with pytest.raises(IrscopeError, match="row 3: address '0xzz' is not hexadecimal"):
        parse_ncu_source(damaged, "sass.csv")
    (block,) = parse_ncu_source(damaged, "sass.csv", "softmax_kernel")
    assert (block.index, block.kernel, block.total_samples) == (1, "softmax_kernel", 1014)


def test_ncu_sample_columns_of_other_versions() -> None:
    """Without '# Samples' (older ncu), the all-samples column is read: under either of
    its names, the same records."""
    rows = list(csv.reader(io.StringIO(_csv("vector_add"))))
    drop = rows[1].index("# Samples")
    renamed = {"Warp Stall Sampling (All Samples)": "Sampling Data (All)",
               "Warp Stall Sampling (Not-issued Samples)": "Sampling Data (Not Issued)"}
    for names in ({}, renamed):
        out = io.StringIO()
        w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(rows[0])
        w.writerow([names.get(h, h) for i, h in enumerate(rows[1]) if i != drop])
        for row in rows[2:]:
            w.writerow([v for i, v in enumerate(row) if i != drop])
        assert parse_ncu_source(out.getvalue()) == parse_ncu_source(_csv("vector_add"))
