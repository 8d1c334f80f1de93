#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test but the `slow` tier.
#   scripts/test.sh            plain build in build/
#   scripts/test.sh --asan     address+undefined sanitizer build in build-asan/
#   scripts/test.sh --levels   the plain build's tests again at each vector level below this CPU's
#                              own (ACLCONFORM_NO_AVX512: the AVX2 kernels on an AVX-512 CPU;
#                              with ACLCONFORM_NO_AVX2 too: the portable loops), emu512 left out
#                              (docs/hosts.md)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--asan" ]; then
  scripts/setup.sh build-asan -DACLCONFORM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cd build-asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
elif [ "${1:-}" = "--levels" ]; then
  scripts/setup.sh build
  cd build
  # the CPU features of impl/src/runtime/simd512.c's two levels
  has() { local f; for f in "$@"; do grep -qw "$f" /proc/cpuinfo || return 1; done; }
  runs=()
  if has avx512f avx512dq avx512vl avx512bw fma f16c bmi1; then runs+=("ACLCONFORM_NO_AVX512=1"); fi
  if has avx2 fma f16c bmi1 bmi2; then runs+=("ACLCONFORM_NO_AVX512=1 ACLCONFORM_NO_AVX2=1"); fi
  ((${#runs[@]})) || { echo "test.sh --levels: this CPU runs the portable loops only: no lower level" >&2; exit 0; }
  for r in "${runs[@]}"; do
    echo "== level forced down: $r" >&2
    env $r ctest -LE "slow|emu512" --output-on-failure -j2
  done
  exit 0
else
  scripts/setup.sh build
  cd build
fi
ctest -LE slow --output-on-failure -j2
