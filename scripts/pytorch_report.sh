#!/usr/bin/env bash
# Sweep PyTorch's CPU operators through the out-of-process path and publish the result as
# reports/pytorch-cpu.{json,md,html}:  export -> tools/torch_target.py -> score -> report.
#   scripts/pytorch_report.sh [--cases N] [--seed S]      (default 200 cases per stream)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=200 seed=0x70c4
source scripts/report_args.sh "$@"
scripts/setup.sh build
missing=()
for p in python3-torch python3-numpy; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
B=build/conform/aclnn-conform
# cases of more than 32768 elements in all tensors are left out: the cases a published report
# cites are committed, and unshrunk PyTorch failures (there is no shrinking through files) of the
# large tier would add ~10 MB
$B export --cases "$cases" --invalid-cases 0 --seed "$seed" --max-elements 32768 --out "$work/cases"
/usr/bin/python3 tools/torch_target.py "$work/cases"
set +e
$B score "$work/cases" --quiet --output "$work/pytorch-cpu.json"
rc=$?
set -e
[ "$rc" -le 1 ] || exit "$rc"
# the report names the target: PyTorch through export/score; every case it cites is kept under
# reports/pytorch-cpu/cases/ (with PyTorch's outputs beside it, so `score PATH` reproduces it) and
# the report links those copies, never the temporary export directory
rm -rf reports/pytorch-cpu/cases.tmp
/usr/bin/python3 - "$work/pytorch-cpu.json" "$work/cases" reports/pytorch-cpu/cases <<'PY'
import json, os, shutil, sys, torch
p, src, dst = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
r = json.load(open(p))
r["run"]["target"] = "pytorch %s CPU (tools/torch_target.py via export/score)" % torch.__version__
tmp = dst + ".tmp"
def keep(path):
    if not isinstance(path, str) or not path:
        return path
    real = os.path.realpath(path)
    if not real.startswith(src + os.sep):
        return path
    rel = os.path.relpath(real, src)
    if not os.path.isdir(os.path.join(tmp, rel)):
        shutil.copytree(real, os.path.join(tmp, rel))
    return os.path.join(dst, rel)
def size(path):
    real = os.path.realpath(path)
    return sum(os.path.getsize(os.path.join(real, f)) for f in os.listdir(real)) if os.path.isdir(real) else 1 << 62
# a published report keeps what a reader follows: each row's worst case and its 3 smallest
# failing cases (the full counts stay in the row; failures_total says how many failed)
kept = []
for row in r.get("results", []):
    ids = sorted(row.get("failed_cases_ids", []), key=size)[:3]
    row["failed_cases_ids"] = [keep(x) for x in ids]
    kept += row["failed_cases_ids"]
    for w in ("worst", "worst_finite"):
        if w in row:
            row[w]["case"] = keep(row[w].get("case"))
    # the failing-case table shows the smallest case of each kind and the largest finite error:
    # only those are kept (and copied)
    exs, small, best = row.get("examples", []), {}, None
    for ex in exs:
        k = ex["kind"]
        if k not in small or (ex.get("elements", 0), ex["case_index"]) < (small[k].get("elements", 0), small[k]["case_index"]):
            small[k] = ex
        if isinstance(ex.get("ulp"), (int, float)) and (best is None or ex["ulp"] > best["ulp"]):
            best = ex
    row["examples"] = [ex for ex in exs if ex is best or small.get(ex["kind"]) is ex]
    for ex in row["examples"]:  # the failing-case tables: the path and its FAIL line
        old = ex.get("case")
        ex["case"] = keep(old)
        if isinstance(old, str) and old and isinstance(ex.get("line"), str):
            ex["line"] = ex["line"].replace(old, ex["case"])
        kept.append(ex["case"])
for sc in r.get("status_checks", []):
    sc["example"] = keep(sc.get("example"))
r["failures_total"] = len(r.get("failures", []))
r["failures"] = sorted(set(kept))
os.makedirs(tmp, exist_ok=True)
json.dump(r, open(p, "w"), indent=1)
PY
rm -rf reports/pytorch-cpu/cases && mkdir -p reports/pytorch-cpu && mv reports/pytorch-cpu/cases.tmp reports/pytorch-cpu/cases
mkdir -p reports
cp "$work/pytorch-cpu.json" reports/pytorch-cpu.json.tmp && mv reports/pytorch-cpu.json.tmp reports/pytorch-cpu.json
$B report reports/pytorch-cpu.json --format md -o reports/pytorch-cpu.md
$B report reports/pytorch-cpu.json --format html -o reports/pytorch-cpu.html
echo "wrote reports/pytorch-cpu.{json,md,html} (score exit $rc: 1 = deviations found)"
