#!/usr/bin/env python3
"""The short table that scripts/device.sh prints last: the figures the issue's 'done when' asks for.

Reads the reports and logs under the given folder. Standard library only (runs on any python3).
"""
import csv, io, json, statistics, sys
from pathlib import Path

out = Path(sys.argv[1])

def load(name):
    p = out / name / "report.json"
    return json.loads(p.read_text()) if p.exists() else None

def key(c):
    return (c["op"], c["variant"], c["dtype"], c.get("shape_compact", ""))

smoke, smoke2 = load("smoke"), load("smoke2")
rows = []
if smoke:
    dev = smoke["run"]["device"]["name"]
    ceil = smoke["run"]["ceilings"]
    cases = smoke["cases"]
    disp = {}
    for c in cases:
        disp[c["disposition"]] = disp.get(c["disposition"], 0) + 1
    rows.append(("device", dev))
    rows.append(("copy ceiling (kwb ceilings)", f'{ceil["dram_copy_gbps"]:.0f} GB/s ({ceil["source"]})'))
    rows.append(("smoke cases", ", ".join(f"{v} {k}" for k, v in sorted(disp.items()))))
    wall = (out / "smoke-wall.txt").read_text().strip() if (out / "smoke-wall.txt").exists() else "?"
    rows.append(("smoke wall time", wall))
    target = [c for c in cases if c["dtype"] == "bf16" and c.get("shape_compact") == "16384x4096"
              and c["disposition"] == "passed" and "derived" in c]
    best = max((c for c in target if c["role"] == "fused"), key=lambda c: c["derived"]["bandwidth_gbps"], default=None)
    if best:
        d = best["derived"]
        rows.append(("best fused bf16 16384x4096", f'{best["variant"]}: {best["timing"]["span"]["median"]:.2f} us, '
                     f'{d["bandwidth_gbps"]:.0f} GB/s = {d["pct_of_bandwidth_ceiling"]:.1f}% of copy, '
                     f'speedup {d.get("speedup_vs_baseline", float("nan")):.2f}x vs {d.get("baseline_variant", "?")}'))
    for c in target:
        rows.append((f'  {c["variant"]}', f'{c["timing"]["span"]["median"]:.2f} us, {c["derived"]["bandwidth_gbps"]:.0f} GB/s, '
                     f'{c["timing"]["kernels_per_sample"]} kernel(s), busy {c["timing"]["busy"]["median"]:.2f} us'))
if smoke and smoke2:
    a = {key(c): c for c in smoke["cases"] if "timing" in c}
    diffs = []
    for c in smoke2["cases"]:
        k = key(c)
        if "timing" in c and k in a and a[k]["timing"]["span"]["median"] > 50:
            m1, m2 = a[k]["timing"]["span"]["median"], c["timing"]["span"]["median"]
            diffs.append((abs(m2 - m1) / m1 * 100, k))
    if diffs:
        diffs.sort()
        within = sum(1 for d, _ in diffs if d <= 1.0)
        rows.append(("run-to-run, cases > 50 us", f"{within}/{len(diffs)} within 1%; median diff "
                     f"{statistics.median(d for d, _ in diffs):.2f}%, worst {diffs[-1][0]:.2f}% ({':'.join(diffs[-1][1])})"))
faults = load("faults")
if faults:
    failed = [f'{c["variant"]}: {c["reason"][:60]}' for c in faults["cases"] if c["disposition"] == "failed"]
    passed = sum(1 for c in faults["cases"] if c["disposition"] == "passed")
    rows.append(("fault sweep", f'{len(faults["cases"])} cases, {passed} passed, {len(failed)} failed'))
    for f in failed[:3]:
        rows.append(("  ", f))
harness = load("ncu-harness")
ncu_csv = out / "ncu.csv"
if harness and ncu_csv.exists():
    text = ncu_csv.read_text()
    start = text.find('"ID"')
    vals = []
    if start >= 0:
        for r in csv.DictReader(io.StringIO(text[start:])):
            if r.get("Metric Name") == "gpu__time_duration.sum":
                vals.append(float(r["Metric Value"].replace(",", "")) / 1e3)
    h = harness["cases"][0]["timing"]["span"]["median"] if harness["cases"] and "timing" in harness["cases"][0] else None
    ev = load("ncu-events")
    ev_med = ev["cases"][0]["timing"]["span"]["median"] if ev and ev["cases"] and "timing" in ev["cases"][0] else None
    if vals and h:
        n = statistics.median(vals)
        rows.append(("ncu vs kwb (fp32 32768x16384 v1)", f"ncu {n:.1f} us (median of {len(vals)}), kwb cupti {h:.1f} us "
                     f"({(h / n - 1) * 100:+.2f}%), kwb events under ncu {ev_med if ev_med is None else round(ev_med, 1)} us"))
    else:
        rows.append(("ncu cross-check", f"no ncu values parsed ({len(vals)}), harness {h}"))
tiny = {t: load(f"tiny-{t}") for t in ("cupti", "events")}
if all(tiny.values()):
    m = {t: r["cases"][0]["timing"]["span"]["median"] for t, r in tiny.items() if r["cases"] and "timing" in r["cases"][0]}
    if len(m) == 2:
        rows.append(("tiny kernel bf16 1x512 v2", f'cupti {m["cupti"]:.2f} us, events {m["events"]:.2f} us'))
peers = out / "peers.txt"
if peers.exists():
    for line in peers.read_text().splitlines():
        if line.startswith("{") and '"impl"' in line:
            p = json.loads(line)
            rows.append((f'peer {p["op"]} {p["impl"]} {p["shape"]}', f'{p["us"]} us, {p.get("GBps", p.get("TFLOPs"))}'))
width = max(len(r[0]) for r in rows) if rows else 10
print()
for k, v in rows:
    print(f"{k:<{width}}  {v}")
