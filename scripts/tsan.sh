#!/usr/bin/env bash
# ThreadSanitizer run of the threaded tests (ctest label `tsan`): the built-in implementation
# called from several threads while the thread count changes, the executor registry under racing
# run/destroy, the oracle's per-thread MPFR caches, and NsaCompressGrad at 1, 2 and 3 threads.
#   scripts/tsan.sh [BUILD_DIR]        (default build-tsan; JOBS=N for the build, default nproc)
# Compiler: gcc with -fsanitize=thread (CC=clang to try clang, installed with apt-get if missing;
# clang 14 cannot build impl/src/runtime/conv.c, whose __builtin_cpu_supports("f16c") it rejects).
# ACLCONFORM_HAVE_LIBMVEC=OFF: no target_clones kernels — their ifunc resolvers run while the
# dynamic loader relocates, before the TSan runtime is up, and crash in its instrumentation (the
# bf16 conversions in conv.c drop their clones under __SANITIZE_THREAD__ for the same reason).
# OpenMP: LLVM's runtime (libomp-dev), linked in place of libgomp through its GOMP-compatible
# libgomp.so, with the Archer tool (libarcher.so) telling TSan about OpenMP's own barriers and
# locks — libgomp is not instrumented and would report them as races.  Exit status: ctest's
# (non-zero when TSan reports anything: halt_on_error makes the test process fail).
set -euo pipefail
cd "$(dirname "$0")/.."

CC="${CC:-gcc}"
PACKAGES=(libomp-dev libtsan2 build-essential cmake pkg-config libgsl-dev libcjson-dev libcmocka-dev libmpfr-dev libsimde-dev python3)
[ "$CC" = clang ] && PACKAGES+=(clang)
. scripts/apt.sh
apt_install_missing tsan "${PACKAGES[@]}"

BUILD_DIR="${1:-build-tsan}"
JOBS="${JOBS:-$(nproc)}"
OMPLIB=$(ls -d /usr/lib/llvm-*/lib 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$OMPLIB" ] || [ ! -e "$OMPLIB/libgomp.so" ]; then
  echo "tsan: LLVM's OpenMP runtime not found (apt-get install libomp-dev)" >&2
  exit 3
fi
# -Wno-unknown-warning-option: clang does not know every gcc warning option the tree passes
FLAGS="-fsanitize=thread -fno-omit-frame-pointer -g -O1"
[ "$CC" = clang ] && FLAGS+=" -Wno-unknown-warning-option"
LINK="-fsanitize=thread -L$OMPLIB -Wl,-rpath,$OMPLIB"
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  CC="$CC" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DACLCONFORM_WERROR=ON \
    -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK" \
    -DACLCONFORM_HAVE_LIBMVEC=OFF >/dev/null
fi
# Only what the tsan-labelled tests need (the whole tree builds too, just slower).
cmake --build "$BUILD_DIR" -j"$JOBS" --target api_test_threads api_test_executor_registry oracle_test_threads \
  api_test_nsa_compress_grad

if [ -e "$OMPLIB/libarcher.so" ]; then
  export OMP_TOOL_LIBRARIES="$OMPLIB/libarcher.so"
else
  echo "tsan: libarcher.so not found (libomp-dev); OpenMP's barriers may be reported as races" >&2
fi
# ignore_noninstrumented_modules: libomp (and GSL/MPFR/GMP) are not instrumented; Archer asks
# for it so that the runtime's internal locking is not reported.  Our code is still checked.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1 ${TSAN_OPTIONS:-}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-4}"
cd "$BUILD_DIR"
ctest -L tsan -R 'api_test_threads|api_test_executor_registry|oracle_test_threads|api_test_nsa_compress_grad' \
  --output-on-failure
