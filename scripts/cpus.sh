#!/usr/bin/env bash
# The x86-64 CPUs this machine is not: the default test set run on qemu's CPU models (qemu-user,
# TCG: AVX2, FMA, F16C and BMI2 are emulated, AVX-512 is not), so that every cpuid answer -- the
# kernels' vector level, the target_clones clone of the portable loops, glibc's ifuncs (libm's
# FMA variants, libmvec's SSE/AVX2 ones) -- is that model's.  The host's own levels are
# scripts/test.sh --levels; the AVX-512 kernels off AVX-512 hardware are the emu512 tests.
#
#   scripts/cpus.sh [--cpus "MODEL..."] [--labels REGEX] [--build-dir DIR] [--jobs N] [--quick]
#
#   --cpus    qemu models (qemu-x86_64-static -cpu help); default "Haswell EPYC-Rome Nehalem":
#             Intel AVX2 (x86-64-v3), AMD Zen 2 (x86-64-v3), and an SSE4.2 CPU (the baseline
#             clone and the portable loops: what neither env switch reaches)
#   --labels  ctest -L REGEX (default: every test but the slow and emu512 tiers)
#   --quick   the bounded form .ci/run runs: no build of its own, the api tier of the plain build
#             (build/, scripts/setup.sh), each api test executable run directly on each model
#             (they start no other program), two at a time
#
# One native build (build-cpus) whose tests ctest runs under scripts/qemu_x86.sh, the model chosen
# per run by ACLCONFORM_QEMU_CPU.  Emulated times mean nothing; results do.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build-cpus
CPUS="Haswell EPYC-Rome Nehalem"
LABELS=""
JOBS=$(nproc)
QUICK=0
while (($#)); do
  case "$1" in
    --cpus) CPUS="$2"; shift 2 ;;
    --labels) LABELS="$2"; shift 2 ;;
    --build-dir) BUILD="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    *) echo "cpus.sh: unknown argument '$1' (see the header of scripts/cpus.sh)" >&2; exit 2 ;;
  esac
done

. scripts/apt.sh
apt_install_missing cpus qemu-user-static
EMU=$(pwd)/scripts/qemu_x86.sh
for c in $CPUS; do
  ACLCONFORM_QEMU_CPU=$c "$EMU" /bin/true 2>/dev/null ||
    { echo "cpus.sh: qemu has no CPU model '$c' (qemu-x86_64-static -cpu help)" >&2; exit 2; }
done

if ((QUICK)); then
  scripts/setup.sh build
  fails=0
  for c in $CPUS; do
    echo "== CPU model $c: the api tier" >&2
    # each executable once, its output kept (build/cpus-logs/MODEL/) and shown when it fails
    logs=build/cpus-logs/$c
    mkdir -p "$logs"
    find build/tests -maxdepth 1 -type f -executable -name 'api_test_*' ! -name '*_emu512' | sort |
      ACLCONFORM_QEMU_CPU=$c xargs -P "$JOBS" -I{} sh -c \
        'log="$1/$(basename "$2").log"; "$0" "$2" >"$log" 2>&1 && echo "passed $2" ||
         { cat "$log"; echo "FAILED $2"; exit 1; }' "$EMU" "$logs" {} ||
      fails=$((fails + 1))
  done
  ((fails == 0)) || { echo "cpus.sh: api tests failed on $fails of the CPU models" >&2; exit 1; }
  exit 0
fi
scripts/setup.sh "$BUILD" -DCMAKE_CROSSCOMPILING_EMULATOR="$EMU"

cd "$BUILD"
fails=0
for c in $CPUS; do
  echo "== CPU model $c" >&2
  if [ -n "$LABELS" ]; then
    ACLCONFORM_QEMU_CPU=$c ctest -L "$LABELS" -LE slow --output-on-failure -j"$JOBS" || fails=$((fails + 1))
  else
    ACLCONFORM_QEMU_CPU=$c ctest -LE "slow|emu512" --output-on-failure -j"$JOBS" || fails=$((fails + 1))
  fi
done
((fails == 0)) || { echo "cpus.sh: tests failed on $fails of the CPU models" >&2; exit 1; }
