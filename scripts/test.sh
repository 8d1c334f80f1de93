#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test but the `slow` tier.
#   scripts/test.sh            plain build in build/
#   scripts/test.sh --asan     address+undefined sanitizer build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--asan" ]; then
  scripts/setup.sh build-asan -DACLCONFORM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cd build-asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
  scripts/setup.sh build
  cd build
fi
ctest -LE slow --output-on-failure -j2
