#!/usr/bin/env bash
# Mutation testing of the built-in implementation (issue 12 item 6).
#
#   scripts/mutants.sh [--time S] [--seed X] [--only N,M,...] [--jobs J] [--md FILE]
#                      [--require-kill] [--build-dir DIR] [--mutant-dir DIR] [--emu512]
#
# Every planted defect of tests/mutants/mutants.txt is a compile-time switch in impl/src
# (`#if ACLCONFORM_MUTANT == N`).  For each mutant N this configures build-mutants/N with
# -DACLCONFORM_MUTANT=N, builds ONLY the shared library target aclnn_impl_shared, and runs the
# already-built harness against it as a foreign target:
#     aclnn-conform sweep --target build-mutants/N/impl/libaclnn_impl.so --time S --seed X
#                         --no-store --quiet --output build-mutants/N/report.json
# so the tool itself is never rebuilt.  Verdict: sweep exit 1 (failures found) = KILLED,
# exit 0 = SURVIVED, anything else (or a build failure) = ERROR.
# A mutant whose description starts with EQUIVALENT behaves in a way the spec accepts: it must
# survive (verdict EQUIVALENT, left out of the rate); killing it is a FALSE-FAIL (an error).
# Prints a table (N, kind, verdict, first FAIL line, seconds) and the kill rate; --md FILE
# writes the same table as Markdown.  --jobs J runs J mutants at a time (default 1: the sweep
# itself uses every core).  --require-kill: exit 1 unless every selected mutant is KILLED.
# --emu512: build and sweep the software AVX-512 library (aclnn_impl_emu512_shared; see
# impl/src/runtime/simd512_emu.h) instead, so that a CPU without AVX-512 sweeps the AVX-512
# kernels' copy of a mutant rather than its AVX2 twin's.
set -euo pipefail
cd "$(dirname "$0")/.."

TIME=20 SEED=0x5eed ONLY="" JOBS=1 MD="" REQUIRE=0 BUILD=build MDIR=build-mutants
LIBTARGET=aclnn_impl_shared LIBNAME=libaclnn_impl.so
while (($#)); do
  case "$1" in
    --time) TIME=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --md) MD=$2; shift 2 ;;
    --require-kill) REQUIRE=1; shift ;;
    --build-dir) BUILD=$2; shift 2 ;;
    --mutant-dir) MDIR=$2; shift 2 ;;
    --emu512) LIBTARGET=aclnn_impl_emu512_shared LIBNAME=libaclnn_impl_emu512.so; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "mutants.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

LIST=tests/mutants/mutants.txt
TOOL=$BUILD/conform/aclnn-conform
if [ ! -x "$TOOL" ]; then
  echo "mutants.sh: $TOOL missing, building it (scripts/setup.sh $BUILD)" >&2
  scripts/setup.sh "$BUILD"
fi
TOOL=$(cd "$(dirname "$TOOL")" && pwd)/$(basename "$TOOL")
mkdir -p "$MDIR"
MDIR=$(cd "$MDIR" && pwd)

# the main tree's build type and compiler, so a mutant differs from it only by the switch
. scripts/variant_build.sh

declare -A KIND DESC
ALL=()
while IFS=$'\t' read -r n file kind desc; do
  case "$n" in ''|\#*) continue ;; esac
  KIND[$n]=$kind; DESC[$n]="$file: $desc"; ALL+=("$n")
done <"$LIST"

SEL=()
if [ -n "$ONLY" ]; then
  IFS=, read -ra want <<<"$ONLY"
  for n in "${want[@]}"; do
    [ -n "${KIND[$n]+x}" ] || { echo "mutants.sh: no mutant $n in $LIST" >&2; exit 2; }
    SEL+=("$n")
  done
else
  SEL=("${ALL[@]}")
fi

# The first failing group of a sweep report (--quiet prints only the verdict line): the first
# (op, dtype, variant) stream with failing cases and its mismatch kinds, else the first
# invalid-input or protocol rule whose status did not match.
first_fail() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r.get("results", []):
    if x.get("failed_cases"):
        # signed_zero is a note (a failure only with --strict-zero): left out of the kinds
        kinds = ",".join(k for k, v in x.get("mismatches", {}).items() if v and k != "signed_zero") or "no element mismatch: status or run error"
        v = ("/" + x["variant"]) if x.get("variant") else ""
        print(f"FAIL {x['op']} {x['dtype']}{v}: {x['failed_cases']} of {x['cases']} cases ({kinds})")
        sys.exit(0)
for s in r.get("status_checks", []):
    if s.get("mismatches"):
        print(f"FAIL {s['op']} rule {s['rule']}: {s['mismatches']} of {s['cases']} cases not {s['expected']}")
        sys.exit(0)
PY
}

# each mutant's library build takes the cores the other jobs leave (one job: all of them)
BUILDJ=$(($(nproc) / JOBS))
((BUILDJ >= 1)) || BUILDJ=1
# One mutant: build, sweep, write $MDIR/N/result (verdict<TAB>seconds<TAB>detail).
run_one() {
  local n=$1 d=$MDIR/$1 t0 rc verdict detail
  t0=$(date +%s)
  mkdir -p "$d"
  rm -f "$d/result"
  if ! variant_build "$BUILD" "$d" "$LIBTARGET" "$BUILDJ" "$d/build.log" "-DACLCONFORM_MUTANT=$n"; then
    printf 'ERROR\t%s\tbuild failed (%s)\n' "$(($(date +%s) - t0))" "$d/build.log" >"$d/result"
    return
  fi
  local so=$d/impl/$LIBNAME
  set +e
  nice "$TOOL" sweep --target "$so" --time "$TIME" --seed "$SEED" --no-store --quiet \
    --output "$d/report.json" >"$d/sweep.log" 2>&1
  rc=$?
  set -e
  case $rc in
    1) verdict=KILLED
       detail=$(first_fail "$d/report.json" 2>/dev/null || true)
       [ -n "$detail" ] || detail=$(tail -n1 "$d/sweep.log") ;;
    0) verdict=SURVIVED; detail="" ;;
    *) verdict=ERROR; detail="sweep exit $rc: $(tail -n1 "$d/sweep.log")" ;;
  esac
  detail=${detail//$'\t'/ }
  printf '%s\t%s\t%s\n' "$verdict" "$(($(date +%s) - t0))" "${detail:0:240}" >"$d/result"
  printf 'mutant %s: %s (%ss)\n' "$n" "$verdict" "$(($(date +%s) - t0))" >&2
}

echo "mutants.sh: ${#SEL[@]} mutant(s), sweep --time $TIME --seed $SEED, $JOBS at a time, tool $TOOL" >&2
START=$(date +%s)
running=0
for n in "${SEL[@]}"; do
  if ((running >= JOBS)); then wait -n || true; running=$((running - 1)); fi
  run_one "$n" &
  running=$((running + 1))
done
wait || true

killed=0 survived=0 errors=0 equivalent=0
SURV=() ERRS=()
printf '%-4s %-20s %-9s %7s  %s\n' N kind verdict seconds "first FAIL line (killed) / description"
md_rows=()
for n in "${SEL[@]}"; do
  r=$MDIR/$n/result
  if [ -f "$r" ]; then IFS=$'\t' read -r verdict secs detail <"$r"; else verdict=ERROR secs=0 detail="no result"; fi
  # an EQUIVALENT mutant (its behaviour is one the spec accepts) must survive: it is left out
  # of the rate, and a sweep that fails it has rejected a conforming library (an error)
  if [[ "${DESC[$n]}" == *": EQUIVALENT"* ]]; then
    if [ "$verdict" = SURVIVED ]; then verdict=EQUIVALENT; equivalent=$((equivalent + 1)); detail=${DESC[$n]}
    elif [ "$verdict" = KILLED ]; then verdict=FALSE-FAIL; fi
  fi
  case $verdict in
    EQUIVALENT) ;;
    KILLED) killed=$((killed + 1)) ;;
    SURVIVED) survived=$((survived + 1)); SURV+=("$n"); detail=${DESC[$n]} ;;
    *) errors=$((errors + 1)); ERRS+=("$n") ;;
  esac
  printf '%-4s %-20s %-9s %7s  %s\n' "$n" "${KIND[$n]}" "$verdict" "$secs" "$detail"
  md_rows+=("| $n | ${KIND[$n]} | ${DESC[$n]//|/\\|} | **$verdict** | ${detail//|/\\|} | $secs |")
done
total=$((${#SEL[@]} - equivalent))
rate=$(awk -v k=$killed -v t=$total 'BEGIN { printf "%.1f", t ? 100 * k / t : 0 }')
summary="kill rate: $killed/$total = $rate % (survived $survived${SURV[*]:+: ${SURV[*]}}; errors $errors${ERRS[*]:+: ${ERRS[*]}}; $equivalent equivalent left out); sweep --time $TIME --seed $SEED; wall $(($(date +%s) - START)) s"
echo "$summary"

if [ -n "$MD" ]; then
  {
    echo "Command: \`scripts/mutants.sh --time $TIME --seed $SEED${ONLY:+ --only $ONLY} --jobs $JOBS\`"
    echo
    echo "**$summary**"
    echo
    echo "| N | kind | defect | verdict | first FAIL line | s |"
    echo "|---|------|--------|---------|-----------------|---|"
    printf '%s\n' "${md_rows[@]}"
  } >"$MD"
fi

if ((REQUIRE)) && ((killed != total)); then exit 1; fi
exit 0
