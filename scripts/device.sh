#!/usr/bin/env bash
# One call on a GPU machine: build, GPU tests, ceilings, the smoke sweep twice, the Nsight
# Compute cross-check, the fault-isolation sweep, the PyTorch peers; a short table last.
#
#   scripts/device.sh            # everything under results/device; with $OUT set (the device
#                                # tool), a selection of at most 8 files is copied there too
# Carry .peers/torch_peers.py (git-ignored) to get the peer figures; carry .kwb-git-sha to stamp
# the reports with the revision (the device machine's copy of the tree has no .git).
set -uo pipefail
cd "$(dirname "$0")/.."
FETCH=${OUT:-}
OUT=results/device
rm -rf "$OUT"; mkdir -p "$OUT"
log() { printf '\n=== %s\n' "$*"; }
sha=$(cat .kwb-git-sha 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

log "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv

log "build ($sha)"
cmake --preset default -DKWB_GIT_SHA="$sha" > "$OUT/configure.log" 2>&1 || { cat "$OUT/configure.log"; exit 1; }
cmake --build --preset default -j "$(nproc)" --target kwb kwb_gpu_tests > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "built"

log "GPU tests"
( cd build && ctest -L gpu --output-on-failure --timeout 300 ) 2>&1 | tee "$OUT/gpu-tests.log" | tail -25

log "ceilings"
./build/kwb ceilings --refresh --log "$OUT/ceilings-worker.log" 2>&1 | tee "$OUT/ceilings.txt"

log "smoke sweep, run 1 (default shapes, all variants, 3 dtypes)"
start=$(date +%s.%N)
./build/kwb run --out "$OUT/smoke" > "$OUT/smoke.txt" 2> "$OUT/smoke-progress.txt"
echo "exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee "$OUT/smoke-wall.txt"
log "smoke sweep, run 2 (reproducibility)"
./build/kwb run --out "$OUT/smoke2" > "$OUT/smoke2.txt" 2> "$OUT/smoke2-progress.txt"; echo "exit $?"

log "tiny kernel (1 row x 512): CUPTI against CUDA events"
for timer in cupti events; do
  ./build/kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=1 --axis cols=512 \
    --timer $timer --datasheet-ceilings --out "$OUT/tiny-$timer" > /dev/null 2>&1; echo "$timer exit $?"
done

log "fault isolation sweep"
./build/kwb run --op rmsnorm_fwd --variant fused_v2_vec16,test_fault_illegal_address,test_fault_device_assert,test_hang \
  --include-test-variants --dtype bf16 --axis rows=4096 --axis cols=4096,4100 --preset quick --case-timeout 8 \
  --out "$OUT/faults" > "$OUT/faults.txt" 2>&1; echo "exit $? (1 expected: faulting cases failed)"; tail -12 "$OUT/faults.txt"

log "Nsight Compute cross-check (gpu__time_duration.sum, --clock-control none, caches flushed)"
case_name="rmsnorm_fwd:fused_v1_row_per_block:fp32:32768x16384"
./build/kwb run --op rmsnorm_fwd --variant fused_v1_row_per_block --dtype fp32 --axis rows=32768 --axis cols=16384 \
  --out "$OUT/ncu-harness" > /dev/null 2>&1
timeout 240 ncu --clock-control none --cache-control all --nvtx --nvtx-include "kwb@${case_name}/" \
  --kernel-name regex:rmsnorm_fwd_v1 --metrics gpu__time_duration.sum -c 5 --csv --print-units base \
  ./build/kwb run --op rmsnorm_fwd --variant fused_v1_row_per_block --dtype fp32 --axis rows=32768 --axis cols=16384 \
  --preset quick --datasheet-ceilings --out "$OUT/ncu-events" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"; echo "ncu exit $?"
tail -3 "$OUT/ncu.err"

if [ -f .peers/torch_peers.py ]; then
  log "PyTorch peers"
  timeout 300 python3 .peers/torch_peers.py --ops ceilings,rmsnorm > "$OUT/peers.txt" 2>&1; echo "exit $?"
fi

log "main job as the README gives it (scripts/run.sh), bf16 only to save time"
scripts/run.sh --dtype bf16 --preset quick > "$OUT/main-job.txt" 2>&1; echo "exit $?"; tail -4 "$OUT/main-job.txt"

log "summary"
python3 scripts/device_summary.py "$OUT" | tee "$OUT/summary.txt"
if [ -n "$FETCH" ]; then  # the device tool brings back at most 8 files
  cp "$OUT/smoke/report.json" "$FETCH/smoke-report.json"; cp "$OUT/smoke/report.csv" "$FETCH/smoke-report.csv"
  cp "$OUT/faults/report.json" "$FETCH/faults-report.json"; cp "$OUT/faults/report.csv" "$FETCH/faults-report.csv"
  cp "$OUT/ceilings.txt" "$OUT/summary.txt" "$OUT/gpu-tests.log" "$FETCH/"
  [ -f "$OUT/peers.txt" ] && cp "$OUT/peers.txt" "$FETCH/"
fi
