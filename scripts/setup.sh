#!/usr/bin/env bash
# Install what the build needs (Debian 12 packages) and configure + build one tree.
#   scripts/setup.sh [BUILD_DIR [extra cmake args...]]
# Idempotent: installs only missing packages, reconfigures only when asked for a new tree,
# rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config libgsl-dev libcjson-dev libcmocka-dev libmpfr-dev python3)
# SIMDe: the tests' software AVX-512 (x86-64 only; on aarch64 the portable loops are the product)
case "$(uname -m)" in x86_64 | amd64) PACKAGES+=(libsimde-dev) ;; esac

. scripts/apt.sh
apt_install_missing setup "${PACKAGES[@]}"

BUILD_DIR="${1:-build}"
shift || true
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DACLCONFORM_WERROR=ON "$@" >/dev/null
fi
log="$BUILD_DIR/build.log"
if ! cmake --build "$BUILD_DIR" -j"$(nproc)" >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: build failed (log: $log)" >&2
  exit 1
fi
