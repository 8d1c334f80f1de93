#!/usr/bin/env bash
# Render an HTML report in headless Chromium (Debian `chromium`) to a PNG, and check that the page
# shows its charts: the rendered DOM must contain one <svg> histogram per result row.
#   scripts/check_html_report.sh REPORT.html OUT.png
# Not part of the default CI run (Chromium is a large install); run it when publishing.
set -euo pipefail
html=$(realpath "$1") png="$2"
command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile")
chromium "${flags[@]}" --window-size=1280,2400 --screenshot="$png" "file://$html" >/dev/null 2>&1
dom=$(chromium "${flags[@]}" --dump-dom "file://$html" 2>/dev/null)
svgs=$(grep -o '<svg class="hist"' <<<"$dom" | wc -l)
rows=$(grep -o '<figure>' <<<"$dom" | wc -l)
[ -s "$png" ] || { echo "check_html_report: no screenshot written" >&2; exit 1; }
[ "$svgs" -gt 0 ] && [ "$svgs" -eq "$rows" ] || { echo "check_html_report: $svgs charts for $rows rows" >&2; exit 1; }
echo "check_html_report: $svgs histogram charts rendered; screenshot $png ($(stat -c %s "$png") bytes)"
