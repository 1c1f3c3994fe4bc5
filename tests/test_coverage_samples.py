"""Every stage and every pass snapshot of every sample kernel parses with full
coverage: Triton 3.2, the default (3.6) and 3.9, on sm_80 and sm_90 (the session's
shared capture of the samples, ``conftest_shared.samples_by_version``)."""

import pytest

from conftest import ls_json
from conftest_shared import VERSION_PYTHONS

pytestmark = pytest.mark.slow

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


@pytest.mark.parametrize("version", sorted(VERSION_PYTHONS))
def test_samples_parse_fully(version_samples, version):
    from irscope.ir import ParseCache, parse_stage
    from irscope.store.bundle import Bundle

    out = version_samples
    caps = [c for c in ls_json(out) if c["triton_version"].rsplit(".", 1)[0] == version]
    kernels = {c["kernel"] for c in caps}
    expected = {"add_kernel", "softmax_kernel", "matmul_kernel", "_layer_norm_fwd_fused", "histogram_kernel",
                "_attn_fwd", "bias_gelu_rowsum_kernel"} | ({"block_ptr_matmul_kernel"} if version != "3.9" else set())
    assert expected <= kernels
    assert {c["target"] for c in caps} == {"sm_80", "sm_90"}
    cache = ParseCache()
    worst = []
    with Bundle.open(str(out)) as b:
        for c in caps:
            for stage in STAGES:
                if stage in c["stages"]:
                    cov = parse_stage(stage, b.stage_text(c["id"], stage), cache=cache).coverage
                    if cov < 1.0:
                        worst.append((c["kernel"], c["target"], stage, cov))
            seen = set()
            for p in b.passes(c["id"]):
                if p.blob in seen or p.kind != "mlir":
                    continue
                seen.add(p.blob)
                cov = parse_stage("mlir", b.text(p.blob), cache=cache).coverage
                if cov < 1.0:
                    worst.append((c["kernel"], c["target"], f"pass {p.seq} {p.argument}", cov))
    assert not worst, worst[:10]
