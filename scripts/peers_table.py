#!/usr/bin/env python3
"""One short table of an op's run against its peers, per shape: each variant's median (us) and
TFLOP/s from a kwb report (passed cases only; the record's own work model), then each peer's from
a peer script's JSON lines (scripts/peers/*.py: {"impl", "shape", "us", "TFLOPs"}), matched by the
shape label ("b6 s4096 h32/8 d128 causal"), which both write the same way.

    python3 scripts/peers_table.py results/device/varlen-bwd/report.json results/device/varlen-bwd-peers.txt
"""
import json
import sys
from collections import defaultdict


def main(report_path, peers_path):
    rows = defaultdict(list)  # shape label -> [(who, us, tflops)]
    try:
        report = json.load(open(report_path))
    except (OSError, ValueError) as error:
        print(f"no report ({error})")
        report = {"cases": []}
    for case in report["cases"]:
        if case.get("disposition") != "passed":
            continue
        us = case["timing"]["span"]["median"]
        rows[case["shape_label"]].append((f"{case['variant']} ({case['dtype']})", us, case["derived"].get("tflops")))
    try:
        lines = open(peers_path).read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        if not line.startswith("{"):
            continue
        peer = json.loads(line)
        if "us" in peer:
            rows[peer["shape"]].append((f"peer {peer['impl']} ({peer['dtype']})", peer["us"], peer.get("TFLOPs")))
        else:
            rows[peer["shape"]].append((f"peer {peer['impl']}: {peer.get('error', '?')[:80]}", None, None))
    for shape, entries in rows.items():
        print(shape)
        for who, us, tflops in entries:
            if us is None:
                print(f"  {who}")
            else:
                print(f"  {who:<58} {us:>10.1f} us {tflops or 0:>7.1f} TFLOP/s")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
