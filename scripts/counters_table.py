#!/usr/bin/env python3
"""Prints the measured roofline of a report's cases that carry counters: model bytes against
measured DRAM bytes (the traffic ratio), measured FLOPs against the model's, the flags, and the
replay passes each case cost against the run's announced count.

    scripts/counters_table.py results/counters/report.json [more reports...]
"""
import json
import re
import sys


def main(paths):
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        announced = report["run"]["settings"].get("counters", "")
        m = re.search(r"(\d+) replay pass", announced)
        planned = int(m.group(1)) if m else None
        print(f"{path}: {report['run'].get('device', {}).get('name', '?')}; counters: {announced or 'none'}")
        print(f"{'case':<72} {'model B':>10} {'DRAM B':>10} {'ratio':>6} {'FLOP ratio':>10} {'passes':>6}  flags")
        for c in report["cases"]:
            k = c.get("counters")
            if not k:
                continue
            name = c["nvtx_range"][:72]
            if k.get("unavailable"):
                print(f"{name:<72} counters unavailable: {k['unavailable']}")
                continue
            d = c.get("derived", {})
            meas = d.get("measured", {})
            ratio = meas.get("traffic_ratio")
            flop_ratio = meas.get("flop_ratio")
            passes = k.get("passes")
            mark = "" if planned is None or passes == planned else f" (announced {planned})"
            print(f"{name:<72} {d.get('model_bytes', 0):>10.3g} {meas.get('dram_bytes', 0):>10.3g} "
                  f"{(ratio or 0):>6.3f} {(flop_ratio if flop_ratio is not None else float('nan')):>10.3f} "
                  f"{passes:>6}{mark}  {'; '.join(meas.get('flags', []))[:160]}")
            for kc in k.get("kernels", [])[:4]:
                launch = kc.get("launch", {})
                print(f"    {kc['name'][:60]:<60} grid {launch.get('grid')} block {launch.get('block')} "
                      f"regs {launch.get('registers_per_thread')} occ {launch.get('theoretical_occupancy', 0):.2f} "
                      f"waves {launch.get('waves', 0):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
