#!/usr/bin/env bash
# Nsight Compute's own time per launch, apart from any flush: ncu with --cache-control none and all
# against kwb (CUPTI) in hot mode and under --flush clean, at three RMSNorm lengths
# (docs/notebook/2026-11-22-flush-choice-and-nsight-compute.md).
set -u; cd "$(dirname "$0")/.."
cmake --preset default -DKWB_COMPILE_CHECK=OFF >/dev/null && cmake --build --preset default -j 16 --target kwb >/dev/null 2>&1 || { echo build failed; exit 1; }
for spec in 1x512 2048x4096 16384x4096; do
  r=${spec%x*}; c=${spec#*x}
  a="--op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=$r --axis cols=$c --datasheet-ceilings"
  for cc in all none; do
    ncu --clock-control none --cache-control $cc --nvtx --nvtx-include "kwb@rmsnorm_fwd:fused_v2_vec16:bf16:$spec/" \
      --kernel-name regex:rmsnorm_fwd_v2 --launch-skip 3 --launch-count 10 --metrics gpu__time_duration.sum --csv \
      --print-units base ./build/kwb run $a --preset quick --mode hot --out /tmp/n-$spec-$cc > /tmp/ncu-$spec-$cc.csv 2>/dev/null
  done
  ./build/kwb run $a --mode hot --out /tmp/h-$spec > /dev/null 2>&1
  ./build/kwb run $a --flush clean --out /tmp/c-$spec > /dev/null 2>&1
done
python3 - <<'PY'
import csv, io, json, statistics
for spec in ("1x512", "2048x4096", "16384x4096"):
    out = [spec]
    for cc in ("all", "none"):
        t = open(f"/tmp/ncu-{spec}-{cc}.csv").read(); t = t[t.find('"ID"'):]
        v = [float(r["Metric Value"].replace(",", "")) / 1e3 for r in csv.DictReader(io.StringIO(t)) if r.get("Metric Name") == "gpu__time_duration.sum"]
        out.append(f"ncu hot cache-control {cc}: {statistics.median(v):.3f} us ({len(v)})" if v else f"ncu {cc}: none")
    for k, p in (("kwb hot cupti", "h"), ("kwb clean cupti", "c")):
        j = json.load(open(f"/tmp/{p}-{spec}/report.json"))["cases"][0]["timing"]
        out.append(f"{k}: {j['span']['median']:.3f} us")
    print(" | ".join(out))
PY
