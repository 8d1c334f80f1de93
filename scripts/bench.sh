#!/usr/bin/env bash
# Speed of the built-in implementation against a STREAM triad moving the same bytes, measured in
# the same process (bench/bench_speed.c).  A benchmark, not a test: nothing fails on timings.
#   scripts/bench.sh [bench_speed options]     e.g. --threads 1, --op softplus_backward, --n 4194304
# Builds the Release tree build/ first (scripts/setup.sh).  The triad% column is the number to
# read: absolute times move with the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build -DCMAKE_BUILD_TYPE=Release
cmake --build build --target bench_speed -j1 >/dev/null
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), bench_speed $*"
exec build/bench/bench_speed "$@"
