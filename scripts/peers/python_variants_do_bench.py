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

import torch
import triton.testing

import kwb

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


class Case:
    """What a variant's function reads from kwb.Case, backed by torch tensors."""

    def __init__(self, op, variant, dtype, shape, tensors, stream):
        self.op, self.variant, self.dtype, self.shape = op, variant, dtype, shape
        self.tensors, self.stream, self.tunables, self.seed, self.device = tensors, stream, {}, 0, 0

    def __getitem__(self, name):
        return self.tensors[name]


def rmsnorm_tensors(shape, dtype):
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", required=True, help="a kwb report.json that ran the file's variants")
    parser.add_argument("--python", required=True, help="the file of variants")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()
    import_file(args.python)
    factories = {(v["op"], v["name"]): v["factory"] for v in kwb.registered_variants()}
    rows = []
    for case in kwb.load_report(args.report)["cases"]:
        key = (case["op"], case["variant"])
        if key not in factories or case["disposition"] != "passed" or case["op"] not in TENSORS:
            continue
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            tensors = TENSORS[case["op"]](case["shape"], DTYPES[case["dtype"]])
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
    # do_bench's events time the device from before the call is made to after its work ends: where
    # the host's call (Python, guards, launches) takes longer than the kernel, the device waits on
    # the host and do_bench counts the wait. kwb's span counts the kernels' own time and reports the
    # host's per-launch cost beside it; agreement is expected where the kernel outlasts the call.
    print(f"{'variant':<24} {'dtype':<5} {'shape':<14} {'kwb us':>9} {'do_bench us':>11} {'ratio':>6} "
          f"{'kwb host us':>11}")
    for r in rows:
        r["device_bound"] = r["kwb_median_us"] > r["kwb_host_launch_us"]
        shape = "x".join(str(v) for v in r["shape"].values())
        print(f"{r['variant']:<24} {r['dtype']:<5} {shape:<14} {r['kwb_median_us']:9.1f} "
              f"{r['do_bench_median_us']:11.1f} {r['kwb_over_do_bench']:6.3f} {r['kwb_host_launch_us']:11.1f}"
              f"{'' if r['device_bound'] else '  host-bound'}")
    for label, group in (("kernel longer than the host's call", [r for r in rows if r["device_bound"]]),
                         ("all cases", rows)):
        if group:
            worst = max(group, key=lambda r: abs(r["kwb_over_do_bench"] - 1))
            print(f"{label}: {len(group)} cases, largest difference {100 * (worst['kwb_over_do_bench'] - 1):+.1f}% "
                  f"({worst['variant']}, {worst['dtype']}, {'x'.join(str(v) for v in worst['shape'].values())})")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
