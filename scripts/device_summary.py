#!/usr/bin/env python3
"""The short table that scripts/device.sh prints last: the figures the issue's 'done when' asks for.

Reads the reports and logs under the given folder. Standard library only (runs on any python3).
"""
import csv, io, json, statistics, sys
from pathlib import Path

out = Path(sys.argv[1])
xcheck_json = "--xcheck-json" in sys.argv[2:]  # print the cross-check's figures as JSON instead
bench_json = "--bench-json" in sys.argv[2:]    # print the bench report without per-sample arrays

def load(name):
    p = out / name / "report.json"
    return json.loads(p.read_text()) if p.exists() else None

def key(c):
    return (c["op"], c["variant"], c["dtype"], c.get("shape_compact", ""))

if "--tune-check" in sys.argv[2:]:
    # One line per tuned shape: the best configuration against the declared default, and what a
    # plain `kwb run --tuning` then ran (its record's tunables and median).
    op = sys.argv[sys.argv.index("--tune-check") + 1]
    tune_path = out / f"tune-{op}" / "tune.json"
    if not tune_path.exists():
        print(f"tune {op}: no tune.json"); sys.exit(0)
    tune = json.loads(tune_path.read_text())
    tuned = load(f"tuned-{op}") or {"cases": []}
    fmt_cfg = lambda t: ",".join(f"{k}={v}" for k, v in (t or {}).items())
    for e in tune["shapes"]:
        best, default = e.get("best") or {}, e.get("default") or {}
        runs = [c for c in tuned["cases"] if c.get("shape_compact") == e["shape_compact"] and c["dtype"] == e["dtype"]]
        ran = "; ".join(f'{fmt_cfg(c.get("tunables"))} {c["disposition"]} '
                        f'{c.get("timing", {}).get("span", {}).get("median", float("nan")):.1f} us' for c in runs) or "no record"
        print(f'tune {op} {e["dtype"]} {e["shape_compact"]}: best {fmt_cfg(best.get("tunables"))} '
              f'{best.get("median_us", float("nan")):.1f} us, default {fmt_cfg(default.get("tunables"))} '
              f'{default.get("median_us", float("nan")):.1f} us, speedup {e.get("speedup_over_default")}, '
              f'{len(e["configurations"])} timed, {e["failed"]} failed, {e["skipped"]} skipped; run --tuning: {ran}')
    sys.exit(0)

if "--profile-table" in sys.argv[2:]:
    # kwb's own counters against Nsight Compute's (`kwb profile --run`), one row per case and
    # metric: totals over the launch's kernels, ncu over kwb. Counts that depend on neither timing
    # nor cache state (bytes, sectors, requests, instructions, tensor ops, blocks and warps
    # launched: the rule of reports/profile/counter_comparison.cpp) must agree within 2%.
    def checked(m):
        # DRAM bytes written: kwb counts the write-back of the lines left dirty in the L2, ncu does not.
        return (m.endswith(".sum") and not m.startswith("dram__bytes_write") and not any(v in m for v in ("_hit", "_miss", "cycles", "time_duration", "warps_active"))
                and any(k in m for k in ("bytes", "sectors", "requests", "inst_executed", "ops_path", "ctas_launched",
                                         "warps_launched")))
    print(f'{"case":<72} {"metric":<58} {"kwb":>16} {"ncu":>16} {"ncu/kwb":>8}  check')
    agree, off, missing = 0, [], []
    for path in sorted((out / "profile").glob("*/report.json")):
        for c in json.loads(path.read_text())["cases"]:
            kwb, ncu = c.get("counters") or {}, c.get("ncu_counters")
            if not ncu:
                missing.append(f'{c["nvtx_range"]} (no ncu figures: {path.parent.name}.txt says why)'); continue
            if kwb.get("unavailable"):
                missing.append(f'{c["nvtx_range"]} (kwb counters unavailable: {kwb["unavailable"]})')
            metrics = ncu["metrics"] + [m for m in kwb.get("metrics", []) if m not in ncu["metrics"]]
            for m in metrics:
                a, b = kwb.get("total", {}).get(m), ncu["total"].get(m)
                ratio = b / a if a not in (None, 0) and b is not None else (1.0 if a == 0 and b == 0 else None)
                verdict = "-"
                if checked(m):
                    if ratio is not None and abs(ratio - 1) <= 0.02:
                        verdict, agree = "ok", agree + 1
                    else:
                        verdict = "OFF" if ratio is not None else "missing"
                        off.append(f'{c["nvtx_range"]} {m}')
                show = lambda v: "-" if v is None else (f"{v:.0f}" if v == int(v) else f"{v:.6g}")
                print(f'{c["nvtx_range"]:<72} {m:<58} {show(a):>16} {show(b):>16} '
                      f'{"-" if ratio is None else f"{ratio:.4f}":>8}  {verdict}')
    print(f"agreement within 2%: {agree} of {agree + len(off)} byte and instruction counts"
          + (f"; off or missing: {'; '.join(off)}" if off else ""))
    for m in missing:
        print(f"not compared: {m}")
    sys.exit(0)

smoke, smoke2 = load("smoke"), load("smoke2")
bench = load("bench")
if bench_json:
    for c in (bench or {}).get("cases", []):
        c.get("timing", {}).pop("samples_us", None)
    print(json.dumps(bench, indent=1))
    sys.exit(0)
rows = []
if bench:
    cases = [c for c in bench["cases"] if c["disposition"] == "passed" and "derived" in c]
    disp = {}
    for c in bench["cases"]:
        disp[c["disposition"]] = disp.get(c["disposition"], 0) + 1
    rows.append(("bench cases (bf16, default shapes)", ", ".join(f"{v} {k}" for k, v in sorted(disp.items()))))
    ops = []
    for c in bench["cases"]:
        if c["op"] not in ops:
            ops.append(c["op"])
    for op in ops:
        fused = [c for c in cases if c["op"] == op and c["role"] != "baseline"]
        if not fused:
            rows.append((f"bench {op}", "no passed fused case"))
            continue
        # The largest shape by model bytes: the op's headline; and its lowest %copy over shapes.
        biggest = max(c["derived"]["model_bytes"] for c in fused)
        top = [c for c in fused if c["derived"]["model_bytes"] == biggest]
        best = max(top, key=lambda c: c["derived"]["pct_of_bandwidth_ceiling"])
        d = best["derived"]
        per_shape = {}
        for c in fused:
            k = c["shape_compact"]
            per_shape[k] = max(per_shape.get(k, 0), c["derived"]["pct_of_bandwidth_ceiling"])
        worst = min(per_shape.items(), key=lambda kv: kv[1])
        rows.append((f"bench {op}", f'largest {best["shape_compact"]}: {best["variant"]} {best["timing"]["span"]["median"]:.1f} us, '
                     f'{d["bandwidth_gbps"]:.0f} GB/s = {d["pct_of_bandwidth_ceiling"]:.1f}% of DRAM roof, '
                     f'{d.get("speedup_vs_baseline", float("nan")):.1f}x baseline; lowest best-of-shape {worst[1]:.1f}% ({worst[0]})'))
if smoke:
    dev = smoke["run"]["device"]["name"]
    ceil = smoke["run"]["ceilings"]
    cases = smoke["cases"]
    disp = {}
    for c in cases:
        disp[c["disposition"]] = disp.get(c["disposition"], 0) + 1
    rows.append(("device", dev))
    rows.append(("copy ceiling (kwb ceilings)", f'{ceil["dram_copy_gbps"]:.0f} GB/s ({ceil["source"]}, '
                 f'{ceil.get("dram_copy_method", "?")})'))
    cold = [c for c in cases if "derived" in c and c["timing"]["mode"] == "cold"]
    over = [c for c in cold if c["derived"]["pct_of_bandwidth_ceiling"] > 100]
    top = max(cold, key=lambda c: c["derived"]["pct_of_bandwidth_ceiling"], default=None)
    if top:
        rows.append(("smoke cold cases above 100% of DRAM roof", f'{len(over)} of {len(cold)}; highest '
                     f'{top["derived"]["pct_of_bandwidth_ceiling"]:.1f}% ({top["nvtx_range"]})'))
    rows.append(("smoke cases", ", ".join(f"{v} {k}" for k, v in sorted(disp.items()))))
    wall = (out / "smoke-wall.txt").read_text().strip() if (out / "smoke-wall.txt").exists() else "?"
    rows.append(("smoke wall time", wall))
    target = [c for c in cases if c["dtype"] == "bf16" and c.get("shape_compact") == "16384x4096"
              and c["disposition"] == "passed" and "derived" in c]
    best = max((c for c in target if c["role"] == "fused"), key=lambda c: c["derived"]["bandwidth_gbps"], default=None)
    if best:
        d = best["derived"]
        rows.append(("best fused bf16 16384x4096", f'{best["variant"]}: {best["timing"]["span"]["median"]:.2f} us, '
                     f'{d["bandwidth_gbps"]:.0f} GB/s = {d["pct_of_bandwidth_ceiling"]:.1f}% of DRAM roof, '
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

def ncu_values(path):
    """gpu__time_duration.sum of each profiled launch, in us."""
    if not path.exists():
        return []
    text = path.read_text()
    start = text.find('"ID"')
    if start < 0:
        return []
    return [float(r["Metric Value"].replace(",", "")) / 1e3 for r in csv.DictReader(io.StringIO(text[start:]))
            if r.get("Metric Name") == "gpu__time_duration.sum"]

xdir = out / "xcheck"
xrows = []
if xdir.is_dir():
    def clean_median(name):  # shortest kernel first
        r = load(f"xcheck/{name}-clean")
        return r["cases"][0]["timing"]["span"]["median"] if r and r["cases"] and "timing" in r["cases"][0] else 0
    specs = sorted({p.name.rsplit("-", 1)[0] for p in xdir.iterdir() if p.name.endswith("-clean")}, key=clean_median)
    for name in specs:
        runs = {f: load(f"xcheck/{name}-{f}") for f in ("clean", "dirty")}
        entry = {"case": name}
        for f, r in runs.items():
            c = r["cases"][0] if r and r["cases"] else None
            if c and "timing" in c:
                t = c["timing"]
                entry[f] = {"median_us": t["span"]["median"], "p10_us": t["span"]["p10"], "p90_us": t["span"]["p90"],
                            "samples": t["span"]["count"], "flush": t["flush"],
                            "pct_of_copy": c.get("derived", {}).get("pct_of_bandwidth_ceiling"),
                            "gbps": c.get("derived", {}).get("bandwidth_gbps"), "clocks": t.get("clocks")}
                entry["ceiling"] = {k: r["run"]["ceilings"].get(k) for k in
                                    ("dram_copy_gbps", "dram_copy_method", "l2_copy_gbps")}
        vals = ncu_values(xdir / f"{name}-ncu.csv")
        if vals:
            entry["ncu"] = {"median_us": statistics.median(vals), "min_us": min(vals), "max_us": max(vals), "launches": len(vals)}
        xrows.append(entry)
if xcheck_json:
    print(json.dumps(xrows, indent=1))
    sys.exit(0)
for e in xrows:
    cl, di, nc = e.get("clean"), e.get("dirty"), e.get("ncu")
    parts = []
    if cl and nc:
        parts.append(f'clean {cl["median_us"]:.2f} us vs ncu {nc["median_us"]:.2f} ({(cl["median_us"] / nc["median_us"] - 1) * 100:+.2f}%)')
    elif cl:
        parts.append(f'clean {cl["median_us"]:.2f} us, no ncu values')
    if cl and di:
        parts.append(f'dirty {di["median_us"]:.2f} us (+{di["median_us"] - cl["median_us"]:.2f} us, '
                     f'{(di["median_us"] / cl["median_us"] - 1) * 100:+.1f}%)')
        parts.append(f'%copy clean/dirty {cl["pct_of_copy"]:.1f}/{di["pct_of_copy"]:.1f}')
        ck = [x["clocks"] for x in (cl, di) if x.get("clocks")]
        if ck:
            parts.append(f'SM {min(c["sm_min_mhz"] for c in ck):.0f}-{max(c["sm_max_mhz"] for c in ck):.0f} MHz, '
                         f'throttled {sum(c["throttled_samples"] for c in ck)}/{sum(c["samples"] for c in ck)}')
    rows.append((f'xcheck {e["case"]}', "; ".join(parts)))
if xrows and "ceiling" in xrows[0]:
    c = xrows[0]["ceiling"]
    rows.append(("copy ceiling used by xcheck", f'{c["dram_copy_gbps"]:.0f} GB/s ({c["dram_copy_method"]}), L2 copy {c["l2_copy_gbps"]:.0f} GB/s'))
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
            # Our fastest passed fused case of the same op whose axes hold the peer's sizes.
            want_sizes = [int(x) for x in p["shape"].replace("^3", "").split("x") if x.isdigit()]
            mine = [c for c in (bench or {}).get("cases", []) if c["op"] == p["op"] and c["role"] != "baseline"
                    and c["disposition"] == "passed" and "timing" in c
                    and all(v in [a for a in c["shape"].values() if isinstance(a, int)] for v in want_sizes)]
            if mine:
                m = min(mine, key=lambda c: c["timing"]["span"]["median"])
                rows.append((f'  kwb {m["variant"]} {m["shape_compact"]}', f'{m["timing"]["span"]["median"]:.1f} us, '
                             f'{m["derived"]["bandwidth_gbps"]:.0f} GB/s on its own work model: '
                             f'{"faster" if m["timing"]["span"]["median"] < p["us"] else "SLOWER"} than the peer'))
            ceiling = (smoke or {}).get("run", {}).get("ceilings") or (xrows[0].get("ceiling") if xrows else None)
            if p["impl"] == "copy_d2d" and ceiling and p.get("GBps"):
                rows.append(("kwb copy ceiling >= PyTorch copy?", f'{ceiling["dram_copy_gbps"]:.0f} vs {p["GBps"]} GB/s: '
                             f'{"yes" if ceiling["dram_copy_gbps"] >= p["GBps"] else "NO"}'))
width = max(len(r[0]) for r in rows) if rows else 10
print()
for k, v in rows:
    print(f"{k:<{width}}  {v}")
