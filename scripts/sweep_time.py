#!/usr/bin/env python3
"""How long a sweep took, from the reports of the runs that made it up: a small JSON file that
docs/results.md reads (scripts/results_md.py), so the sweep's wall time is committed without the
reports themselves (several MB each).

    scripts/sweep_time.py --out samples/NAME/sweep-time.json LABEL=REPORT.json [LABEL=REPORT.json ...]

A label names one whole sweep (cold, warm); several reports with one label are its parts, run one
after another on one GPU (for example shares of the ops, each a device call), and their walls add
up to the sweep's. Per part it keeps what the report says: the command, revision, GPU, start,
the wall time (the run's session stages: workers, ceilings, cases), the cases by disposition,
the host stages summed over the cases (what `--time-report` prints) and how many cases' oracle
answer came from the oracle cache. Standard library only; every figure is read from the reports."""
import argparse
import json
import sys

STAGES = ["setup", "inputs", "oracle", "prepare", "verify", "measure", "counters", "isolation",
          "overhead", "oracle_background"]


def part(label, path):
    report = json.loads(open(path).read())
    run, cases = report["run"], report["cases"]
    if "session_stages" not in run:
        sys.exit(f"sweep_time.py: {path} has no run.session_stages: run it again with a kwb that "
                 "records them (any kwb run since the stage timing was added)")
    dispositions = {}
    for case in cases:
        dispositions[case["disposition"]] = dispositions.get(case["disposition"], 0) + 1
    stages = {name: 0.0 for name in STAGES}
    for case in cases:
        for name in STAGES:
            stages[name] += case.get("stages", {}).get(f"{name}_ms", 0.0) / 1000.0
    return {
        "label": label,
        "command_line": run["command_line"],
        "git_sha": run["git_sha"],
        "gpu": run["device"]["name"],
        "started_at": run["started_at"],
        "complete": run["complete"],
        "wall_s": round(sum(s["seconds"] for s in run["session_stages"]), 1),
        "ceilings_s": round(sum(s["seconds"] for s in run["session_stages"] if s["stage"] == "ceilings"), 1),
        "cases": len(cases),
        "dispositions": dict(sorted(dispositions.items())),
        "stages_s": {name: round(seconds, 1) for name, seconds in stages.items()},
        "oracle_from_cache": sum(1 for c in cases if c.get("verify", {}).get("oracle_source") == "cache"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("parts", nargs="+", metavar="LABEL=REPORT.json")
    args = parser.parse_args()
    parts = []
    for spec in args.parts:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            sys.exit(f"sweep_time.py: '{spec}' is not LABEL=REPORT.json (for example cold=fill/report.json)")
        parts.append(part(label, path))
    gpus = {p["gpu"] for p in parts}
    if len(gpus) > 1:
        sys.exit(f"sweep_time.py: the parts ran on different GPUs ({', '.join(sorted(gpus))}); "
                 "a sweep's wall time is one GPU's")
    with open(args.out, "w") as out:
        json.dump({"parts": parts}, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
