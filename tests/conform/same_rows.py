#!/usr/bin/env python3
"""Two targets, one sweep: the same seed and cases through both, and every result row, status
check and failure list must be the same (only the run's own fields are left out: run, case,
cases_stored, failed_cases_ids, and coverage, whose thread counts depend on the target's kind).

usage: same_rows.py [--expect-differ] ACLNN_CONFORM TARGET_A TARGET_B [sweep options...]
Exit 0 when the rows are equal, 1 when they differ (each difference printed), 2 when a sweep
did not produce its report.  --expect-differ turns 0 and 1 round (the comparator's own test: a
target with one planted bit must be told apart).  The emu512 tests run it on the plain library against the software
AVX-512 build (impl/src/runtime/simd512_emu.h): equal rows on every statistic of every stream
(maxima, ULP sums, histograms, worst cases) is the sweep-wide form of "the same bits"."""
import json, os, subprocess, sys, tempfile

SKIP = {"run", "case", "cases_stored", "failed_cases_ids", "target"}


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in SKIP}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


def sweep(tool, target, opts, out):
    r = subprocess.run([tool, "sweep", "--target", target, "--no-store", "--quiet", "--output", out] + opts,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1) or not os.path.exists(out):
        sys.stderr.write(f"same_rows: sweep of {target} ended {r.returncode}: {r.stderr.strip()}\n")
        sys.exit(2)
    with open(out) as f:
        return json.load(f)


def main():
    args = sys.argv[1:]
    expect_differ = bool(args) and args[0] == "--expect-differ"
    if expect_differ:
        args = args[1:]
    if len(args) < 3:
        sys.stderr.write(__doc__)
        return 2
    tool, ta, tb, opts = args[0], args[1], args[2], args[3:]
    rc = compare(tool, ta, tb, opts)
    if expect_differ:
        print("same_rows: expected a difference" + (", found none" if rc == 0 else ", found it"))
        return 1 if rc == 0 else 0
    return rc


def compare(tool, ta, tb, opts):
    with tempfile.TemporaryDirectory(prefix="same_rows_") as d:
        a = sweep(tool, ta, opts, os.path.join(d, "a.json"))
        b = sweep(tool, tb, opts, os.path.join(d, "b.json"))
    bad = 0
    ra, rb = a.get("results", []), b.get("results", [])
    if len(ra) != len(rb) or not ra:
        print(f"same_rows: {len(ra)} rows against {len(rb)}")
        return 1
    for x, y in zip(ra, rb):
        name = f"{x.get('op')} {x.get('dtype')} {x.get('variant', '')}".strip()
        sx, sy = strip(x), strip(y)
        if sx != sy:
            bad += 1
            keys = [k for k in sx if sx[k] != sy.get(k)]
            print(f"{name}: differs in {', '.join(keys)}")
            for k in keys[:4]:
                print(f"  {k}: {json.dumps(sx[k])[:200]}\n  {' ' * len(k)}  {json.dumps(sy.get(k))[:200]}")
    for k in ("status_checks", "failures"):
        if strip(a.get(k)) != strip(b.get(k)):
            bad += 1
            print(f"{k} differ")
    rows_bad = sum(1 for x, y in zip(ra, rb) if strip(x) != strip(y))
    print(f"same_rows: {len(ra) - rows_bad} of {len(ra)} rows equal"
          + ("" if not bad else f", {bad} differences"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
