"""The cross-version and cross-target workflow of the README, for real: the matmul and
attention samples captured with Triton 3.2, 3.6 (the default) and 3.9 into one
bundle through ``--python``, and matmul for sm_80 and sm_90, then ``irscope diff``.
Every expected difference below was read off these captures by hand once
(2026-12-01) and is what the compilers really changed."""

import json
from collections import Counter

import pytest

from conftest import SAMPLES, VENVS, irscope

pytestmark = pytest.mark.slow

PYTHONS = {"3.2.0": VENVS / "triton-3.2" / "bin" / "python", "3.6.0": None,
           "3.9.0": VENVS / "triton-3.9" / "bin" / "python"}


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """One bundle: matmul_autotune (4 configs) and flash_attention (2) per version."""
    out = tmp_path_factory.mktemp("versions") / "v.irscope"
    for py in PYTHONS.values():
        for sample in ("matmul_autotune", "flash_attention"):
            extra = ["--python", py] if py else []
            irscope("run", SAMPLES / f"{sample}.py", *extra, "-o", out, "-q", check=True)
    caps = json.loads(irscope("ls", out, "--json", check=True).stdout)
    ids = {}
    for c in caps:
        ids.setdefault((c["kernel"], c["triton_version"]), []).append(c["id"])
    return out, ids


@pytest.fixture(scope="module")
def targets(tmp_path_factory):
    out = tmp_path_factory.mktemp("targets") / "t.irscope"
    irscope("run", SAMPLES / "matmul_autotune.py", "--target", "sm_80", "--target", "sm_90", "-o", out, "-q",
            check=True)
    caps = json.loads(irscope("ls", out, "--json", check=True).stdout)
    return out, {(c["target"], i % 4): c["id"] for i, c in enumerate(caps)}


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
    assert _mix(d, "ptx", "conversion") == (144, 81) and _changed(d, "registers") == (206, 207)
    a = _diff(bundle, ids[("_attn_fwd", "3.2.0")][0], ids[("_attn_fwd", "3.6.0")][0])
    assert _changed(a, "registers") == (172, 211)
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
    assert len(doc["matrices"]) == 6  # 4 matmul configs and 2 attention variants, each on 3 versions
    m = doc["matrices"][0]
    assert [s["triton_version"] for s in m["sides"]] == ["3.2.0", "3.6.0", "3.9.0"]
    regs = next(r for r in m["rows"] if r["name"] == "registers")
    assert regs["values"] == [206, 207, 208] and regs["varies"]
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
