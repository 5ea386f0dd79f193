#!/usr/bin/env bash
# One call on a GPU machine: build, GPU tests, ceilings, the smoke sweep twice, the Nsight
# Compute cross-check, the fault-isolation sweep, the PyTorch peers; a short table last.
#
#   scripts/device.sh            # everything under results/device; with $OUT set (the device
#                                # tool), a selection of at most 8 files is copied there too
#   scripts/device.sh build tests ceilings xcheck peers   # only those sections (one device call
#                                # has 10 minutes; all sections together take about that)
# Sections: build tests edge sanitize ceilings readprobe smoke smoke2 bench verify3 tiny faults counters xcheck profile tune sweep
# stages warm graph peers fwdpeers bwdpeers decodepeers varlenpeers varlenbwdpeers sparsepeers python extra main (build always runs).
# Carry .peers/torch_peers.py (git-ignored) to get the peer figures; carry .kwb-git-sha to stamp
# the reports with the revision (the device machine's copy of the tree has no .git).
set -uo pipefail
cd "$(dirname "$0")/.."
FETCH=${OUT:-}
OUT=results/device
rm -rf "$OUT"; mkdir -p "$OUT"
log() { printf '\n=== %s\n' "$*"; }
sha=$(cat .kwb-git-sha 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
SECTIONS=" ${*:-tests edge sanitize ceilings smoke smoke2 bench verify3 tiny faults xcheck peers main} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }

log "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv

log "build ($sha)"
# The python section builds the Python module and the bridge for the python3 on the PATH (the one
# with torch and triton), where it has pybind11. $KWB_BUILD_TARGETS narrows what is built.
python_flags=()
targets=${KWB_BUILD_TARGETS:-kwb kwb_gpu_tests kwb_gui_gpu_tests}
if want python && python3 -c "import pybind11" 2> /dev/null; then
  python_flags=(-DPython3_EXECUTABLE="$(command -v python3)" -Dpybind11_DIR="$(python3 -c "import pybind11; print(pybind11.get_cmake_dir())")")
  targets="$targets kwb_python"
fi
cmake --preset default -DKWB_COMPILE_CHECK=OFF -DKWB_GIT_SHA="$sha" "${python_flags[@]}" > "$OUT/configure.log" 2>&1 || { cat "$OUT/configure.log"; exit 1; }
# shellcheck disable=SC2086  # the targets are words
cmake --build --preset default -j "$(nproc)" --target $targets > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "built"

if want tests; then
# The whole suite takes about 7 minutes on an H100 after a 2.5-minute build: more than one call
# has. $KWB_CTEST_ARGS narrows it (KWB_CTEST_ARGS="-I 1,44" in one call, "-I 45,90" in the next,
# or -R NAME); the log is written as it goes, so a call cut short keeps what ran.
log "GPU tests ${KWB_CTEST_ARGS:-}"
read -r -a ctest_args <<< "${KWB_CTEST_ARGS:-}"  # words, never globbed
( cd build && ctest -L gpu "${ctest_args[@]}" --output-on-failure --timeout 300 ) 2>&1 | tee "$OUT/gpu-tests.log" | tail -25
fi

# The catalogue's ordinary ops (KWB_OPS narrows them: KWB_OPS=softmax_fwd,swiglu_fwd scripts/device.sh edge).
ops=${KWB_OPS:-$(./build/kwb list | awk '/^[a-z]/ {print $1}' | paste -sd, -)}

if want edge; then
# Every variant of every op at its edge shapes (1, primes, vector-width misfits, one past each
# kernel's limits) in all three dtypes, verified in full and not timed.
log "edge shapes, every op and variant, 3 dtypes, verified (--preset verify)"
./build/kwb run --op "$ops" --shapes edge --preset verify --mode hot --datasheet-ceilings --out "$OUT/edge" \
  > "$OUT/edge.txt" 2>&1; echo "exit $?"; grep -E " failed " "$OUT/edge.txt" | head -40; tail -2 "$OUT/edge.txt"
fi

if want sanitize; then
# Every variant, the test-only ops' included, under memcheck and racecheck at edge shapes (the
# worker is a child process: --target-processes all), verified and not timed: the point is the
# accesses, not the times. One sanitizer process per op and tool, $KWB_SANITIZE_JOBS at a time
# (the overhead is mostly on the host, so they share the GPU well); $KWB_SANITIZE_TOOLS narrows.
log "compute-sanitizer (${KWB_SANITIZE_TOOLS:-memcheck racecheck}) at edge shapes, per op in parallel"
sanitize_one() {  # tool, op list, extra axes -> sanitize-<tool>-<name>.txt and a one-line verdict
  local tool=$1 sel=$2 axes=$3 name dtypes
  name=$(echo "${sel%%,*}" | cut -c1-16)
  dtypes="--dtype ${KWB_SANITIZE_DTYPES:-bf16,fp32}"
  # racecheck: bf16 only, and not inside cuBLAS's own kernels (nvjet_*): it reports shared-memory
  # hazards in the library's split-K kernels, which are the vendor's code, not the catalogue's.
  local exclude=()
  [ "$tool" = racecheck ] && { dtypes="--dtype bf16"; exclude=(--kernel-name-exclude kns=nvjet); }
  # The test ops need --include-test-variants; the ordinary ops run without it, so that rmsnorm_fwd's
  # planted faults and hang (reported by design) stay out of their verdicts.
  local tests=""
  [[ "$sel" == test_* ]] && { dtypes=""; tests="--include-test-variants"; }
  timeout "${KWB_SANITIZE_TIMEOUT:-420}" compute-sanitizer --tool "$tool" "${exclude[@]}" --target-processes all --error-exitcode 99 \
    ./build/kwb run --op "$sel" $axes $dtypes $tests --preset verify --mode hot \
    --datasheet-ceilings --out "$OUT/sanitize-$tool-$name" > "$OUT/sanitize-$tool-$name.txt" 2>&1
  local rc=$?
  # "Internal Sanitizer Error" is the tool stopping, not a finding: racecheck does so inside
  # cuBLASLt's kernels even with them excluded (docs/notebook/2026-11-26-counters-sample-readable-shapes.md),
  # and the process's later cases then fail; the verdict names it apart from hazards.
  echo "$tool $name: exit $rc ($(grep -c -E '^========= (Invalid|Race|Error)' "$OUT/sanitize-$tool-$name.txt") sanitizer reports, $(grep -c 'Internal Sanitizer Error' "$OUT/sanitize-$tool-$name.txt") sanitizer stops, cases: $(grep -o '[0-9]* passed, [0-9]* failed' "$OUT/sanitize-$tool-$name.txt" | tail -1))" \
    | tee -a "$OUT/sanitize-verdicts.txt"
}
specs=()
for op in ${ops//,/ }; do specs+=("$op|--shapes edge"); done
[ "${KWB_SANITIZE_TEST_OPS:-1}" = 1 ] && \
  specs+=("test_colsum,test_label_nll,test_bhsd_scale,test_derived_copy|" "test_seq_sum|--axis layout=bshd,bhsd --axis causal=0,1 --axis block=128,512")
running=0
for tool in ${KWB_SANITIZE_TOOLS:-memcheck racecheck}; do
  for spec in "${specs[@]}"; do
    sanitize_one "$tool" "${spec%%|*}" "${spec#*|}" &
    running=$((running + 1))
    if [ $running -ge "${KWB_SANITIZE_JOBS:-6}" ]; then wait -n; running=$((running - 1)); fi
  done
done
wait
for f in "$OUT"/sanitize-*.txt; do grep -E '^========= (Invalid|Race|Error)' -A3 "$f" | head -8; done
fi

if want ceilings; then
log "ceilings"
./build/kwb ceilings --refresh --log "$OUT/ceilings-worker.log" 2>&1 | tee "$OUT/ceilings.txt"
fi

if want readprobe; then
# What a bare read reaches at the sizes of the memory-bound goals, contiguous and as a mask's kept
# rows (mean pooling's pattern: d4096 rows of bf16 and fp32), as % of $KWB_READ_ROOF (GB/s) if set,
# else of `kwb ceilings`' read-only figure (which measures the ceilings first where none are
# cached: a minute or two on a fresh machine; run the ceilings section before this one).
log "read probe (scripts/probes/read_at_size.cu)"
if cmake --build --preset default --target kwb_probe_read_at_size > "$OUT/readprobe-build.log" 2>&1; then
  roof=${KWB_READ_ROOF:-$(./build/kwb ceilings 2>/dev/null | awk '/^DRAM read-only/ {print $3; exit}')}
  # shellcheck disable=SC2086  # an empty roof is no argument
  ./build/kwb_probe_read_at_size 134217728 402653184 805306368 ${roof:-} --kept-rows 8192 --kept-rows 16384 2>&1 | tee "$OUT/readprobe.txt"
else
  tail -5 "$OUT/readprobe-build.log"
fi
fi

if want smoke; then
log "smoke suite, run 1 (every op and variant once, bf16)"
start=$(date +%s.%N)
./build/kwb run --suite suites/smoke.yaml --time-report --out "$OUT/smoke" > "$OUT/smoke.txt" 2> "$OUT/smoke-progress.txt"
echo "exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee "$OUT/smoke-wall.txt"
fi
if want smoke2; then
log "smoke suite, run 2 (reproducibility)"
./build/kwb run --suite suites/smoke.yaml --time-report --out "$OUT/smoke2" > "$OUT/smoke2.txt" 2> "$OUT/smoke2-progress.txt"; echo "exit $?"
fi

if want bench; then
# The catalogue at its default (realistic) shapes: bf16 timed (the figures of docs/notebook/),
# fp32 and fp16 verified only (every case of every op passes in all three dtypes).
log "catalogue benchmark: default shapes, bf16, timed (\$KWB_PRESET, default: default)"
start=$(date +%s.%N)
# Interrupted (SIGINT) after $KWB_BENCH_LIMIT seconds, it still writes the report of what it measured.
timeout -s INT "${KWB_BENCH_LIMIT:-470}" ./build/kwb run --op "$ops" --dtype bf16 --preset "${KWB_PRESET:-default}" \
  --out "$OUT/bench" > "$OUT/bench.txt" 2> "$OUT/bench-progress.txt"
echo "bf16 exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
grep -E " failed " "$OUT/bench.txt" | head -20
sed -n '/^Speedup of the fastest/,$p' "$OUT/bench.txt"
fi

if want verify3; then
# One process per op, all at once: the fp64 oracles of the ops verified in full (weight gradients,
# losses) are single-threaded host work, so the ops' checks overlap on the host's cores.
log "default shapes in fp32 and fp16, verified (--preset verify), one process per op"
for op in ${ops//,/ }; do
  ( timeout -s INT "${KWB_VERIFY3_LIMIT:-400}" ./build/kwb run --op "$op" --dtype fp32,fp16 --preset verify --mode hot --datasheet-ceilings \
      --out "$OUT/verify3-$op" > "$OUT/verify3-$op.txt" 2>&1
    echo "verify3 $op: exit $?, $(tail -2 "$OUT/verify3-$op.txt" | head -1)" ) &
done
wait
cat "$OUT"/verify3-*.txt > "$OUT/bench-verify.txt"; grep -E " failed " "$OUT/bench-verify.txt" | head -20
fi

if want tiny; then
log "tiny kernel (1 row x 512): CUPTI against CUDA events"
for timer in cupti events; do
  ./build/kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=1 --axis cols=512 \
    --timer $timer --datasheet-ceilings --out "$OUT/tiny-$timer" > /dev/null 2>&1; echo "$timer exit $?"
done
fi

if want faults; then
log "fault isolation sweep"
./build/kwb run --op rmsnorm_fwd --variant fused_v2_vec16,test_fault_illegal_address,test_fault_device_assert,test_hang \
  --include-test-variants --dtype bf16 --axis rows=4096 --axis cols=4096,4100 --preset quick --case-timeout 8 \
  --out "$OUT/faults" > "$OUT/faults.txt" 2>&1; echo "exit $? (1 expected: faulting cases failed)"; tail -12 "$OUT/faults.txt"
fi

if want counters; then
# Hardware counters (kwb run --counters): the counter GPU tests, then the measured roofline of
# streaming ops beyond the L2, a two-pass test variant (traffic ratio near 2), a tensor-core GEMM
# and newton_schulz's half-product variant (executes ~5/6 of the model's FLOPs).
log "counters: GPU tests and the measured roofline"
./build/tests/kwb_gpu_tests --gtest_filter="${GPU_FILTER:-Counters.*}" 2>&1 | tee "$OUT/counters-tests.txt" | \
  grep -E "OK \]|FAILED|SKIPPED|copy of|traffic ratio|kernel |Failure|Expected|Which is|actual" | head -40
mkdir -p "$OUT/counters"
n=0
while read -r sets spec; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  timeout 120 ./build/kwb run $spec --counters "$sets" --preset quick --datasheet-ceilings --out "$OUT/counters/$n" \
    > "$OUT/counters/$n.txt" 2>&1 || echo "case $n ($spec): exit $? $(grep -E 'failed|error|note' "$OUT/counters/$n.txt" | head -3)"
done <<'CASES'
memory --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=16384 --axis cols=8192
memory --op softmax_fwd --variant fused_v1_row_in_registers --dtype bf16 --axis rows=16384 --axis cols=4096
memory --op swiglu_fwd --variant fused_v1_flat_vec16 --dtype bf16 --axis rows=16384 --axis cols=8192
memory --op swiglu_bwd --variant fused_v1_flat_vec16 --dtype bf16 --axis rows=16384 --axis cols=7168
memory --op layernorm_fwd --variant fused_v1_vec16_two_pass --dtype bf16 --axis rows=16384 --axis cols=8192
memory,occupancy --op rope_fwd --variant fused_v1_vec16_shared_table --dtype bf16 --axis batch=4 --axis seq=4096 --axis heads=32 --axis kv_heads=8 --axis head_dim=128
memory --op test_colsum --variant test_simple --dtype fp32 --axis rows=8192 --axis cols=8192 --include-test-variants
memory,tensor --op linear_bias_relu --variant fused_v4_wgmma_tma_warp_specialized --dtype bf16 --axis m=4096 --axis n=4096 --axis k=4096
memory,tensor,compute --op newton_schulz --variant fused_v2_symmetric_halves_tf32 --dtype fp32 --axis rows=4096 --axis cols=4096
memory,compute,tensor,occupancy --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=1024 --axis cols=4096 --mode hot
CASES
grep -h "counters:" "$OUT"/counters/*.txt | sort | uniq -c | head -5
python3 scripts/counters_table.py "$OUT"/counters/*/report.json 2>&1 | tee "$OUT/counters-table.txt"
fi

if want xcheck; then
# One kernel per case (fused_v2_vec16) at lengths from ~10 us to a few ms: kwb under each flush
# (CUPTI, default preset, the measured ceilings), then the same case under Nsight Compute, whose
# `--cache-control all` flushes and invalidates the caches before each profiled launch. Nsight
# Compute refuses CUPTI to the harness (error 39), so the harness falls back to events there; only
# ncu's own gpu__time_duration.sum of each launch is compared.
log "Nsight Compute cross-check at several kernel lengths, kwb --flush clean and dirty"
mkdir -p "$OUT/xcheck"
for spec in bf16:1x512 bf16:2048x4096 bf16:4096x4096 bf16:16384x4096 bf16:16384x16384 fp32:32768x16384 bf16:65536x32768; do
  dtype=${spec%%:*}; shape=${spec#*:}; rows=${shape%x*}; cols=${shape#*x}
  args="--op rmsnorm_fwd --variant fused_v2_vec16 --dtype $dtype --axis rows=$rows --axis cols=$cols"
  for flush in clean dirty; do
    ./build/kwb run $args --flush $flush --out "$OUT/xcheck/$dtype-$shape-$flush" > /dev/null 2>&1 || echo "kwb $spec $flush exit $?"
  done
  timeout 150 ncu --clock-control none --cache-control all --nvtx \
    --nvtx-include "kwb@rmsnorm_fwd:fused_v2_vec16:$dtype:$shape/" --kernel-name regex:rmsnorm_fwd_v2 \
    --launch-skip 3 --launch-count 15 --metrics gpu__time_duration.sum --csv --print-units base \
    ./build/kwb run $args --preset quick --flush clean --out "$OUT/xcheck/$dtype-$shape-ncu-run" \
    > "$OUT/xcheck/$dtype-$shape-ncu.csv" 2> "$OUT/xcheck/$dtype-$shape-ncu.err" || echo "ncu $spec exit $?"
  echo "$spec done"
done
fi

if want profile; then
# kwb's own counters against Nsight Compute's on 10 cases (memory-bound and tensor-core, one- and
# three-kernel launches): `kwb run --counters memory,tensor`, then `kwb profile --run` of the same
# case (the ncu command it prints: the same metric names, only that case's second warm-up launch,
# ncu's --cache-control all for the cold start, the GPU's own clocks), which writes ncu's figures
# into the report's case. One table last: case, metric, kwb, ncu, ncu/kwb; byte and instruction
# counts must agree within 2%. $KWB_PROFILE_CASES (numbers 1-10) narrows them. Cases 9 and 10
# write 8 MiB (its writes fit the L2: still dirty there when the kernel ends) and 1 GiB (far beyond
# it): where the two tools count the write-back of the lines a kernel leaves dirty.
log "kwb counters against Nsight Compute (kwb profile --run), bf16"
mkdir -p "$OUT/profile"
n=0
for spec in \
  "rmsnorm_fwd|fused_v2_vec16|--axis rows=16384 --axis cols=4096" \
  "softmax_fwd|fused_v1_row_in_registers|--axis rows=16384 --axis cols=4096" \
  "swiglu_fwd|fused_v1_flat_vec16|--axis rows=16384 --axis cols=7168" \
  "layernorm_fwd|fused_v1_vec16_two_pass|--axis rows=16384 --axis cols=4096" \
  "rope_fwd|fused_v1_vec16_shared_table|--axis batch=1 --axis seq=8192 --axis heads=32 --axis kv_heads=8 --axis head_dim=128 --axis positions=index" \
  "cross_entropy|fused_v1_cluster_row_in_registers|--axis tokens=8192 --axis vocab=128256" \
  "linear_bias_relu|fused_v4_wgmma_tma_warp_specialized|--axis m=4096 --axis n=4096 --axis k=4096" \
  "linear_bias_relu|fused_v3_mma_sync_cp_async|--axis m=4096 --axis n=4096 --axis k=4096" \
  "rmsnorm_fwd|fused_v2_vec16|--axis rows=1024 --axis cols=4096" \
  "rmsnorm_fwd|fused_v2_vec16|--axis rows=131072 --axis cols=4096"; do
  n=$((n + 1))
  [ -n "${KWB_PROFILE_CASES:-}" ] && [[ " $KWB_PROFILE_CASES " != *" $n "* ]] && continue
  IFS='|' read -r op variant axes <<< "$spec"
  dir="$OUT/profile/$n-$op"
  ./build/kwb run --op "$op" --variant "$variant" --dtype bf16 $axes --counters memory,tensor --preset quick \
    --datasheet-ceilings --out "$dir" > "$dir.txt" 2>&1 || echo "kwb run $op:$variant exit $?"
  id=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["cases"][0]["nvtx_range"])' "$dir/report.json" 2>/dev/null)
  [ -n "$id" ] || { echo "$op:$variant: no report (see $dir.txt)"; continue; }
  timeout "${KWB_PROFILE_TIMEOUT:-240}" ./build/kwb profile "$id" --run --report "$dir/report.json" --out "$dir" \
    >> "$dir.txt" 2>&1; echo "kwb profile $id: exit $?"
done
python3 scripts/device_summary.py "$OUT" --profile-table | tee "$OUT/profile-table.txt"
fi

if false; then  # the fp32 v1 cross-check of earlier runs, kept for reference
log "Nsight Compute cross-check (gpu__time_duration.sum, --clock-control none, caches flushed)"
case_name="rmsnorm_fwd:fused_v1_row_per_block:fp32:32768x16384"
./build/kwb run --op rmsnorm_fwd --variant fused_v1_row_per_block --dtype fp32 --axis rows=32768 --axis cols=16384 \
  --out "$OUT/ncu-harness" > /dev/null 2>&1
timeout 240 ncu --clock-control none --cache-control all --nvtx --nvtx-include "kwb@${case_name}/" \
  --kernel-name regex:rmsnorm_fwd_v1 --metrics gpu__time_duration.sum -c 5 --csv --print-units base \
  ./build/kwb run --op rmsnorm_fwd --variant fused_v1_row_per_block --dtype fp32 --axis rows=32768 --axis cols=16384 \
  --preset quick --datasheet-ceilings --out "$OUT/ncu-events" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"; echo "ncu exit $?"
tail -3 "$OUT/ncu.err"
fi

if want graph; then
# suites/graph-vs-stream.yaml (1024-row shapes, multi-launch baselines, cases over 50 us) timed twice,
# with --launch stream and --launch graph (CUPTI, quick preset): one table of both medians, graph/stream,
# kernels a sample and the host's launch time per kernel; then whether the cases over 50 us agree
# within 3% and the launch-bound cases' gain (scripts/graph_table.py; exit 1: a long case disagrees).
log "stream launches against graph replays (suites/graph-vs-stream.yaml)"
for launch in stream graph; do
  start=$(date +%s.%N)
  ./build/kwb run --suite suites/graph-vs-stream.yaml --launch $launch --timer cupti --out "$OUT/graph-$launch" \
    > "$OUT/graph-$launch.txt" 2> "$OUT/graph-$launch-progress.txt"
  echo "--launch $launch: exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
  grep -E " (failed|skipped) " "$OUT/graph-$launch.txt" | head -20
done
python3 scripts/graph_table.py "$OUT/graph-stream/report.json" "$OUT/graph-graph/report.json" | tee "$OUT/graph-table.txt"
echo "graph_table exit ${PIPESTATUS[0]}"
fi

if want peers && [ -f .peers/torch_peers.py ]; then
  log "PyTorch peers"
  timeout 400 python3 .peers/torch_peers.py --ops "${KWB_PEER_OPS:-ceilings,rmsnorm,layernorm,softmax,swiglu,rope,ce}" > "$OUT/peers.txt" 2>&1
  echo "exit $?"; grep -v '^{' "$OUT/peers.txt" | tail -20
fi

# An op's PyTorch peers, then the op's own bf16 run (default shapes, time report), in one call so
# the figures compare: peers_then_run OP PEER_SCRIPT NAME LIMIT_SECONDS.
peers_then_run() {
  local op=$1 script=$2 name=$3 limit=$4
  log "$op: peers, then kwb run --op $op --dtype bf16"
  timeout "${KWB_PEERS_LIMIT:-150}" python3 "$script" > "$OUT/$name-peers.txt" 2>&1; echo "peers: exit $?"
  cut -c1-200 "$OUT/$name-peers.txt"
  timeout -s INT "$limit" ./build/kwb run --op "$op" --dtype bf16 --time-report \
    --out "$OUT/$name" > "$OUT/$name.txt" 2>&1; echo "kwb run: exit $?"
  grep -E "^$op|passed, " "$OUT/$name.txt" | cut -c1-200
}

# attention_fwd: PyTorch SDPA's FlashAttention-2 and cuDNN forwards at the shapes the forward is
# judged by (b4 s4096 and b1 s16384 d128, causal and not; d64).
want fwdpeers && peers_then_run attention_fwd scripts/peers/attention_fwd_peers.py attention-fwd "${KWB_FWD_LIMIT:-330}"

# attention_bwd: PyTorch SDPA's FlashAttention-2 and cuDNN backwards at the shapes SDPA can express.
want bwdpeers && peers_then_run attention_bwd scripts/peers/attention_bwd_peers.py attention-bwd "${KWB_BWD_LIMIT:-330}"

# paged_attention_decode: gather + SDPA, SDPA on a contiguous cache, FlashAttention's paged kernel
# where installed; then a sweep of fused_v2's tunables at two shapes.
if want decodepeers; then
peers_then_run paged_attention_decode scripts/peers/paged_decode_peers.py paged-decode "${KWB_DECODE_LIMIT:-200}"
timeout -s INT 120 ./build/kwb run --op paged_attention_decode --variant fused_v2_flash_decode_split_kv --dtype bf16 \
  --axis batch=8,32 --axis context=16384,4096 --axis waves=1,2 --axis stages=2,3,4 \
  --out "$OUT/paged-decode-tune" > "$OUT/paged-decode-tune.txt" 2>&1; echo "tunables: exit $?"
grep -E "^paged_attention_decode|passed, " "$OUT/paged-decode-tune.txt" | cut -c1-200
fi

# attention_varlen_fwd: PyTorch's varlen_attn and the FlashAttention-2 op under it.
# block_sparse_attention_fwd: FlexAttention (compiled, the same block mask) and dense SDPA FA2; the
# compiles take most of the peers' time (KWB_PEERS_LIMIT, default here 300 s).
want sparsepeers && KWB_PEERS_LIMIT=${KWB_PEERS_LIMIT:-300} \
  peers_then_run block_sparse_attention_fwd scripts/peers/block_sparse_peers.py block-sparse "${KWB_SPARSE_LIMIT:-240}"

want varlenpeers && peers_then_run attention_varlen_fwd scripts/peers/attention_varlen_peers.py varlen "${KWB_VARLEN_LIMIT:-330}"

# attention_varlen_bwd: FlashAttention-2's varlen backward inside PyTorch (aten's
# _flash_attention_backward on cu_seqlens, and varlen_attn's autograd), then the op's default shapes
# in bf16 with --time-report; last, a table per shape of the op's variants and the peers (us, TFLOP/s).
if want varlenbwdpeers; then
peers_then_run attention_varlen_bwd scripts/peers/attention_varlen_bwd_peers.py varlen-bwd "${KWB_VARLEN_BWD_LIMIT:-420}"
python3 scripts/peers_table.py "$OUT/varlen-bwd/report.json" "$OUT/varlen-bwd-peers.txt" | tee "$OUT/varlen-bwd-table.txt"
fi

if want tune; then
# kwb tune on each OP:VARIANT of $KWB_TUNE at $KWB_TUNE_AXES (default: the mHC target shape), then a
# plain `kwb run --tuning` of the same case: the record must name the tuned configuration.
log "kwb tune, then kwb run --tuning (${KWB_TUNE:-none given})"
tune_axes=${KWB_TUNE_AXES:---axis tokens=65536 --axis channels=1024}
for spec in ${KWB_TUNE//,/ }; do
  op=${spec%%:*}; variant=${spec#*:}
  start=$(date +%s.%N)
  ./build/kwb tune --op "$op" --variant "$variant" --dtype bf16 $tune_axes --out "$OUT/tune-$op" \
    > "$OUT/tune-$op.txt" 2>&1
  echo "tune $op:$variant exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
  ./build/kwb run --op "$op" --variant "$variant" --dtype bf16 $tune_axes --tuning "$OUT/tune-$op/tune.json" \
    --out "$OUT/tuned-$op" > "$OUT/tuned-$op.txt" 2>&1
  echo "run --tuning $op exit $?"
  python3 scripts/device_summary.py "$OUT" --tune-check "$op" | tee -a "$OUT/tune-check.txt"
done
fi

if want sweep; then
# The catalogue's default sweep in bf16 (every op's default shapes, every variant), one shard of it
# ($KWB_SHARD, e.g. 0/2): the shards of several calls are merged and fed to `kwb select`.
log "default sweep, bf16, shard ${KWB_SHARD:-0/1}"
start=$(date +%s.%N)
# Interrupted (SIGINT, as Ctrl-C) after $KWB_SWEEP_LIMIT seconds, it still writes the report of what it measured.
timeout -s INT "${KWB_SWEEP_LIMIT:-470}" ./build/kwb run --dtype bf16 --shard "${KWB_SHARD:-0/1}" --preset "${KWB_SWEEP_PRESET:-default}" --out "$OUT/sweep" \
  > "$OUT/sweep.txt" 2> "$OUT/sweep-progress.txt"
echo "exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"; tail -3 "$OUT/sweep.txt"
fi

if want stages; then
# Where the full default sweep's time goes (every op, shape, variant and dtype, default preset):
# a uniform slice of its plan (positions k with k mod N == I), with the time report. A slice
# splits input groups (each case of it is likely the first of its group): scripts/stage_estimate.py
# scales the slice's case stages and its groups' inputs and oracle to the whole plan.
log "default sweep, all dtypes, shard ${KWB_STAGES_SHARD:-0/16}, time report"
start=$(date +%s.%N)
timeout -s INT "${KWB_STAGES_LIMIT:-420}" ./build/kwb run --shard "${KWB_STAGES_SHARD:-0/16}" --time-report \
  ${KWB_STAGES_ARGS:-} --out "$OUT/stages" > "$OUT/stages.txt" 2> "$OUT/stages-progress.txt"
echo "exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
sed -n '/where the time went/,$p' "$OUT/stages.txt"
./build/kwb run --list-cases 2>/dev/null > "$OUT/full-plan.txt"
python3 scripts/stage_estimate.py "$OUT/stages/report.json" "$OUT/full-plan.txt" | tee "$OUT/stages-estimate.txt"
fi

if want warm; then
# A first run with a fresh oracle cache, then a second with the cache warm: the ops of $KWB_OPS
# (every op when unset), the ceilings measured first (reported apart). The first run is the full
# default sweep, timed (the cold figure), or with KWB_WARM_FIRST=verify a verify-only run that
# only fills the cache; the second is the full default sweep timed, both with --time-report. A
# device call lasts 10 minutes, so the whole catalogue is measured as a few calls, each a share of
# the ops (their walls add up to the sweep's).
first_preset=${KWB_WARM_FIRST:-default}
log "sweep of ${KWB_OPS:-every op}: a first run ($first_preset preset, fresh oracle cache), then the timed run with the cache warm"
# Both runs stop (SIGINT: they still write what they measured) in time for this call's results to
# come back: $KWB_WARM_DEADLINE seconds after the script started (a device call has 600).
deadline=${KWB_WARM_DEADLINE:-570}
time_left() { local left=$((deadline - SECONDS)); echo $((left > 10 ? left : 10)); }  # timeout 0 would mean none
saved_cache_dir=${KWB_CACHE_DIR-}
export KWB_CACHE_DIR=$PWD/build/warm-cache
rm -rf "$KWB_CACHE_DIR"
( unset KWB_ORACLE_CACHE  # it would name another oracle cache than the fresh one
./build/kwb ceilings > "$OUT/warm-ceilings.txt" 2>&1; echo "ceilings: exit $?"
start=$(date +%s.%N)
timeout -s INT "$(time_left)" ./build/kwb run --op "$ops" --preset "$first_preset" --time-report --out "$OUT/fill" \
  > "$OUT/fill.txt" 2> "$OUT/fill-progress.txt"
echo "first run ($first_preset preset, cache cold): exit $? (124: interrupted), $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
grep -E "passed, .* failed" "$OUT/fill.txt" | tail -1; sed -n '/where the time went/,$p' "$OUT/fill.txt"
./build/kwb cache show 2>&1 | head -4
start=$(date +%s.%N)
timeout -s INT "$(time_left)" ./build/kwb run --op "$ops" --time-report --out "$OUT/warm" \
  > "$OUT/warm.txt" 2> "$OUT/warm-progress.txt"
echo "second run (timed, cache warm): exit $? (124: interrupted), $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
grep -E "passed, .* failed" "$OUT/warm.txt" | tail -1; sed -n '/where the time went/,$p' "$OUT/warm.txt" )
if [ -n "$saved_cache_dir" ]; then export KWB_CACHE_DIR=$saved_cache_dir; else unset KWB_CACHE_DIR; fi
fi

if want extra && [ -f extra.sh ]; then
log "extra.sh (an untracked experiment script at the repository root)"
OUT="$OUT" bash extra.sh > "$OUT/extra.txt" 2>&1; echo "exit $?"; tail -40 "$OUT/extra.txt"
fi

if want python; then
# Python variants (examples/python/rmsnorm_variants.py: a Triton kernel and torch.compile) beside
# the catalogue's rmsnorm_fwd variants in one report, then the same callables timed by
# triton.testing.do_bench at the report's shapes, the selection and the review; last the Python
# module's tests (the GPU one runs planted defects: a wrong answer, a launcher that raises).
log "Python variants: kwb run --python, triton.testing.do_bench at the same shapes, pytest"
mkdir -p "$OUT/python"
./build/kwb run --python examples/python/rmsnorm_variants.py --op rmsnorm_fwd --dtype "${KWB_PYTHON_DTYPES:-bf16,fp16}" \
  --out "$OUT/python/run" > "$OUT/python/run.txt" 2>&1; echo "exit $?"; tail -3 "$OUT/python/run.txt"
PYTHONPATH=build/python python3 scripts/peers/python_variants_do_bench.py --report "$OUT/python/run/report.json" \
  --python examples/python/rmsnorm_variants.py --json "$OUT/python/do_bench.json" 2>&1 | tee "$OUT/python/do_bench.txt" | tail -45
# The same callables timed by kwb with CUDA events (--timer events), the method do_bench uses:
# what differs between the two tables above and below is the timer, not the harness.
./build/kwb run --python examples/python/rmsnorm_variants.py --op rmsnorm_fwd --variant triton_rmsnorm,torch_compile_rmsnorm \
  --dtype bf16 --timer events --out "$OUT/python/events" > "$OUT/python/events.txt" 2>&1; echo "events run: exit $?"
PYTHONPATH=build/python python3 scripts/peers/python_variants_do_bench.py --report "$OUT/python/events/report.json" \
  --python examples/python/rmsnorm_variants.py --json "$OUT/python/do_bench_events.json" 2>&1 | tee "$OUT/python/do_bench_events.txt" | tail -25
# A new op defined in Python (its NumPy oracle) with an eager and a torch.compile variant.
./build/kwb run --python examples/python/squared_relu_op.py --op py_squared_relu --dtype bf16,fp32 \
  --out "$OUT/python/op" > "$OUT/python/op.txt" 2>&1; echo "op run: exit $?"; grep -E "py_squared_relu:|passed, " "$OUT/python/op.txt" | tail -12
./build/kwb run --python examples/python/squared_relu_op.py --op py_squared_relu --dtype bf16,fp32 --shapes edge \
  --preset verify --out "$OUT/python/op-edge" > "$OUT/python/op-edge.txt" 2>&1; echo "op edge shapes: exit $?"; tail -2 "$OUT/python/op-edge.txt"
./build/kwb select "$OUT/python/run/report.json" --md "$OUT/python/select.md" > /dev/null 2>&1
./build/kwb report "$OUT/python/run/report.json" --html "$OUT/python/review.html" --md "$OUT/python/review.md" > /dev/null 2>&1
PYTHONPATH=build/python python3 -m pytest -q -rs -p no:cacheprovider python/tests > "$OUT/python/pytest.txt" 2>&1
echo "pytest exit $?"; tail -5 "$OUT/python/pytest.txt"
fi

if want main; then
log "main job as the README gives it (scripts/run.sh: the smoke suite and its review)"
start=$(date +%s.%N)
scripts/run.sh --time-report > "$OUT/main-job.txt" 2>&1; echo "exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
sed -n '/where the time went/,$p' "$OUT/main-job.txt"; tail -3 "$OUT/main-job.txt"; ls results/
fi

log "summary"
python3 scripts/device_summary.py "$OUT" | tee "$OUT/summary.txt"
if [ -n "$FETCH" ]; then  # the device tool brings back at most 8 files: the first 8 that exist
  [ -f "$OUT/bench/report.json" ] && python3 scripts/device_summary.py "$OUT" --bench-json > "$OUT/bench-report.json"
  [ -d "$OUT/xcheck" ] && python3 scripts/device_summary.py "$OUT" --xcheck-json > "$OUT/xcheck.json"
  # Correctness logs in one file: edge shapes, fp32/fp16 verification, sanitizer reports.
  for path in "$OUT"/edge.txt "$OUT"/bench-verify.txt "$OUT"/sanitize-verdicts.txt "$OUT"/sanitize-*-*.txt; do
    [ -f "$path" ] && { echo "##### ${path##*/}"; grep -E " failed |^=========|passed, .* failed|: exit" "$path" | head -200; }
  done > "$OUT/checks.txt"
  [ -f "$OUT/smoke/report.json" ] && cp "$OUT/smoke/report.json" "$OUT/smoke-report.json"
  [ -f "$OUT/faults/report.csv" ] && cp "$OUT/faults/report.csv" "$OUT/faults-report.csv"
  # Reports and logs of the tune and sweep sections, one archive (the tool brings back few files).
  ( cd "$OUT" && ls -d python tune-* tuned-* sweep sweep*.txt stages stages*.txt fill fill*.txt warm warm*.txt tune-check.txt bench counters counters-*.* graph-stream graph-graph graph-*.txt attention-bwd attention-bwd*.txt \
        paged-decode paged-decode*.txt varlen varlen*.txt varlen-bwd block-sparse block-sparse*.txt 2>/dev/null | \
      xargs -r tar czf "$FETCH/results.tgz" --exclude='*.log' )
  n=0
  for f in summary.txt checks.txt graph-table.txt profile-table.txt extra.txt bench-report.json bench.txt gpu-tests.log \
           peers.txt ceilings.txt smoke-report.json faults-report.csv xcheck.json readprobe.txt; do
    [ -s "$OUT/$f" ] && [ $n -lt 8 ] && { cp "$OUT/$f" "$FETCH/"; n=$((n + 1)); }
  done
fi
