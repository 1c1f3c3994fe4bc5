"""Compare two bundles kernel by kernel: is the TTGIR the same, and the registers?

    python scripts/compare_captures.py A.irscope B.irscope [--json OUT]

Captures are matched by (kernel, variant, target). TTGIR is compared after
replacing absolute source paths in locations by the file's base name, since
the two captures may come from different checkouts. Used to check that a
compile-only capture (no GPU) is faithful to a real run.
"""

import argparse
import json
import re
import sys

from irscope.store.bundle import Bundle

_PATH = re.compile(r'loc\("(?:[^"]*/)?([^"/]+)"')


def _normalise(text: str) -> str:
    return _PATH.sub(r'loc("\1"', text)


def compare(a_path: str, b_path: str) -> list[dict]:
    out = []
    with Bundle.open(a_path) as a, Bundle.open(b_path) as b:
        b_rows = {(r.kernel, r.variant, r.target): r for r in b.captures()}
        for ra in a.captures():
            rb = b_rows.get((ra.kernel, ra.variant, ra.target))
            row = {"kernel": ra.kernel, "variant": ra.variant, "target": ra.target, "in_b": rb is not None}
            if rb is not None:
                same = {}
                for stage in ("ttir", "ttgir", "llir", "ptx"):
                    if stage in ra.stages and stage in rb.stages:
                        same[stage] = _normalise(a.stage_text(ra.id, stage)) == _normalise(b.stage_text(rb.id, stage))
                row.update(same_text=same, registers_a=ra.registers, registers_b=rb.registers,
                           source_a=ra.resource_source, source_b=rb.resource_source,
                           spills_a=ra.spill_stores, spills_b=rb.spill_stores)
            out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = compare(args.a, args.b)
    for r in rows:
        if not r["in_b"]:
            print(f"{r['kernel']:<28} {r['variant'][:50]:<50} {r['target']}: only in A")
            continue
        same = ",".join(k for k, v in r["same_text"].items() if v) or "none"
        print(f"{r['kernel']:<28} {r['variant'][:50]:<50} {r['target']}: same text: {same}; "
              f"regs {r['registers_a']} ({r['source_a']}) vs {r['registers_b']} ({r['source_b']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    ok = all(r["in_b"] and r["same_text"].get("ttgir") and r["registers_a"] == r["registers_b"] for r in rows)
    print("all match" if ok else "MISMATCHES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
