#!/bin/bash
# A/B timing of two builds of the library in both orders (issue 14, round 31).
#
#     scripts/ab.sh [--rounds N] A.so B.so [bench_torch.py options...]
#
# bench/bench_torch.py times PyTorch and each --ours library in one process, in an order rotated
# rep by rep; what bias remains favours the library listed later (round 31: the same library
# given twice read 0-4 % apart). So each round here runs `--ours A --ours B` and then
# `--ours B --ours A`, and the script prints, per row, every B/A ratio and their geometric mean
# (below 1: B is faster). Every option goes to bench_torch.py as is (--op, --dtype, --reps,
# --threads, --n, --no-layouts).
#
#     scripts/ab.sh --rounds 3 old.so build/impl/libaclnn_impl.so --op softplus_backward --dtype f64 --reps 9
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
if [ "${1:-}" = "--rounds" ]; then
  [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: --rounds needs a positive integer" >&2; exit 2; }
  rounds=$2
  shift 2
fi
case "${1:-}" in -h|--help) sed -n '2,12p' "$0"; exit 0 ;; esac
[ $# -ge 2 ] || { echo "usage: scripts/ab.sh [--rounds N] A.so B.so [bench_torch.py options...]" >&2; exit 2; }
A=$1 B=$2
shift 2
for lib in "$A" "$B"; do
  [ -f "$lib" ] || { echo "ab.sh: $lib: no such file" >&2; exit 2; }
done
extra=("$@")
py=/usr/bin/python3
[ -x "$py" ] || py=python3

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for ((r = 1; r <= rounds; r++)); do
  # a row is op, variant, dtype, n, torch ms, note, then one time per --ours library
  "$py" bench/bench_torch.py --ours "$A" --ours "$B" "${extra[@]}" | grep -v '^#' |
    awk -F'\t' 'NF >= 8 { printf "%s\t%s\t%s\tAB\t%s\t%s\n", $1, $2, $3, $(NF-1), $NF }' >>"$tmp"
  "$py" bench/bench_torch.py --ours "$B" --ours "$A" "${extra[@]}" | grep -v '^#' |
    awk -F'\t' 'NF >= 8 { printf "%s\t%s\t%s\tBA\t%s\t%s\n", $1, $2, $3, $NF, $(NF-1) }' >>"$tmp"
done
[ -s "$tmp" ] || { echo "ab.sh: bench_torch.py printed no rows" >&2; exit 1; }
# columns: row (op, variant, dtype), order, A ms, B ms
awk -F'\t' '
  { key = $1 " " $2 " " $3; if (!(key in n)) order[++rows] = key
    ratio = $6 / $5; n[key]++; s[key] += log(ratio); list[key] = list[key] sprintf(" %s:%.3f", $4, ratio) }
  END { printf "%-44s %8s  %s\n", "row", "B/A", "ratios (AB: A listed first; BA: B first)"
        for (i = 1; i <= rows; i++) { k = order[i]; printf "%-44s %8.3f %s\n", k, exp(s[k] / n[k]), list[k] } }' "$tmp"
