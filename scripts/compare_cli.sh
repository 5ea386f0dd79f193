#!/usr/bin/env bash
# Runs the same kwb commands with two builds and compares what each printed, wrote and returned:
# the check that a change which only moves code (a refactor) leaves the tool's behaviour alone.
#
#   scripts/compare_cli.sh BASE_KWB NEW_KWB
#
# The commands need no GPU: listing, planning (--list-cases), the no-GPU run, rendering, selecting,
# comparing and merging the committed samples, and a set of bad inputs (their messages and exit
# codes). Paths that name a build or a temporary folder are masked, as are times of day. Exit 0
# when every command agrees, 1 otherwise (each difference is shown).
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 BASE_KWB NEW_KWB (two kwb binaries)" >&2; exit 2; }
base_kwb=$(realpath "$1") new_kwb=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

smoke=samples/h100-smoke/report.json
review=samples/h100-roofline-review/report.json
sweep=samples/h100-default-sweep/report.json
commands=(
  "list"
  "list --include-test-variants"
  "run --suite suites/nightly.yaml --list-cases"
  "run --suite suites/smoke.yaml --list-cases"
  "run --op rmsnorm_fwd,softmax_fwd --dtype bf16 --axis cols=1024:16384:x2 --axis rows=512 --list-cases"
  "run --op rmsnorm_fwd --shapes edge --list-cases"
  "run --op rmsnorm_fwd --out OUT/run"
  "run --suite suites/nightly.yaml --shard 1/4 --list-cases"
  "report $review --md OUT/review.md --html OUT/review.html"
  "report $smoke --md OUT/smoke.md"
  "select $sweep --out OUT/selection.json --md OUT/selection.md"
  "compare $smoke $smoke --md OUT/compare.md --junit OUT/compare.xml"
  "compare samples/h200x2-devices/report.json samples/h200x2-devices/report.json"
  "merge --out OUT/merged samples/h200x2-devices/report.json"
  "run --op no_such_op"
  "run --op rmsnorm_fwd --axis cols=abc"
  "run --op rmsnorm_fwd --axis widht=3"
  "run --mode warm"
  "run --flush sometimes"
  "run --preset fastest"
  "run --seed -1"
  "run --suite no-such.yaml"
  "run --suite suites/smoke.yaml --axis cols=4"
  "compare $smoke"
  "compare $smoke no-such.json"
  "compare $smoke $smoke --threshold 3"
  "report no-such.json --md OUT/x.md"
  "tune --op rmsnorm_fwd"
  "tune --op rmsnorm_fwd --variant fused_v2_vec16 --axis rows=16 --axis cols=64 --list-cases"
  "select $smoke --out OUT/sel.json"
  "frobnicate"
)

mask() {  # build paths, temporary folders and clock times differ between the two runs
  sed -e "s#$base_kwb#KWB#g; s#$new_kwb#KWB#g; s#$work/[ab]#OUT#g" \
      -e 's/[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}T[0-9:.]*Z\{0,1\}/TIME/g' \
      -e 's/"\(started_at\|finished_at\|host\|command_line\|git_sha\|tool_version\)": "[^"]*"/"\1": "MASKED"/g' \
      -e 's/in [0-9.]* \?s\b/in N s/g'
}

run_one() {  # run_one KWB SIDE COMMAND: prints the masked output, files and exit code
  local kwb=$1 side=$2 cmd=$3 out="$work/$2"
  rm -rf "$out" && mkdir -p "$out"
  # shellcheck disable=SC2086
  (cd "$PWD" && timeout 120 "$kwb" ${cmd//OUT/$out} > "$out.stdout" 2> "$out.stderr"; echo "exit $?" > "$out.exit")
  echo "== stdout"; mask < "$out.stdout"
  echo "== stderr"; mask < "$out.stderr"
  cat "$out.exit"
  find "$out" -type f | sort | while read -r f; do echo "== file ${f#"$out"/}"; mask < "$f"; done
}

differences=0
for cmd in "${commands[@]}"; do
  run_one "$base_kwb" a "$cmd" > "$work/a.txt"
  run_one "$new_kwb" b "$cmd" > "$work/b.txt"
  if diff -q "$work/a.txt" "$work/b.txt" > /dev/null; then
    echo "same       kwb $cmd"
  else
    echo "DIFFERENT  kwb $cmd"
    diff "$work/a.txt" "$work/b.txt" | head -20 | sed 's/^/    /'
    differences=$((differences + 1))
  fi
done
echo "CLI: ${#commands[@]} commands, $differences with different output"
[ "$differences" -eq 0 ]
