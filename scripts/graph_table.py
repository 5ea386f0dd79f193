#!/usr/bin/env python3
"""Stream launches against graph replays of the same cases: one row per case of two kwb reports.

    python3 scripts/graph_table.py STREAM/report.json GRAPH/report.json

The reports are `kwb run ... --launch stream` and the same run with `--launch graph` (e.g. of
suites/graph-vs-stream.yaml). Each case timed in both gets its median span in each, graph/stream,
its kernels per sample and the host's launch time per kernel of the stream run; then three lines:
- single-kernel cases of 50 us and more, which must agree within 3%: a graph removes host gaps
  between launches, and a lone kernel's span (CUPTI: its own start to end) holds none;
- the same for the shorter single-kernel cases (near 1x under CUPTI, for the same reason);
- the multi-kernel cases' gain, stream/graph (the geometric mean and the largest): the host's
  gaps between their kernels, which a replay does not have.
Cases timed in one report only (a launch a graph cannot capture is skipped) are listed with why.
Exit 0; 1 when a single-kernel case of 50 us and more differs by more than 3%; 2 for unreadable input.
"""
import json
import math
import sys

LONG_US = 50.0
AGREE = 0.03


def cases(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"graph_table.py: {path}: {e}")
    out = {}
    for c in report.get("cases", []):
        out[c["nvtx_range"]] = c
    return out


def launch(case):
    return (case.get("timing") or {}).get("launch", "stream")


def main(argv):
    if len(argv) != 3:
        print("usage: python3 scripts/graph_table.py STREAM/report.json GRAPH/report.json", file=sys.stderr)
        return 2
    stream, graph = cases(argv[1]), cases(argv[2])
    for name, side, want in (("STREAM", stream, "stream"), ("GRAPH", graph, "graph")):
        wrong = [k for k, c in side.items() if c.get("timing") and launch(c) != want]
        if wrong:
            print(f"graph_table.py: {name} holds {launch(side[wrong[0]])} launches ({wrong[0]}); pass the "
                  f"--launch stream report first, then the --launch graph one", file=sys.stderr)
            return 2
    rows, untimed = [], []
    for key, s in stream.items():
        g = graph.get(key)
        if g is None:
            continue
        if not (s.get("timing") and g.get("timing")):
            why = g.get("reason") if not g.get("timing") else s.get("reason")
            untimed.append((key, why or g.get("disposition", "?")))
            continue
        rows.append((key, s, g))
    width = max([len(k) for k, _, _ in rows] + [4])
    print(f"{'case':<{width}} {'kernels':>7} {'stream_us':>10} {'graph_us':>10} {'graph/stream':>12} "
          f"{'host_us/launch':>14}")
    long_off, short_ratios, gains = [], [], []
    for key, s, g in rows:
        st, gt = s["timing"], g["timing"]
        s_us, g_us = st["span"]["median"], gt["span"]["median"]
        ratio = g_us / s_us
        kernels = st.get("kernels_per_sample", -1)
        host = st.get("launch_overhead_us")
        print(f"{key:<{width}} {kernels if kernels >= 0 else '?':>7} {s_us:>10.2f} {g_us:>10.2f} {ratio:>12.3f} "
              f"{(f'{host:.2f}' if host is not None else '-'):>14}")
        if kernels > 1:
            gains.append((s_us / g_us, key))
        elif s_us >= LONG_US:
            long_off.append((abs(ratio - 1), key, ratio))
        else:
            short_ratios.append(s_us / g_us)
    print()
    if long_off:
        within = sum(1 for off, _, _ in long_off if off <= AGREE)
        worst = max(long_off)
        print(f"single-kernel cases of {LONG_US:.0f} us and more: {within} of {len(long_off)} agree within "
              f"{AGREE:.0%}; furthest {worst[1]} at graph/stream {worst[2]:.3f}")
    if short_ratios:
        geomean = math.exp(sum(math.log(x) for x in short_ratios) / len(short_ratios))
        print(f"single-kernel cases under {LONG_US:.0f} us: {len(short_ratios)}, stream/graph geometric mean "
              f"{geomean:.2f}x")
    if gains:
        geomean = math.exp(sum(math.log(x) for x, _ in gains) / len(gains))
        best = max(gains)
        print(f"multi-kernel cases: {len(gains)}, stream/graph geometric mean {geomean:.2f}x, "
              f"largest {best[0]:.2f}x ({best[1]})")
    for key, why in untimed:
        print(f"not timed in both: {key}: {why}")
    return 1 if any(off > AGREE for off, _, _ in long_off) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
