#!/usr/bin/env bash
# libFuzzer runs of the harnesses in tests/fuzz/libfuzzer/ (issue 11): the case.json reader, the
# .npy reader and the report reader/merge/publisher, in an address+undefined sanitizer build.
#
#   scripts/fuzz.sh [--seconds S | --runs N | --ci] [--build-dir DIR] [--jobs J] [HARNESS...]
#
#   --seconds S     run each harness for S seconds (default 60)
#   --runs N        run each harness for N executions instead (e.g. 10000000)
#   --ci            the bounded run of CI (.ci/run): a fixed libFuzzer seed, a fixed number of
#                   executions per harness (~5-15 s each here) and a fresh corpus from the
#                   committed seeds only, so a CI run is reproducible and does not depend on
#                   what a local campaign found
#   --build-dir DIR separate clang build (default build-fuzz/); the plain build is untouched
#   --jobs J        make -j J (default 1)
#   HARNESS         case npy report abi constraints (default: all five)
#
# Installs clang (and libomp-dev, which the project's OpenMP needs under clang) with apt-get when
# missing.  Each harness's corpus grows in DIR/corpus/<harness> (seeded from
# tests/fuzz/libfuzzer/seeds/<harness>); a crash, leak or sanitizer report leaves its input in
# DIR/artifacts/ and makes the script exit 1.  The last line per harness is
#   fuzz <harness>: <execs> execs in <s> s, <n> crashes
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
seconds=60 runs="" bdir=build-fuzz jobs=1 harnesses=() ci=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --build-dir) bdir="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --ci) ci=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    case|npy|report|abi|constraints) harnesses+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(case npy report abi constraints)

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
dpkg -s libomp-dev >/dev/null 2>&1 || need+=(libomp-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${need[*]}" >&2
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

case "$bdir" in /*) ;; *) bdir="$ROOT/$bdir" ;; esac
# clang 14 rejects __builtin_cpu_supports("f16c") (impl/src/runtime/conv.c picks its F16C path
# with it): the fuzz build, which exercises the harness's file readers and not the kernels, takes
# the portable conversion path instead
CPU_FEATURE_WORKAROUND=""
if ! printf 'int main(void){return __builtin_cpu_supports("f16c");}' | clang -x c - -o /dev/null 2>/dev/null; then
  mkdir -p "$bdir"
  echo '#define __builtin_cpu_supports(feature) 0' >"$bdir/no_cpu_supports.h"
  CPU_FEATURE_WORKAROUND="-include $bdir/no_cpu_supports.h"
fi
if [ ! -f "$bdir/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$bdir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DACLCONFORM_SANITIZE=ON -DACLCONFORM_LIBFUZZER=ON \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link -fno-omit-frame-pointer -Wno-unknown-warning-option $CPU_FEATURE_WORKAROUND" >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
nice make -C "$bdir" -j"$jobs" "${targets[@]}" >/dev/null

# the report harness writes its files under TMPDIR: tmpfs keeps it ~10x faster than a disk
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
out="$bdir"
((ci)) && out="$bdir/ci" && rm -rf "$out" # logs, artifacts and corpora of a CI run: its own
mkdir -p "$out/artifacts"
status=0
declare -A CI_RUNS=([case]=200000 [npy]=1000000 [report]=10000 [abi]=10000 [constraints]=20000)
for h in "${harnesses[@]}"; do
  corpus="$bdir/corpus/$h"
  budget=(-max_total_time="$seconds")
  [ -z "$runs" ] || budget=(-runs="$runs")
  if ((ci)); then
    corpus="$out/corpus/$h"
    budget=(-runs="${CI_RUNS[$h]}" -seed=1)
  fi
  mkdir -p "$corpus"
  log="$out/fuzz-$h.log"
  start=$(date +%s)
  set +e
  # stdout/stderr of the code under test are closed (-close_fd_mask=3); libFuzzer's own report
  # and any sanitizer report still reach the log
  nice "$bdir/tests/fuzz_$h" "$corpus" "$ROOT/tests/fuzz/libfuzzer/seeds/$h" "${budget[@]}" \
    -close_fd_mask=3 -rss_limit_mb=2048 -max_len=65536 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$h-" >"$log" 2>&1
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(ls "$out/artifacts" | grep -c "^$h-" || true)
  echo "fuzz $h: ${execs:-?} execs in $secs s, $crashes crashes (exit $rc; log $log)"
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
    status=1
    grep -E "ERROR|SUMMARY|runtime error" "$log" | head -5 >&2 || true
  fi
done
exit $status
