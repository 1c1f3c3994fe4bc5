"""The checked-in H200 profiles attach where their launches ran, with their stamps (the
shared fixture, tests/conftest_profiles.py, that every profile test reads)."""

from __future__ import annotations

import pytest

import irscope
from conftest_profiles import CAPTURES, KERNELS
from irscope.profiles.ncu_source import parse_ncu_source

# Profiled launches of the Triton kernel in each sass.csv (ncu -c 6 over every kernel of the
# script; the torch kernels' launches are the rest): matmul's two both ran config 1.
NCU_LAUNCHES = {"vector_add": (1,), "fused_softmax": (1,), "jit_helper_call": (1,), "layer_norm": (1,),
                "flash_attention": (1, 1), "matmul_autotune": (2,)}


@pytest.mark.parametrize("name", list(KERNELS))
def test_ncu_profiles_land_on_the_captures_that_ran(profiled, name):
    pb = profiled.ncu(name)
    assert pb.captures == CAPTURES[name]
    blocks = [b for b in parse_ncu_source(pb.sass_csv.read_text()) if b.kernel == pb.kernel]
    with irscope.open(pb.path) as b:
        stamps = [s for c in b.captures() for s in c.profiles()]
    assert [s.id for s in stamps] == list(pb.profile_ids)
    assert tuple(s.launches for s in stamps) == NCU_LAUNCHES[name]
    # Nothing lost on the way in: the profiles hold every sample of the kernel's launches.
    assert sum(s.total_samples for s in stamps) == sum(bl.total_samples for bl in blocks) > 0
    assert {(s.tool, s.gpu, s.tool_version, s.date) for s in stamps} == {
        ("ncu", "NVIDIA H200", "2025.3.1.0", "2026-12-03T16:40:00Z")}


@pytest.mark.parametrize("name", list(KERNELS))
def test_proton_profile_is_on_the_first_capture(profiled, name):
    pb = profiled.proton(name)
    with irscope.open(pb.path) as b:
        caps = b.captures()
        (stamp,) = caps[0].profiles()
        assert all(c.profiles() == () for c in caps[1:])
    assert stamp.id == pb.profile_ids[0] and stamp.tool == "proton" and stamp.total_samples > 0
    assert stamp.kernel == KERNELS[name]
