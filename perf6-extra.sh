# Sweep of the norm-backward ring (layernorm_bwd fused_v4, rmsnorm_bwd fused_v2) and its L2
# policy, RoPE cache hints and the softmax fused_v5 slice rule. bf16, cold L2, --preset quick, explicit shapes.
# Run from the repository root after the build:  OUT=/some/dir bash perf6-extra.sh
# (scripts/device.sh runs it when copied to extra.sh: `cp perf6-extra.sh extra.sh`, section extra).
# Prints one line per case: op shape variant tunables median_us %copy [kernels: main + partials].
# Expected under 4 minutes on an H100 (75 cases; the layernorm oracle runs once per shape); sections
# past PERF6_BUDGET_S seconds (default 210) are skipped, the tunable sweeps last.
set -u
OUT=${OUT:-results-perf6}
mkdir -p "$OUT"
K=./build/kwb
t0=$(date +%s)

./build/kwb ceilings > "$OUT/ceilings.txt" 2>&1 || echo "kwb ceilings exit $?"  # cached after the first call

n=0
run() {  # name, kwb run arguments...
  local name=$1; shift
  n=$((n + 1))
  if [ $(( $(date +%s) - t0 )) -gt "${PERF6_BUDGET_S:-210}" ]; then echo "[$name] skipped: past the time budget"; return; fi
  $K run --dtype bf16 --preset quick "$@" --out "$OUT/$n-$name" > "$OUT/$n-$name.txt" 2>&1 ||
    echo "[$name] kwb exit $? (see $OUT/$n-$name.txt)"
  python3 - "$OUT/$n-$name/report.json" "$name" <<'EOF'
import json, sys
path, name = sys.argv[1], sys.argv[2]
try:
    cases = json.load(open(path))["cases"]
except Exception as e:  # noqa: BLE001
    print(f"[{name}] no report: {e}")
    sys.exit(0)
for c in cases:
    tun = ",".join(f"{k}={v}" for k, v in (c.get("tunables") or {}).items()) or "-"
    head = f"{c['op']:14s} {c['shape_compact']:28s} {c['variant']:36s} {tun:52s}"
    if c.get("disposition") != "passed":
        print(f"{head} {c.get('disposition')}: {c.get('reason', '')[:80]}")
        continue
    t = c["timing"]
    pct = c["derived"].get("pct_of_bandwidth_ceiling")
    ks = t.get("kernels") or []
    kern = " [" + " + ".join(f"{k['median_us']:.1f}" for k in ks) + "]" if 1 < len(ks) <= 3 else ""
    print(f"{head} {t['span']['median']:9.2f} us {pct:5.1f}%{kern}")
EOF
}

echo "== layernorm_bwd / rmsnorm_bwd at the defaults (v1 same call for comparison)"
run ln-16384 --op layernorm_bwd --variant fused_v1_vec16_partials,fused_v2_vec16_prefetch,fused_v4_cp_async_row_groups \
  --axis rows=16384 --axis cols=1024,2048,4096,8192
run ln-4096x16384 --op layernorm_bwd --variant fused_v1_vec16_partials,fused_v4_cp_async_row_groups \
  --axis rows=4096 --axis cols=16384
run rms-16384 --op rmsnorm_bwd --variant fused_v1_persistent_vec16,fused_v2_cp_async_row_groups \
  --axis rows=16384 --axis cols=4096,8192
run rms-4096x16384 --op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --axis rows=4096 --axis cols=16384

echo "== layernorm_bwd fused_v4: mean 1 (pipelined, default) against 2 (its own reduction)"
run ln4-mean --op layernorm_bwd --variant fused_v4_cp_async_row_groups --axis rows=16384 --axis cols=2048,4096,8192 \
  --axis mean=1,2

echo "== rope cache hints (1 default, 2 streaming), dirty flush twice, then clean flush"
for rep in 1 2; do
  run rope-fwd-$rep --op rope_fwd --variant fused_v1_vec16_shared_table --axis batch=1 --axis seq=4096 \
    --axis heads=32 --axis kv_heads=32 --axis head_dim=128 --axis cache=1,2
done
run rope-fwd-8x8192 --op rope_fwd --variant fused_v1_vec16_shared_table --axis batch=8 --axis seq=8192 \
  --axis heads=32 --axis kv_heads=8 --axis head_dim=128 --axis cache=1,2
run rope-bwd --op rope_bwd --variant fused_v1_vec16_shared_table --axis batch=1 --axis seq=4096 \
  --axis heads=32 --axis kv_heads=32 --axis head_dim=128 --axis cache=1,2
run rope-fwd-clean --op rope_fwd --variant fused_v1_vec16_shared_table --flush clean --axis batch=1 --axis seq=4096 \
  --axis heads=32 --axis kv_heads=32 --axis head_dim=128 --axis cache=1,2

echo "== softmax_fwd fused_v5: slice rule (max_slice_kib 48 = new default, 220 = the cluster as given)"
run sm5-262144 --op softmax_fwd --variant fused_v5_cluster_row_in_smem --axis rows=1024 --axis cols=262144 \
  --axis max_slice_kib=48,220 --axis cluster=8,16
run sm5-131072 --op softmax_fwd --variant fused_v5_cluster_row_in_smem --axis rows=2048 --axis cols=131072,128256 \
  --axis max_slice_kib=48,220

echo "== norm backward L2 policy of x, dy, dx (cache 1 evict_normal = default, 2 evict_first)"
run ln4-cache --op layernorm_bwd --variant fused_v4_cp_async_row_groups --axis rows=16384 --axis cols=4096,8192 \
  --axis cache=1,2
run ln4-cache-16384 --op layernorm_bwd --variant fused_v4_cp_async_row_groups --axis rows=4096 --axis cols=16384 \
  --axis cache=1,2
run rms2-cache --op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --axis rows=16384 --axis cols=8192 --axis cache=1,2

echo "== layernorm_bwd fused_v4 tunables"
run ln4-sweep-8192 --op layernorm_bwd --variant fused_v4_cp_async_row_groups --axis rows=16384 --axis cols=8192 \
  --axis vectors_per_thread=1,2 --axis cta_threads=512,1024 --axis stages=2,3,4
run ln4-sweep-16384 --op layernorm_bwd --variant fused_v4_cp_async_row_groups --axis rows=4096 --axis cols=16384 \
  --axis vectors_per_thread=2,4 --axis stages=2,3 --axis mean=1,2
run ln4-sweep-4096 --op layernorm_bwd --variant fused_v4_cp_async_row_groups --axis rows=16384 --axis cols=4096 \
  --axis vectors_per_thread=1,2 --axis cta_threads=512,1024

echo "== done in $(( $(date +%s) - t0 )) s"
