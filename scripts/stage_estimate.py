#!/usr/bin/env python3
"""The full default sweep's time, estimated from a uniform slice of it (`kwb run --shard I/N
--time-report`): where each stage's time goes, scaled to the whole plan.

    scripts/stage_estimate.py SLICE/report.json FULL-PLAN.txt

FULL-PLAN.txt is `kwb run --list-cases` of the whole plan (one case identity a line,
op:variant:dtype:shape[:tunables]). A slice I/N holds each case with probability 1/N: the case
stages (setup, verify, measure, ...) scale by N. The inputs and the oracle are paid once per input
group (op, dtype, shape: consecutive in the plan), and a group of g cases is in the slice with
probability min(g, N)/N: each prepared group's cost is weighted by N / min(g, N) (a Horvitz-
Thompson sum, so that groups of few variants, which a slice meets less often, count in full).
The session's own stages (workers, ceilings) are paid once either way."""
import json
import sys
from collections import defaultdict

CASE_STAGES = ["setup", "prepare", "verify", "measure", "counters", "isolation", "overhead"]
GROUP_STAGES = ["inputs", "oracle"]


def group_key(identity):
    parts = identity.split(":")
    return (parts[0], parts[2], parts[3])


def main():
    report = json.load(open(sys.argv[1]))
    plan = [line.strip() for line in open(sys.argv[2]) if line.count(":") >= 3]
    group_size = defaultdict(int)
    for identity in plan:
        group_size[group_key(identity)] += 1
    plan_groups = len(group_size)
    shard = report["run"].get("shard")
    n_slices = shard["count"] if shard else 1
    cases = [c for c in report["cases"] if c.get("stages")]
    prepared = [c for c in cases if c["stages"].get("inputs_ms", 0) > 0]
    if not cases or not prepared:
        print("no case with stage times in the slice")
        return 1
    case_scale = n_slices

    def group_weight(c):
        return n_slices / min(group_size.get(group_key(c["nvtx_range"]), 1), n_slices)
    if not report["run"].get("complete", True):
        print("warning: the slice was interrupted: it holds only the ops it reached in plan order, so this "
              "is not an estimate of the whole plan (run the slice to its end)")
    print(f"slice: {len(cases)} cases with stage times, {len(prepared)} input groups prepared; "
          f"plan: {len(plan)} cases in {plan_groups} input groups")
    session = dict((s["stage"], s["seconds"]) for s in report["run"].get("session_stages", []))
    total = 0.0
    rows = []
    for name in ("start workers", "ceilings"):
        if name in session:
            rows.append((name, session[name], "once"))
            total += session[name]
    for stage in GROUP_STAGES:
        s = sum(c["stages"].get(stage + "_ms", 0) * group_weight(c) for c in prepared) / 1000
        rows.append((stage, s, "each group x N/min(g, N)"))
        total += s
    for stage in CASE_STAGES:
        s = sum(c["stages"].get(stage + "_ms", 0) for c in cases) / 1000 * case_scale
        rows.append((stage, s, f"x{case_scale} (cases)"))
        total += s
    print(f"estimated full sweep: {total / 60:.1f} min")
    for name, seconds, how in rows:
        print(f"  {name:<14} {seconds / 60:7.1f} min  {100 * seconds / total:5.1f}%  {how}")
    # Host work the worker did for the next group while the current one ran: not wall time. A
    # slice understates how much the full sweep hides (its groups have fewer cases to hide behind),
    # so its estimate of the wall time errs long.
    background = [c for c in cases if c["stages"].get("oracle_background_ms", 0) > 0]
    hidden = sum(c["stages"]["oracle_background_ms"] * group_weight(c) for c in background) / 1000
    print(f"  {'(background)':<14} {hidden / 60:7.1f} min          oracle of {len(background)} groups prepared "
          f"while the group before ran (not in the total)")
    # The long poles: the ops whose groups cost most to prepare, and whose cases cost most to time.
    by_op = defaultdict(lambda: [0.0, 0.0, 0, 0])
    for c in cases:
        st = c["stages"]
        entry = by_op[c["op"]]
        entry[0] += (st.get("inputs_ms", 0) + st.get("oracle_ms", 0)) / 1000
        entry[1] += sum(st.get(s + "_ms", 0) for s in CASE_STAGES) / 1000
        entry[2] += st.get("inputs_ms", 0) > 0
        entry[3] += 1
    print("per op in the slice (inputs+oracle s over groups, other stages s over cases):")
    for op, (prep, rest, groups, n) in sorted(by_op.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
        print(f"  {op:<32} inputs+oracle {prep:7.1f} s / {groups:3d} groups   others {rest:7.1f} s / {n:3d} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
