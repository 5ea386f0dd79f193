#!/usr/bin/env python3
"""docs/results.md from the committed samples: how fast each op is, and where each figure comes from.

    python3 scripts/results_md.py > docs/results.md

Reads samples/*/report.json (the reports of real runs), samples/peers.txt (PyTorch peers measured
by torch_peers.py), samples/ceilings.txt (`kwb ceilings` on the peers' GPU) and the op names of
docs/catalogue.md; writes Markdown to stdout. Every number it prints is read from
those files, none is typed here. The output depends on nothing else (no clock, no environment), so
a CPU test (tests/scripts/results_md_test.cpp) regenerates it and fails when the page differs.
`--root DIR` reads another tree laid out the same way (the test's planted reports).

The fastest variant of a shape is chosen as `kwb select` chooses it: among the cases that passed
verification and were timed, the lowest median span, ties in plan order. Each (GPU, op, dtype,
shape, mode) is taken from the newest sample (run.started_at) that timed it, so an older sample
speaks only for what no newer one measured. Standard library only.
"""
import argparse
import json
import re
import sys
from pathlib import Path

COMMAND = "python3 scripts/results_md.py > docs/results.md"
# samples/peers.txt names its GPU model but no uuid and no date, so which sample shares its device
# call is stated here: the `peers` section of the scripts/device.sh call whose `smoke` section
# wrote this sample (docs/notebook/2026-11-22-harness-v2-last-run.md; samples/summary.txt holds
# both). Change it when samples/peers.txt is replaced; the page checks what the files can show
# (the GPU model) and says "no committed sample comes from their call" when that check fails.
PEERS_CALL_SAMPLE = "h100-smoke"
DTYPE_ORDER = {"bf16": 0, "fp16": 1, "fp32": 2}
UUID = re.compile(r"GPU-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")


# ---- reading the files ------------------------------------------------------------------------


def shown_shape(case):
    """The shape as kwb's tables show it: its axes' labels where the record has them (reports
    written before labels were recorded keep the compact form here)."""
    return case.get("shape_label") or case["shape_compact"]

def read_samples(root):
    samples = []
    for path in sorted((root / "samples").glob("*/report.json")):
        report = json.loads(path.read_text())
        run = report["run"]
        samples.append({"name": path.parent.name, "run": run, "cases": report["cases"]})
    samples.sort(key=lambda s: (s["run"]["started_at"], s["name"]))
    return samples


def read_peers(root):
    """samples/peers.txt: a header line {"gpu", "torch"}, one JSON line per measurement, then the
    same as a text table (ignored)."""
    path = root / "samples" / "peers.txt"
    if not path.exists():
        return None
    lines = [json.loads(l) for l in path.read_text().splitlines() if l.startswith("{")]
    return {"header": lines[0], "rows": lines[1:]}


def read_ceilings(root):
    """samples/ceilings.txt, the text `kwb ceilings` prints: the GPU line (name, uuid, driver), one
    line per ceiling (name, measured, datasheet, ratio, unit), the time of the measurement."""
    path = root / "samples" / "ceilings.txt"
    if not path.exists():
        return None
    text = path.read_text()
    row = re.compile(r"^(\S.*?)\s{2,}([\d.]+)\s+([\d.]+)\s+(\d+)%\s+(GB/s|TFLOP/s)$")
    measured_at = re.search(r"^measured at (\S+)$", text, re.M)
    gpu = re.search(rf"^(.*) \(({UUID.pattern})\), (.*)$", text, re.M)
    return {
        "gpu": gpu.group(0) if gpu else "",
        "uuid": gpu.group(2) if gpu else "",
        "measured_at": measured_at.group(1) if measured_at else "",
        "rows": [m.groups() for m in map(row.match, text.splitlines()) if m],
    }


def read_sweep_times(root):
    """samples/*/sweep-time.json (scripts/sweep_time.py): the wall time of whole sweeps, each made of
    parts run one after another on one GPU, kept without their reports."""
    found = []
    for path in sorted((root / "samples").glob("*/sweep-time.json")):
        found.append({"name": path.parent.name, "parts": json.loads(path.read_text())["parts"]})
    return found


def catalogue_ops(root):
    path = root / "docs" / "catalogue.md"
    return re.findall(r"^## (\S+)$", path.read_text(), re.M) if path.exists() else []


# ---- choosing the figures ---------------------------------------------------------------------

def is_candidate(case):
    """What `kwb select` ranks: passed verification and timed (a median span and derived figures)."""
    return (case["disposition"] == "passed" and (case.get("verify") or {}).get("passed")
            and case.get("timing") and case.get("derived"))


def group_key(sample, case):
    return (sample["run"]["device"]["name"], case["op"], case["dtype"], case["shape_compact"],
            case["timing"]["mode"])


def newest_fastest(samples):
    """(GPU, op, dtype, shape, mode) -> (sample, fastest case) from the newest sample timing it."""
    chosen = {}
    for sample in samples:  # oldest first: a newer sample replaces the group whole
        fastest = {}
        for case in filter(is_candidate, sample["cases"]):
            key = group_key(sample, case)
            best = fastest.get(key)
            if best is None or median(case) < median(best):
                fastest[key] = case
        for key, case in fastest.items():
            chosen[key] = (sample, case)
    return chosen


def fastest_fused(sample, case):
    """The fastest fused case of the same group and sample, when the winner is not fused."""
    same = [c for c in filter(is_candidate, sample["cases"])
            if group_key(sample, c) == group_key(sample, case) and c["role"] == "fused"]
    return min(same, key=median) if same else None


def median(case):
    return case["timing"]["span"]["median"]


def above_roof(case):
    d = case["derived"]
    return max(d.get("pct_of_roofline") or 0, d.get("pct_of_bandwidth_ceiling") or 0) > 100


# ---- formatting -------------------------------------------------------------------------------

def us(x):
    return f"{x:.2f}" if x < 1000 else f"{x:.1f}"


def variant_name(case):
    tunables = ",".join(f"{k}={v}" for k, v in case.get("tunables", {}).items())
    return case["variant"] + (f"[{tunables}]" if tunables else "")


def rate(case):
    d = case["derived"]
    return f"{d['tflops']:.1f} TFLOP/s" if d["bound"] == "compute" else f"{d['bandwidth_gbps']:.0f} GB/s"


def pct_of_roof(case):
    d = case["derived"]
    text = f"{d['pct_of_roofline']:.1f}%"
    return f"**{text}, [above the roof](#figures-above-100-of-a-roof)**" if above_roof(case) else text


def speedup(case):
    s = case["derived"].get("speedup_vs_baseline")
    return f"{s:.2f}x" if s else "-"


def flags(case):
    t = case["timing"]
    out = []
    if t["mode"] != "cold":
        out.append(t["mode"])
    if (t.get("clocks") or {}).get("throttled_samples"):
        out.append("throttled")
    if t.get("stop_reason") != "converged":
        out.append("noisy")
    if t.get("timer") != "cupti":
        out.append(f"{t.get('timer')} timer")
    return ", ".join(out)


def short_gpu(name):
    return name.removeprefix("NVIDIA ")


def link(sample):
    return f"[{sample['name']}](../samples/{sample['name']}/)"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


# ---- the page ---------------------------------------------------------------------------------

def intro():
    return [
        "# Results: how fast each op is",
        "",
        f"Generated by `{COMMAND}`; do not edit by hand (a CPU test",
        "regenerates this page and fails when it differs). Every figure is read from the committed",
        "samples: `samples/*/report.json`, `samples/*/sweep-time.json`, `samples/peers.txt`,",
        "`samples/ceilings.txt`. How they were found, round by round: [notebook/](notebook/README.md).",
        "",
        "Per op and shape, the fastest variant as `kwb select` picks it (passed verification, lowest",
        "median span; any role, so a vendor library may win), from the newest sample that timed that",
        "shape on that GPU. Time is the median span (first kernel start to last kernel end, CUPTI) in",
        "us; the rate is GB/s or TFLOP/s by the case's bound; % of roof is of the case's roofline",
        "against the ceilings measured in the same run (for memory-bound cases the DRAM roof of the",
        "case's read/write mix); the speedup is over the op's baseline variant (the launches an eager",
        "framework runs) in the same sample. Flags: noisy (the stopping rule hit its cap before the",
        "noise target), throttled (some samples under a lowered SM clock), hot (no L2 flush). Kernel",
        "rounds measured after the newest sample and not committed as one are only in the notebook.",
        "",
    ]


def samples_section(samples):
    rows = []
    for s in samples:
        run = s["run"]
        c = run["ceilings"]
        merged = run.get("merged")
        copy = f"{c['dram_copy_gbps']:.0f} / {c['dram_read_gbps']:.0f}"
        if merged and merged.get("ceilings_differ"):
            copy += " (first shard's; each case is against its own shard's)"
        timed = sum(1 for case in s["cases"] if is_candidate(case))
        rows.append([link(s), run["device"]["name"], run["started_at"], f"`{run['git_sha']}`",
                     run["settings"].get("preset", ""), run["settings"].get("flush", ""),
                     f"{timed} of {len(s['cases'])}", copy,
                     f"{c['tensor_tflops'].get('bf16', 0):.0f}"])
    out = ["## The samples", ""]
    out += table(["sample", "GPU", "started (UTC)", "revision", "preset", "flush", "passed and timed",
                  "DRAM copy / read GB/s", "bf16 tensor TFLOP/s"], rows)
    out += ["", "Made by (`run.command_line`; each folder's README or the notebook says more):", ""]
    for s in samples:
        merged = s["run"].get("merged")
        note = f" (merged from {merged['shard_count']} shards)" if merged else ""
        out.append(f"- {s['name']}{note}: `{s['run']['command_line']}`")
    return out + [""]


def sweep_time_section(sweep_times):
    if not sweep_times:
        return []
    out = ["## How long a sweep takes", "",
           "From `samples/*/sweep-time.json` (`scripts/sweep_time.py` over the runs' reports). A sweep made",
           "of parts (shares of the ops, one after another on one GPU) is the sum of its parts' walls. The",
           "wall is the runs' own (workers, ceilings, cases; the ceilings read from their cache unless the",
           "column says otherwise); the stages are host time summed over the cases, as `--time-report`",
           "prints them; the oracle's background time is not wall time.", ""]
    rows, commands = [], []
    for s in sweep_times:
        labels = list(dict.fromkeys(p["label"] for p in s["parts"]))
        for label in labels:
            parts = [p for p in s["parts"] if p["label"] == label]
            total = lambda key: sum(p["stages_s"][key] for p in parts)
            count = lambda d: sum(p["dispositions"].get(d, 0) for p in parts)
            wall = sum(p["wall_s"] for p in parts)
            shas = ", ".join(dict.fromkeys(f"`{p['git_sha']}`" for p in parts))
            rows.append([f"[{s['name']}](../samples/{s['name']}/)", label, parts[0]["gpu"], shas,
                         parts[0]["started_at"][:10], str(len(parts)), str(sum(p["cases"] for p in parts)),
                         f"{count('passed')} / {count('failed')} / {count('skipped')}",
                         f"{wall:.1f} s = {wall / 60:.1f} min", f"{sum(p['ceilings_s'] for p in parts):.1f}",
                         f"{total('inputs'):.1f}", f"{total('oracle'):.1f}", f"{total('verify'):.1f}",
                         f"{total('measure'):.1f}", f"{total('oracle_background'):.1f}",
                         f"{sum(p['oracle_from_cache'] for p in parts)}"])
        commands += [f"- {s['name']} ({p['label']}): `{p['command_line']}`" for p in s["parts"]]
    out += table(["sample", "sweep", "GPU", "revision", "date", "parts", "cases", "passed / failed / skipped",
                  "wall", "ceilings s", "inputs s", "oracle s", "verify s", "measure s", "background s",
                  "oracle from cache"], rows)
    return out + ["", "The parts' commands:", ""] + commands + [""]


def main_gpu(chosen):
    counts = {}
    for gpu, *_ in chosen:
        counts[gpu] = counts.get(gpu, 0) + 1
    return min(counts, key=lambda g: (-counts[g], g)) if counts else ""


def ordered(keys, chosen):
    def sort_key(key):
        gpu, op, dtype, shape, mode = key
        return (gpu, DTYPE_ORDER.get(dtype, 9), dtype, chosen[key][1]["derived"]["model_bytes"], shape, mode)
    return sorted(keys, key=sort_key)


def summary_section(ops, chosen, gpu):
    rows = []
    for op in ops:
        keys = [k for k in chosen if k[0] == gpu and k[1] == op]
        if not keys:
            continue
        dtype = min((k[2] for k in keys), key=lambda d: (DTYPE_ORDER.get(d, 9), d))
        keys = ordered([k for k in keys if k[2] == dtype], chosen)
        sample, case = chosen[keys[-1]]
        pcts = [chosen[k][1]["derived"]["pct_of_roofline"] for k in keys]
        rows.append([f"[{op}](#{op})", dtype, shown_shape(case), variant_name(case), us(median(case)),
                     rate(case), pct_of_roof(case), speedup(case), f"{min(pcts):.1f}-{max(pcts):.1f}% ({len(keys)})",
                     link(sample)])
    out = [f"## Summary: {gpu}", "",
           "Each op at its largest measured shape (by bytes moved) in its first dtype, and the range of",
           "% of roof over all the shapes measured in that dtype (how many in brackets).", ""]
    return out + table(["op", "dtype", "largest shape", "fastest variant", "us", "rate", "% of roof",
                        "vs baseline", "% of roof, all shapes", "sample"], rows) + [""]


def above_roof_section(samples):
    rows = [[link(s), c["nvtx_range"], f"{c['derived']['pct_of_roofline']:.1f}%",
             f"{c['derived']['pct_of_bandwidth_ceiling']:.1f}%"]
            for s in samples for c in filter(is_candidate, s["cases"]) if above_roof(c)]
    out = ["## Figures above 100% of a roof", ""]
    if not rows:
        return out + ["No timed case of the committed samples is above 100% of its roof.", ""]
    out += ["A rate above 100% of a measured roof is never a win: the work model, the ceiling or the",
            "timer is wrong for that case. This is a known defect, tracked apart; the figures are shown",
            "as measured (every such case of every sample, chosen as fastest or not):", ""]
    return out + table(["sample", "case", "% of roofline", "% of DRAM roof"], rows) + [""]


def op_section(op, chosen, peers, samples):
    keys = ordered([k for k in chosen if k[1] == op], chosen)
    out = [f"### {op}", "", f"[catalogue](catalogue.md#{op})", ""]
    rows, fused_notes = [], []
    for key in keys:
        sample, case = chosen[key]
        rows.append([short_gpu(key[0]), case["dtype"], shown_shape(case), variant_name(case),
                     us(median(case)), rate(case), pct_of_roof(case), speedup(case), flags(case), link(sample)])
        fused = fastest_fused(sample, case) if case["role"] != "fused" else None
        if fused:
            fused_notes.append(f"- {case['dtype']} {shown_shape(case)}: the winner is a {case['role']} variant; "
                               f"the fastest fused one, {variant_name(fused)}, took {us(median(fused))} us "
                               f"({rate(fused)}, {pct_of_roof(fused)} of roof, {speedup(fused)} the baseline).")
    out += table(["GPU", "dtype", "shape", "fastest variant", "us", "rate", "% of roof", "vs baseline",
                  "flags", "sample"], rows)
    out += [""] + fused_notes + ([""] if fused_notes else [])
    return out + peer_section(op, chosen, peers, samples)


def peer_section(op, chosen, peers, samples):
    """The op's PyTorch peers, beside kwb's figure from the same device call and today's figure."""
    rows = [p for p in (peers or {}).get("rows", []) if p["op"] == op]
    if not rows:
        return []
    gpu = peers["header"].get("gpu", "")
    call = next((s for s in samples if s["name"] == PEERS_CALL_SAMPLE and s["run"]["device"]["name"] == gpu), None)
    out = [f"PyTorch peers (`samples/peers.txt`: torch_peers.py, torch {peers['header'].get('torch', '?')}, {gpu}; "
           "GB/s on its own byte count). "
           + (f"They were measured in the device call that wrote {link(call)}, by another process: "
              "that sample's figure is the same call. " if call else "No committed sample comes from their call. ")
           + "Today's figure (the table above) comes from another call: compare it with care.", ""]
    body = []
    for p in rows:
        same = fastest_in(call, op, p["dtype"], p["shape"]) if call else None
        now = chosen.get((gpu, op, p["dtype"], p["shape"], "cold"))
        body.append([p["dtype"], p["shape"], f"`{p['impl']}`", us(p["us"]), str(p.get("GBps", "-")),
                     f"{variant_name(same)} {us(median(same))} us, {rate(same)}" if same else "-",
                     today(now, call)])
    out += table(["dtype", "shape", "peer", "us", "GB/s", "kwb, same call", "kwb today, another call"], body)
    return out + [""]


def today(now, call):
    """Today's figure at the peer's shape, and whether it ran on the peers' very GPU."""
    if not now or now[0] is call:
        return "-"
    sample, case = now
    same_gpu = call and sample["run"]["device"].get("uuid") == call["run"]["device"].get("uuid")
    return (f"{us(median(case))} us ({link(sample)}, {sample['run']['started_at'][:10]}, "
            f"{'the same GPU' if same_gpu else 'another GPU'})")


def fastest_in(sample, op, dtype, shape):
    cases = [c for c in filter(is_candidate, sample["cases"])
             if (c["op"], c["dtype"], c["shape_compact"]) == (op, dtype, shape)]
    return min(cases, key=median) if cases else None


def ceilings_section(ceilings, peers, samples):
    """samples/ceilings.txt, which the peers' sample was measured against when the uuid and the time
    of measurement say so, and PyTorch's copy and GEMM from samples/peers.txt."""
    if not ceilings:
        return []
    users = [link(s) for s in samples if s["run"]["device"].get("uuid") == ceilings["uuid"]
             and s["run"]["ceilings"].get("measured_at") == ceilings["measured_at"]]
    out = ["## Ceilings", "", f"`samples/ceilings.txt` (`kwb ceilings`, measured at {ceilings['measured_at']}"
           + (f"; the ceilings of {', '.join(users)}" if users else "") + f"): {ceilings['gpu']}", ""]
    out += table(["ceiling", "measured", "datasheet", "measured / datasheet"],
                 [[n, f"{m} {u}", f"{d} {u}" if float(d) else "-", f"{r}%" if float(d) else "-"]
                  for n, m, d, r, u in ceilings["rows"]])
    ceiling_peers = [p for p in (peers or {}).get("rows", []) if p["op"] == "ceiling"]
    if ceiling_peers:
        out += ["", f"PyTorch in the peers' call (`samples/peers.txt`, {peers['header'].get('gpu', '?')}): " + ", ".join(
            f"{p['impl']} {p['shape']} " + (f"{p['GBps']} GB/s" if "GBps" in p else f"{p.get('TFLOPs', '?')} TFLOP/s")
            for p in ceiling_peers) + "."]
    return out + [""]


def unmeasured_section(ops, chosen, root):
    missing = [op for op in ops if not any(k[1] == op for k in chosen)]
    if not missing:
        return []
    out = ["## Ops without a committed sample", "",
           "No sample report times these ops; the notebook rounds that name them hold what was measured:", ""]
    rounds = sorted((root / "docs" / "notebook").glob("2*.md"), reverse=True)
    for op in missing:
        named = [f"[{p.stem}](notebook/{p.name})" for p in rounds if re.search(rf"\b{op}\b", p.read_text())]
        out.append(f"- [{op}](catalogue.md#{op}): " + (", ".join(named) if named else "none yet"))
    return out + [""]


def page(root):
    samples = read_samples(root)
    peers = read_peers(root)
    chosen = newest_fastest(samples)
    measured = sorted({k[1] for k in chosen})
    ops = catalogue_ops(root)
    ops += [op for op in measured if op not in ops]
    lines = intro() + samples_section(samples) + sweep_time_section(read_sweep_times(root))
    gpu = main_gpu(chosen)
    if gpu:
        lines += summary_section(ops, chosen, gpu)
    lines += above_roof_section(samples)
    lines += ["## Per op", ""]
    for op in ops:
        if op in measured:
            lines += op_section(op, chosen, peers, samples)
    lines += unmeasured_section(ops, chosen, root)
    lines += ceilings_section(read_ceilings(root), peers, samples)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the tree whose samples/ and docs/ to read (default: this repository)")
    sys.stdout.write(page(parser.parse_args().root))


if __name__ == "__main__":
    main()
