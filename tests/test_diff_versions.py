"""The cross-version and cross-target workflow of the README, for real: the matmul and
attention samples captured with Triton 3.2, 3.6 (the default) and 3.9 into one
bundle through ``--python``, and matmul for sm_80 and sm_90, then ``irscope diff``.
The bundle is the session's shared capture of every sample kernel
(``conftest_shared.samples_by_version``: each Triton, sm_90 and sm_80). Every expected
difference below was read off these captures by hand once (2026-12-01) and is what
the compilers really changed."""

import json
from collections import Counter

import pytest

from conftest import irscope

pytestmark = pytest.mark.slow

VERSION_NAMES = ("3.2.0", "3.6.0", "3.9.0")


def _listing(bundle):
    return json.loads(irscope("ls", bundle, "--json", check=True).stdout)


@pytest.fixture(scope="module")
def versions(version_samples):
    """The bundle and its sm_90 capture ids by (kernel, Triton version), in capture order:
    matmul_autotune gives 4 configs and flash_attention 2 per version."""
    ids = {}
    for c in _listing(version_samples):
        if c["target"] == "sm_90":
            ids.setdefault((c["kernel"], c["triton_version"]), []).append(c["id"])
    assert all(len(ids[("matmul_kernel", v)]) == 4 and len(ids[("_attn_fwd", v)]) == 2 for v in VERSION_NAMES)
    return version_samples, ids


@pytest.fixture(scope="module")
def targets(version_samples):
    """Triton 3.6's matmul_kernel ids by (target, config index)."""
    caps = [c for c in _listing(version_samples) if c["kernel"] == "matmul_kernel" and c["triton_version"] == "3.6.0"]
    ids = {}
    for c in caps:
        ids[(c["target"], sum(1 for t, _ in ids if t == c["target"]))] = c["id"]
    assert sorted(ids) == [(t, i) for t in ("sm_80", "sm_90") for i in range(4)]
    return version_samples, ids


def _diff(bundle, a, b, *extra):
    return json.loads(irscope("diff", f"{bundle}:#{a}", f"{bundle}:#{b}", "--json", *extra, check=True).stdout)


def _changed(d, name):
    got = [(m["before"], m["after"]) for m in d["metadata"] + d["resources"] if m["name"] == name]
    return got[0] if got else None


def _mix(d, stage, cls):
    c = next(c for c in d["instruction_mix"][stage]["classes"] if c["name"] == cls)
    return c["before"], c["after"]


def _ops(d, stage):
    return Counter((c["kind"], c["op"]) for c in d["stages"][stage]["changes"])


def test_matmul_3_6_to_3_9(versions):
    bundle, ids = versions
    d = _diff(bundle, ids[("matmul_kernel", "3.6.0")][0], ids[("matmul_kernel", "3.9.0")][0])
    # TTGIR: 3.9 adds one async-shared fence before the wgmma; the return is located elsewhere.
    assert _ops(d, "ttgir") == Counter({("added", "ttng.fence_async_shared"): 1, ("changed", "tt.return"): 1})
    assert _changed(d, "registers") == (207, 208)
    assert _mix(d, "ptx", "mma") == (4, 4) and _mix(d, "ptx", "conversion") == (81, 87)


def test_matmul_and_attention_3_2_to_3_6(versions):
    bundle, ids = versions
    d = _diff(bundle, ids[("matmul_kernel", "3.2.0")][0], ids[("matmul_kernel", "3.6.0")][0])
    ops = _ops(d, "ttgir")
    # 3.3+ prints ttg. for triton_gpu. (not a change); memdesc_subview became memdesc_index.
    assert ops[("removed", "triton_gpu.memdesc_subview")] == 8 and ops[("added", "ttg.memdesc_index")] == 8
    # 204, not the 206 of a process whose first compile it is: Triton 3.2 lowers the first
    # kernel of a process with i64 shared-memory indices, later ones with i32 (same TTGIR);
    # in the shared bundle, block_ptr_matmul is 3.2's first compile.
    assert _mix(d, "ptx", "conversion") == (144, 81) and _changed(d, "registers") == (204, 207)
    a = _diff(bundle, ids[("_attn_fwd", "3.2.0")][0], ids[("_attn_fwd", "3.6.0")][0])
    assert _changed(a, "registers") == (171, 211)  # 3.2: 172 as a process's first compile (above)
    assert _mix(a, "sass", "shared_store") == (44, 18) and _mix(a, "sass", "barrier") == (55, 23)


def test_attention_3_6_to_3_9(versions):
    bundle, ids = versions
    d = _diff(bundle, ids[("_attn_fwd", "3.6.0")][0], ids[("_attn_fwd", "3.9.0")][0])
    assert _changed(d, "registers") == (211, 221)
    assert _ops(d, "ttgir")[("added", "ttng.fence_async_shared")] == 1
    assert _mix(d, "ptx", "conversion") == (79, 92)


def test_version_matrix(versions):
    bundle, ids = versions
    doc = json.loads(irscope("diff", bundle, "--by", "triton_version", "--json", check=True).stdout)
    # The bundle holds every sample on two targets: these are the matrices of matmul and attention on sm_90.
    wanted = {i for k in ("matmul_kernel", "_attn_fwd") for v in VERSION_NAMES for i in ids[(k, v)]}
    mine = [m for m in doc["matrices"] if {s["capture_id"] for s in m["sides"]} & wanted]
    assert len(mine) == 6  # 4 matmul configs and 2 attention variants, each on 3 versions
    for m in mine:
        assert [s["triton_version"] for s in m["sides"]] == list(VERSION_NAMES)
        assert {s["capture_id"] for s in m["sides"]} <= wanted
    m = next(m for m in mine if m["sides"][1]["capture_id"] == ids[("matmul_kernel", "3.6.0")][0])
    regs = next(r for r in m["rows"] if r["name"] == "registers")
    assert regs["values"] == [204, 207, 208] and regs["varies"]  # 3.2: 204 after a first compile (above)
    text = irscope("diff", bundle, "--by", "triton_version", check=True).stdout
    assert "3.2.0" in text and "registers" in text


def test_two_bundles_paired_across_versions(versions, tmp_path):
    bundle, ids = versions
    doc = json.loads(irscope("diff", f"{bundle}:#{ids[('matmul_kernel', '3.6.0')][0]}",
                             f"{bundle}:#{ids[('matmul_kernel', '3.9.0')][0]}", "--json", check=True).stdout)
    assert doc["passes"]["stages"]  # 3.9 renamed MLIR passes: paired by argument, not reported as new
    ttgir = next(s for s in doc["passes"]["stages"] if s["stage"] == "ttgir")
    assert not {p["argument"] for p in ttgir["added"]} & {"canonicalize", "cse"}


def test_sm80_against_sm90(targets):
    bundle, ids = targets
    d = _diff(bundle, ids[("sm_80", 0)], ids[("sm_90", 0)])
    mma = next(c for c in d["stages"]["ttgir"]["changes"] if c["op"] == "#mma")
    assert "layout: versionMajor 2 -> 3" in mma["details"]
    shared = next(c for c in d["stages"]["ttgir"]["changes"] if c["op"] == "#shared")
    assert shared["details"] == ["layout: kind swizzled_shared -> nvmma_shared"]
    ops = _ops(d, "ttgir")
    assert ops[("removed", "tt.dot")] == 1 and ops[("added", "ttng.warp_group_dot")] == 1
    assert _mix(d, "ptx", "mma") == (128, 4)  # 128 mma.sync become 4 wgmma.mma_async
    assert _changed(d, "registers") == (255, 207) and _changed(d, "shared") == (98304, 147456)
    assert d["stages"]["ttir"]["changes"] == []  # the target changes nothing before TTGIR
