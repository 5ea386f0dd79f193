#!/usr/bin/env bash
# The main job: build kwb, run the smoke suite on this machine's GPU (every op and every variant
# once, at a realistic mid-size shape, bf16: a few minutes on one H100), write the reports and
# the HTML review to results/ (report.json, report.csv, journal.jsonl, review.html).
#   scripts/run.sh                      # the smoke suite (suites/smoke.yaml)
#   scripts/run.sh --full               # the full sweep: every op's default shapes, every variant and dtype
#   scripts/run.sh --op rmsnorm_fwd     # other arguments go to `kwb run`: they narrow or override the suite
#   scripts/run.sh --full --dtype bf16  #   (or, with --full anywhere, filter the full sweep)
# Missing build packages are installed first (scripts/ensure_deps.sh). Without a GPU it builds,
# then says so and lists what can be done instead (exit 3).
set -euo pipefail
cd "$(dirname "$0")/.."
plan=(--suite suites/smoke.yaml)
args=()
for a in "$@"; do
  if [ "$a" = "--full" ]; then plan=(); else args+=("$a"); fi
done
source scripts/ensure_deps.sh
kwb_ensure_deps || exit 2
cmake --preset default -DKWB_COMPILE_CHECK=OFF > /dev/null  # a build that measures (see CMakeLists.txt)
cmake --build --preset default --target kwb
# A report left by an earlier run must not be taken for this one's.
rm -f results/report.json results/review.html
status=0
./build/kwb run --out results "${plan[@]}" "${args[@]}" || status=$?
if [ "$status" -eq 3 ]; then
  echo "The tool is built but not on the PATH: call it as ./build/kwb (./build/kwb list, ./build/kwb --help)." >&2
  exit "$status"
fi
# The review beside the reports, whenever a report was written (failed cases included: they are
# what a reviewer looks for first).
if [ -f results/report.json ]; then
  if ./build/kwb report results/report.json --html results/review.html; then
    echo "The review: results/review.html (a browser opens it). In the desktop app: ./build/gui/kwb-gui results/report.json"
    [ -x build/gui/kwb-gui ] || echo "  (build the app first where Dear ImGui and GLFW are installed: cmake --build --preset default --target kwb-gui)"
  fi
fi
exit "$status"
