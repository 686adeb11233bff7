#!/bin/sh
# Usage: render_check.sh SCALETWIN SOURCE_DIR WORK_DIR
# scaletwin's HTML pages as a browser draws them (issue 53): predict's report, the side-by-side report of two
# scenarios, validate's report on the published MXNet K80 runs and explore's Pareto page, each rendered by
# scripts/render-report (headless Chromium; it fails on a console error), and render_check.py must find text,
# tables and the charts' first series in each screenshot. Skips (exit 77) where Chromium or Debian's Python with PIL is
# missing (scripts/setup installs both) or ../shared/reference is absent.
set -u
bin=$1 src=$2 dir=$3
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium (Debian's chromium package; scripts/setup installs it)"; exit 77; }
/usr/bin/python3 -c "import PIL" 2>/dev/null || { echo "SKIP: no python3-pil"; exit 77; }
reference=$src/../shared/reference
[ -f "$reference/mxnet-k80-single.json" ] || { echo "SKIP: no $reference"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$bin" predict "$src/scenarios/bsc-resnet50-sync-ps.json" --report "$dir/predict" -q >"$dir/log" 2>&1 ||
  fail "predict --report: $(cat "$dir/log")"
"$bin" predict "$src/scenarios/bsc-resnet50-sync-ps.json" "$src/scenarios/bsc-resnet50-ring.json" \
  --report "$dir/side" -q >"$dir/log" 2>&1 || fail "predict A B --report: $(cat "$dir/log")"
"$bin" validate --measurements "$reference/mxnet-k80-single.json" --report "$dir/validate" -q >"$dir/log" 2>&1 ||
  fail "validate --report: $(cat "$dir/log")"
"$bin" explore "$src/spaces/resnet50-dgx-a100-h100-l40s.json" --html "$dir/explore.html" -q >"$dir/log" 2>&1 ||
  fail "explore --html: $(cat "$dir/log")"
shots=""
for page in predict/report.html side/report.html validate/report.html explore.html; do
  [ -f "$dir/$page" ] || fail "no $page"
  shot="$dir/$(echo "$page" | tr '/' '-').png"
  WINDOW_SIZE=1280,1600 timeout 120 bash "$src/scripts/render-report" "$dir/$page" "$shot" >"$dir/render.log" 2>&1 ||
    fail "scripts/render-report on $page: $(cat "$dir/render.log")"
  shots="$shots $shot"
done
# shellcheck disable=SC2086
/usr/bin/python3 "$(dirname "$0")/render_check.py" $shots || fail "a page did not render"
echo "PASS"
