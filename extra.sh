# Issue 24's fold of layernorm_bwd fused_v1/v2/v3's launch planning onto norm_backward_launch.cuh,
# re-timed against the revision before the house (0504c6c, carried as .peers/base) in this call:
# both kwb builds run the same cases, alternating new / old / new / old, bf16 and fp32 default shapes.
set -u
OUT=$(realpath "$OUT")
LN=fused_v1_vec16_partials,fused_v2_vec16_prefetch,fused_v3_vec16_prefetch_row_groups
( cd .peers/base && cmake --preset default -DKWB_GIT_SHA=0504c6c > "$OUT/base-configure.log" 2>&1 \
  && cmake --build --preset default -j "$(nproc)" --target kwb > "$OUT/base-build.log" 2>&1 ); echo "base build: $?"
summ() { python3 - "$1" <<'PY'
import json,sys
r=json.load(open(sys.argv[1]+'/report.json'))
for c in r['cases']:
  t=c.get('timing')
  if not t: print(c['variant'][:34], c['dtype'], c['shape_compact'], c['disposition'], c.get('reason','')[:60]); continue
  d=c.get('derived',{})
  print(f"{c['variant'][:34]:34} {c['dtype']:5} {c['shape_compact']:12} {t['span']['median']:8.2f} us  p10 {t['span']['p10']:8.2f} p90 {t['span']['p90']:8.2f}  {d.get('pct_of_bandwidth_ceiling',0):5.1f}%  {c['disposition']}")
PY
}
for round in 1 2; do
  for side in new old; do
    K=./build/kwb; [ $side = old ] && K=.peers/base/build/kwb
    $K run --op layernorm_bwd --variant $LN --dtype bf16,fp32 --datasheet-ceilings --out "$OUT/ln-$side-$round" > "$OUT/ln-$side-$round.txt" 2>&1
    echo "== $side round $round: exit $?"; summ "$OUT/ln-$side-$round"
  done
done
# The same edge sweep (every op and variant, 3 dtypes, verified) with the old build: every case's
# disposition and skip reason must match the new build's (the edge section's report).
ops=$(./build/kwb list | awk '/^[a-z]/ {print $1}' | paste -sd, -)
for side in new old; do
  K=./build/kwb; [ $side = old ] && K=.peers/base/build/kwb
  $K run --op "$ops" --shapes edge --preset verify --mode hot --datasheet-ceilings --out "$OUT/edge-$side" > "$OUT/edge-$side.txt" 2>&1
  echo "edge $side: exit $?; $(tail -2 "$OUT/edge-$side.txt" | head -1)"
done
python3 - "$OUT/edge-old/report.json" "$OUT/edge-new/report.json" <<'PY'
import json,sys
def load(p):
  return {(c['op'],c['variant'],c['dtype'],c['shape_compact'],json.dumps(c.get('tunables',{}))):(c['disposition'],c.get('reason','')) for c in json.load(open(p))['cases']}
a,b=load(sys.argv[1]),load(sys.argv[2])
only_a=[k for k in a if k not in b]; only_b=[k for k in b if k not in a]
diff=[k for k in a if k in b and a[k]!=b[k]]
print(f"edge dispositions: {len(a)} old cases, {len(b)} new, {len(only_a)} only old, {len(only_b)} only new, {len(diff)} differ")
for k in (only_a+only_b+diff)[:15]: print('  ',k,a.get(k),b.get(k))
PY
