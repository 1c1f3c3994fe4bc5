"""Two processes writing one bundle at once both land completely, and a reader running
meanwhile always sees a consistent bundle (real processes, real captured texts)."""

import subprocess
import sys
import textwrap
import time

import irscope
from conftest import DATA, ROOT

SOURCE = DATA / "samples_sm90.irscope"
PER_WRITER = 6

# Copies every capture of the fixture bundle into BUNDLE, PER_WRITER times, each copy
# with its own variant label (tagged by the writer) and a pass text of its own, so
# every write compresses and stores new blobs.
WRITER = textwrap.dedent('''
    import sys
    sys.path.insert(0, {root!r})
    from irscope.store.bundle import Bundle
    from irscope.compiler.records import CapturedKernel, PassRecord, Resources, RunInfo

    src, dst, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with Bundle.open(src) as s:
        rows = s.captures()
        kernels = []
        for r in rows:
            info = s.capture_info(r.id)
            stages = {{st: s.stage_text(r.id, st) for st in r.stages}}
            passes = [PassRecord(p.seq, p.stage, p.kind, p.when, p.name, p.argument, p.options, p.anchor,
                                 p.anchor_name, s.text(p.blob), p.seconds) for p in s.passes(r.id)]
            kernels.append((r, info, stages, passes))
    out = Bundle.open(dst, create=True)
    run = out.begin_run(RunInfo(["writer", tag], "x.py", "/", "h", "compile-only", ["sm_90"], False, "t",
                                "2026-12-01", sys.executable))
    for i in range(n):
        for r, info, stages, passes in kernels:
            own = [PassRecord(p.seq, p.stage, p.kind, p.when, p.name, p.argument, p.options, p.anchor,
                              p.anchor_name, p.text + f"// {{tag}} {{i}}\\n", p.seconds) for p in passes[:3]]
            k = CapturedKernel(r.kernel, r.file, r.first_line, None, r.target, f"{{tag}}-{{i}}-{{r.variant}}",
                               info["hash"], {{}}, {{}}, {{}}, {{}}, {{"triton": r.triton_version}}, "h", [], "",
                               1.0, {{}}, stages, own + passes[3:], Resources(registers=r.registers), info["metadata"],
                               "compile-only")
            out.add_capture(run, k)
    out.finish_run(run, complete=True, status="ok")
    out.close()
''')


def test_two_writers_and_a_reader(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT)))
    dst = tmp_path / "shared.irscope"
    with irscope.open(str(SOURCE)) as b:
        per_copy = len(b.captures())
        expected = {c.variant: (c.stages, len(c.pass_rows())) for c in b.captures()}
    writers = [subprocess.Popen([sys.executable, str(script), str(SOURCE), str(dst), tag, str(PER_WRITER)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    seen_counts = []
    while any(w.poll() is None for w in writers):
        if dst.exists() and dst.stat().st_size:
            try:
                seen_counts.append(_check_consistent(dst, expected))
            except irscope.errors.IrscopeError as exc:  # only "no captures yet" is acceptable
                assert "holds no captures" in str(exc) or "no such bundle" in str(exc), exc
        time.sleep(0.05)
    for w in writers:
        out, err = w.communicate()
        assert w.returncode == 0, err
    final = _check_consistent(dst, expected)
    assert final == 2 * PER_WRITER * per_copy
    with irscope.open(str(dst)) as b:
        runs = b.runs()
        assert [r.complete for r in runs] == [True, True]
        for tag in ("a", "b"):
            mine = [c for c in b.captures() if c.variant.startswith(tag + "-")]
            assert len(mine) == PER_WRITER * per_copy
            assert all(p.text.endswith(f"// {c.variant.split('-')[0]} {c.variant.split('-')[1]}\n")
                       for c in mine[:3] for p in c.passes()[:3])
    assert seen_counts == sorted(seen_counts)  # a reader never sees captures vanish


def _check_consistent(path, expected) -> int:
    """Every capture a reader lists has all its stages and passes readable."""
    with irscope.open(str(path)) as b:
        caps = b.captures()
        for c in caps[-3:]:  # the newest ones, those most likely caught mid-write
            stages, n_passes = expected[c.variant.split("-", 2)[2]]
            assert c.stages == stages and len(c.pass_rows()) == n_passes
            assert c.stage("ttgir").text and c.passes()[-1].text
        return len(caps)
