"""``irscope tune`` of a kernel that takes a ``@triton.jit`` function as a constexpr
(``kernel[grid](x, y, n, ACT=relu)``): the captured function is passed again as a
function, and a grid may name functions of the kernel's module (``ACT=relu,softplus``).
Each tuned compile is checked against the script's own compile of that function."""

import json
import shutil
from pathlib import Path

import pytest

import irscope
from irscope.whatif.equivalence import compile_differences

from conftest import irscope as run_cli

SCRIPT = Path(__file__).resolve().parent / "kernels" / "heldout_a_funcs.py"


@pytest.mark.slow
def test_a_grid_of_functions_compiles_what_the_script_compiles(tmp_path):
    script = tmp_path / SCRIPT.name
    shutil.copy(SCRIPT, script)
    out = tmp_path / "f.irscope"
    p = run_cli("tune", script, "fnarg_kernel", "--grid", "ACT=relu,softplus num_warps=4",
                "--target", "sm_90", "-o", out, "--json", check=True)
    table = json.loads(p.stdout)
    assert [r["label"] for r in table["rows"]] == ["ACT=relu,num_warps=4", "ACT=softplus,num_warps=4"]
    assert all(r["compiled"] for r in table["rows"]), [r["error"] for r in table["rows"]]
    with irscope.open(out) as b:
        tuned_ids = {r["capture_id"] for r in table["rows"]}
        by_variant = {c.variant.split(",")[0]: c for c in b.captures() if c.id not in tuned_ids}
        assert set(by_variant) == {"ACT=relu", "ACT=softplus"}  # the script's launches, labelled by name
        for row in table["rows"]:
            tuned = b.capture(f"#{row['capture_id']}")
            assert compile_differences(by_variant[f"ACT={row['config']['ACT']}"], tuned) == []
    # The captured function (no grid key for it) is passed again as a function too.
    p = run_cli("tune", out, "fnarg_kernel", "--grid", "BLOCK=128", "--json", check=True)
    (row,) = json.loads(p.stdout)["rows"]
    assert row["compiled"], row["error"]
