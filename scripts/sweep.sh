#!/usr/bin/env bash
# The README's main job: install what is missing, build, and run the default conformance sweep
# (all operators x dtypes x variants against the built-in implementation, about a minute).
# Extra arguments go to `aclnn-conform sweep` (e.g. --seed 7 --time 300 --op gelu_backward_v2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
exec build/conform/aclnn-conform sweep "$@" # default budget: --time 60
