#!/usr/bin/env bash
# Throughput of a sweep against the built-in implementation vs the same implementation loaded as
# a foreign library (libaclnn_impl.so through persistent worker processes), same seed and case
# budget, 1 and 2 jobs.  Prints cases/s and the foreign/builtin ratio measured in this run
# (issue 10's target: >= 0.5).  Usage: scripts/bench_targets.sh [CASES_PER_STREAM] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build > /dev/null
CASES=${1:-64}
REPEATS=${2:-3}
TOOL=build/conform/aclnn-conform
LIB=$(ls build/impl/libaclnn_impl.so)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# best of REPEATS runs: wall seconds and cases of one sweep
run() { # target jobs
    local best="" cases=0
    for _ in $(seq "$REPEATS"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$TOOL" sweep --target "$1" --jobs "$2" --cases "$CASES" --seed 0x5eed --no-store --quiet \
            --output "$TMP/r.json" > /dev/null || true
        t1=$(date +%s.%N)
        # run.cases is the report's first "cases" field
        cases=$(awk -F'[:,]' '/"cases"/ { gsub(/[ \t]/, "", $2); print $2; exit }' "$TMP/r.json")
        best=$(awk -v a="$t0" -v b="$t1" -v best="$best" 'BEGIN { s = b - a; print (best == "" || s < best) ? s : best }')
    done
    echo "$cases $best"
}

printf '%-8s %-5s %8s %9s %10s %s\n' target jobs cases seconds cases/s "foreign/builtin"
for jobs in 1 2; do
    read -r cb sb < <(run builtin "$jobs")
    read -r cf sf < <(run "$LIB" "$jobs")
    awk -v j="$jobs" -v cb="$cb" -v sb="$sb" -v cf="$cf" -v sf="$sf" 'BEGIN {
        printf "%-8s %-5s %8d %9.2f %10.0f\n", "builtin", j, cb, sb, cb / sb
        printf "%-8s %-5s %8d %9.2f %10.0f %.2f\n", "foreign", j, cf, sf, cf / sf, (cf / sf) / (cb / sb) }'
done
