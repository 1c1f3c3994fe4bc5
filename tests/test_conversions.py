"""Layout conversions: how each ttg.convert_layout moves its data, checked against
Triton's own shared-memory allocation on every checked-in capture.

Triton's allocation pass gives a conversion that goes through shared memory a scratch
buffer (an ``allocation.offset`` attribute) and records the kernel's total in
``ttg.shared``. The snapshot after that pass is in every capture, so the truth here is
read from the IR Triton produced, independently of irscope's conversion code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import irscope
from irscope.core.conversions import REGISTERS, SHARED_MEMORY, VIAS, WARP_SHUFFLE, conversions_of
from irscope.ir.layouts import decode_encoding
from irscope.ir.layouts.convert_layout import (conversion_via, element_moves, from_linear, invert_and_compose,
                                               minimal_conversion, mixed_transpositions)
from irscope.ir.layouts.conversion_scratch import scratch_of

DATA = Path(__file__).resolve().parent / "data"
BUNDLES = sorted(DATA.glob("*.irscope"))
WHY = DATA / "why_conversions.irscope"


def _allocated_snapshot(cap):
    """The text of the snapshot right after Triton's shared-memory allocation pass
    (MLIR snapshots are taken before their pass: the next pass's), read without irscope's
    conversion code."""
    rows = cap.pass_rows()
    for i, row in enumerate(rows):
        if re.search(r"Allocate\w*SharedMemory", row.name or "") and i + 1 < len(rows):
            return cap.pass_at(i + 1)
    return None


def _cvt_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "ttg.convert_layout" in line and "=" in line]


def _types(line: str) -> str:
    """The ``: src -> dst`` types of a convert_layout line (aliases as written)."""
    return re.search(r":\s*(tensor<.*?)(?:\s+loc\(.*)?$", line).group(1).strip()


def _truth(cap):
    """[(types, has allocation.offset, offset)] of the snapshot's conversions, in order;
    the ``ttg.shared`` total; whether every allocated op is a conversion."""
    snap = _allocated_snapshot(cap)
    if snap is None:
        return None
    text = snap.text
    cvts = []
    for line in _cvt_lines(text):
        m = re.search(r"allocation\.offset = (\d+)", line)
        cvts.append((_types(line), m is not None, int(m.group(1)) if m else None))
    shared = re.search(r"ttg\.shared = (\d+)", text)
    allocated_ops = [ln for ln in text.splitlines() if "allocation.offset" in ln]
    only_cvts = all("ttg.convert_layout" in ln for ln in allocated_ops)
    return cvts, int(shared.group(1)) if shared else None, only_cvts


def _captures():
    for path in BUNDLES:
        for cap in irscope.open(path).captures():
            if "ttgir" in cap.stages:
                yield path.name, cap


@pytest.mark.parametrize("bundle", [p.name for p in BUNDLES])
def test_via_matches_tritons_allocation_on_every_conversion(bundle):
    """Every conversion of every capture of every checked-in bundle, every target:
    irscope says shared memory exactly where Triton allocated scratch for it."""
    checked = 0
    for cap in irscope.open(DATA / bundle).captures():
        if "ttgir" not in cap.stages:
            continue
        mine = cap.conversions()
        truth = _truth(cap)
        final = [ln for ln in cap.stage("ttgir").text.splitlines() if "ttg.convert_layout" in ln and "=" in ln]
        assert len(mine) == len(final), f"{cap}: every convert_layout of the final TTGIR is listed"
        if truth is None:
            assert not mine, f"{cap}: conversions but no allocation snapshot to check them against"
            continue
        cvts, _, _ = truth
        # The passes between the final TTGIR and the allocation keep the conversions:
        # they pair one to one, in order, with the same types.
        assert [_types(ln) for ln in final] == [t for t, _, _ in cvts], f"{cap}: conversions changed after TTGIR"
        for conv, (_, allocated, _) in zip(mine, cvts):
            assert conv.note is None, f"{cap} line {conv.ttgir_line}: computed, not read back ({conv.note})"
            assert conv.via in VIAS
            assert (conv.via == SHARED_MEMORY) == allocated, \
                f"{cap} line {conv.ttgir_line}: irscope says {conv.via}, Triton allocated={allocated}"
            assert conv.triton_allocated == allocated
            checked += 1
    if bundle in ("samples_sm90.irscope", "learner_sm90.irscope", "layer_norm_gfx942.irscope",
                  "h200_torch_compile.irscope", "why_conversions.irscope"):
        assert checked, f"{bundle} holds conversions: the check must have run"


def test_scratch_bytes_match_tritons_shared_memory_total():
    """Where conversions are the only ops with scratch, Triton's ``ttg.shared`` is the end
    of the last buffer: offset + irscope's scratch bytes, exactly. Elsewhere each
    buffer fits in the total."""
    exact = 0
    for name, cap in _captures():
        truth = _truth(cap)
        if truth is None:
            continue
        cvts, shared, only_cvts = truth
        ends = [off + conv.scratch_bytes for conv, (_, allocated, off) in zip(cap.conversions(), cvts)
                if allocated]
        for conv, (_, allocated, _) in zip(cap.conversions(), cvts):
            assert (conv.scratch_bytes > 0) == allocated, f"{name} {cap} line {conv.ttgir_line}"
        if not ends:
            continue
        assert shared is not None
        if only_cvts:
            assert max(ends) == shared, f"{name} {cap}: ttg.shared {shared}, irscope's buffers end at {max(ends)}"
            exact += 1
        else:
            assert max(ends) <= shared, f"{name} {cap}"
    # bias_gelu_rowsum (two 1-D conversions), and why_conversions' row sums and
    # transposes on both targets.
    assert exact >= 7, "the exact comparison ran"


EXPECTED = {
    # (kernel, variant fields) -> via of each conversion, in TTGIR order
    ("row_sums_kernel", "N=32,num_warps=4"): [SHARED_MEMORY],
    ("row_sums_kernel", "N=32,num_warps=1"): [SHARED_MEMORY],
    ("row_sums_kernel", "N=8,num_warps=1"): [WARP_SHUFFLE],
    ("row_sums_kernel", "N=4,num_warps=1"): [REGISTERS],
    ("transpose_kernel", ""): [SHARED_MEMORY],
    ("chained_dot_kernel", ""): [REGISTERS, SHARED_MEMORY],
}


@pytest.mark.parametrize("target", ["sm_90", "sm_80"])
def test_why_conversions_kernel_has_every_kind(target):
    """tests/kernels/why_conversions.py, compile-only for sm_90 and sm_80: one
    conversion through registers, one by warp shuffles, the rest through shared memory,
    each on the Python line that made it."""
    source = (Path(__file__).resolve().parent / "kernels" / "why_conversions.py").read_text().splitlines()
    seen = set()
    for cap in irscope.open(WHY).captures():
        if cap.target != target:
            continue
        key = next(k for k in EXPECTED if k[0] == cap.kernel and all(f in cap.variant for f in k[1].split(",")))
        convs = cap.conversions()
        assert [c.via for c in convs] == EXPECTED[key], f"{cap}"
        seen.add(key)
        ttgir = cap.stage("ttgir").text.splitlines()
        for c in convs:
            assert "ttg.convert_layout" in ttgir[c.ttgir_line - 1], "the line irscope cat --stage ttgir numbers"
            assert c.python_line is not None
            assert any(word in source[c.python_line - 1] for word in ("tl.store", "tl.dot")), \
                f"{cap}: line {c.python_line} is where the converted value is made or stored"
            assert c.source != c.destination and c.source.startswith("#ttg.")
            if c.via == SHARED_MEMORY:
                assert c.scratch_bytes > 0 and c.bank_conflicts is not None and c.bank_conflicts >= 1
                assert c.store_conflicts is not None and c.load_conflicts is not None
            else:
                assert c.scratch_bytes == 0 and c.bank_conflicts is None
    assert seen == set(EXPECTED)


def test_transpose_scratch_is_the_whole_tile():
    """The 32x32 fp32 transpose: 4 KiB of scratch (the tile: no register repeats on
    both sides), stored and loaded conflict-free (Triton swizzles the rows)."""
    cap = next(c for c in irscope.open(WHY).captures() if c.kernel == "transpose_kernel" and c.target == "sm_90")
    (conv,) = cap.conversions()
    assert conv.scratch_bytes == 32 * 32 * 4
    assert conv.bank_conflicts == 1
    assert conv.to_json()["via"] == "shared_memory"


def test_element_moves_agree_with_via():
    """Two independent views of every captured conversion: the per-element owner
    comparison never sees a move further than the op-level rule allows (registers:
    nothing leaves a thread; warp shuffles: nothing leaves a warp)."""
    kinds = set()
    for name, cap in _captures():
        module = cap.stage("ttgir").module
        aliases = module.encodings
        for conv in cap.conversions():
            op = next(o for o in module.ops() if o.line == conv.ttgir_line)
            src = op.signature(aliases).operands[0]
            shape = [int(n) for n in src.shape]
            assert "parent = #ttg." in conv.source + conv.destination or "parent = #" not in \
                conv.source + conv.destination, "nested aliases are spelled out"
            s_map = decode_encoding(conv.source).owners(shape)
            d_map = decode_encoding(conv.destination).owners(shape)
            moves = set(element_moves(s_map, d_map).values())
            kinds.add(conv.via)
            if conv.via == REGISTERS:
                assert moves <= {"register"}, f"{name} {cap} line {conv.ttgir_line}: {moves}"
            elif conv.via == WARP_SHUFFLE:
                assert "warp" not in moves and "lane" in moves, f"{name} {cap} line {conv.ttgir_line}"
    assert kinds == set(VIAS)


def _blocked(spt, tpw, wpc, order=(0,)):
    return (f"#ttg.blocked<{{sizePerThread = {list(spt)}, threadsPerWarp = {list(tpw)}, "
            f"warpsPerCTA = {list(wpc)}, order = {list(order)}}}>")


def _ll(text, shape):
    return decode_encoding(text).to_linear(shape)


def test_rule_on_hand_made_layouts():
    """The rule's three outcomes, and its mixed-transposition limit, on 1-D layouts of
    one warp whose bit permutations are known by hand."""
    one = _blocked([1], [32], [1])
    # The same layout: nothing moves.
    assert conversion_via(_ll(one, [64]), _ll(one, [64])) == REGISTERS
    # 64 elements, 1 -> 2 per thread: bit 0 moves from lane to register, one cycle
    # r0 -> l4 -> ... -> l0: one register<->lane transposition.
    s, d = from_linear(_ll(one, [64])), from_linear(_ll(_blocked([2], [32], [1]), [64]))
    assert [n for n, _ in minimal_conversion(s, d).outs] == ["register", "lane"]
    assert mixed_transpositions(s, d) == 1
    assert conversion_via(_ll(one, [64]), _ll(_blocked([2], [32], [1]), [64])) == WARP_SHUFFLE
    # 128 elements, 1 -> 4 per thread: two register bits swap with lane bits: shared memory.
    s, d = from_linear(_ll(one, [128])), from_linear(_ll(_blocked([4], [32], [1]), [128]))
    assert mixed_transpositions(s, d) == 2
    assert conversion_via(_ll(one, [128]), _ll(_blocked([4], [32], [1]), [128])) == SHARED_MEMORY
    # Across warps: always shared memory.
    assert conversion_via(_ll(_blocked([1], [32], [4]), [256]),
                          _ll(_blocked([2], [32], [4]), [256])) == SHARED_MEMORY
    # Two layouts that only renumber registers: registers.
    a = _ll(_blocked([1, 4], [32, 1], [1, 1], (1, 0)), [32, 4])
    b = _ll(_blocked([1, 4], [32, 1], [1, 1], (0, 1)), [32, 4])
    assert conversion_via(a, b) == REGISTERS


def test_invert_and_compose_maps_each_destination_input_to_its_source():
    """dst.invertAndCompose(src): applying src to the answer for each destination
    input bit gives the element dst puts there."""
    src = from_linear(_ll(_blocked([4, 1], [8, 4], [1, 4], (0, 1)), [32, 32]))
    dst = from_linear(_ll(_blocked([1, 4], [4, 8], [4, 1], (1, 0)), [32, 32]))
    comp = invert_and_compose(dst, src)
    outs = [n for n, _ in comp.outs]
    for dim, bases in comp.ins:
        for i, basis in enumerate(bases):
            image = 0
            for out, value in zip(outs, basis):
                for bit, b in enumerate(src.bases(out)):
                    if value >> bit & 1:
                        image ^= b
            assert image == dst.bases(dim)[i]


def test_scratch_of_repeats_shrink_the_buffer():
    """Register bits held on both sides that land in the swizzle's segment are repeated
    through one smaller buffer; without such bits the buffer holds the whole tensor."""
    src = from_linear(_ll(_blocked([4], [32], [4]), [1024]))
    dst = from_linear(_ll(_blocked([1], [32], [4]), [1024]))
    whole = scratch_of(src, dst, 16)
    assert whole.elements == 1024  # no register bit is a register bit on both sides
    assert whole.bytes == 2048
    # 4096 fp32 elements, 4 -> 2 per thread: register bits 1024 and 2048 repeat on both
    # sides and land in the segment: the buffer holds a quarter of the tensor at a time.
    src2 = from_linear(_ll(_blocked([4], [32], [4]), [4096]))
    dst2 = from_linear(_ll(_blocked([2], [32], [4]), [4096]))
    rep = scratch_of(src2, dst2, 32)
    assert rep.elements == 1024 and rep.bytes == 4096


def test_conversions_of_a_capture_without_ttgir_is_empty():
    cap = next(c for c in irscope.open(DATA / "learner_sm90.irscope").captures() if c.kernel == "frontend_kernel")
    assert conversions_of(cap) == ()


def _span(bases, index: int) -> int:
    v = 0
    for i, b in enumerate(bases):
        if index >> i & 1:
            v ^= b
    return v


def _hit_banks(side, smem, bits: int) -> int | None:
    """The worst n-way bank conflict of one ld/st.shared instruction, counted from the
    addresses: every lane of a warp accesses its vector at the swizzled offset of its
    element; lanes split into phases when a vector is wider than a 4-byte bank word;
    n-way = the most distinct words one bank serves in a phase. None when the vector
    packs several warps' elements into one word (not an access of one thread)."""
    from irscope.ir.layouts.convert_layout import LANE, REG, WARP

    regs = list(side.bases(REG))
    if not all(v in regs for v in smem.vector):
        return None
    offset_bases = list(smem.vector) + list(smem.bank) + list(smem.segment)
    offset_of = {}
    for o in range(1 << len(offset_bases)):
        for r in range(1 << len(smem.reps)):  # every repetition reuses the same buffer
            offset_of[_span(offset_bases, o) ^ _span(smem.reps, r)] = o
    lanes, warps = list(side.bases(LANE)), list(side.bases(WARP))
    others = [b for b in regs if b not in smem.vector]
    words = max(1, (1 << len(smem.vector)) * bits // 32)
    per_phase = 32 // words if words > 1 else 32
    worst = 1
    for w in range(1 << len(warps)):
        for r in range(1 << len(others)):
            base = _span(warps, w) ^ _span(others, r)
            for first in range(0, 1 << len(lanes), per_phase):
                banks: dict[int, set[int]] = {}
                for lane in range(first, min(first + per_phase, 1 << len(lanes))):
                    word = offset_of[base ^ _span(lanes, lane)] * bits // 32
                    for k in range(words):
                        banks.setdefault((word + k) % 32, set()).add(word + k)
                worst = max(worst, max(len(v) for v in banks.values()))
    return worst


@pytest.mark.parametrize("bits,src,dst,shape,ways", [
    (16, _blocked([4], [64], [4]), _blocked([1], [64], [4]), [1024], 2),  # wave64: lanes outrun the banks
    (16, _blocked([8], [32], [4]), _blocked([1], [32], [4]), [1024], 1),
    (8, _blocked([1, 4], [8, 4], [4, 1], (1, 0)), _blocked([4, 1], [4, 8], [1, 4], (0, 1)), [64, 64], 1),
    (32, _blocked([1, 1], [1, 32], [4, 1], (1, 0)), _blocked([1, 1], [32, 1], [1, 4], (0, 1)), [128, 32], 1),
])
def test_load_conflicts_are_the_banks_the_swizzle_hits(bits, src, dst, shape, ways):
    """Triton's bank-conflict count of the plain ld/st.shared swizzle, against the banks
    the swizzled addresses really hit, lane by lane."""
    from irscope.ir.layouts.conversion_scratch import _ldst
    from irscope.ir.layouts.convert_layout import remove_broadcast_registers

    s = remove_broadcast_registers(from_linear(_ll(src, shape)))
    d = remove_broadcast_registers(from_linear(_ll(dst, shape)))
    smem, (read, write) = _ldst(s, d, bits)
    assert read + 1 == ways == _hit_banks(d, smem, bits)
    stored = _hit_banks(s, smem, bits)
    assert stored is None or stored == write + 1


def test_captured_conflicts_are_the_banks_the_swizzle_hits():
    """The same count on every captured NVIDIA conversion lowered with ld/st.shared."""
    from irscope.ir.layouts.conversion_scratch import _ldst
    from irscope.ir.layouts.convert_layout import remove_broadcast_registers

    checked = 0
    for name, cap in _captures():
        if not cap.target.startswith("sm_"):
            continue
        module = cap.stage("ttgir").module
        for conv in cap.conversions():
            if conv.instructions != ("st.shared", "ld.shared"):
                continue
            op = next(o for o in module.ops() if o.line == conv.ttgir_line)
            t = op.signature(module.encodings).operands[0]
            shape = [int(n) for n in t.shape]
            bits = max(8, 64 if "ptr" in str(t.element) else t.element.bits)
            s = remove_broadcast_registers(from_linear(decode_encoding(conv.source).to_linear(shape)))
            d = remove_broadcast_registers(from_linear(decode_encoding(conv.destination).to_linear(shape)))
            smem, _ = _ldst(s, d, bits)
            for side, ways in ((s, conv.store_conflicts), (d, conv.load_conflicts)):
                hit = _hit_banks(side, smem, bits)
                if hit is not None:
                    assert hit == ways, f"{name} {cap} line {conv.ttgir_line}"
                    checked += 1
    assert checked >= 10
