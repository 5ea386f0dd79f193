#!/usr/bin/env python3
"""Times the Python variants of a file with triton.testing.do_bench at the shapes a kwb report ran
them, and sets the two medians side by side: the check that kwb's timing of a Python callable (its
CUPTI span, its L2 flush before every sample) agrees with Triton's own benchmark (CUDA events around
each call, a 256 MB buffer zeroed before it).

    PYTHONPATH=build/python python3 scripts/peers/python_variants_do_bench.py \\
        --report out/report.json --python examples/python/rmsnorm_variants.py [--json out.json]

The variants are called exactly as kwb calls them (the decorated function once with the case, its
launcher with the stream), on fresh random tensors of the case's shape; the launcher's first call
(the JIT compile) comes before timing, as in kwb's prepare. Ops supported: rmsnorm_fwd (the
example's), whose tensors are x [rows, cols], weight [cols] and y [rows, cols].
"""
import argparse
import importlib.util
import json
import pathlib
import sys



class Case:
    """What a variant's function reads from kwb.Case, backed by torch tensors."""

    def __init__(self, op, variant, dtype, shape, tensors, stream):
        self.op, self.variant, self.dtype, self.shape = op, variant, dtype, shape
        self.tensors, self.stream, self.tunables, self.seed, self.device = tensors, stream, {}, 0, 0

    def __getitem__(self, name):
        return self.tensors[name]


def rmsnorm_tensors(torch, shape, dtype):
    rows, cols = shape["rows"], shape["cols"]
    x = torch.randn(rows, cols, dtype=dtype, device="cuda")
    return {"x": x, "weight": torch.rand(cols, dtype=dtype, device="cuda") + 0.5, "y": torch.empty_like(x)}


TENSORS = {"rmsnorm_fwd": rmsnorm_tensors}


def import_file(path):
    path = pathlib.Path(path).resolve()
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def shape_text(row):
    return "x".join(str(v) for v in row["shape"].values())


def summarise(rows):
    """The table, then what agrees: do_bench's events add their own launch latency (a few us, the
    same at every length), and where the host's call (Python, guards, launches) outlasts do_bench's
    256 MB flush plus the kernel, the device waits on the host and the events count the wait; kwb's
    span counts the kernels alone and reports the host's call as its launch time."""
    print(f"{'variant':<24} {'dtype':<5} {'shape':<12} {'kwb us':>8} {'do_bench us':>11} {'diff us':>8} "
          f"{'ratio':>6} {'kwb host us':>11}")
    for r in sorted(rows, key=lambda r: r["kwb_median_us"]):
        print(f"{r['variant']:<24} {r['dtype']:<5} {shape_text(r):<12} {r['kwb_median_us']:8.1f} "
              f"{r['do_bench_median_us']:11.1f} {r['do_bench_median_us'] - r['kwb_median_us']:8.1f} "
              f"{r['kwb_over_do_bench']:6.3f} {r['kwb_host_launch_us']:11.1f}")
    if not rows:
        return
    diffs = sorted(r["do_bench_median_us"] - r["kwb_median_us"] for r in rows)
    print(f"do_bench - kwb: median {diffs[len(diffs) // 2]:+.1f} us over {len(rows)} cases")
    within = [r for r in rows if abs(r["kwb_over_do_bench"] - 1) <= 0.05]
    print(f"within 5%: {len(within)} of {len(rows)} cases")
    # The shortest kernel from which every longer case agrees within 5%.
    outside = [r["kwb_median_us"] for r in rows if abs(r["kwb_over_do_bench"] - 1) > 0.05]
    longer = [r for r in rows if not outside or r["kwb_median_us"] > max(outside)]
    if longer:
        worst = max(longer, key=lambda r: abs(r["kwb_over_do_bench"] - 1))
        print(f"every case from {min(r['kwb_median_us'] for r in longer):.1f} us up agrees within 5%: {len(longer)} "
              f"cases, largest {100 * (worst['kwb_over_do_bench'] - 1):+.1f}% ({worst['variant']}, {worst['dtype']}, "
              f"{shape_text(worst)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", help="a kwb report.json that ran the file's variants")
    parser.add_argument("--python", help="the file of variants")
    parser.add_argument("--json", help="write the rows here too")
    parser.add_argument("--summarise", metavar="JSON", help="print the table of rows written before by --json")
    args = parser.parse_args()
    if args.summarise:
        summarise(json.loads(pathlib.Path(args.summarise).read_text()))
        return
    if not args.report or not args.python:
        parser.error("--report and --python are needed to measure (or --summarise JSON to print saved rows)")
    measure(args)


def measure(args):
    import torch
    import triton.testing

    import kwb

    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    import_file(args.python)
    factories = {(v["op"], v["name"]): v["factory"] for v in kwb.registered_variants()}
    rows = []
    for case in kwb.load_report(args.report)["cases"]:
        key = (case["op"], case["variant"])
        if key not in factories or case["disposition"] != "passed" or case["op"] not in TENSORS:
            continue
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            tensors = TENSORS[case["op"]](torch, case["shape"], dtypes[case["dtype"]])
            launch = factories[key](Case(case["op"], case["variant"], case["dtype"], case["shape"], tensors,
                                         stream.cuda_stream))
            launch(stream.cuda_stream)  # the compile, as in kwb's prepare
            do_bench_ms = triton.testing.do_bench(lambda: launch(stream.cuda_stream), warmup=25, rep=200,
                                                  return_mode="median")
        timing = case["timing"]
        # kwb's host time per kernel launched (the Python call and its launches), times the kernels.
        host_us = (timing.get("launch_overhead_us") or 0) * (timing.get("kernels_per_sample") or 1)
        rows.append({"variant": case["variant"], "dtype": case["dtype"], "shape": case["shape"],
                     "kwb_median_us": timing["span"]["median"], "kwb_host_launch_us": host_us,
                     "do_bench_median_us": do_bench_ms * 1e3,
                     "kwb_over_do_bench": timing["span"]["median"] / (do_bench_ms * 1e3)})
    summarise(rows)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
