set -u; O=$OUT; mkdir -p $O; T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
timeout 330 scripts/device.sh none > $O/build.txt 2>&1; echo "build $(el)s"; tail -1 $O/build.txt
./build/kwb ceilings --refresh > $O/ceil.txt 2>&1; echo "ceilings rc=$? $(el)s"; grep -E "tensor|FP32" $O/ceil.txt
V=vendor_cublaslt_relu_bias_epilogue,vendor_cublaslt_relu_bias_epilogue_tf32,baseline_cublas_then_bias_relu,fused_v4_wgmma_tma_warp_specialized
show() { python3 - $1 <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); worst=[]
for c in r['cases']:
    d=c.get('derived') or {}
    if c['disposition']=='failed': print('  FAILED', c['variant'][:40], c['dtype'], c['shape_compact'], c['reason'][:120])
    if d.get('pct_of_compute_roof'): worst.append((d['pct_of_compute_roof'], c['variant'][:40], c['dtype'], c['shape_compact'], round(d['tflops'],1)))
for w in sorted(worst, reverse=True)[:6]: print('  %.1f%% of compute roof: %s %s %s %s TF/s' % w)
PY
}
for i in 1 2; do
  timeout 200 ./build/kwb run --op linear_bias_relu --variant $V --out /tmp/l$i > $O/l$i.txt 2>&1; echo "lbr$i rc=$? $(el)s"; show /tmp/l$i/report.json
done
timeout 150 ./build/kwb run --op swiglu_mlp_fwd,newton_schulz --dtype fp32,bf16 --out /tmp/m > $O/m.txt 2>&1; echo "mlp rc=$? $(el)s"; show /tmp/m/report.json
