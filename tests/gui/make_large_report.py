#!/usr/bin/env python3
"""Writes a kwb.report/2 file of N cases for measuring the app's frame rate on a large table:
the committed sample's cases repeated, each copy given its own "rows" value (so every case keeps
a distinct identity) and its own median time.

    python3 tests/gui/make_large_report.py samples/h100-roofline-review/report.json 10000 big.json
"""
import copy
import json
import sys


def main(src, count, dst):
    with open(src) as f:
        report = json.load(f)
    base = report["cases"]
    cases = []
    for i in range(count):
        c = copy.deepcopy(base[i % len(base)])
        copy_no = i // len(base)
        c["index"] = i
        if "rows" in c["shape"] and copy_no:
            c["shape"]["rows"] = c["shape"]["rows"] + copy_no
        c["nvtx_range"] = f'{c["nvtx_range"]}#{copy_no}'
        if "timing" in c:
            c["timing"]["span"]["median"] *= 1 + 0.001 * copy_no
        cases.append(c)
    report["cases"] = cases
    report.pop("speedups", None)
    with open(dst, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
