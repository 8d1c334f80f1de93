#!/usr/bin/env bash
# aarch64 (Kunpeng 920 class hosts) from this x86-64 machine: cross-build the whole tree with
# Debian's gcc-aarch64-linux-gnu against a sysroot unpacked from the arm64 .debs of the
# dependencies, run its tests under qemu-user (qemu-aarch64-static -L, no binfmt_misc), then a
# sweep of the built-in implementation whose verdicts must be those of the x86-64 report.
#
#   scripts/aarch64.sh [--ci] [--labels REGEX] [--sweep SECONDS] [--build-dir DIR] [--jobs N]
#
#   default   every test but the `slow` tier (ctest -LE slow: unit, api, oracle, golden, diff,
#             fuzz seeds), then a 60 s sweep (the README's main job) compared with
#             reports/builtin-spec.json (same_rows.py --verdicts)
#   --ci      the bounded stage .ci/run runs: the unit and api tiers and a 20 s sweep
#   --labels  the ctest labels to run instead (-L REGEX, `slow` always left out)
#   --sweep   the sweep's --time (0: no sweep)
#
# The machine's own packages are left as they are: libgsl-dev:arm64 cannot be installed beside
# libgsl-dev (installing it removes the native one), so the arm64 packages are downloaded with a
# private apt state in the build directory (no `dpkg --add-architecture`) and unpacked with
# dpkg -x into BUILD/sysroot.  Times under emulation mean nothing; results do.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build-aarch64
LABELS=""
SWEEP=60
JOBS=$(nproc)
while (($#)); do
  case "$1" in
    --ci) LABELS="unit|api"; SWEEP=20; shift ;;
    --labels) LABELS="$2"; shift 2 ;;
    --sweep) SWEEP="$2"; shift 2 ;;
    --build-dir) BUILD="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    *) echo "aarch64.sh: unknown argument '$1' (see the header of scripts/aarch64.sh)" >&2; exit 2 ;;
  esac
done

. scripts/apt.sh
apt_install_missing aarch64 build-essential cmake pkg-config python3 gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  qemu-user-static dpkg-dev

# ---- the sysroot: the arm64 packages of the dependencies, unpacked -------------------------
SYSROOT_PKGS=(libgsl-dev libgsl27 libgslcblas0 libcjson-dev libcjson1 libcmocka-dev libcmocka0 libmpfr-dev libmpfr6
              libgmp-dev libgmp10)
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
SYSROOT=$BUILD/sysroot
if [ "$(cat "$SYSROOT/.packages" 2>/dev/null)" != "${SYSROOT_PKGS[*]}" ]; then
  echo "aarch64: unpacking the arm64 packages into $SYSROOT" >&2
  apt_dir=$BUILD/apt
  rm -rf "$SYSROOT" "$apt_dir"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$SYSROOT"
  APT=(apt-get -qq -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o "Dir::State::Lists=$apt_dir/lists"
       -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO "${APT[@]}" update
  (cd "$apt_dir/debs" && $SUDO "${APT[@]}" download "${SYSROOT_PKGS[@]/%/:arm64}")
  for deb in "$apt_dir/debs"/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
  echo "${SYSROOT_PKGS[*]}" >"$SYSROOT/.packages"
fi

# ---- configure and build ------------------------------------------------------------------
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DACLCONFORM_SYSROOT="$SYSROOT" \
    -DACLCONFORM_WERROR=ON >/dev/null
fi
log="$BUILD/build.log"
if ! cmake --build "$BUILD" -j"$JOBS" >"$log" 2>&1; then
  cat "$log" >&2
  echo "aarch64: build failed (log: $log)" >&2
  exit 1
fi
readelf -h "$BUILD/conform/aclnn-conform" 2>/dev/null | grep -q "Machine:.*AArch64" ||
  { echo "aarch64: $BUILD/conform/aclnn-conform is not an aarch64 executable" >&2; exit 1; }

# ---- tests under qemu-user ------------------------------------------------------------------
cd "$BUILD"
if [ -n "$LABELS" ]; then
  ctest -L "$LABELS" -LE slow --output-on-failure -j"$JOBS"
else
  ctest -LE slow --output-on-failure -j"$JOBS"
fi
cd - >/dev/null

# ---- the main job under qemu: a sweep whose verdicts are the x86-64 report's ----------------
if [ "$SWEEP" != 0 ]; then
  QEMU=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
  out=$BUILD/sweep-aarch64.json
  echo "aarch64: sweep of the built-in implementation under qemu, --time $SWEEP" >&2
  rc=0
  "${QEMU[@]}" "$BUILD/conform/aclnn-conform" sweep --time "$SWEEP" --no-store --quiet --output "$out" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "aarch64: the sweep exited $rc" >&2
    exit 1
  fi
  python3 tests/conform/same_rows.py --verdicts "$out" reports/builtin-spec.json
fi
