#!/usr/bin/env bash
# Render an HTML report in headless Chromium (Debian `chromium`) to a PNG and check the page as a
# reader sees it (the rendered DOM, after parsing):
#   - one histogram per result row, and an error plot per row that has one;
#   - the verdict is the first thing after the title and the first summary row is a failing one
#     whenever any row fails;
#   - every case link resolves (relative to the page) to a stored case (a case.json).
#
#   scripts/check_html_report.sh                     # a report of the planted-defect target
#   scripts/check_html_report.sh REPORT.html OUT.png # a page you publish
#
# With no arguments it sweeps build/tests/libwrong_target.so (two planted defects), renders its
# report under build/html-check/ and checks that.  Not part of the default CI run (Chromium is a
# large install); run it when publishing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ $# -eq 0 ]; then
  out=$ROOT/build/html-check
  rm -rf "$out" && mkdir -p "$out/pub"
  [ -x build/conform/aclnn-conform ] && [ -f build/tests/libwrong_target.so ] ||
    { echo "check_html_report: build first (scripts/setup.sh build)" >&2; exit 2; }
  set +e
  (cd "$out" && "$ROOT/build/conform/aclnn-conform" sweep --target "$ROOT/build/tests/libwrong_target.so" \
     --constraints "$ROOT/constraints" --cases 8 --invalid-cases 2 --seed 21 --quiet --corpus "$out/cases" --output "$out/run.json")
  rc=$?
  set -e
  [ "$rc" = 1 ] || { echo "check_html_report: the planted-defect sweep exited $rc, expected 1" >&2; exit 1; }
  build/conform/aclnn-conform report "$out/run.json" --format html -o "$out/pub/report.html"
  set -- "$out/pub/report.html" "$out/report.png"
fi
html=$(realpath "$1") png="$2"
command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile")
chromium "${flags[@]}" --window-size=1400,2400 --screenshot="$png" "file://$html" >/dev/null 2>&1
dom=$(chromium "${flags[@]}" --dump-dom "file://$html" 2>/dev/null | tr "\n" " ")
[ -s "$png" ] || { echo "check_html_report: no screenshot written" >&2; exit 1; }
hists=$(grep -o '<svg class="hist"' <<<"$dom" | wc -l)
plots=$(grep -o '<svg class="eplot"' <<<"$dom" | wc -l)
rows=$(grep -o '<figure class="row">' <<<"$dom" | wc -l)
[ "$hists" -gt 0 ] && [ "$hists" -eq "$rows" ] || { echo "check_html_report: $hists histograms for $rows rows" >&2; exit 1; }
[ "$plots" -gt 0 ] || { echo "check_html_report: no error plot rendered" >&2; exit 1; }
# the verdict right after the title; failing rows first in the summary
first=$(grep -o "<h1>[^<]*</h1>[^<]*<p class=\"verdict [a-z]*\"" <<<"$dom" | head -1 || true)
[ -n "$first" ] || { echo "check_html_report: the verdict is not the first paragraph after the title" >&2; exit 1; }
if grep -q '<p class="verdict fail"' <<<"$dom"; then
  row1=$(sed -n 's/.*<table class="summary">\(.*\)/\1/p' <<<"$dom" | grep -o '<tr class="[a-z-]*">' | head -1)
  [ "$row1" = '<tr class="fail">' ] || { echo "check_html_report: the first summary row is not a failing one ($row1)" >&2; exit 1; }
fi
links=0
while IFS= read -r href; do
  [ -f "$(dirname "$html")/$href/case.json" ] || { echo "check_html_report: link $href does not resolve to a stored case" >&2; exit 1; }
  links=$((links + 1))
done < <(grep -o 'class="case" href="[^"]*"' <<<"$dom" | sed 's/.*href="//; s/"$//')
echo "check_html_report: $hists histograms, $plots error plots, $links case links resolved; screenshot $png ($(stat -c %s "$png") bytes)"
