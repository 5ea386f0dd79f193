#!/usr/bin/env bash
# The regression gate's device check in one call: build (unless built), then the named steps
# while time remains (LIMIT seconds from the start); every log and report lands in $OUT (the
# device tool's folder) as it finishes, so the compares can also be made on a CPU machine.
#   scripts/device_gate.sh gputests a1 a2 s1 confirm:a1:s1
#   gputests        kwb_gpu_tests (GPU_FILTER narrows it)
#   aN / sN         the smoke suite (SMOKE_OPS narrows it), sN with KWB_TEST_SLOWDOWN=$SLOW (SLOW overrides the list)
#   confirm:B:N     kwb compare results/B results/N --confirm (needs .kwb-git-sha carried)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/device-gate}; mkdir -p "$OUT"
T0=$(date +%s); LIMIT=${LIMIT:-560}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
sha=$(cat .kwb-git-sha 2>/dev/null || echo unknown)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
# Configured and built every time (a no-op when nothing changed): a build folder left as a
# compile check (KWB_COMPILE_CHECK=ON) would skip every GPU test and look green.
cmake --preset default -DKWB_COMPILE_CHECK=OFF -DKWB_GIT_SHA="$sha" > /tmp/configure.log 2>&1 || { cat /tmp/configure.log; exit 1; }
cmake --build --preset default -j "$(nproc)" --target kwb kwb_gpu_tests > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
SLOW=${SLOW:-rmsnorm_fwd:fused_v2_vec16:0.05,softmax_fwd:fused_v1_row_in_registers:0.05,linear_bias_relu:fused_v4_wgmma_tma_warp_specialized:0.05,layernorm_fwd:fused_v1_vec16_two_pass:0.02}
mkdir -p results
for step in "$@"; do
  l=$(left); [ "$l" -lt 60 ] && { echo "$step: skipped, ${l} s left"; continue; }
  s0=$(date +%s)
  case $step in
    gputests)
      timeout $(( l - 20 )) ./build/tests/kwb_gpu_tests --gtest_filter="${GPU_FILTER:-*}" > "$OUT/gpu-tests.log" 2>&1; rc=$?
      echo "gputests: exit $rc in $(( $(date +%s) - s0 )) s"
      grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|^\[  (PASSED|FAILED)" "$OUT/gpu-tests.log" | sed 's/ (\([0-9]*\) ms)/ \1ms/' | tail -60 ;;
    a*|s*)
      [ "$l" -lt "${RUN_NEEDS:-170}" ] && { echo "$step: skipped, ${l} s left"; continue; }
      env_slow=(); [[ $step == s* ]] && env_slow=(env KWB_TEST_SLOWDOWN=$SLOW)
      timeout $(( l - 10 )) "${env_slow[@]}" ./build/kwb run --suite suites/smoke.yaml ${SMOKE_OPS:+--op $SMOKE_OPS} --out "results/$step" > "results/$step.txt" 2>&1; rc=$?
      echo "$step: exit $rc in $(( $(date +%s) - s0 )) s; $(grep -E 'passed|failed' "results/$step.txt" | tail -1)"
      grep -E " failed " "results/$step.txt" | head -5
      mkdir -p "$OUT/$step"; cp "results/$step/report.json" "$OUT/$step/" 2>/dev/null && gzip -f "$OUT/$step/report.json" ;;
    confirm:*)
      IFS=: read -r _ base new extra <<< "$step"
      timeout $(( l - 5 )) ./build/kwb compare "results/$base/report.json" "results/$new/report.json" --confirm ${extra//,/ } > "$OUT/confirm-$base-$new.txt" 2>&1; rc=$?
      echo "confirm $base $new $extra: exit $rc in $(( $(date +%s) - s0 )) s; $(tail -1 "$OUT/confirm-$base-$new.txt")"
      grep -E "confirmed" "$OUT/confirm-$base-$new.txt" | cut -c1-160 | head -8 ;;
    *) echo "unknown step $step" ;;
  esac
done
