"""``irscope tune`` when the compiler dies on one configuration: that one is a failed
row (the crash's capture), and the configurations its process had not reached are
compiled by a new one, which computes the kernel's ``@triton.heuristics`` again too."""

import json
from pathlib import Path

import pytest

import irscope

from conftest import irscope as run_cli

KERNEL = Path(__file__).parent / "kernels" / "tune_crash.py"


@pytest.mark.slow
def test_a_compiler_crash_fails_one_row_and_the_rest_compile(tmp_path):
    out = tmp_path / "crash.irscope"
    p = run_cli("tune", KERNEL, "scale_kernel", "--grid", "BLOCK=64,96,128", "-o", out, "--json", check=True)
    table = json.loads(p.stdout)
    first, crashed, after = table["rows"]
    assert first["compiled"] and after["compiled"]  # 128 came after the crash: a new process compiled it
    assert not crashed["compiled"] and "SIGABRT" in crashed["error"] and crashed["capture_id"] is not None
    # EVEN = n % BLOCK == 0 with the captured launch's n=1000: False for 64 and 128
    assert first["config"] == {"BLOCK": 64}
    assert "the kernel's @triton.heuristics computed EVEN again for each configuration, from the captured " \
           "launch's arguments" in table["notes"]
    with irscope.open(out) as b:
        assert b.capture(f"#{first['capture_id']}").constexprs["EVEN"] is False
        runs = b.runs()
        assert len(runs) == 3  # the script, the child that crashed, the one that went on
        assert b.capture(f"#{crashed['capture_id']}").failed
        assert b.capture(f"#{after['capture_id']}").run_id == runs[-1].id
