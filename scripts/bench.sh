#!/usr/bin/env bash
# Speed of the built-in implementation against a STREAM triad moving the same bytes, measured in
# the same process (bench/bench_speed.c), and PyTorch's time for the same rows (bench/bench_torch.py,
# Debian python3-torch, installed when missing; --no-torch skips it), with the built-in library
# (build/impl/libaclnn_impl.so) timed in that Python process too, alternating with PyTorch rep by
# rep: xtorch is the ratio of those two side-by-side times.  A benchmark, not a test: nothing
# fails on timings.
#   scripts/bench.sh [--no-torch] [bench_speed options]   e.g. --threads 1, --op softplus_backward, --n 4194304,
#                                                          --no-layouts (only the contiguous rows)
# Builds the Release tree build/ first (scripts/setup.sh).  The ratio columns are the numbers to
# read (triad% = triad time / op time; xtorch = PyTorch time / same_ms, above 1 = faster than
# PyTorch; same_ms = our time in the PyTorch process): absolute times move with the machine's
# load, and on a shared VM by up to 1.6x between two processes a minute apart.
set -euo pipefail
cd "$(dirname "$0")/.."
torch=1
if [ "${1:-}" = "--no-torch" ]; then torch=0; shift; fi
scripts/setup.sh build -DCMAKE_BUILD_TYPE=Release
cmake --build build --target bench_speed bench_ports aclnn_impl_shared -j1 >/dev/null
# bench_torch.py takes the same --n/--reps/--threads/--op/--dtype (bench_speed's --median/--tsv
# are not passed on)
targs=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --n|--reps|--threads|--op|--dtype) targs+=("${args[i]}" "${args[i+1]}"); i=$((i + 1)) ;;
    --no-layouts) targs+=("${args[i]}") ;;
  esac
done
peer=()
if ((torch)); then
  . scripts/apt.sh
  /usr/bin/python3 -c 'import torch' 2>/dev/null || apt_install_missing bench python3-torch python3-numpy
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  if /usr/bin/python3 bench/bench_torch.py --ours build/impl/libaclnn_impl.so "${targs[@]}" >"$tmp"; then
    peer=(--peer "$tmp")
    echo "# PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') (bench/bench_torch.py)"
    awk -F'\t' '$6 != "native" {print "#   " $1 " " $2 " " $3 ": " $6}' "$tmp" || true
  else
    echo "# bench_torch.py failed: no PyTorch column" >&2
  fi
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), bench_speed $*"
build/bench/bench_speed "$@" "${peer[@]}"
# What bounds the f32 rows (issue 14: "show the measurement that proves the limit"): the cost of
# each instruction class on the multiply/FMA pipes (bench/bench_ports), and the hot loops of the
# f32 and f64 kernels weighed with it (scripts/kernel_mix.py; x86-64 with objdump only): the
# AVX-512 kernels, or on a CPU without AVX-512 (Zen 3) their AVX2 twins, which bench_ports then
# prices in 256-bit FMA slots.
if [ -x build/bench/bench_ports ] && command -v objdump >/dev/null && [ "$(uname -m)" = x86_64 ]; then
  ports=$(mktemp)
  trap 'rm -f "${tmp:-}" "$ports"' EXIT
  echo
  # one measurement: the table printed is the table kernel_mix.py weighs with
  if build/bench/bench_ports --tsv-file "$ports" && [ -s "$ports" ]; then
    if grep -q '^slots_per_cycle.256-bit' "$ports"; then
      # elements per pass of each hot loop: 32 (Gelu: two calls of two 8-lane steps), 16 (Softplus
      # f32: one step of two 8-lane vectors; f64: four vectors of 4 doubles); and llvm-mca's model
      # of this CPU on the same loops (Debian llvm, installed when missing), which adds the pipes
      # and dependency chains the FMA-slot count leaves out
      mca=()
      command -v llvm-mca >/dev/null || { . scripts/apt.sh; apt_install_missing bench llvm || true; }
      if command -v llvm-mca >/dev/null; then
        mca=(--mca native)
        echo "# llvm-mca -mcpu=native is $(llvm-mca --version 2>/dev/null | sed -n 's/.*Host CPU: *//p')"
      fi
      # (Softplus f32's hot loop is its exp stage, one step of 8 elements; its divisions run in a
      # second loop since round 30; Softplus f64's second loop, rank 2, is its plain form, the one
      # a finite threshold ≤ 700 takes since round 31)
      python3 scripts/kernel_mix.py --ports "$ports" "${mca[@]}" gelu_none_block_avx2:32 gelu_tanh_block_avx2:32 \
        softplus_block_f32_avx2:8 softplus_block_f64_avx2:16:2 | grep -v '^  not counted' || true
    else
      python3 scripts/kernel_mix.py --ports "$ports" gelu_none_block_avx512:32 gelu_tanh_block_avx512:32 \
        softplus_block_f32_avx512:32 softplus_block_f64_avx512:32 | grep -v '^  not counted' || true
    fi
  fi
fi
