"""What each of Triton's tutorials launches, by target, counted by reading it.

Read by ``scripts/run_tutorials.py``. Keys are the tutorial's number ("01") and Triton's
minor version ("3.6"). A kernel counts once whatever its autotune configs and
specialisations; the comments say which path of the tutorial launches it.
"""

from __future__ import annotations

NVIDIA = ("sm_90", "sm_80")

EXPECTED: dict[tuple[str, str], dict[str, list[str]]] = {}
"""(tutorial, version) -> {target or "*": the kernels it launches there}."""

_LN = ["_layer_norm_fwd_fused", "_layer_norm_bwd_dx_fused", "_layer_norm_bwd_dwdb"]  # test_layer_norm runs backward
_ATTN = ["_attn_fwd", "_attn_bwd_preprocess", "_attn_bwd"]  # bench modes fwd and bwd (autograd backward)
for _v in ("3.0", "3.2", "3.6"):
    EXPECTED[("01", _v)] = {"*": ["add_kernel"]}
    EXPECTED[("02", _v)] = {"*": ["softmax_kernel"]}
    EXPECTED[("03", _v)] = {"*": ["matmul_kernel"]}  # autotuned; fp16, and fp8 on CUDA
    EXPECTED[("04", _v)] = {"*": ["_dropout", "_seeded_dropout"]}
    EXPECTED[("05", _v)] = {"*": _LN}
    EXPECTED[("06", _v)] = {"*": _ATTN}
    EXPECTED[("07", _v)] = {"*": ["asin_kernel"]}  # launched twice: default libdevice, then an explicit path
for _v in ("3.0", "3.2"):
    EXPECTED[("08", _v)] = {"*": ["grouped_matmul_kernel"]}
# 3.6: the TMA variant only where supports_tma() (CUDA, capability >= 9).
EXPECTED[("08", "3.6")] = {"sm_90": ["grouped_matmul_kernel", "grouped_matmul_tma_kernel"],
                           "*": ["grouped_matmul_kernel"]}
# 09: naive and persistent everywhere; the TMA kernels where capability >= 9.
EXPECTED[("09", "3.2")] = {"sm_90": ["matmul_kernel", "matmul_kernel_persistent", "matmul_kernel_tma_persistent",
                                     "matmul_kernel_device_tma_persistent"],
                           "*": ["matmul_kernel", "matmul_kernel_persistent"]}
EXPECTED[("09", "3.6")] = {"sm_90": ["matmul_kernel", "matmul_kernel_persistent", "matmul_kernel_tma",
                                     "matmul_kernel_tma_persistent", "matmul_kernel_descriptor_persistent"],
                           "*": ["matmul_kernel", "matmul_kernel_persistent"]}
EXPECTED[("11", "3.6")] = {"sm_90": ["add_kernel"]}  # validate() and the benchmark, with and without PDL

NOT_SUPPORTED: dict[tuple[str, str, str], str] = {}
"""(tutorial, version, target or "*") -> why that tutorial cannot run there (not irscope's doing)."""

_LLD = ("this Triton's AMD backend links with ROCm's ld.lld, which its wheel does not ship "
        "and this machine lacks (see (a))")
for _t in ("01", "02", "03", "04", "05", "06", "07", "08", "09"):
    for _v in ("3.0", "3.2"):
        if (_t, _v) != ("09", "3.0"):  # 3.0 has tutorials 01 to 08
            NOT_SUPPORTED[(_t, _v, "gfx942")] = _LLD


def expected_kernels(tutorial: str, version: str, target: str) -> list[str] | None:
    """The kernels TUTORIAL launches on TARGET under Triton VERSION; None when not counted."""
    e = EXPECTED.get((tutorial, version))
    if e is None:
        return None
    return e.get(target, e.get("*"))

for _tg in ("sm_90", "sm_80", "gfx942"):
    NOT_SUPPORTED[("10", "3.6", _tg)] = ("block-scaled matmul needs compute capability 10 (Blackwell) or gfx950 "
                                        "(CDNA4); the tutorial prints that and launches nothing elsewhere")
for _tg in ("sm_80", "gfx942"):
    NOT_SUPPORTED[("11", "3.6", _tg)] = ("programmatic dependent launch needs compute capability 9 or more on "
                                        "CUDA; the tutorial prints that and launches nothing elsewhere")

CONFIGS: dict[tuple[str, str], dict[str, dict[str, int]]] = {
    # 03: get_cuda_autotune_config() / get_hip_autotune_config().
    ("03", "3.0"): {"*": {"matmul_kernel": 16}},
    ("03", "3.2"): {"*": {"matmul_kernel": 16}},
    ("03", "3.6"): {"*": {"matmul_kernel": 16}, "gfx942": {"matmul_kernel": 8}},
    # 06: BLOCK_M x BLOCK_N x stages x warps, less what keep() drops (8 warps on small tiles;
    # in 3.6 only on capability 9); AMD has one stage option.
    ("06", "3.0"): {"*": {"_attn_fwd": 12}},
    ("06", "3.2"): {"*": {"_attn_fwd": 12}},
    ("06", "3.6"): {"sm_90": {"_attn_fwd": 21}, "sm_80": {"_attn_fwd": 36}, "gfx942": {"_attn_fwd": 12}},
    ("08", "3.0"): {"*": {"grouped_matmul_kernel": 4}},
    ("08", "3.2"): {"*": {"grouped_matmul_kernel": 4}},
    ("08", "3.6"): {"sm_90": {"grouped_matmul_kernel": 6, "grouped_matmul_tma_kernel": 16},
                    "*": {"grouped_matmul_kernel": 6}},
    ("09", "3.6"): {"sm_90": {"matmul_kernel": 24, "matmul_kernel_persistent": 24, "matmul_kernel_tma": 24,
                              "matmul_kernel_tma_persistent": 48, "matmul_kernel_descriptor_persistent": 48},
                    "*": {"matmul_kernel": 24, "matmul_kernel_persistent": 24}},
}
"""(tutorial, version) -> {target or "*": {autotuned kernel: how many configs its autotuner has}}."""

CONFIG_FIELDS = r"^(BLOCK_|GROUP_SIZE|NUM_SM|EPILOGUE|num_warps|num_stages|num_ctas|matrix_instr|kpack|waves)"
"""The fields of a variant label that come from an autotune config (the rest are specialisations)."""


def expected_configs(tutorial: str, version: str, target: str) -> dict[str, int]:
    """The autotuned kernels TUTORIAL launches on TARGET and their number of configs."""
    e = CONFIGS.get((tutorial, version), {})
    return e.get(target, e.get("*", {}))
