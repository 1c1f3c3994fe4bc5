"""Charging measured samples to the user's lines and to each stage's ops
(irscope.core.profile, ``irscope hot``), on the real H200 profiles of tests/data/profiles.

Nsight Compute's own per-line view is computed here independently of irscope's parsers:
the export's rows read with csv, each instruction put on the innermost line of the
capture's ``//## File`` marker above it, as Nsight Compute's source view does. irscope
must charge at least that much to every user line, and every sample Nsight Compute puts
on Triton's library (``triton/language/*.py``) to a user line.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import irscope
from irscope.core.profile import attach_profile, site_charges
from irscope.core.profile_charge import split_largest_remainder
from irscope.errors import IrscopeError
from irscope.profiles.model import KernelProfile
from irscope.store.attachments import attachments

from conftest_profiles import CAPTURES, KERNELS, PROFILES

NAMES = tuple(KERNELS)
_MARK = re.compile(r'^\s*//## File "(.+)", line (\d+)')
_INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*$")


def _cli(*args: object, columns: int = 140) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "irscope", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env)


def _capture_lines(cap) -> dict[int, tuple[str, int] | None]:
    """Offset -> (file, line) of the ``//## File`` marker above each SASS instruction."""
    out: dict[int, tuple[str, int] | None] = {}
    here: tuple[str, int] | None = None
    for ln in cap.stage("sass").text.splitlines():
        m = _MARK.match(ln)
        if m:
            here = (m.group(1), int(m.group(2)))
            continue
        m = _INS.match(ln)
        if m:
            out[int(m.group(1), 16)] = here
    return out


def _ncu_blocks(path: Path, kernel: str) -> list[list[tuple[int, int]]]:
    """The export's blocks of ``kernel``, each a list of (offset, samples), identical
    consecutive blocks dropped."""
    blocks: list[tuple[str, list[list[str]]]] = []
    header: list[str] | None = None
    with open(path, newline="") as fh:
        for row in csv.reader(fh):
            if row and row[0] == "Kernel Name":
                blocks.append((row[1], []))
                header = None
            elif header is None:
                header = row
                addr, samples = header.index("Address"), header.index("# Samples")
            else:
                blocks[-1][1].append([row[addr], row[samples]])
    kept = [b for i, b in enumerate(blocks) if i == 0 or b != blocks[i - 1]]
    out = []
    for name, rows in kept:
        if name == kernel:
            base = int(rows[0][0], 16)
            out.append([(int(a, 16) - base, int(s)) for a, s in rows])
    return out


def ncu_view(cap, sass_csv: Path) -> Counter:
    """Nsight Compute's per-line samples for ``cap``: (file, line) -> samples, the key
    None for instructions without line info, over the export's blocks whose instruction
    count is the capture's (that variant's launches)."""
    lines = _capture_lines(cap)
    view: Counter = Counter()
    for block in _ncu_blocks(sass_csv, cap.kernel):
        if len(block) != len(lines):
            continue
        for off, n in block:
            view[lines[off]] += n
    return view


def _library(file: str) -> bool:
    return "/triton/language/" in file


def _base(file: str) -> str:
    return file.rsplit("/", 1)[-1]


def _caps(pb):
    bundle = irscope.open(str(pb.path))
    return bundle, [bundle.capture(f"#{cid}") for cid in pb.captures]


# -- conservation --------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tool", ("ncu", "proton"))
def test_every_sample_lands_on_a_line_or_unattributed(profiled, name: str, tool: str) -> None:
    pb = profiled.ncu(name) if tool == "ncu" else profiled.proton(name)
    bundle, caps = _caps(pb)
    with bundle:
        for cap in caps:
            for call_sites in (False, True):
                hot = cap.profile(call_sites=call_sites)
                assert hot is not None
                assert hot.total_samples > 0
                assert sum(h.samples for h in hot.lines) + hot.unattributed == hot.total_samples
                # each stage's ops plus its unplaced samples hold the total too (shares round to 0.01)
                for stage in hot.stages:
                    laid = sum(o.samples for o in hot.ops(stage)) + hot.unplaced(stage)
                    assert abs(laid - hot.total_samples) <= 0.01 * len(hot.ops(stage)) + 0.01, (stage, laid)


@pytest.mark.parametrize("name", NAMES)
def test_totals_are_the_exports_own(profiled, name: str) -> None:
    pb = profiled.ncu(name)
    bundle, caps = _caps(pb)
    with bundle:
        for cap in caps:
            hot = cap.profile()
            assert hot.total_samples == sum(ncu_view(cap, pb.sass_csv).values())
    pb = profiled.proton(name)
    tree = json.loads(pb.hatchet.read_text())[0]
    node = next(k for k in tree["children"] if k["frame"]["name"] == KERNELS[name])
    want = node["metrics"].get("num_samples", 0) + sum(c["metrics"]["num_samples"] for c in node["children"])
    with irscope.open(str(pb.path)) as bundle:
        assert bundle.capture(KERNELS[name]).profile().total_samples == want


# -- against Nsight Compute's own source view ----------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_user_lines_hold_at_least_what_ncu_charges_them(profiled, name: str) -> None:
    pb = profiled.ncu(name)
    bundle, caps = _caps(pb)
    with bundle:
        for cap in caps:
            view = ncu_view(cap, pb.sass_csv)
            hot = cap.profile()
            for key, n in view.items():
                if key is None or _library(key[0]) or not n:
                    continue
                got = hot.line(key[1], key[0])
                assert got is not None and got.samples >= n, (cap.variant, key, n, got)
            # every sample ncu charges to the library is on a user line; none is lost
            library = sum(n for k, n in view.items() if k is not None and _library(k[0]))
            user = sum(n for k, n in view.items() if k is not None and not _library(k[0]))
            assert sum(h.samples for h in hot.lines) == user + library
            assert hot.unattributed == view.get(None, 0)
            assert all(not _library(h.file) for h in hot.lines)


def test_softmax_charges_tl_max_and_tl_sum_to_their_two_call_sites(profiled) -> None:
    pb = profiled.ncu("fused_softmax")
    bundle, (cap,) = _caps(pb)
    with bundle:
        view = ncu_view(cap, pb.sass_csv)
        lib = Counter()
        for key, n in view.items():
            if key is not None and _library(key[0]):
                lib[(_base(key[0]), key[1])] += n
        user = {k[1]: n for k, n in view.items() if k is not None and not _library(k[0])}
        assert lib[("standard.py", 170)] > 0 and lib[("standard.py", 263)] > 0
        hot = cap.profile()
        # tl.max (standard.py 170, 191) is called at line 28, tl.sum (263, 293) at line 30
        mx = hot.line(28)
        sm = hot.line(30)
        assert mx.samples == user.get(28, 0) + lib[("standard.py", 170)] + lib[("standard.py", 191)]
        assert sm.samples == user.get(30, 0) + lib[("standard.py", 263)] + lib[("standard.py", 293)]
        assert mx.how == sm.how == "call-site"
        assert hot.line(29).how == "own"
        # the stalls travel with the samples: tl.max's FMNMX rows wait on the load (long scoreboard)
        assert sum(mx.stalls.values()) <= mx.samples
        assert mx.dominant(1)[0][0] == "long_scoreboard"


def test_helpers_keep_their_lines_and_move_to_call_sites_on_demand(profiled) -> None:
    pb = profiled.ncu("jit_helper_call")
    bundle, (cap,) = _caps(pb)
    with bundle:
        view = ncu_view(cap, pb.sass_csv)
        user = {k[1]: n for k, n in view.items() if k is not None and not _library(k[0])}
        sigmoid = sum(n for k, n in view.items() if k is not None and _library(k[0]) and k[1] == 50)
        assert sigmoid > 0
        own = cap.profile()
        # _load_tile (lines 20-22) and _gelu (28-29) keep their own lines; tl.sigmoid
        # (standard.py:50) is charged to _gelu's line 29, which calls it
        for line in (21, 22, 28):
            assert own.line(line).samples == user[line] and own.line(line).how == "own"
        assert own.line(29).samples == user.get(29, 0) + sigmoid
        moved = cap.profile(call_sites=True)
        assert moved.call_sites
        assert all(moved.line(n) is None for n in (20, 21, 22, 28, 29))
        # _load_tile is called at line 41, _gelu at line 43
        assert moved.line(41).samples == user.get(41, 0) + sum(user.get(n, 0) for n in (20, 21, 22))
        assert moved.line(43).samples == user.get(43, 0) + sum(user.get(n, 0) for n in (28, 29)) + sigmoid
        assert moved.line(43).how == "call-site"
        assert sum(h.samples for h in moved.lines) == sum(h.samples for h in own.lines)
        # ops are laid over by their own lines in both modes
        assert moved.ops("ttgir") == own.ops("ttgir")


def test_a_helper_called_twice_splits_by_the_nearest_call(profiled) -> None:
    pb = profiled.ncu("flash_attention")
    with irscope.open(str(pb.path)) as bundle:
        cap = bundle.capture("_attn_fwd", variant="STAGE=3")
        own = cap.profile()
        moved = cap.profile(call_sites=True)
        # STAGE=3 calls _attn_fwd_inner twice (lines 97 and 101): both calls get samples
        # the helper's lines had, each by its nearest instructions
        inner = sum(h.samples for h in own.lines if 18 <= h.line <= 57)
        assert inner > 0
        calls = {n: moved.line(n) for n in (97, 101)}
        assert all(c is not None and c.samples > 0 and c.how == "nearest" for c in calls.values())
        assert sum(c.samples for c in calls.values()) == inner + sum(
            own.line(n).samples for n in (97, 101) if own.line(n) is not None)
        assert sum(h.samples for h in moved.lines) + moved.unattributed == moved.total_samples
        # each inlined copy of the loop follows its own call: in offset order, the
        # helper's instructions go to line 97, then (the second copy) to line 101
        moved_lines = [m.line for (_, c), (_, m) in zip(site_charges(cap), site_charges(cap, call_sites=True))
                       if c is not None and 18 <= c.line <= 57]
        switches = [i for i in range(1, len(moved_lines)) if moved_lines[i] != moved_lines[i - 1]]
        assert moved_lines[0] == 97 and moved_lines[-1] == 101 and len(switches) == 1
        # STAGE=1 calls it once: every helper sample goes to line 97
        one = bundle.capture("_attn_fwd", variant="STAGE=1").profile(call_sites=True)
        assert one.line(97).how == "call-site" and one.line(101) is None


# -- a stage's ops -------------------------------------------------------------------

def test_sass_ops_carry_each_instructions_own_samples(profiled) -> None:
    pb = profiled.ncu("fused_softmax")
    bundle, (cap,) = _caps(pb)
    with bundle:
        (block,) = _ncu_blocks(pb.sass_csv, cap.kernel)
        by_off = dict(block)
        hot = cap.profile()
        ops = hot.ops("sass")
        assert ops[0].samples == max(by_off.values()) == by_off[0x540]
        assert "FMNMX R19, R7, R6, !PT" in ops[0].text
        assert hot.stage_heat("sass")[ops[0].stage_line] == by_off[0x540]
        assert [o.samples for o in ops] == sorted((o.samples for o in ops), reverse=True)
        # the op of SASS line N is the instruction at that line of the stage text
        text = cap.stage("sass").text.splitlines()
        assert all(o.text in text[o.stage_line - 1] for o in ops)


def test_other_stages_share_samples_among_ops_of_the_same_line(profiled) -> None:
    pb = profiled.ncu("fused_softmax")
    bundle, (cap,) = _caps(pb)
    with bundle:
        hot = cap.profile()
        ttgir = hot.ops("ttgir")
        text = cap.stage("ttgir").text.splitlines()
        # tl.max's reduction: the FMNMX samples land on the TTGIR ops of standard.py:170 at line 28
        top = [o for o in ttgir if "arith.maxnumf" in o.text or "tt.reduce" in o.text]
        assert top and top[0].samples >= 397 / 2
        assert all(o.text in text[o.stage_line - 1] for o in ttgir)
        # the def line's samples (LDC R1 of the prologue) have no TTGIR op: unplaced
        assert hot.unplaced("ttgir") == hot.line(17).samples
        # TTIR by the same rules: tl.max's samples on its arith.maxnumf, the prologue unplaced
        ttir = hot.ops("ttir")
        text = cap.stage("ttir").text.splitlines()
        assert all(o.text in text[o.stage_line - 1] for o in ttir)
        assert "arith.maxnumf" in ttir[0].text and ttir[0].samples == top[0].samples
        assert hot.unplaced("ttir") == hot.unplaced("ttgir")
        assert sorted(o.samples for o in ttir) == sorted(o.samples for o in ttgir)
        with pytest.raises(IrscopeError, match="no heat for stage 'amdgcn'"):
            hot.ops("amdgcn")


# -- proton ----------------------------------------------------------------------------

def test_proton_library_lines_go_to_call_sites_estimated_when_several(profiled) -> None:
    pb = profiled.proton("layer_norm")
    tree = json.loads(pb.hatchet.read_text())[0]
    node = next(k for k in tree["children"] if k["frame"]["name"] == pb.kernel)
    per_line = {}
    for c in node["children"]:
        path, rest = c["frame"]["name"].rsplit(":", 1)
        per_line[(_base(path), int(rest.split("@", 1)[0]))] = c["metrics"]["num_samples"]
    with irscope.open(str(pb.path)) as bundle:
        cap = bundle.capture(pb.kernel)
        hot = cap.profile()
        assert hot.stamp.tool == "proton"
        # user lines keep Proton's own figures
        for (base, line), n in per_line.items():
            if base == "layer_norm.py":
                assert hot.line(line).samples >= n
        # tl.sum (standard.py 263/293) is called on several lines: its samples are split
        lib = sum(n for (base, _), n in per_line.items() if base == "standard.py")
        extra = sum(h.samples for h in hot.lines) - sum(n for (b, _), n in per_line.items() if b == "layer_norm.py")
        assert lib > 0 and extra == lib
        assert any(h.how == "estimated" for h in hot.lines)


def test_largest_remainder_split_keeps_the_total() -> None:
    w = {("a.py", 1): 3, ("a.py", 2): 3, ("a.py", 3): 1}
    got = split_largest_remainder(10, w)
    assert sum(got.values()) == 10 and got == {("a.py", 1): 4, ("a.py", 2): 4, ("a.py", 3): 2}
    assert split_largest_remainder(0, w) == {k: 0 for k in w}


# -- several profiles, stamps ------------------------------------------------------------

def test_several_profiles_per_capture_each_stamped(profiled, tmp_path: Path) -> None:
    pb = profiled.ncu("vector_add")
    path = tmp_path / "two.irscope"
    shutil.copy(pb.path, path)
    with irscope.open(str(profiled.proton("vector_add").path)) as other:
        proton = other.capture("add_kernel").profile()
        raw = KernelProfile.from_json(attachments(other._store(), "profile")[0].data)
    new_id = attach_profile(str(path), 1, raw)
    with irscope.open(str(path)) as bundle:
        cap = bundle.capture("add_kernel")
        stamps = cap.profiles()
        assert [s.tool for s in stamps] == ["ncu", "proton"] and stamps[-1].id == new_id
        assert stamps[0].gpu == "NVIDIA H200" and stamps[0].launches == 1 and stamps[0].date
        assert cap.profile().stamp.tool == "proton"  # the newest by default
        assert cap.profile().lines == proton.lines
        assert cap.profile(stamps[0].id).stamp.tool == "ncu"
        with pytest.raises(IrscopeError, match=r"has no profile 999 \(its profiles: "):
            cap.profile(999)
    with pytest.raises(IrscopeError, match="no capture #42"):
        attach_profile(str(path), 42, raw)


def test_a_capture_without_profile_has_none() -> None:
    with irscope.open(str(PROFILES / "vector_add" / "gpu.irscope")) as bundle:
        cap = bundle.capture("add_kernel")
        assert cap.profiles() == () and cap.profile() is None


# -- irscope hot -----------------------------------------------------------------------

def test_hot_json_fields(profiled) -> None:
    pb = profiled.ncu("jit_helper_call")
    p = _cli("hot", pb.path, pb.kernel, "--stage", "ptx", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert {"total_samples", "unattributed", "lines", "ops", "profile"} <= set(out)
    assert out["lines"] and out["ops"]
    assert {"line", "file", "samples", "stalls"} <= set(out["lines"][0])
    assert {"stage", "stage_line", "text", "samples"} <= set(out["ops"][0])
    assert all(o["stage"] == "ptx" for o in out["ops"])
    assert sum(ln["samples"] for ln in out["lines"]) + out["unattributed"] == out["total_samples"]
    ttir = json.loads(_cli("hot", pb.path, pb.kernel, "--stage", "ttir", "--json").stdout)
    assert ttir["stage"] == "ttir" and ttir["ops"] and all(o["stage"] == "ttir" for o in ttir["ops"])
    assert sum(o["samples"] for o in ttir["ops"]) + ttir["unplaced"] == pytest.approx(ttir["total_samples"], abs=0.5)
    top = json.loads(_cli("hot", pb.path, pb.kernel, "--json", "--top", "2", "--call-sites").stdout)
    assert len(top["lines"]) == 2 and top["lines"][0]["line"] == 43 and top["call_sites"] is True


def test_hot_json_names_the_capture_and_the_launch_shown(profiled) -> None:
    """Flash attention's two variants each got one launch of the export: the JSON says
    which capture it shows, and the profile's note which launch of the export it holds."""
    pb = profiled.ncu("flash_attention")
    for args, cid, stage, launch in (((), 1, "STAGE=1", 1), (("--variant", "1"), 2, "STAGE=3", 2)):
        p = _cli("hot", pb.path, pb.kernel, *args, "--json")
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        assert out["capture_id"] == cid and stage in out["variant"] and stage in out["capture"]
        assert any(n.startswith(f"launch(es) {launch} of sass.csv") for n in out["profile"]["notes"])


def test_hot_table_names_lines_with_their_source(profiled) -> None:
    pb = profiled.ncu("fused_softmax")
    p = _cli("hot", pb.path, pb.kernel, "--top", "3")
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert "Python lines of fused_softmax.py" in p.stdout and "NVIDIA H200" in p.stdout
    top = next(r for r in rows if "tl.max(row, axis=0)" in r).split()
    assert top[:4] == ["28", "578", "57.0%", "long_scoreboard"] and "call-site" in top
    assert any("/*0540*/ FMNMX R19, R7, R6, !PT ;" in r and r.split()[1] == "397" for r in rows)
    # 80 columns: every number whole, the source text gives way
    narrow = _cli("hot", pb.path, pb.kernel, "--top", "3", columns=80).stdout.splitlines()
    assert all(len(r) <= 80 for r in narrow)
    assert next(r for r in narrow if r.strip().startswith("28 ")).split()[:3] == ["28", "578", "57.0%"]


def test_hot_errors_are_one_line(profiled) -> None:
    bare = PROFILES / "vector_add" / "gpu.irscope"
    cases = [
        (("hot", bare, "add_kernel"), "has no profile: attach one with 'irscope profile import"),
        (("hot", profiled.ncu("vector_add").path, "add_kernel", "--profile", "77"), "has no profile 77"),
        (("hot", profiled.ncu("vector_add").path, "add_kernel", "--top", "0"), "--top 0"),
        (("hot", profiled.ncu("vector_add").path, "nope"), "nope"),
    ]
    for args, want in cases:
        p = _cli(*args)
        assert p.returncode != 0 and want in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


# -- the acceptance path: a compile-only capture made here, the GPU's export imported ---

@pytest.mark.slow
@pytest.mark.parametrize("name", ["fused_softmax", "layer_norm", "matmul_autotune"])
def test_a_compile_only_capture_accepts_the_gpus_export(profiled, tmp_path: Path, name: str) -> None:
    """What the held-out acceptance check does: capture the sample here with no GPU
    (``--target sm_90``), import the H200's export by kernel name (fused_softmax: the
    whole export, torch launches and all; matmul: four autotune variants captured, the
    launches ran one), and get Nsight Compute's own per-line view back, library samples
    on the call sites."""
    pb = profiled.ncu(name)
    bundle = tmp_path / "here.irscope"
    p = _cli("run", "--target", "sm_90", "-q", "--no-open", "-o", bundle, pb.script)
    assert p.returncode == 0, p.stderr
    p = _cli("profile", "import", bundle, pb.kernel, pb.sass_csv)
    assert p.returncode == 0, p.stderr
    here = json.loads(_cli("hot", bundle, pb.kernel, "--json").stdout)
    gpu = json.loads(_cli("hot", pb.path, pb.kernel, "--json").stdout)
    assert here["total_samples"] == gpu["total_samples"] > 0
    assert [(ln["line"], ln["samples"]) for ln in here["lines"]] == [(ln["line"], ln["samples"]) for ln in gpu["lines"]]
    with irscope.open(str(bundle)) as b:
        cap = b.capture(pb.kernel)
        view = ncu_view(cap, pb.sass_csv)
        hot = cap.profile()
        assert sum(view.values()) == hot.total_samples
        for (file, line), n in ((k, n) for k, n in view.items() if n and k is not None and not _library(k[0])):
            assert hot.line(line, file) is not None and hot.line(line, file).samples >= n, (file, line, hot.lines)
        assert sum(h.samples for h in hot.lines) == sum(n for k, n in view.items() if k is not None)


@pytest.mark.slow
def test_a_launch_two_variants_share_goes_to_both_or_waits_for_a_name(tmp_path: Path) -> None:
    """Two autotune configs whose SASS instructions are the same. ``twin_kernel``'s line
    markers are the same too: by kernel name the launch goes to both, a note saying so,
    the same figures on each. ``mirror_kernel`` charges them to other lines: by kernel
    name the import says in one line that it cannot tell, naming both; named by id or
    --variant, it attaches to that one."""
    bundle = tmp_path / "twin.irscope"
    p = _cli("run", "--target", "sm_90", "-q", "--no-open", "-o", bundle,
             Path(__file__).parent / "kernels" / "heldout_c_twin_variants.py")
    assert p.returncode == 0, p.stderr
    exports = {}
    with irscope.open(str(bundle)) as b:
        for kernel in ("twin_kernel", "mirror_kernel"):
            caps = b.captures(kernel)
            assert len(caps) == 2
            ours = [re.sub(r"//##.*", "", c.stage("sass").text) for c in caps]
            assert ours[0] == ours[1]
            assert (caps[0].stage("sass").text == caps[1].stage("sass").text) == (kernel == "twin_kernel")
            path = tmp_path / f"{kernel}.csv"
            export, lines = _ncu_style_export(caps[1].stage("sass").text, kernel)
            path.write_text(export)
            exports[kernel] = (path, sum(lines.values()), [c.id for c in caps])
    path, total, (first, second) = exports["twin_kernel"]
    p = _cli("profile", "import", bundle, "twin_kernel", path, "--json")
    assert p.returncode == 0, p.stderr
    attached = json.loads(p.stdout)
    assert [(a["capture_id"], a["total_samples"]) for a in attached] == [(first, total), (second, total)]
    assert all(any("which of them ran cannot be told" in n for n in a["notes"]) for a in attached)
    with irscope.open(str(bundle)) as b:
        one, two = (b.capture(f"#{cid}").profile() for cid in (first, second))
        assert [(h.line, h.samples) for h in one.lines] == [(h.line, h.samples) for h in two.lines]
    path, total, (first, second) = exports["mirror_kernel"]
    p = _cli("profile", "import", bundle, "mirror_kernel", path)
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert f"#{first} (--variant 0: " in p.stderr and f"#{second} (--variant 1: " in p.stderr
    assert "nothing attached" in p.stderr
    for how, cid in (([f"#{second}"], second), (["mirror_kernel", "--variant", "0"], first)):
        p = _cli("profile", "import", bundle, *how[:1], path, *how[1:], "--json")
        assert p.returncode == 0, p.stderr
        assert [(a["capture_id"], a["total_samples"]) for a in json.loads(p.stdout)] == [(cid, total)]


def _ncu_style_export(sass: str, kernel: str, base: int = 0x7F63A37E8300) -> tuple[str, Counter]:
    """An export of one launch in Nsight Compute's form, rendered from a capture's SASS
    text (no GPU here): absolute addresses, branch targets as absolute addresses (as the
    checked-in exports print them), one sample per instruction. Also the capture's
    innermost line of each instruction."""
    labels: dict[str, int] = {}
    pending: list[str] = []
    rows: list[tuple[int, str]] = []
    lines: Counter = Counter()
    here: tuple[str, int] | None = None
    for ln in sass.splitlines():
        m = _MARK.match(ln)
        if m:
            here = (_base(m.group(1)), int(m.group(2)))
            continue
        label = re.match(r"^([.$\w]+):$", ln.strip())
        if label:
            pending.append(label.group(1))
            continue
        m = _INS.match(ln)
        if m:
            off = int(m.group(1), 16)
            labels.update({name: off for name in pending})
            pending = []
            rows.append((off, m.group(2).replace(".reuse", "")))
            lines[here] += 1
    body = ['"Kernel Name","%s",' % kernel, '"Address","Source","# Samples","stall_wait"']
    for off, text in rows:
        text = re.sub(r"`\(([^)]+)\)", lambda t: hex(base + labels[t.group(1)]), text)
        body.append(f'"{base + off:#x}","      {text}","1","1"')
    return "\n".join(body) + "\n", lines


@pytest.mark.slow
def test_a_noinline_helper_and_prints_match_their_export(tmp_path: Path) -> None:
    """A kernel calling a noinline helper and ``vprintf``: its code and the helper's share
    one section (the helper after the kernel); the call's target is the helper's address,
    the helper's ``RET`` names the kernel's symbol. The import accepts them and charges
    the helper's instructions to its own line, whether the ``RET`` is printed with the
    kernel's address or with 0; a call to another address is refused."""
    bundle = tmp_path / "noinline.irscope"
    p = _cli("run", "--target", "sm_90", "-q", "--no-open", "-o", bundle,
             Path(__file__).parent / "kernels" / "noinline_helper.py")
    assert p.returncode == 0, p.stderr
    with irscope.open(str(bundle)) as b:
        sass = b.capture("noinline_kernel").stage("sass").text
    assert "CALL.REL.NOINC `($noinline_kernel" in sass and re.search(r"RET\.REL\.NODEC R\d+ `\(noinline_kernel\)", sass)
    export, lines = _ncu_style_export(sass, "noinline_kernel")
    csv_path = tmp_path / "sass.csv"
    call = re.search(r'"(@\S+ +)?CALL\.REL\.NOINC (0x[0-9a-f]+)"', export.replace('"      ', '"'))
    assert call is not None
    csv_path.write_text(export.replace(f"CALL.REL.NOINC {call.group(2)}",
                                       f"CALL.REL.NOINC {int(call.group(2), 16) + 16:#x}"))
    p = _cli("profile", "import", bundle, "noinline_kernel", csv_path)
    assert p.returncode != 0 and "SASS differs at offset" in p.stderr and "CALL.REL.NOINC" in p.stderr
    csv_path.write_text(export)
    p = _cli("profile", "import", bundle, "noinline_kernel", csv_path)
    assert p.returncode == 0, p.stderr
    ret = re.search(r"RET\.REL\.NODEC (R\d+) (0x[0-9a-f]+)", export)
    assert ret is not None
    csv_path.write_text(export.replace(ret.group(0), f"RET.REL.NODEC {ret.group(1)} 0x0"))
    p = _cli("profile", "import", bundle, "noinline_kernel", csv_path)
    assert p.returncode == 0, p.stderr
    with irscope.open(str(bundle)) as b:
        cap = b.capture("noinline_kernel")
        assert len(cap.profiles()) == 2
        for stamp in cap.profiles():
            hot = cap.profile(stamp.id)
            assert hot is not None and hot.total_samples == sum(lines.values())
            assert sum(h.samples for h in hot.lines) + hot.unattributed == hot.total_samples
            helper = hot.line(15)  # `return x * s + 1.0`, the helper's instructions after the kernel's
            assert helper is not None and helper.samples == lines[("noinline_helper.py", 15)] > 0
            assert helper.how == "own"


# Compile-only sm_90 captures checked in (made with Triton 3.6, no GPU): the held-out
# workflow on four more kernels with no compile here (fused_softmax: the slow test above).
COMPILE_ONLY = {"vector_add": "samples_sm90.irscope", "jit_helper_call": "samples_sm90.irscope",
                "matmul_autotune": "samples_sm90.irscope", "flash_attention": "learner_sm90.irscope"}


@pytest.mark.parametrize("name", list(COMPILE_ONLY))
def test_compile_only_captures_accept_the_gpus_export(profiled, tmp_path: Path, name: str) -> None:
    """The H200's export imported by kernel name into a bundle captured without a GPU:
    each launch lands on the variant it ran (matmul: one config of four; flash attention:
    STAGE=1 and STAGE=3, one launch each), with the GPU capture's lines
    and Nsight Compute's own per-line view kept (user lines at least ncu's, library
    samples on user lines), and every stage's ops holding the total."""
    pb = profiled.ncu(name)
    bundle = tmp_path / "here.irscope"
    shutil.copy(PROFILES.parent / COMPILE_ONLY[name], bundle)
    p = _cli("profile", "import", bundle, pb.kernel, pb.sass_csv, "--json")
    assert p.returncode == 0, p.stderr
    attached = json.loads(p.stdout)
    assert len(attached) == len(CAPTURES[name]) and all(a["tool"] == "ncu" for a in attached)
    with irscope.open(str(pb.path)) as g, irscope.open(str(bundle)) as b:
        gpu = {c.variant: c for c in g.captures() if c.profiles()}
        for a in attached:
            cap = b.capture(f"#{a['capture_id']}")
            hot = cap.profile()
            want = gpu[cap.variant].profile()
            assert hot is not None and want is not None and hot.total_samples == want.total_samples > 0
            assert [(_base(h.file), h.line, h.samples, h.how) for h in hot.lines] == [
                (_base(h.file), h.line, h.samples, h.how) for h in want.lines]
            view = ncu_view(cap, pb.sass_csv)
            assert sum(view.values()) == hot.total_samples
            for (file, line), n in ((k, n) for k, n in view.items() if n and k is not None and not _library(k[0])):
                assert hot.line(line, file) is not None and hot.line(line, file).samples >= n, (file, line)
            assert sum(h.samples for h in hot.lines) == sum(n for k, n in view.items() if k is not None)
            assert "ttir" in hot.stages
            for stage in hot.stages:
                laid = sum(o.samples for o in hot.ops(stage)) + hot.unplaced(stage)
                assert abs(laid - hot.total_samples) <= 0.01 * len(hot.ops(stage)) + 0.01, (stage, laid)


def test_proton_sigmoid_goes_to_the_helper_line_that_calls_it(profiled) -> None:
    pb = profiled.proton("jit_helper_call")
    tree = json.loads(pb.hatchet.read_text())[0]
    node = next(k for k in tree["children"] if k["frame"]["name"] == pb.kernel)
    per_line = {}
    for c in node["children"]:
        path, rest = c["frame"]["name"].rsplit(":", 1)
        per_line[(_base(path), int(rest.split("@", 1)[0]))] = c["metrics"]["num_samples"]
    with irscope.open(str(pb.path)) as bundle:
        hot = bundle.capture(pb.kernel).profile()
        line = hot.line(29)
        assert line.samples == per_line[("jit_helper_call.py", 29)] + per_line[("standard.py", 50)]
        assert line.how == "call-site"
        assert hot.line(22).samples == per_line[("jit_helper_call.py", 22)] and hot.line(22).how == "own"
        # Proton's stall split travels along: stalled reasons plus not_stalled are the samples
        assert sum(line.stalls.values()) == line.samples


def test_hot_shows_the_profiled_variant_of_a_kernel_named_alone(profiled, tmp_path: Path) -> None:
    """A profiled run profiles the variants it launched: named alone, the kernel is
    shown by its first profiled capture, and a note says which."""
    path = tmp_path / "mm.irscope"
    shutil.copy(PROFILES / "matmul_autotune" / "gpu.irscope", path)
    p = _cli("profile", "import", path, "#3", PROFILES / "matmul_autotune" / "proton.hatchet")
    assert p.returncode == 0, p.stderr
    p = _cli("hot", path, "matmul_kernel", "--json")
    assert p.returncode == 0, p.stderr
    assert "showing #3" in p.stderr and json.loads(p.stdout)["profile"]["tool"] == "proton"
    p = _cli("hot", path, "matmul_kernel", "--variant", "0")
    assert p.returncode != 0 and "has no profile; #3 of matmul_kernel has one" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_two_calls_of_tl_sum_each_get_their_own_reduction() -> None:
    """Layer norm calls tl.sum on line 41 (after the mean loop) and line 49 (after the
    variance loop, whose body ends on line 48): the SASS of each reduction is charged
    to its own call, by the nearest instruction of either call line."""
    with irscope.open(str(PROFILES / "layer_norm" / "gpu.irscope")) as bundle:
        cap = bundle.capture("_layer_norm_fwd_fused")
        lines = _capture_lines(cap)
        loop_end = [off for off, key in lines.items() if key is not None and key[1] == 48
                    and not _library(key[0])]
        library = [(s.offset, c) for s, c in site_charges(cap) if s.frame is not None and _library(s.frame.file)]
        assert library and loop_end
        before = {c.line for off, c in library if off < min(loop_end)}
        after = {c.line for off, c in library if off > max(loop_end)}
        assert before == {41} and after == {49}
        assert {c.how for _, c in library} == {"nearest"}
