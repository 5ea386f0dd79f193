#!/usr/bin/env bash
# The main job: build kwb, then run the default sweep on this machine's GPU and write the
# reports to results/ (report.json, report.csv, journal.jsonl). Extra arguments go to `kwb run`:
#   scripts/run.sh                      # every op's default shapes, all variants, all dtypes
#   scripts/run.sh --preset quick --dtype bf16
# Missing build packages are installed first (scripts/ensure_deps.sh). Without a GPU it builds,
# then says so and lists what can be done instead (exit 3).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_deps.sh
kwb_ensure_deps || exit 2
cmake --preset default > /dev/null
cmake --build --preset default --target kwb
status=0
./build/kwb run --out results "$@" || status=$?
if [ "$status" -eq 3 ]; then
  echo "The tool is built but not on the PATH: call it as ./build/kwb (./build/kwb list, ./build/kwb --help)." >&2
fi
exit "$status"
