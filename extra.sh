# Session experiment: CPU tests on the device's cores, the catalogue page, and the new ops timed.
set -u
./build/kwb list --markdown > "$OUT/catalogue.md"
cmake --build --preset default -j 16 --target kwb_tests > "$OUT/cpu-build.log" 2>&1 || tail -20 "$OUT/cpu-build.log"
cp "$OUT/catalogue.md" docs/catalogue.md
./build/tests/kwb_tests --gtest_brief=1 2>&1 | tail -8
./build/kwb run --op attention_fwd --dtype bf16 --preset quick --out "$OUT/attn" > "$OUT/attn.txt" 2>&1; echo "attn exit $?"
grep -E "failed|skipped" "$OUT/attn.txt" | head -8
./build/kwb run --op linear_cross_entropy --dtype bf16 --preset quick --axis tokens=4096 --axis hidden=1024 --axis vocab=32000 --out "$OUT/lce" > "$OUT/lce.txt" 2>&1; echo "lce exit $?"
python3 - "$OUT" <<'PY'
import json, sys
for name in ("attn", "lce"):
    try: r = json.load(open(f"{sys.argv[1]}/{name}/report.json"))
    except Exception as e: print(name, e); continue
    for c in r["cases"]:
        t = c.get("timing") or {}; d = c.get("derived") or {}
        print(c["op"][:10], "x".join(str(v) for v in c["shape"].values()), c["variant"][:44], c["disposition"][:4],
              round(t.get("span", {}).get("median", 0), 1), round(d.get("tflops", 0), 1), round(d.get("pct_of_roofline", 0), 1),
              c.get("device_memory_bytes"), c.get("reason", "")[:70])
PY
