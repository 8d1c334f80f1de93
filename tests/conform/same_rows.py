#!/usr/bin/env python3
"""Two targets, one sweep: the same seed and cases through both, and every result row, status
check and failure list must be the same (only the run's own fields are left out: run, case,
cases_stored, failed_cases_ids, and coverage, whose thread counts depend on the target's kind).

usage: same_rows.py [--expect-differ] ACLNN_CONFORM TARGET_A TARGET_B [sweep options...]
       same_rows.py --verdicts REPORT_A REPORT_B
Exit 0 when the rows are equal, 1 when they differ (each difference printed), 2 when a sweep
did not produce its report.  --verdicts compares two reports already written, of runs that need
not have drawn the same cases (another host, another --time): the same rows (op, dtype,
variant), each with the same verdict, and the same status-check rules, each with the same
number of mismatches (scripts/aarch64.sh: an aarch64 sweep against the x86-64 report).  --expect-differ turns 0 and 1 round (the comparator's own test: a
target with one planted bit must be told apart).  The emu512 tests run it on the plain library against the software
AVX-512 build (impl/src/runtime/simd512_emu.h): equal rows on every statistic of every stream
(maxima, ULP sums, histograms, worst cases) is the sweep-wide form of "the same bits"."""
import json, os, shlex, subprocess, sys, tempfile

SKIP = {"run", "case", "cases_stored", "failed_cases_ids", "target"}


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in SKIP}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


def sweep(tool, target, opts, out):
    emu = shlex.split(os.environ.get("ACLCONFORM_TEST_EMULATOR", ""))  # a cross build's qemu-user
    r = subprocess.run(emu + [tool, "sweep", "--target", target, "--no-store", "--quiet", "--output", out] + opts,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1) or not os.path.exists(out):
        sys.stderr.write(f"same_rows: sweep of {target} ended {r.returncode}: {r.stderr.strip()}\n")
        sys.exit(2)
    with open(out) as f:
        return json.load(f)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"same_rows: {path}: {e}\n")
        sys.exit(2)


def same_verdicts(pa, pb):
    a, b = load(pa), load(pb)
    key = lambda r: (r.get("op"), r.get("dtype"), r.get("variant", ""))
    va = {key(r): r.get("verdict") for r in a.get("results", [])}
    vb = {key(r): r.get("verdict") for r in b.get("results", [])}
    sa = {(c.get("op"), c.get("rule")): c.get("mismatches") for c in a.get("status_checks", [])}
    sb = {(c.get("op"), c.get("rule")): c.get("mismatches") for c in b.get("status_checks", [])}
    bad = 0
    for k in sorted(set(va) | set(vb), key=str):
        if va.get(k) != vb.get(k):
            bad += 1
            print(f"{' '.join(x for x in k if x)}: {va.get(k)} against {vb.get(k)}")
    for k in sorted(set(sa) | set(sb), key=str):
        if sa.get(k) != sb.get(k):
            bad += 1
            print(f"status check {k[0]} {k[1]}: {sa.get(k)} mismatches against {sb.get(k)}")
    if not va:
        bad += 1
        print("same_rows: no result rows")
    print(f"same_rows: {len(va)} rows and {len(sa)} status checks, {bad} differences in verdicts"
          f" ({a.get('run', {}).get('cases')} against {b.get('run', {}).get('cases')} cases)")
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    if args and args[0] == "--verdicts":
        if len(args) != 3:
            sys.stderr.write(__doc__)
            return 2
        return same_verdicts(args[1], args[2])
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
