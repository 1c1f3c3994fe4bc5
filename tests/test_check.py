"""``irscope check``: expectations checked against real captures (tests/data bundles),
each one where it holds and where it does not, with its evidence; bad rules files give
one line and exit 2; the worked example of docs/checks.md runs as the doc shows it.

Bundles: samples_sm90 (matmul variants with wgmma or mma, the bias load of
jit_helper_call.py), why_sm90_sm80 (a strided gather with 16-bit loads, a GEMM that
spills), why_loops (loops pipelined and not), why_conversions (row sums whose
conversion goes through shared memory, warp shuffles or registers by shape).
"""

import json
import re

import pytest

import irscope
from irscope.core.checks import RuleError, parse_rules, run_checks
from conftest import DATA, ROOT, irscope as run_irscope

SAMPLES = DATA / "samples_sm90.irscope"
WHY = DATA / "why_sm90_sm80.irscope"
LOOPS = DATA / "why_loops.irscope"
CONVERSIONS = DATA / "why_conversions.irscope"
LEARNER = DATA / "learner_sm90.irscope"


def check(bundle, text):
    """The outcomes of rules ``text`` on ``bundle``."""
    with irscope.open(bundle) as b:
        return run_checks(b, parse_rules(text, "rules.toml"))


def only(report, expectation):
    got = [o for o in report.outcomes if o.expectation == expectation]
    assert len(got) == 1, report.outcomes
    return got[0]


# -- spills -----------------------------------------------------------------------

def _sass_spills(bundle, kernel, target):
    """LDL/STL instructions of the SASS text, counted here with a regular expression."""
    with irscope.open(bundle) as b:
        text = b.capture(kernel, target).stage("sass").text
    return len(re.findall(r"^\s*(?:/\*[0-9a-f]+\*/)?\s*(?:@!?U?P\w+\s+)?(?:LDL|STL)\b", text, re.M))


@pytest.mark.parametrize("target", ["sm_90", "sm_80"])
def test_no_spills_fails_on_the_spilling_gemm_with_the_sass_count(target):
    report = check(WHY, f'[[kernel]]\nname = "big_tile_gemm_kernel"\ntarget = "{target}"\nspills = 0\n')
    o = only(report, "spills")
    assert not o.ok and not report.ok
    assert o.actual == _sass_spills(WHY, "big_tile_gemm_kernel", target) > 100
    assert o.expected == 0 and o.scope == "kernel" and o.line is None
    assert any(re.match(r"line \d+: \d+ LDL/STL", e) for e in o.evidence), o.evidence


def test_no_spills_holds_where_the_sass_has_none():
    assert check(WHY, '[[kernel]]\nname = "copy_kernel"\ntarget = "sm_90"\nspills = 0\n').ok
    assert _sass_spills(WHY, "copy_kernel", "sm_90") == 0


def test_max_spills_and_line_spills():
    total = _sass_spills(WHY, "big_tile_gemm_kernel", "sm_90")
    assert check(WHY, f'[[kernel]]\nname = "big_tile_gemm_kernel"\ntarget = "sm_90"\nmax_spills = {total}\n').ok
    report = check(WHY, f'[[kernel]]\nname = "big_tile_gemm_kernel"\ntarget = "sm_90"\nmax_spills = {total - 1}\n'
                        '[[kernel.line]]\nline = 24\nspills = 0\n')
    kernel, line = report.violations
    assert kernel.expectation == "max_spills" and kernel.actual == total
    assert line.expectation == "spills" and line.line == 24 and line.actual > 0
    assert re.fullmatch(r"line 24: \d+ LDL, \d+ STL", line.evidence[0])


# -- instructions at a line ---------------------------------------------------------

def test_uses_wgmma_holds_on_hopper_tile_and_fails_where_ptx_mma_is_used():
    rules = '[[kernel]]\nname = "matmul_kernel"\nvariant = {v}\n[[kernel.line]]\nline = 67\nuses = ["wgmma"]\n'
    assert check(SAMPLES, rules.format(v=1)).ok
    o = only(check(SAMPLES, rules.format(v=3)), "uses")  # num_warps=2: mma.sync, not wgmma
    assert not o.ok and o.expected == "wgmma" and o.actual == 0
    assert "the line has: mma x16" in o.evidence[1]


def test_uses_class_and_mnemonic_and_not_uses():
    report = check(SAMPLES, '[[kernel]]\nname = "matmul_kernel"\nvariant = 3\n[[kernel.line]]\nline = 67\n'
                            'uses = ["mma", "mma.sync", "HMMA"]\nnot_uses = ["HGMMA", "local"]\n')
    assert report.ok, report.violations
    assert [o.actual > 0 for o in report.outcomes if o.expectation == "uses"] == [True] * 3
    report = check(WHY, '[[kernel]]\nname = "big_tile_gemm_kernel"\ntarget = "sm_90"\n'
                        '[[kernel.line]]\nline = 24\nnot_uses = ["LDL"]\n')
    o = only(report, "not_uses")
    assert not o.ok and o.actual > 0


# -- access widths -----------------------------------------------------------------

@pytest.mark.parametrize("target", ["sm_90", "sm_80"])
def test_min_load_bits_fails_on_the_strided_gather_with_its_ptx(target):
    report = check(WHY, f'[[kernel]]\nname = "gather_kernel"\ntarget = "{target}"\n'
                        '[[kernel.line]]\nline = 16\nmin_load_bits = 128\nfull_width = true\n'
                        '[[kernel.line]]\nline = 17\nmin_store_bits = 128\n')
    bits, full, store = report.outcomes
    assert not bits.ok and bits.actual == 16 and bits.line == 16
    assert bits.evidence[0].startswith("ld.global.b16 ") and "1 of 8 elements" in bits.evidence[0]
    assert not full.ok and "1 of 8 elements" in full.evidence[0]
    assert store.ok and store.actual == 128


def test_min_load_bits_holds_on_the_contiguous_copy():
    report = check(WHY, '[[kernel]]\nname = "copy_kernel"\ntarget = "sm_80"\n'
                        '[[kernel.line]]\nline = 24\nmin_load_bits = 128\nfull_width = true\n')
    assert report.ok and report.outcomes[0].actual == 128
    assert report.outcomes[0].evidence[0].startswith("ld.global.v4.b32 ")


def test_min_load_bits_on_a_line_without_loads_is_a_violation():
    o = only(check(WHY, '[[kernel]]\nname = "copy_kernel"\ntarget = "sm_80"\n'
                        '[[kernel.line]]\nline = 25\nmin_load_bits = 128\n'), "min_load_bits")
    assert not o.ok and o.actual is None and "no global load" in o.message


# -- loops ------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_loop_pipelined_with_stages(target):
    rules = ('[[kernel]]\nname = "gemm_kernel"\ntarget = "{t}"\nvariant = "num_stages={s}"\n'
             '[[kernel.loop]]\nline = 41\npipelined = true\nmin_stages = {m}\nmin_async_loads = 2\n')
    assert check(LOOPS, rules.format(t=target, s=3, m=3)).ok
    deeper = check(LOOPS, rules.format(t=target, s=3, m=4))
    assert [(o.expectation, o.actual) for o in deeper.violations] == [("min_stages", 3)]
    report = check(LOOPS, rules.format(t=target, s=1, m=3))
    assert {(o.expectation, o.actual) for o in report.violations} == {("pipelined", False), ("min_stages", 1),
                                                                       ("min_async_loads", 0)}
    assert all(o.scope == "loop" and o.evidence[0].startswith("scf.for at ttgir line ") for o in report.violations)


def test_unpipelined_loop_evidence_carries_the_remark():
    report = check(LOOPS, '[[kernel]]\nname = "strided_rowsum_kernel"\ntarget = "sm_80"\n'
                          '[[kernel.loop]]\nline = 105\npipelined = true\n')
    o = only(report, "pipelined")
    assert not o.ok
    assert any(e.startswith("remark: Warning: vectorization fails") for e in o.evidence), o.evidence
    assert check(LOOPS, '[[kernel]]\nname = "strided_rowsum_kernel"\ntarget = "sm_80"\n'
                        '[[kernel.loop]]\nline = 105\npipelined = false\n').ok


# -- occupancy, registers ------------------------------------------------------------

def test_min_occupancy_blocks():
    rules = '[[kernel]]\nname = "matmul_kernel"\nvariant = {v}\nmin_occupancy_blocks = 2\n'
    assert check(SAMPLES, rules.format(v=1)).ok
    o = only(check(SAMPLES, rules.format(v=0)), "min_occupancy_blocks")  # 128x256 at 8 warps
    assert not o.ok and o.actual == 1
    assert "limited by registers" in o.evidence[0] and "207 registers" in o.evidence[0]


def test_max_registers():
    o = only(check(WHY, '[[kernel]]\nname = "big_tile_gemm_kernel"\ntarget = "sm_90"\nmax_registers = 128\n'),
             "max_registers")
    assert not o.ok and o.actual == 255


# -- conversions ------------------------------------------------------------------

@pytest.mark.parametrize("variant,holds", [("M=32,N=32,num_warps=4", False), ("M=32,N=8,num_warps=1", True),
                                           ("M=32,N=4,num_warps=1", True)])
def test_no_shared_memory_conversion_by_how_the_data_moves(variant, holds):
    """Row sums: the same line converts through shared memory, warp shuffles or
    registers by shape; only the first breaks the expectation."""
    report = check(CONVERSIONS, f'[[kernel]]\nname = "row_sums_kernel"\ntarget = "sm_90"\nvariant = "{variant}"\n'
                                '[[kernel.line]]\nline = 20\nno_shared_memory_conversion = true\n')
    o = only(report, "no_shared_memory_conversion")
    assert o.ok is holds
    assert o.evidence and "convert_layout at ttgir line 33 via " in o.evidence[0]
    if not holds:
        assert o.actual == 1 and "via shared_memory, 128 B scratch" in o.evidence[0]


def test_bias_broadcast_goes_through_shared_memory_and_bank_conflicts_hold():
    report = check(SAMPLES, '[[kernel]]\nname = "bias_gelu_rowsum_kernel"\n'
                            '[[kernel.line]]\nline = 43\nno_shared_memory_conversion = true\nmax_bank_conflicts = 1\n'
                            '[[kernel.line]]\nline = 45\nno_shared_memory_conversion = true\n')
    shared, conflicts, other = report.outcomes
    assert not shared.ok and "convert_layout at ttgir line 77 via shared_memory" in shared.evidence[0]
    assert conflicts.ok and conflicts.actual == 1
    assert other.ok and other.line == 45


def test_kernel_wide_no_shared_memory_conversion():
    o = only(check(CONVERSIONS, '[[kernel]]\nname = "chained_dot_kernel"\ntarget = "sm_80"\n'
                                'no_shared_memory_conversion = true\n'), "no_shared_memory_conversion")
    assert not o.ok and o.actual == 1 and len(o.evidence) == 1  # the registers one is not evidence


# -- a failed compile ---------------------------------------------------------------

def test_a_failed_capture_is_one_violation():
    report = check(LEARNER, '[[kernel]]\nname = "ptxas_kernel"\nspills = 0\n[[kernel.line]]\nline = 1\nspills = 0\n')
    assert [o.expectation for o in report.outcomes] == ["compiles"]
    assert not report.ok and "failed to compile" in report.outcomes[0].message


# -- bad rules: one line, exit 2 ------------------------------------------------------

BAD_RULES = [
    ('[[kernel]]\nname = "matmul_kernel"\nspils = 0\n', "unknown key 'spils'"),
    ('[[kernel]]\nname = "matmul_kernel"\nspills = "0"\n', "spills must be an integer"),
    ('[[kernel]]\nname = "matmul_kernel"\nspills = true\n', "spills must be an integer"),
    ('[[kernel]]\nname = "matmul_kernel"\nspills = -1\n', "spills must be at least 0"),
    ('[[kernel]]\nname = "matmul_kernel"\nspills = 0\nmax_spills = 2\n', "not both"),
    ('[[kernel]]\nspills = 0\n', "name = \"KERNEL\" is required"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.line]]\nline = 67\nuses = "wgmma"\nfoo = 1\n', "unknown key 'foo'"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.line]]\nline = 67\nuses = [1]\n', "list of instruction names"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.line]]\nline = 67\n', "no expectation"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.line]]\nuses = ["wgmma"]\n', "line = N is required"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.line]]\nline = 67\nfull_width = false\n', "expects nothing"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.loop]]\nline = 64\npipelined = "yes"\n', "true or false"),
    ('[[kernel]]\nname = "matmul_kernel"\nline = 3\n', "must be tables"),
    ('[kernel]\nname = "matmul_kernel"\n', "must be tables"),
    ('[[kernels]]\nname = "matmul_kernel"\n', "unknown key 'kernels'"),
    ('', "no [[kernel]] table"),
    ('[[kernel]\nname = "x"\n', "not valid TOML"),
]


@pytest.mark.parametrize("text,words", BAD_RULES)
def test_bad_rules_are_one_line_errors(text, words):
    with pytest.raises(RuleError) as e:
        parse_rules(text, "rules.toml")
    msg = str(e.value)
    assert words in msg and "\n" not in msg and msg.startswith("rules.toml: ")


BAD_AGAINST_BUNDLE = [
    ('[[kernel]]\nname = "nope"\nspills = 0\n', "no kernel 'nope'"),
    ('[[kernel]]\nname = "matmul_kernel"\ntarget = "sm_80"\nspills = 0\n', "no capture for target sm_80"),
    ('[[kernel]]\nname = "matmul_kernel"\nvariant = 9\nspills = 0\n', "index 9 is out of range"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.line]]\nline = 3\nspills = 0\n', "line 3 has no ops"),
    ('[[kernel]]\nname = "matmul_kernel"\n[[kernel.loop]]\nline = 67\npipelined = true\n',
     "no loop holding global loads at line 67"),
]


@pytest.mark.parametrize("text,words", BAD_AGAINST_BUNDLE)
def test_rules_naming_what_the_bundle_lacks_are_errors(text, words):
    with pytest.raises(RuleError) as e:
        check(SAMPLES, text)
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("text", [BAD_RULES[0][0], BAD_AGAINST_BUNDLE[3][0], BAD_RULES[-1][0]])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, text):
    rules = tmp_path / "rules.toml"
    rules.write_text(text)
    p = run_irscope("check", SAMPLES, rules)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("irscope: error: ")


def test_cli_missing_rules_file_and_bundle_exit_2(tmp_path):
    p = run_irscope("check", SAMPLES, tmp_path / "absent.toml")
    assert p.returncode == 2 and "no such rules file" in p.stderr and "Traceback" not in p.stderr
    rules = tmp_path / "rules.toml"
    rules.write_text('[[kernel]]\nname = "k"\nspills = 0\n')
    p = run_irscope("check", tmp_path / "absent.irscope", rules)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


# -- the command -------------------------------------------------------------------

def test_cli_exit_0_and_json_fields(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[kernel]]\nname = "add_kernel"\nspills = 0\n[[kernel.line]]\nline = 22\nmin_load_bits = 128\n')
    p = run_irscope("check", SAMPLES, rules, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ok"] is True and out["checked"] == 2 and out["violations"] == []
    assert {"kernel", "target", "variant", "capture", "expectation", "scope", "line", "expected", "actual", "ok",
            "evidence", "message"} <= set(out["outcomes"][1])


def test_cli_exit_1_lists_each_violation_with_evidence(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[kernel]]\nname = "gather_kernel"\ntarget = "sm_90"\n'
                     '[[kernel.line]]\nline = 16\nmin_load_bits = 128\n')
    p = run_irscope("check", WHY, rules, "--json")
    assert p.returncode == 1
    (v,) = json.loads(p.stdout)["violations"]
    assert (v["kernel"], v["target"], v["expectation"], v["line"], v["expected"], v["actual"]) == \
        ("gather_kernel", "sm_90", "min_load_bits", 16, 128, 16)
    assert v["evidence"][0].startswith("ld.global.b16 ")
    p = run_irscope("check", WHY, rules)
    assert p.returncode == 1
    assert "FAIL  line 16, min_load_bits" in p.stdout and "ld.global.b16 x" in p.stdout


def test_cli_layouts_in_evidence_reach_the_terminal_verbatim(tmp_path):
    """Evidence holds `[4, 1]` and `#ttg.blocked<...>`: text, never Rich markup."""
    rules = tmp_path / "rules.toml"
    rules.write_text('[[kernel]]\nname = "bias_gelu_rowsum_kernel"\n[[kernel.line]]\nline = 43\n'
                     'no_shared_memory_conversion = true\n')
    p = run_irscope("check", SAMPLES, rules)
    assert p.returncode == 1
    assert "warpsPerCTA = [4, 1], order = [1, 0]" in p.stdout


# -- docs/checks.md's worked example ---------------------------------------------------

def _fenced(text, lang):
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.M | re.S)


def test_the_worked_example_prints_what_the_doc_shows(tmp_path):
    doc = (ROOT / "docs" / "checks.md").read_text()
    (rules,) = _fenced(doc, "toml")
    (shown,) = _fenced(doc, "text")
    (tmp_path / "rules.toml").write_text(rules)
    (tmp_path / "mm.irscope").symlink_to(SAMPLES)
    assert "`irscope check mm.irscope rules.toml` prints, and exits 1:" in doc
    p = run_irscope("check", "mm.irscope", "rules.toml", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stdout == shown


def test_a_helper_line_named_with_its_file():
    rules = ('[[kernel]]\nname = "bias_gelu_rowsum_kernel"\n[[kernel.line]]\nline = 21\nfile = "{f}"\n'
             'min_load_bits = 128\nuses = ["LDG"]\n')
    report = check(SAMPLES, rules.format(f="sample_kernels/jit_helper_call.py"))
    assert report.ok and only(report, "min_load_bits").actual == 128 and only(report, "uses").actual > 0
    with pytest.raises(RuleError, match="line 21 of elsewhere.py has no ops"):
        check(SAMPLES, rules.format(f="elsewhere.py"))


def test_a_left_out_variant_is_named_on_stderr(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[kernel]]\nname = "matmul_kernel"\nspills = 0\n')
    p = run_irscope("check", SAMPLES, rules)
    assert p.returncode == 0 and "matmul_kernel@sm_90 (#2)" in p.stdout
    assert "checking #2" in p.stderr and "variant =" in p.stderr
