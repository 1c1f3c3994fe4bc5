"""Occupancy model: hand-computed cases from the documented rules, and the H200 driver's figures.

``tests/data/h200_occupancy.json`` is the output of ``scripts/gpu_occupancy_check.py`` on an
NVIDIA H200 (see docs/gpu-check.md): every sample kernel's ``cuOccupancyMaxActiveBlocksPerMultiprocessor``
plus two sweeps (block sizes, dynamic shared sizes at the model's boundaries). The model must
give the driver's number for every one of them.
"""

import json
from pathlib import Path

import pytest

from irscope.core.occupancy import LIMIT_PRECEDENCE, ArchLimits, Occupancy, limits_for, occupancy
from irscope.errors import IrscopeError

H200 = json.loads((Path(__file__).resolve().parent / "data" / "h200_occupancy.json").read_text())
KIB = 1024


# --- the tables -------------------------------------------------------------------------------

@pytest.mark.parametrize("target, threads, blocks, smem_sm, smem_block", [
    ("sm_80", 2048, 32, 164 * KIB, 163 * KIB),
    ("sm_86", 1536, 16, 100 * KIB, 99 * KIB),
    ("sm_89", 1536, 24, 100 * KIB, 99 * KIB),
    ("sm_90", 2048, 32, 228 * KIB, 227 * KIB),
    ("sm_100", 2048, 32, 228 * KIB, 227 * KIB),
    ("sm_120", 1536, 32, 100 * KIB, 99 * KIB),
])
def test_cuda_table(target, threads, blocks, smem_sm, smem_block):
    lim = limits_for(target)
    assert (lim.vendor, lim.warp_size, lim.max_threads_per_sm, lim.max_warps_per_sm) == ("nvidia", 32, threads,
                                                                                        threads // 32)
    assert (lim.max_blocks_per_sm, lim.shared_per_sm, lim.shared_per_block_optin) == (blocks, smem_sm, smem_block)
    assert (lim.registers_per_sm, lim.register_alloc_unit, lim.max_registers_per_thread) == (65536, 256, 255)
    assert (lim.reserved_shared_per_block, lim.shared_alloc_granularity) == (1024, 128)
    assert "Compute Capabilit" in lim.rule


@pytest.mark.parametrize("target, lds, granule", [("gfx942", 64 * KIB, 512), ("gfx950", 160 * KIB, 1280)])
def test_cdna_table(target, lds, granule):
    lim = limits_for(target)
    assert (lim.vendor, lim.warp_size, lim.subpartitions, lim.max_warps_per_sm) == ("amd", 64, 4, 32)
    assert (lim.shared_per_sm, lim.shared_alloc_granularity, lim.reserved_shared_per_block) == (lds, granule, 0)
    # 512 unified VGPRs per SIMD lane, granule 8, in lane registers (x64).
    assert (lim.registers_per_sm, lim.register_alloc_unit, lim.max_registers_per_thread) == (4 * 512 * 64, 512, 512)
    assert "LLVM AMDGPU" in lim.rule


@pytest.mark.parametrize("spelling, canonical", [
    ("sm_90", "sm_90"), ("sm_90a", "sm_90"), ("SM_90A", "sm_90"), ("cuda:90", "sm_90"), ("sm90", "sm_90"),
    ("sm_100a", "sm_100"), ("sm_120f", "sm_120"), ("compute_86", "sm_86"),
    ("gfx942", "gfx942"), ("gfx942:sramecc+:xnack-", "gfx942"), ("hip:gfx950", "gfx950"),
])
def test_target_spellings(spelling, canonical):
    assert limits_for(spelling).target == canonical


@pytest.mark.parametrize("target", ["sm_75", "sm_87", "sm_101", "gfx90a", "gfx1100", "", "cpu", "sm_"])
def test_unknown_target(target):
    assert limits_for(target) is None
    assert occupancy(target, num_warps=4, registers=32, shared_bytes=0) is None


def test_unknown_registers_give_none():
    assert occupancy("sm_90", num_warps=4, registers=None, shared_bytes=0) is None


def test_limits_are_frozen():
    lim = limits_for("sm_90")
    assert isinstance(lim, ArchLimits)
    with pytest.raises(AttributeError):
        lim.max_blocks_per_sm = 1  # type: ignore[misc]


# --- hand-computed cases ----------------------------------------------------------------------

def occ(target, warps, regs, shared) -> Occupancy:
    return occupancy(target, num_warps=warps, registers=regs, shared_bytes=shared)


def test_sm90_registers_and_shared_tie():
    # 168 regs x 32 = 5376 per warp (a multiple of 256); 16384 // 5376 = 3 warps per sub-partition,
    # 12 per SM -> 1 block of 8 warps. Shared: 147456 + 1024 reserved = 148480 -> 233472 // 148480 = 1.
    o = occ("sm_90", 8, 168, 147456)
    assert (o.blocks_per_sm, o.warps_per_sm, o.by_registers, o.by_shared, o.by_warps, o.by_blocks) == (1, 8, 1, 1, 8,
                                                                                                       32)
    assert o.limited_by == "registers" and o.tied == ("registers", "shared")
    assert o.shared_allocated == 148480


def test_sm90_shared_binds():
    # 50000 + 1024 = 51024 -> rounded to 128: 51072; 233472 // 51072 = 4. Registers: 32 x 32 = 1024
    # per warp, 16 per sub-partition -> 64 warps -> 16 blocks of 4 warps.
    o = occ("sm_90", 4, 32, 50000)
    assert (o.blocks_per_sm, o.limited_by, o.by_registers, o.shared_allocated) == (4, "shared", 16, 51072)


def test_sm90_warps_bind_and_win_ties():
    # 26 regs -> 832 -> 1024 per warp -> 16 blocks of 4 warps, as many as the 64 warp slots allow.
    o = occ("sm_90", 4, 26, 0)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limited_by, o.tied) == (16, 64, "warps", ("warps", "registers"))
    assert o.fraction == 1.0


def test_sm90_blocks_bind():
    # 1 warp of 16 regs: registers allow 128 blocks, warps 64, shared (1 KiB reserved) 228; the cap is 32.
    o = occ("sm_90", 1, 16, 0)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limited_by, o.by_warps, o.by_shared) == (32, 32, "blocks", 64, 228)


def test_sm90_registers_bind():
    # 96 regs -> 3072 per warp -> 5 per sub-partition -> 20 warps -> 10 blocks of 2 warps.
    o = occ("sm_90", 2, 96, 0)
    assert (o.blocks_per_sm, o.limited_by) == (10, "registers")


def test_register_allocation_is_per_warp_in_256_units():
    # 33..40 regs all allocate 1280 per warp: 12 warps per sub-partition, 48 per SM, 12 blocks of 4.
    assert {occ("sm_90", 4, r, 0).blocks_per_sm for r in range(33, 41)} == {12}
    assert occ("sm_90", 4, 41, 0).blocks_per_sm == 10  # 1536 per warp: 10 per sub-partition -> 40 warps


def test_register_hardware_check_rounds_warps_to_four():
    # 255 regs -> 8192 per warp: a block may have 8 warps (65536); 3 warps count as 4 for the check.
    assert occ("sm_90", 8, 255, 0).blocks_per_sm == 1
    assert occ("sm_90", 3, 255, 0).blocks_per_sm == 2  # 2 warps per sub-partition -> 8 per SM -> 2 blocks of 3
    o = occ("sm_90", 9, 255, 0)  # 12 x 8192 > 65536: cannot launch
    assert (o.blocks_per_sm, o.limited_by) == (0, "registers")
    assert occ("sm_90", 1, 256, 0).by_registers == 0  # more than a thread may have


def test_too_many_threads_or_too_much_shared():
    assert occ("sm_90", 33, 16, 0).blocks_per_sm == 0 and occ("sm_90", 33, 16, 0).limited_by == "warps"
    assert occ("sm_90", 4, 32, 227 * KIB).blocks_per_sm == 1
    o = occ("sm_90", 4, 32, 227 * KIB + 1)
    assert (o.blocks_per_sm, o.limited_by) == (0, "shared")


def test_shared_granularity_and_reserve():
    # 1 block of 233472 bytes exactly: 232448 + 1024 reserved. 128-byte steps around 2 blocks.
    assert occ("sm_90", 1, 16, 232448).blocks_per_sm == 1
    half = 233472 // 2 - 1024  # 115712: 116736 allocated, twice is 233472
    assert occ("sm_90", 1, 16, half).by_shared == 2
    assert occ("sm_90", 1, 16, half + 1).by_shared == 1
    assert occ("sm_90", 1, 16, half - 127).shared_allocated == half + 1024


def test_shared_none_counts_as_zero():
    assert occ("sm_90", 4, 32, None) == occ("sm_90", 4, 32, 0)


def test_sm86_shared_binds():
    # 64 regs -> 2048 per warp -> 8 per sub-partition -> 32 warps -> 8 blocks; warps 48 // 4 = 12;
    # shared 20480 + 1024 = 21504 -> 102400 // 21504 = 4.
    o = occ("sm_86", 4, 64, 20 * KIB)
    assert (o.blocks_per_sm, o.limited_by, o.by_registers, o.by_warps) == (4, "shared", 8, 12)


def test_sm86_and_sm89_block_caps():
    assert occ("sm_86", 1, 16, 0).blocks_per_sm == 16
    assert occ("sm_89", 1, 16, 0).blocks_per_sm == 24
    assert occ("sm_89", 1, 16, 0).limited_by == "blocks"


def test_sm80_shared_binds():
    # 100 KiB + 1 KiB = 103424 -> 167936 // 103424 = 1; registers: 128 x 32 = 4096 -> 16 warps -> 2 blocks.
    o = occ("sm_80", 8, 128, 100 * KIB)
    assert (o.blocks_per_sm, o.limited_by, o.by_registers) == (1, "shared", 2)


def test_sm100_like_sm90_and_sm120_like_sm89_warps():
    assert occ("sm_100", 8, 168, 147456).blocks_per_sm == 1
    assert occ("sm_100", 4, 32, 227 * KIB + 1).blocks_per_sm == 0
    o = occ("sm_120", 8, 32, 0)  # 48 warps // 8 = 6
    assert (o.blocks_per_sm, o.warps_per_sm, o.limited_by) == (6, 48, "warps")
    assert occ("sm_120", 4, 32, 99 * KIB + 1).blocks_per_sm == 0


def test_gfx942_vgprs_bind():
    # 128 VGPRs: 512 // 128 = 4 waves per SIMD, 16 per CU -> 4 workgroups of 4 waves.
    o = occ("gfx942", 4, 128, 0)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limited_by, o.by_warps, o.by_blocks) == (4, 16, "registers", 8, 16)
    assert occ("gfx942", 4, 121, 0).blocks_per_sm == 4  # 121 rounds to 128 (granule 8)
    assert occ("gfx942", 4, 129, 0).blocks_per_sm == 3  # 136 -> 3 waves per SIMD


def test_gfx942_lds_binds_and_has_no_reserve():
    # 20000 B -> 40 granules of 512 = 20480 -> 65536 // 20480 = 3.
    o = occ("gfx942", 4, 64, 20000)
    assert (o.blocks_per_sm, o.limited_by, o.shared_allocated) == (3, "shared", 20480)
    assert occ("gfx942", 4, 64, 64 * KIB).blocks_per_sm == 1
    assert occ("gfx942", 4, 64, 64 * KIB + 1).blocks_per_sm == 0
    # No LDS at all: the LDS limit never binds.
    o = occ("gfx942", 8, 64, 0)
    assert (o.blocks_per_sm, o.limited_by, o.tied) == (4, "warps", ("warps", "registers"))


def test_gfx942_single_wave_workgroups_skip_the_barrier_cap():
    o = occ("gfx942", 1, 32, 0)
    assert (o.blocks_per_sm, o.by_blocks, o.limited_by) == (32, 32, "warps")
    assert occ("gfx942", 2, 32, 0).by_blocks == 16


def test_gfx950_lds_granule_1280():
    # 100000 B -> 79 x 1280 = 101120 -> 163840 // 101120 = 1; 256 VGPRs allow 2.
    o = occ("gfx950", 4, 256, 100000)
    assert (o.blocks_per_sm, o.limited_by, o.by_registers, o.shared_allocated) == (1, "shared", 2, 101120)
    assert occ("gfx950", 4, 64, 64 * KIB).by_shared == 2  # 66560 allocated; gfx942 would fit only one


def test_threads_per_warp_must_match_the_target():
    assert occupancy("gfx942", num_warps=4, registers=128, shared_bytes=0, threads_per_warp=64).blocks_per_sm == 4
    assert occupancy("sm_90", num_warps=4, registers=26, shared_bytes=0, threads_per_warp=32).blocks_per_sm == 16
    with pytest.raises(IrscopeError):
        occupancy("gfx942", num_warps=4, registers=64, shared_bytes=0, threads_per_warp=32)


@pytest.mark.parametrize("kwargs", [dict(num_warps=0, registers=32, shared_bytes=0),
                                    dict(num_warps=4, registers=-1, shared_bytes=0),
                                    dict(num_warps=4, registers=32, shared_bytes=-1)])
def test_impossible_inputs_raise(kwargs):
    with pytest.raises(IrscopeError):
        occupancy("sm_90", **kwargs)


def test_json_shapes():
    o = occ("sm_90", 8, 168, 147456)
    assert o.to_json() == {"blocks_per_sm": 1, "warps_per_sm": 8, "limited_by": "registers"}
    d = o.detail_json()
    assert {"by_registers", "by_shared", "by_warps", "by_blocks", "rule", "tied", "fraction"} <= set(d)
    assert d["tied"] == ["registers", "shared"] and d["fraction"] == 0.125
    json.dumps(d)
    assert set(LIMIT_PRECEDENCE) == {"registers", "shared", "warps", "blocks"}


# --- the H200's driver ------------------------------------------------------------------------

def test_h200_device_matches_the_sm90_table():
    assert H200["target"] == "sm_90" and "H200" in H200["device"]
    dev, lim = H200["driver_device_attrs"], limits_for("sm_90")
    assert dev["max_threads_per_multiprocessor"] == lim.max_threads_per_sm
    assert dev["max_blocks_per_multiprocessor"] == lim.max_blocks_per_sm
    assert dev["max_registers_per_multiprocessor"] == lim.registers_per_sm
    assert dev["max_registers_per_block"] == lim.registers_per_block
    assert dev["max_shared_memory_per_multiprocessor"] == lim.shared_per_sm
    assert dev["max_shared_memory_per_block_optin"] == lim.shared_per_block_optin
    assert dev["reserved_shared_memory_per_block"] == lim.reserved_shared_per_block
    assert dev["max_threads_per_block"] == lim.max_threads_per_block
    assert dev["warp_size"] == lim.warp_size


def test_h200_every_sample_kernel_matches():
    records = H200["kernels"]
    # 8 scripts: matmul has 4 autotune configs, attention 2 variants.
    assert len(records) == 12 and not H200["errors"]
    assert {r["kernel"] for r in records} == {
        "add_kernel", "softmax_kernel", "matmul_kernel", "_layer_norm_fwd_fused", "block_ptr_matmul_kernel",
        "histogram_kernel", "_attn_fwd", "bias_gelu_rowsum_kernel"}
    for r in records:
        ours = occupancy("sm_90", num_warps=r["num_warps"], registers=r["n_regs"],
                         shared_bytes=r["shared_dynamic"] + r["shared_static"])
        assert r["cuda_rc"] == 0
        assert ours.blocks_per_sm == r["cuda_blocks_per_sm"], r
        assert ours.limited_by == r["ours_limited_by"], r


def test_h200_sweeps_match():
    sweeps = H200["sweeps"]
    assert len(sweeps) > 500
    seen = set()
    for s in sweeps:
        ours = occupancy("sm_90", num_warps=s["num_warps"], registers=s["n_regs"],
                         shared_bytes=s["shared_dynamic"] + s["shared_static"])
        assert s["cuda_rc"] == 0
        assert ours.blocks_per_sm == s["cuda_blocks_per_sm"], s
        seen.add(ours.limited_by)
    assert seen == {"registers", "shared", "warps", "blocks"}  # every limit was checked where it binds


def test_h200_static_shared_is_zero_for_the_driver():
    # cuobjdump (what a compile-only capture records) shows the 1 KiB system reserve as static shared
    # for kernels that use shared memory; the driver reports 0, so a launch's shared is metadata.shared.
    for r in H200["kernels"]:
        assert r["shared_static"] == 0, r
        assert r["shared_cuobjdump"] == (0 if r["kernel"] == "add_kernel" else 1024), r
