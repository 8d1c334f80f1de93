#!/usr/bin/env bash
# The speed-accuracy frontier of a compute-bound f32 row on AVX2 (issue 14, round 36): what the
# row would gain by giving up accuracy, measured beside PyTorch.
#
#   scripts/frontier.sh [--row gelu|softplus] [--levels 1,2,3] [--rounds R] [--cases N]
#                       [--build-dir DIR] [--frontier-dir DIR] [--no-torch]
#
# --row gelu (default): GeluBackwardV2 approximate=none f32, switch ACLCONFORM_GELU_NONE_LEAN in
# impl/src/ops/gelu_backward_v2.c; --row softplus: SoftplusBackward f32, ACLCONFORM_SOFTPLUS_LEAN
# in softplus_backward.c.  Level L is the library with that AVX2 kernel's math made cheaper (a
# table-free exp, and for Gelu lower-degree rationals; the table of errors is the comment at the
# switch); level 0 is the library itself.  For each level this builds the shared library in
# DIR/<row>-L (as scripts/mutants.sh builds a mutant: the main tree's build type and compiler,
# only the switch added) and prints, per level:
#   - in_cache: bench_ab's median of per-pair time ratios against the library (256 Ki elements,
#     1 thread, in cache), the geometric mean of both orders; below 1 the level is faster;
#   - the row's accuracy from `aclnn-conform sweep --op OP --dtype f32 --cases N` on the level's
#     library (5000 cases a stream: the default sweep's, so level 0's row is
#     reports/builtin-spec.json's): max ULP, max scaled ULP, mean ULP, and the share of outputs
#     more than 0.5 ULP from the exact value (not correctly rounded);
# then, unless --no-torch (Debian python3-torch is installed when missing), R rounds of
# bench/bench_torch.py with every level's library and PyTorch side by side in one process
# (16 Mi elements, 2 threads, best of 7 per round): each round's times in ms.  Experiment
# builds only: a level > 0 breaks the AVX2 and AVX-512 kernels' same-bits rule on purpose and is
# never the library.  A benchmark, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."

ROW=gelu LEVELS=1,2,3 ROUNDS=3 CASES=5000 BUILD=build FDIR=build-frontier TORCH=1
while (($#)); do
  case "$1" in
    --row) ROW=$2; shift 2 ;;
    --levels) LEVELS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --cases) CASES=$2; shift 2 ;;
    --build-dir) BUILD=$2; shift 2 ;;
    --frontier-dir) FDIR=$2; shift 2 ;;
    --no-torch) TORCH=0; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "frontier.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
# per row: the switch, the operator, bench_ab's and bench_torch.py's variant, the sweep row's
case $ROW in
  gelu) MACRO=ACLCONFORM_GELU_NONE_LEAN OP=gelu_backward_v2 ABV=(--variant none) TV=none SV=approximate=none
        TITLE="GeluBackwardV2 none f32" ;;
  softplus) MACRO=ACLCONFORM_SOFTPLUS_LEAN OP=softplus_backward ABV=() TV=- SV="" TITLE="SoftplusBackward f32" ;;
  *) echo "frontier.sh: --row: gelu or softplus (got '$ROW')" >&2; exit 2 ;;
esac
[[ $LEVELS =~ ^[123](,[123])*$ ]] || { echo "frontier.sh: --levels: a list of 1, 2, 3 (got '$LEVELS')" >&2; exit 2; }
[[ $ROUNDS =~ ^[0-9]+$ && $CASES =~ ^[1-9][0-9]*$ ]] || { echo "frontier.sh: --rounds and --cases take counts" >&2; exit 2; }

TOOL=$BUILD/conform/aclnn-conform AB=$BUILD/bench/bench_ab BASE=$BUILD/impl/libaclnn_impl.so
if [ ! -x "$TOOL" ] || [ ! -x "$AB" ] || [ ! -f "$BASE" ]; then
  echo "frontier.sh: $BUILD lacks the tool, bench_ab or the library; building it (scripts/setup.sh $BUILD)" >&2
  scripts/setup.sh "$BUILD"
fi
. scripts/variant_build.sh
mkdir -p "$FDIR"
FDIR=$(cd "$FDIR" && pwd)
BASE=$(cd "$(dirname "$BASE")" && pwd)/$(basename "$BASE")

IFS=, read -ra LV <<<"$LEVELS"
declare -A LIB
LIB[0]=$BASE
for l in "${LV[@]}"; do
  d=$FDIR/$ROW-$l
  echo "frontier.sh: building $ROW level $l in $d" >&2
  if ! variant_build "$BUILD" "$d" aclnn_impl_shared "$(nproc)" "$d.build.log" "-D$MACRO=$l"; then
    echo "frontier.sh: $ROW level $l failed to build; see $d.build.log" >&2
    exit 3
  fi
  LIB[$l]=$d/impl/libaclnn_impl.so
done

# bench_ab's "median of pairs" ratio (B/A) for A B
# (bench_ab exits 1 when the outputs differ, as a level's do: that is not an error here)
ab_ratio() {
  local out r
  out=$("$AB" "$1" "$2" --op "$OP" --dtype f32 "${ABV[@]}" --reps 300 2>&1) || true
  r=$(sed -n 's/.*median of pairs \([0-9.]*\).*/\1/p' <<<"$out")
  [ -n "$r" ] || { echo "frontier.sh: bench_ab $1 $2 failed: $out" >&2; exit 3; }
  echo "$r"
}

# the row of a sweep report: max, max scaled, mean ULP, share above 0.5 ULP
row_acc() {
  python3 - "$1" "$OP" "$SV" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    if x["op"] == sys.argv[2] and x["dtype"] == "f32" and x["variant"] == sys.argv[3]:
        c = x["histogram"]["counts"]
        above = sum(c[1:]) / max(1, sum(c))
        print("%.4f\t%.4f\t%.4f\t%.5f" % (x["max_ulp"], x["max_scaled_ulp"], x["mean_ulp"], above))
        break
else:
    sys.exit("frontier.sh: no %s f32 %s row in %s" % (sys.argv[2], sys.argv[3], sys.argv[1]))
PY
}

printf '# %s, AVX2 (%s); in_cache: time / the library'"'"'s (bench_ab, both orders)\n' "$TITLE" "$(date -u +%Y-%m-%dT%H:%MZ)"
printf 'level\tin_cache\tmax_ulp\tmax_scaled\tmean_ulp\tabove_0.5\n'
for l in 0 "${LV[@]}"; do
  rep=$FDIR/sweep-$ROW-$l.json
  set +e
  "$TOOL" sweep --target "${LIB[$l]}" --op "$OP" --dtype f32 --cases "$CASES" --invalid-cases 1 \
    --seed 0x5eed --no-store --quiet --output "$rep" >"$FDIR/sweep-$ROW-$l.log" 2>&1
  rc=$?
  set -e
  # exit 1 (failures) still writes the row; anything else is an error
  ((rc <= 1)) || { echo "frontier.sh: level $l: sweep exit $rc (see $FDIR/sweep-$ROW-$l.log)" >&2; exit 3; }
  if [ "$l" = 0 ]; then
    ratio=1
  else
    a=$(ab_ratio "$BASE" "${LIB[$l]}") b=$(ab_ratio "${LIB[$l]}" "$BASE")
    ratio=$(python3 -c "import math,sys; print('%.3f' % math.sqrt(float(sys.argv[1]) / float(sys.argv[2])))" "$a" "$b")
  fi
  printf '%s\t%s\t%s\n' "$l" "$ratio" "$(row_acc "$rep")"
done

if ((TORCH)) && ((ROUNDS > 0)); then
  . scripts/apt.sh
  apt_install_missing frontier.sh python3-torch python3-numpy
  ours=()
  for l in 0 "${LV[@]}"; do ours+=(--ours "${LIB[$l]}"); done
  printf '# bench_torch.py, 16 Mi elements, 2 threads, best of 7: PyTorch, then levels 0 %s (ms)\n' "${LV[*]}"
  for ((i = 0; i < ROUNDS; i++)); do
    /usr/bin/python3 bench/bench_torch.py --op "$OP" --dtype f32 --no-layouts --reps 7 "${ours[@]}" |
      awk -F'\t' -v tv="$TV" '$2 == tv && $3 == "f32" { out = "torch " $5; for (k = 7; k <= NF; k++) out = out "\t" $k; print out }'
  done
fi
