"""A bundle captured on an NVIDIA H200 (real launches, torch.compile; see
docs/gpu-check.md) reads here with no GPU, and is upgraded in place when a new
capture is added to it (it was written with bundle schema 1)."""

import shutil

import pytest

from conftest import DATA, SAMPLES, irscope, ls_json
from irscope.store.bundle import SCHEMA_VERSION

H200 = DATA / "h200_torch_compile.irscope"


def test_inductor_kernels_with_driver_resources():
    caps = ls_json(H200)
    assert [c["kernel"] for c in caps] == [
        "triton_per_fused_native_layer_norm_0",
        "triton_poi_fused_gelu_1",
        "triton_poi_fused_gelu_1",
        "triton_per_fused__softmax_add_addmm_exp_prepare_softmax_online_sub_2",
    ]
    assert [c["registers"] for c in caps] == [32, 27, 18, 24]
    assert all(c["resource_source"] == "driver" and c["mode"] == "gpu" for c in caps)
    assert all(c["triton_version"] == "3.6.0" and c["target"] == "sm_90" for c in caps)
    sass = irscope("cat", H200, "triton_poi_fused_gelu_1", "--stage", "sass", "--variant", "1", check=True).stdout
    assert "//## File" in sass


def test_passes_of_a_schema_1_bundle():
    p = irscope("passes", H200, "triton_poi_fused_gelu_1", "--json", check=True)
    assert '"seconds": null' in p.stdout  # schema 1 kept no pass times


@pytest.mark.slow
def test_adding_to_a_schema_1_bundle_upgrades_it(tmp_path):
    copy = tmp_path / "old.irscope"
    shutil.copy(H200, copy)
    irscope("run", SAMPLES / "vector_add.py", "-o", copy, "-q", check=True)
    caps = ls_json(copy)
    assert len(caps) == 5 and caps[-1]["kernel"] == "add_kernel"
    import sqlite3

    con = sqlite3.connect(copy)
    assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert {r[1] for r in con.execute("PRAGMA table_info(captures)")} >= {"shared_static"}
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
