"""The capture table (``irscope ls``; ``irscope run`` prints the same) at 80, 120
and the piped default: every line fits, no kernel name or variant field is cut,
and the ``v`` number selects the row's capture with ``--variant``."""

from __future__ import annotations

import re

import pytest

import irscope
from conftest import DATA, irscope as irscope_cli
from irscope.cli.render import PIPED_WIDTH, short_labels, variant_fields, variant_index

FIXTURE = str(DATA / "samples_sm90.irscope")


def test_short_labels_keep_the_fields_that_differ():
    labels = ["stride_ak=1,BLOCK_M=128,num_warps=8", "stride_ak=1,BLOCK_M=64,num_warps=4", "stride_ak=1,BLOCK_M=64"]
    assert short_labels(labels) == {labels[0]: ["BLOCK_M=128", "num_warps=8"], labels[1]: ["BLOCK_M=64", "num_warps=4"],
                                    labels[2]: ["BLOCK_M=64"]}
    assert short_labels(["A=1,B=2"]) == {"A=1,B=2": []}
    assert variant_fields("T=(1, 2),B=4") == ["T=(1, 2)", "B=4"]  # a value's own comma is not a field break


@pytest.mark.parametrize("width", [80, 120, None])
def test_table_fits_and_never_cuts_a_token(width, monkeypatch):
    env = None
    if width is not None:
        import os

        env = dict(os.environ, COLUMNS=str(width))
    p = irscope_cli("ls", FIXTURE, env=env, check=True)
    lines = p.stdout.splitlines()
    limit = width or PIPED_WIDTH
    assert max(len(ln) for ln in lines) <= limit, p.stdout
    with irscope.open(FIXTURE) as b:
        caps = b.captures()
        shorts = {k: short_labels([c.variant for c in b.captures(k)]) for k in b.kernels()}
        for c in caps:
            assert c.kernel in p.stdout  # kernel names whole
            for field in shorts[c.kernel][c.variant]:
                assert field in p.stdout, (field, p.stdout)  # every shown field whole, on one line
            n = variant_index(c)
            # the row shows "#id" then "v", and --target T --variant v selects it
            assert any(re.match(rf"^[\s│]*{c.id}[\s│]+{n}[\s│]", ln) for ln in lines), p.stdout
            assert b.capture(c.kernel, target=c.target, variant=n).id == c.id
            assert b.capture(c.kernel, variant=str(n)).id == c.id  # one target: also without --target
    if width == 80:
        # readable: a matmul row is its kernel line and its short variant, not ~10 lines
        rows = [ln for ln in lines if re.match(r"^[\s│]*\d+[\s│]+\d+[\s│]", ln)]
        assert len(rows) == len(caps)
        assert len(lines) <= 6 * len(caps) + 8


def test_full_label_prefix_is_gone_and_json_keeps_it():
    """Shared fields (stride_ak=1, lowercase: Rich ate such labels as markup) are
    left out of the table; --json keeps full labels."""
    out = irscope_cli("ls", FIXTURE, check=True).stdout
    assert "stride_ak=1" not in out and "BLOCK_SIZE_M=128" in out
    import json

    js = json.loads(irscope_cli("ls", FIXTURE, "--json", check=True).stdout)
    assert any(c["variant"].startswith("stride_ak=1,") for c in js)


def test_passes_title_keeps_lowercase_variant_label():
    with irscope.open(FIXTURE) as b:
        cap = b.capture("matmul_kernel")
    import os

    out = irscope_cli("passes", FIXTURE, "matmul_kernel", env=dict(os.environ, COLUMNS="1000"), check=True).stdout
    assert cap.title() in out
