#!/usr/bin/env bash
# The main job: build kwb, then run the default sweep on this machine's GPU and write the
# reports to results/ (report.json, report.csv, journal.jsonl). Extra arguments go to `kwb run`:
#   scripts/run.sh                      # every op's default shapes, all variants, all dtypes
#   scripts/run.sh --preset quick --dtype bf16
# Without a GPU it builds, then says so and lists what can be done instead (exit 3).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default > /dev/null
cmake --build --preset default --target kwb
exec ./build/kwb run --out results "$@"
