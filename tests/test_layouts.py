"""irscope.ir.layouts: decoding TTGIR layouts, owner maps checked against Triton, shared banks."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscope import text_guard

from irscope.ir.layouts import (
    AmdMfmaEncoding,
    AmdWmmaEncoding,
    BlockedEncoding,
    CgaLayout,
    DistributedEncoding,
    DotOperandEncoding,
    Encoding,
    LayoutError,
    LinearEncoding,
    LinearLayout,
    MemorySpace,
    NvidiaMmaEncoding,
    NvmmaSharedEncoding,
    Owner,
    PaddedSharedEncoding,
    SharedEncoding,
    SliceEncoding,
    SwizzledSharedEncoding,
    TensorMemoryEncoding,
    TensorMemoryScalesEncoding,
    UnknownEncoding,
    decode_encoding,
    diff_fields,
    layout_map,
    parse_aliases,
)
from irscope.ir.layouts.linear import dim_names

DATA = Path(__file__).parent / "data"
IR_FILES = sorted((DATA / "ir").glob("*/*/*.ttgir"))
SAMPLES = json.loads((DATA / "layouts" / "sample_encodings.json").read_text())["entries"]
TENSOR_SAMPLES = [e for e in SAMPLES if e["kind"] == "tensor"]
SHARED_SAMPLES = [e for e in SAMPLES if e["kind"] == "memdesc"]

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


def _fixture_aliases() -> list[tuple[str, str, dict]]:
    """(file, alias name, alias table) for every layout alias in the checked-in TTGIR fixtures."""
    out, seen = [], set()
    for path in IR_FILES:
        aliases = parse_aliases(path.read_text())
        for name, text in aliases.items():
            if text not in seen:
                seen.add(text)
                out.append((f"{path.parent.parent.name}/{path.parent.name}", name, aliases))
    return out


FIXTURE_ALIASES = _fixture_aliases()


# ------------------------------------------------------------------ decoding
def test_fixture_files_have_layout_aliases():
    assert len(IR_FILES) >= 30
    kinds = {decode_encoding(name, aliases).kind for _, name, aliases in FIXTURE_ALIASES}
    assert {"blocked", "nvidia_mma", "swizzled_shared", "nvmma_shared", "memory_space"} <= kinds


@pytest.mark.parametrize("where,name,aliases", FIXTURE_ALIASES, ids=[f"{w}:{n}" for w, n, _ in FIXTURE_ALIASES])
def test_every_fixture_alias_decodes(where, name, aliases):
    enc = decode_encoding(name, aliases)
    assert not isinstance(enc, UnknownEncoding), enc.describe()
    # The reference and the inline text decode to the same thing.
    assert decode_encoding(aliases[name], aliases) == enc
    line = enc.describe()
    assert line.startswith(enc.kind + " ") and "unknown" not in line and "\n" not in line
    fields = enc.fields()
    assert fields and all(isinstance(k, str) for k in fields)
    # Every printed key = value of the source shows up in describe().
    for key, value in fields.items():
        if value is not None and not isinstance(value, Encoding):
            assert key in line


@pytest.mark.parametrize("entry", SAMPLES, ids=[f"{e['kind']}-{i}" for i, e in enumerate(SAMPLES)])
def test_every_sample_encoding_decodes(entry):
    enc = decode_encoding(entry["encoding"])
    assert not isinstance(enc, UnknownEncoding), enc.describe()
    if entry["kind"] == "tensor":
        assert isinstance(enc, DistributedEncoding)
    else:
        assert isinstance(enc, (SharedEncoding, TensorMemoryEncoding))


def test_describe_and_fields():
    enc = decode_encoding(BLOCKED)
    assert isinstance(enc, BlockedEncoding)
    assert enc.describe() == "blocked sizePerThread [1, 8] threadsPerWarp [4, 8] warpsPerCTA [4, 1] order [1, 0]"
    assert enc.fields() == {"sizePerThread": (1, 8), "threadsPerWarp": (4, 8), "warpsPerCTA": (4, 1), "order": (1, 0)}
    assert enc.raw == BLOCKED
    other = decode_encoding(BLOCKED.replace("[1, 8]", "[1, 4]").replace("[4, 8]", "[2, 16]"))
    assert diff_fields(enc, other) == ["sizePerThread [1, 8] -> [1, 4]", "threadsPerWarp [4, 8] -> [2, 16]"]
    mma = decode_encoding("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>")
    assert diff_fields(enc, mma) == ["kind blocked -> nvidia_mma"]


def test_old_and_new_dialect_spellings_agree():
    old = decode_encoding(BLOCKED.replace("#ttg.", "#triton_gpu."))
    new = decode_encoding(BLOCKED)
    assert old.fields() == new.fields() and old.kind == new.kind
    legacy = decode_encoding("#triton_gpu.shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0], hasLeadingOffset = true}>")
    assert isinstance(legacy, SwizzledSharedEncoding) and legacy.has_leading_offset is True
    tm = decode_encoding("#triton_nvidia_gpu.tensor_memory_encoding<blockM = 128, blockN = 64, unpacked = true>")
    assert isinstance(tm, TensorMemoryEncoding) and tm.unpacked is True and tm.block_n == 64


def test_nested_parents_resolve_through_aliases():
    aliases = {
        "#mma": "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
        "#blocked": BLOCKED,
    }
    dot = decode_encoding("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", aliases)
    assert isinstance(dot, DotOperandEncoding) and dot.k_width == 2
    assert isinstance(dot.parent, NvidiaMmaEncoding) and dot.parent.instr_shape == (16, 64, 16)
    sl = decode_encoding("#ttg.slice<{dim = 1, parent = #ttg.slice<{dim = 0, parent = #blocked}>}>", aliases)
    assert isinstance(sl, SliceEncoding) and isinstance(sl.parent, SliceEncoding)
    assert isinstance(sl.parent.parent, BlockedEncoding)
    assert "parent (slice dim 0 parent (blocked" in sl.describe()
    # A missing alias or a cycle is an UnknownEncoding, not an exception.
    assert isinstance(decode_encoding("#ttg.slice<{dim = 1, parent = #nope}>", aliases), UnknownEncoding)
    cyclic = {"#a": "#ttg.slice<{dim = 0, parent = #b}>", "#b": "#ttg.slice<{dim = 0, parent = #a}>"}
    assert "cycle" in decode_encoding("#a", cyclic).reason


@pytest.mark.parametrize("text,cls,check", [
    (("#ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [16, 16, 32], isTransposed = false, "
     "tilesPerWarp = [2, 1], elementBitWidth = 64}>"), AmdMfmaEncoding,
     lambda e: e.tiles_per_warp == (2, 1) and e.element_bit_width == 64),
    (("#triton_gpu.amd_mfma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], MDim = 32, NDim = 32, "
     "isTransposed = true}>"), AmdMfmaEncoding, lambda e: e.version == 3 and e.instr_shape == (32, 32)),
    ("#ttg.amd_wmma<{version = 1, isTranspose = true, warpsPerCTA = [2, 2], tilesPerWarp = [2, 1]}>",
     AmdWmmaEncoding, lambda e: e.is_transposed and e.instr_shape is None),
    (("#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[0, 2], [0, 4]], "
     "block = []}>"), LinearEncoding, lambda e: e.warp == ((0, 2), (0, 4))),
    ("#ttg.nvidia_mma<{versionMajor = 5, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [128, 256, 16]}>",
     NvidiaMmaEncoding, lambda e: e.version_major == 5),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 8, fp4Padded = true}>",
     NvmmaSharedEncoding, lambda e: e.transposed and e.fp4_padded),
    ("#ttg.padded_shared<[32:+4, 64:+8] {order = [1, 0], shape = [64, 64]}>", PaddedSharedEncoding,
     lambda e: e.intervals == (32, 64) and e.paddings == (4, 8) and e.order == (1, 0)),
    ("#ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1, CTASplitM = 2, twoCTAs = true>",
     TensorMemoryEncoding, lambda e: e.cta_split_m == 2 and e.two_ctas),
    ("#ttng.tensor_memory_scales_encoding<>", TensorMemoryScalesEncoding, lambda e: e.cta_split_m is None),
    ("#ttg.shared_memory", MemorySpace, lambda e: e.name == "shared_memory"),
    (("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], "
     "CGALayout = [[1, 0]]}>"), BlockedEncoding, lambda e: e.cga == CgaLayout(bases=((1, 0),))),
    (("#triton_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], "
     "CTAsPerCGA = [2], CTASplitNum = [2], CTAOrder = [0]}>"), BlockedEncoding,
     lambda e: e.cga.ctas_per_cga == (2,) and e.cga.num_ctas == 2),
])
def test_decode_other_encodings(text, cls, check):
    enc = decode_encoding(text)
    assert isinstance(enc, cls), enc.describe()
    assert check(enc)
    assert enc.describe().startswith(enc.kind)


# ------------------------------------------------------------- owner maps
def test_owner_map_basics_and_json():
    enc = decode_encoding(BLOCKED)
    m = enc.owners([16, 64])
    assert (m.num_warps, m.threads_per_warp, m.registers) == (4, 32, 8)
    assert m.owners_of((0, 9)) == (Owner(warp=0, lane=1, register=1),)
    assert m.replication() == 1
    # 4 warps x 4 rows x 8 lanes x 8 registers tile 16 x 64; a 16x16 tensor replicates 4x across lanes.
    small = enc.owners([16, 16])
    assert small.replication() == 4 and all(len(o) == 4 for _, o in small.elements())
    assert [o.lane for o in small.owners_of((0, 0))] == [0, 2, 4, 6]
    js = small.to_json()
    assert js["shape"] == [16, 16] and len(js["elements"]) == 256
    assert js["elements"][1] == {"index": [0, 1], "owners": [
        {"warp": 0, "lane": lane, "register": 1} for lane in (0, 2, 4, 6)]}
    json.dumps(js)
    assert m.held_by(0, 1) == tuple((0, 8 + r) for r in range(8))
    with pytest.raises(IndexError):
        m.owners_of((16, 0))


def test_slice_broadcasts_over_the_removed_dim():
    sl = decode_encoding("#ttg.slice<{dim = 1, parent = " + BLOCKED + "}>")
    m = sl.owners([16])
    # Row i is held by the 8 lanes of its row group, each in register 0.
    assert len(m.owners_of((0,))) == 8 and {o.register for o in m.owners_of((0,))} == {0}
    assert m.registers == 1


def test_non_register_layouts_raise_layout_error():
    v5 = decode_encoding("#ttg.nvidia_mma<{versionMajor = 5, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [128, 256, 16]}>")
    with pytest.raises(LayoutError):
        v5.owners([128, 256])
    with pytest.raises(LayoutError):
        decode_encoding(BLOCKED).owners([16, 48])  # not a power of two
    with pytest.raises(LayoutError):
        decode_encoding(BLOCKED).owners([16])  # wrong rank


# Hand-picked: shapes smaller than the layout tile (replication), slices of them,
# and encodings no sample kernel produced (wmma, mma v3 operand A, FMA operands, CTAs).
MMA2 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
MMA3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"
MFMA32 = "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>"
MFMA16 = ("#ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [16, 16, 32], isTransposed = false, "
          "tilesPerWarp = [2, 1], elementBitWidth = 64}>")
WMMA1 = "#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [2, 2]}>"
WMMA2 = "#ttg.amd_wmma<{version = 2, isTranspose = true, warpsPerCTA = [1, 4], tilesPerWarp = [2, 2]}>"
WMMA3 = "#ttg.amd_wmma<{version = 3, isTranspose = false, warpsPerCTA = [2, 2], instrShape = [16, 16, 32]}>"
B64 = "#ttg.blocked<{sizePerThread = [4, 8], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [1, 0]}>"
B_COL = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>"
B3 = "#ttg.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [2, 4, 4], warpsPerCTA = [2, 1, 2], order = [2, 1, 0]}>"


def _slice(dim, parent):
    return f"#ttg.slice<{{dim = {dim}, parent = {parent}}}>"


def _dot(op, parent, k=None):
    if k is None:  # FMA operands (blocked parent) print no kWidth
        return f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}}}>"
    return f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}, kWidth = {k}}}>"


HAND_PICKED = [
    (B64, [64, 64]), (B64, [16, 16]), (B64, [1, 8]), (B64, [128, 256]),
    (_slice(0, B64), [16]), (_slice(1, B64), [16]), (_slice(1, B64), [128]),
    (B_COL, [8, 8]), (_slice(0, B_COL), [4]), (B3, [4, 8, 16]), (B3, [2, 2, 2]), (_slice(1, B3), [4, 16]),
    (BLOCKED.replace("}>", ", CGALayout = [[1, 0]]}>"), [64, 64]),
    (MMA2, [16, 8]), (MMA2, [64, 64]), (_slice(0, MMA2), [8]), (_slice(1, MMA2), [64]),
    (MMA3, [32, 32]), (MMA3, [128, 128]), (_slice(1, MMA3), [32]),
    (_dot(0, MMA2, 2), [16, 16]), (_dot(1, MMA2, 2), [16, 16]), (_dot(0, MMA2, 4), [64, 64]),
    (_dot(1, MMA2, 8), [128, 64]), (_dot(0, MMA3, 2), [64, 32]), (_dot(0, MMA3, 4), [128, 8]),
    (_dot(0, B_COL), [32, 16]), (_dot(1, B64), [16, 64]),
    (MFMA32, [16, 16]), (MFMA32, [128, 128]), (_slice(0, MFMA32), [32]),
    (MFMA16, [16, 16]), (MFMA16, [128, 64]), (_dot(0, MFMA32, 4), [64, 64]), (_dot(1, MFMA16, 8), [64, 32]),
    (WMMA1, [16, 16]), (WMMA1, [64, 64]), (WMMA2, [64, 128]), (WMMA3, [32, 32]), (_slice(1, WMMA2), [64]),
    (_dot(0, WMMA1, 16), [32, 32]), (_dot(1, WMMA1, 8), [64, 16]), (_dot(0, WMMA2, 8), [32, 64]),
    (_dot(1, WMMA3, 8), [16, 128]), (_dot(0, WMMA3, 8), [64, 64]),
    (("#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[1, 0], [2, 0], [4, 0], [0, 2], [0, 4]], "
     "warp = [[0, 0], [16, 0]], block = []}>"), [32, 8]),
]


def _random_cases(n_per_family: int = 16, seed: int = 20260601) -> list[tuple[str, list[int]]]:
    """A fixed pseudo-random sweep over valid parameters (deterministic: the same cases every run)."""
    rng = random.Random(seed)

    def split(total_log2, rank):
        out = [0] * rank
        for _ in range(total_log2):
            out[rng.randrange(rank)] += 1
        return [1 << v for v in out]

    def p2(lo, hi):
        return 1 << rng.randint(lo, hi)

    cases = []
    for _ in range(n_per_family):
        rank = rng.choice([1, 2, 2, 3])
        order = rng.sample(range(rank), rank)
        b = (f"#ttg.blocked<{{sizePerThread = {[p2(0, 2) for _ in range(rank)]}, threadsPerWarp = {split(5, rank)}, "
             f"warpsPerCTA = {split(rng.randint(0, 3), rank)}, order = {order}}}>")
        shape = [p2(0, 7) for _ in range(rank)]
        cases.append((b, shape))
        if rank > 1:
            d = rng.randrange(rank)
            cases.append((_slice(d, b), shape[:d] + shape[d + 1:]))
        v = rng.choice([2, 3])
        warps = split(rng.randint(0, 3), 2) if v == 2 else [4 * rng.choice([1, 2]), rng.choice([1, 2])]
        inst = [16, 8] if v == 2 else [16, rng.choice([8, 32, 128, 256]), 16]
        mma = f"#ttg.nvidia_mma<{{versionMajor = {v}, versionMinor = 0, warpsPerCTA = {warps}, instrShape = {inst}}}>"
        cases.append((mma, [p2(3, 8), p2(3, 8)]))
        cases.append((_dot(0 if v == 3 else rng.choice([0, 1]), mma, rng.choice([1, 2, 4])), [p2(3, 8), p2(3, 8)]))
        inst = rng.choice([[32, 32, 8], [16, 16, 16], [16, 16, 32]])
        mfma = (f"#ttg.amd_mfma<{{version = {rng.choice([2, 3, 4])}, warpsPerCTA = {split(rng.randint(0, 3), 2)}, "
                f"instrShape = {inst}, isTransposed = {rng.choice(['true', 'false'])}, "
                f"tilesPerWarp = {split(rng.randint(0, 2), 2)}}}>")
        cases.append((mfma, [p2(3, 8), p2(3, 8)]))
        cases.append((_dot(rng.choice([0, 1]), mfma, rng.choice([4, 8])), [p2(3, 8), p2(3, 8)]))
        wv = rng.choice([1, 2, 3])
        wmma = (f"#ttg.amd_wmma<{{version = {wv}, isTranspose = {rng.choice(['true', 'false'])}, "
                f"warpsPerCTA = {split(rng.randint(0, 3), 2)}, tilesPerWarp = {split(rng.randint(0, 2), 2)}"
                + (", instrShape = [16, 16, 32]" if wv == 3 else "") + "}>")
        cases.append((wmma, [p2(4, 7), p2(4, 7)]))
        cases.append((_dot(rng.choice([0, 1]), wmma, rng.choice({1: [8, 16], 2: [4, 8], 3: [8, 16]}[wv])), [p2(4, 7), p2(4, 7)]))
    return cases


RANDOM_CASES = _random_cases()


class _Triton:
    """Triton's own conversion: build the attribute with Gluon's builder, ask for its linear layout."""

    def __init__(self):
        pytest.importorskip("triton")
        try:
            from triton._C.libtriton import gluon_ir, ir
        except ImportError:  # pragma: no cover - Triton without Gluon (< 3.4)
            pytest.skip("this Triton has no Gluon builder")
        self.ctx = ir.context()
        ir.load_dialects(self.ctx)
        self.b = gluon_ir.GluonOpBuilder(self.ctx)

    @staticmethod
    def _cga(e):
        return [list(v) for v in e.cga.bases] if e.cga is not None and e.cga.bases else []

    def attr(self, e, shape):
        b = self.b
        if isinstance(e, BlockedEncoding):
            return b.get_blocked_layout(list(e.size_per_thread), list(e.threads_per_warp), list(e.warps_per_cta),
                                        list(e.order), self._cga(e))
        if isinstance(e, SliceEncoding):
            return b.get_slice_layout(e.dim, self.attr(e.parent, shape[:e.dim] + [1] + shape[e.dim:]))
        if isinstance(e, DotOperandEncoding):
            return b.get_dot_operand_layout(e.op_idx, self.attr(e.parent, shape), e.k_width or 0)
        if isinstance(e, NvidiaMmaEncoding):
            return b.get_mma_layout([e.version_major, e.version_minor], list(e.warps_per_cta), self._cga(e),
                                    list(e.instr_shape))
        rank = len(getattr(e, "warps_per_cta", ()))
        if isinstance(e, AmdMfmaEncoding):
            return b.get_amd_mfma_layout(e.version, list(e.warps_per_cta), list(e.instr_shape), e.is_transposed,
                                         self._cga(e), list(e.tiles_per_warp or [1] * rank), e.element_bit_width or 32)
        if isinstance(e, AmdWmmaEncoding):
            return b.get_amd_wmma_layout(e.version, e.is_transposed, list(e.warps_per_cta),
                                         list(e.tiles_per_warp or [1] * rank), self._cga(e),
                                         list(e.instr_shape or [16, 16, 16]))
        if isinstance(e, LinearEncoding):
            bases = [[list(v) for v in getattr(e, n)] for n in ("register", "lane", "warp", "block")]
            # Triton wants the shape the bases span (a slice's parent has a 1 where the tensor has none).
            spanned = LinearLayout.from_bases(e.bases, dim_names(len(bases[1][0]))).outs
            return b.get_distributed_linear_layout(*bases, [size for _, size in spanned])
        raise TypeError(e)

    def printed(self, e, shape) -> str:
        """The tensor type Triton prints for our decoded encoding: proves the decode lost nothing."""
        return str(self.b.get_distributed_ty(self.b.get_float_ty(), list(shape), self.attr(e, list(shape))))

    def owners(self, e, shape):
        ll = self.b.to_linear_layout(self.attr(e, list(shape)), list(shape))
        bases = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases, "block": ll.block_bases}
        return layout_map(LinearLayout.from_bases(bases, dim_names(len(shape)), shape), shape)


@pytest.fixture(scope="module")
def tri():
    return _Triton()


def _shape_id(text, shape):
    return f"{text.split('<')[0].split('.')[-1]}-{'x'.join(map(str, shape))}"


def test_sample_fixture_covers_the_four_targets():
    targets = {t for e in TENSOR_SAMPLES for t in e["targets"]}
    assert {"sm_80", "sm_90", "sm_100", "gfx942"} <= targets
    kinds = {decode_encoding(e["encoding"]).kind for e in TENSOR_SAMPLES}
    assert {"blocked", "slice", "dot_op", "nvidia_mma", "amd_mfma", "linear"} <= kinds


@pytest.mark.parametrize("entry", TENSOR_SAMPLES, ids=[_shape_id(e["encoding"], e["shape"]) for e in TENSOR_SAMPLES])
def test_sample_owner_maps_match_triton(tri, entry):
    enc = decode_encoding(entry["encoding"])
    shape = entry["shape"]
    elem = "x".join(map(str, shape))
    assert tri.printed(enc, shape) == f"tensor<{elem}xf32, {entry['encoding']}>"
    assert enc.owners(shape) == tri.owners(enc, shape)


@pytest.mark.parametrize("text,shape", HAND_PICKED + RANDOM_CASES,
                         ids=[_shape_id(t, s) for t, s in HAND_PICKED + RANDOM_CASES])
def test_more_owner_maps_match_triton(tri, text, shape):
    enc = decode_encoding(text)
    assert not isinstance(enc, UnknownEncoding), enc.describe()
    ours, theirs = enc.owners(shape), tri.owners(enc, shape)
    assert (ours.registers, ours.threads_per_warp, ours.num_warps) == \
        (theirs.registers, theirs.threads_per_warp, theirs.num_warps)
    assert ours == theirs


def test_hand_picked_cases_replicate():
    reps = {(t, tuple(s)): decode_encoding(t).owners(s).replication() for t, s in HAND_PICKED}
    assert reps[(B64, (16, 16))] == 16  # 4 warps x 2 x 2 lanes hold copies
    assert reps[(B64, (64, 64))] == 1
    assert reps[(_slice(1, B64), (16,))] > 1


# ------------------------------------------------------------ shared banks
def _cutlass_bank(r, c, rows, swizzle, bits):
    """CUDA's 32/64/128B swizzle (CUTLASS Swizzle<B, 4, 3>) on the byte address of a TMA-box layout."""
    width = swizzle * 8 // bits
    box, col = divmod(c, width)
    byte = ((box * rows + r) * width + col) * bits // 8
    b = {32: 1, 64: 2, 128: 3}[swizzle]
    byte ^= ((byte >> 7) & ((1 << b) - 1)) << 4
    return byte // 4 % 32


def _classic_swizzle_bank(idx, shape, vec, per_phase, max_phase, order, bits):
    """Triton's documented swizzle: XOR the vec-group of a row with (row // perPhase) % maxPhase."""
    col_dim, row_dim = order[0], order[1]
    r, c = idx[row_dim], idx[col_dim]
    n_cols = shape[col_dim]
    phase = (r // per_phase) % max_phase
    col = ((c // vec) ^ phase) % max(1, n_cols // vec) * vec + c % vec
    return (r * n_cols + col) * bits // 8 // 4 % 32


@pytest.mark.parametrize("swizzle,bits,shape", [
    (128, 16, [64, 64]), (128, 16, [128, 128]), (64, 16, [64, 32]), (32, 16, [16, 16]),
    (128, 8, [32, 256]), (64, 32, [8, 64]), (128, 32, [256, 64]),
])
def test_nvmma_shared_banks(swizzle, bits, shape):
    enc = decode_encoding(f"#ttg.nvmma_shared<{{swizzlingByteWidth = {swizzle}, transposed = false, "
                          f"elementBitWidth = {bits}}}>")
    got = enc.banks(shape, bits)
    assert len(got) == shape[0] * shape[1]
    rows = min(shape[0], 256)
    for (r, c), bank in got.items():
        assert bank == _cutlass_bank(r, c, rows, swizzle, bits), (r, c)
    # A bijection onto the allocation: no two elements share an address.
    offs = enc.offsets(shape, bits)
    assert sorted(offs.values()) == list(range(shape[0] * shape[1]))


def test_transposed_nvmma_shared_swaps_roles():
    enc = decode_encoding("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>")
    got = enc.banks([64, 32], 16)
    for (r, c), bank in got.items():
        assert bank == _cutlass_bank(c, r, 32, 128, 16)


@pytest.mark.parametrize("vec,per_phase,max_phase,order,shape,bits", [
    (8, 2, 4, [1, 0], [64, 64], 16), (8, 4, 2, [0, 1], [32, 64], 16), (4, 1, 8, [1, 0], [16, 32], 32),
    (1, 1, 1, [1, 0], [8, 8], 32), (16, 1, 8, [1, 0], [32, 128], 8),
])
def test_swizzled_shared_banks(vec, per_phase, max_phase, order, shape, bits):
    enc = decode_encoding(f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, maxPhase = {max_phase}, "
                          f"order = {order}}}>")
    got = enc.banks(shape, bits)
    for idx, bank in got.items():
        assert bank == _classic_swizzle_bank(idx, shape, vec, per_phase, max_phase, order, bits), idx


@pytest.mark.parametrize("entry", [e for e in SHARED_SAMPLES if "shared<" in e["encoding"]],
                         ids=lambda e: _shape_id(e["encoding"], e["shape"]))
def test_sample_shared_encodings_place_every_element(entry):
    enc = decode_encoding(entry["encoding"])
    rank = len(getattr(enc, "order", None) or (0, 1))
    shape = entry["shape"][-rank:]  # drop the pipelining buffer dim
    bits = entry["element_bits"] or 16
    offs = enc.offsets(shape, bits)
    assert sorted(offs.values()) == list(range(len(offs)))
    banks = enc.banks(shape, bits)
    if isinstance(enc, NvmmaSharedEncoding) and not enc.transposed:
        assert all(b == _cutlass_bank(r, c, shape[0], enc.swizzling_byte_width, bits) for (r, c), b in banks.items())
    elif isinstance(enc, SwizzledSharedEncoding) and len(shape) == 2:
        assert all(b == _classic_swizzle_bank(i, shape, enc.vec, enc.per_phase, enc.max_phase, enc.order, bits)
                   for i, b in banks.items())


def test_legacy_leading_offset_shared_is_the_nvmma_swizzle():
    old = decode_encoding("#triton_gpu.shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0], hasLeadingOffset = true}>")
    new = decode_encoding("#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>")
    assert old.banks([64, 64], 16) == new.banks([64, 64], 16)


def test_padded_shared_offsets():
    enc = decode_encoding("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 64]}>")
    offs = enc.offsets([16, 64], 32)
    assert offs[(0, 31)] == 31 and offs[(0, 32)] == 36 and offs[(1, 0)] == 72
    assert enc.banks([16, 64], 32)[(0, 32)] == 4


def test_shared_errors_are_layout_errors():
    enc = decode_encoding("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>")
    with pytest.raises(LayoutError):
        enc.banks([8, 32], 16)  # narrower than one 128-byte swizzle row
    with pytest.raises(LayoutError):
        enc.banks([8, 48], 16)


# -------------------------------------------------------- never raises
# decode_encoding's guard turns any exception into an UnknownEncoding, so outside the
# strict mode "never raises" holds whatever the decoder does. These tests run it
# strict: a decoder bug raises here instead of passing as a layout it did not know.
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_decode_never_raises_on_random_text(text):
    with text_guard.strict():
        enc = decode_encoding(text)
        assert isinstance(enc, Encoding)
        if not text.strip().startswith("#"):
            assert isinstance(enc, UnknownEncoding) and enc.reason
        enc.describe()
        enc.fields()


VALID_TEXTS = sorted({e["encoding"] for e in SAMPLES})


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(VALID_TEXTS), st.integers(0, 400), st.integers(0, 400), st.text(max_size=5))
def test_decode_never_raises_on_mangled_layouts(text, cut, cut2, junk):
    lo, hi = sorted((cut % (len(text) + 1), cut2 % (len(text) + 1)))
    with text_guard.strict():
        assert not isinstance(decode_encoding(text, {"#x": text}), UnknownEncoding)  # the unmangled text decodes
        for mangled in (text[:lo], text[:lo] + junk + text[hi:], text[lo:], text.replace("[", junk)):
            for aliases in (None, {"#x": mangled}):
                enc = decode_encoding(mangled, aliases)
                assert isinstance(enc, Encoding)
                if isinstance(enc, UnknownEncoding):
                    assert enc.reason and enc.raw == mangled
                enc.describe()
                enc.fields()


def test_a_decoder_bug_raises_in_the_strict_mode_only(monkeypatch):
    from irscope.ir.layouts import decode

    def bug(*args):
        raise IndexError("a decoder bug")

    monkeypatch.setattr(decode, "_decode_cached", bug)
    text = VALID_TEXTS[0]
    enc = decode_encoding(text)
    assert isinstance(enc, UnknownEncoding) and enc.raw == text and enc.reason == "could not decode"
    with text_guard.strict(), pytest.raises(IndexError):
        decode_encoding(text)


@pytest.mark.parametrize("text", [
    "", "#", "#ttg.", "#ttg.blocked", "#ttg.blocked<{}>", "#ttg.blocked<{sizePerThread = [1, 8]", "#foo.bar<{}>",
    "#ttg.slice<{dim = 1}>", "#ttg.blocked<{sizePerThread = 1, threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
    "[" * 5000, "#ttg.linear<{register = " + "[" * 3000 + "}>", "#blocked", "tensor<16xf32>", None, 42,
])
def test_garbage_is_unknown(text):
    enc = decode_encoding(text, {"#blocked": "#blocked"})
    assert isinstance(enc, UnknownEncoding) and enc.reason
    assert enc.describe().startswith("unknown encoding")


# ------------------------------------------- the flat-layout and int-list fast paths
def _decode_ways(text: str, aliases: dict) -> tuple:
    """What the builder makes of ``text`` (an encoding, or the error it raises), with
    the fast paths (a flat layout at two regexes, an int list at one) and by the
    descent alone; no cache in the way."""
    import re

    from irscope.ir.layouts import attr_parser, decode

    def one():
        decode._decode_alias.cache_clear()  # parents decoded afresh each way
        try:
            return decode._Builder(aliases).decode(text, 0, frozenset())
        except (decode._Bad, decode.ParseError, RecursionError) as exc:
            return type(exc).__name__, str(exc)

    fast = one()
    saved = attr_parser._INT_LIST_RE, decode.flat_attr
    attr_parser._INT_LIST_RE = re.compile(r"(?!)")  # never matches: every list by the descent
    decode.flat_attr = lambda text: None  # every layout by the descent
    try:
        return fast, one()
    finally:
        attr_parser._INT_LIST_RE, decode.flat_attr = saved


def _descent_attr(text: str):
    """What the descent reads of a whole text: its Attr/Ref, or None."""
    from irscope.ir.layouts.attr_parser import ParseError, Parser

    parser = Parser(text)
    try:
        node = parser.value(0) if parser.peek() == "#" else None
        return node if node is not None and parser.peek() == "" else None
    except (ParseError, RecursionError):
        return None


def _flat_agrees(text: str) -> bool:
    from irscope.ir.layouts.attr_parser import flat_attr

    got = flat_attr(text)
    return got is None or repr(got) == repr(_descent_attr(text))  # repr: True and 1 differ


def test_flat_layouts_read_at_two_regexes_as_the_descent_reads_them():
    texts = list(VALID_TEXTS) + [t for _, _, a in FIXTURE_ALIASES for t in a.values()]
    from irscope.ir.layouts.attr_parser import flat_attr

    assert all(_flat_agrees(t) for t in texts)
    assert sum(flat_attr(t) is not None for t in texts) > 40


def test_int_lists_read_at_one_regex_decode_as_the_descent_does():
    texts = [(t, {}) for t in VALID_TEXTS] + [(t, a) for _, _, a in FIXTURE_ALIASES for t in a.values()]
    decoded = 0
    for text, aliases in texts:
        fast, slow = _decode_ways(text, aliases)
        assert fast == slow, text
        decoded += isinstance(fast, Encoding)
    assert decoded > 50


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(VALID_TEXTS), st.lists(st.tuples(st.integers(0, 400), st.sampled_from(
    ["[", "]", ",", " ", "-", "+", "1", "\n", "[]", "[1]", ": i32", "{", "}", "]]", "[[", "<", ">", "#", "#a",
     "true", "= ", ".", "x = 1, ", ", ", "é", "\u0663"])), max_size=4))
def test_int_lists_read_at_one_regex_decode_as_the_descent_does_on_garbled_text(text, edits):
    for pos, piece in edits:
        pos %= len(text) + 1
        text = text[:pos] + piece + text[pos:]
    fast, slow = _decode_ways(text, {})
    assert fast == slow, text
    assert _flat_agrees(text), text
