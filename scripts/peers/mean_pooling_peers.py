#!/usr/bin/env python3
"""Peer figures for mean_pooling_fwd and mean_pooling_bwd: PyTorch eager (sentence-transformers'
formula, and its autograd backward) and torch.compile of the same, on the GPU at hand.

Prints one JSON object per line, {"op", "impl", "shape", "dtype", "us", "GBps"}, with GB/s on the
bytes kwb's work model counts (forward: x at the mask's kept fraction of 3/4, the mask and y;
backward: dy, the mask and dx), so the figures sit beside kwb's. Timing: median of
triton.testing.do_bench (L2 flushed before every call). Run it in the same call as kwb:
    python3 scripts/peers/mean_pooling_peers.py --shapes 16x4096x4096,4x32768x4096 --dtype bf16
"""
import argparse, json
import torch
import torch._functorch.config
from triton.testing import do_bench

# The compiled backward is timed again and again on one graph (retain_graph), which donated
# buffers forbid.
torch._functorch.config.donated_buffer = False

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="32x512x1024,16x4096x4096,8x8192x4096,4x32768x4096",
                help="comma list of BATCHxSEQxHIDDEN")
ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
ap.add_argument("--no-compile", action="store_true")
args = ap.parse_args()
dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
esz = torch.tensor([], dtype=dt).element_size()
KEPT = 0.75  # the mask's kept fraction, as kwb's generator draws it
print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}), flush=True)


def pool(x, mask):  # sentence-transformers' mean pooling, clamp(min=1) as kwb's op defines it
    m = mask.unsqueeze(-1).expand(x.size()).to(x.dtype)
    return torch.sum(x * m, 1) / torch.clamp(m.sum(1), min=1)


def emit(op, impl, shape, ms, nbytes):
    print(json.dumps({"op": op, "impl": impl, "shape": shape, "dtype": args.dtype, "us": round(ms * 1e3, 2),
                      "GBps": round(nbytes / ms / 1e6, 1)}), flush=True)


def bench(fn):
    fn(); torch.cuda.synchronize()
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


# Static shapes, compiled afresh for each: after a second shape torch.compile would otherwise
# switch to dynamic-shape kernels, and a shape's figure would depend on the order of --shapes
# (b16 s4096 d4096 bf16 read 634 us fourth in the list, 233 us first).
torch._dynamo.config.cache_size_limit = 64
compiled = None if args.no_compile else torch.compile(pool, dynamic=False)
for text in args.shapes.split(","):
    b, s, d = (int(v) for v in text.split("x"))
    torch.manual_seed(0)
    x = torch.randn(b, s, d, device="cuda", dtype=dt)
    mask = torch.rand(b, s, device="cuda") < KEPT
    dy = torch.randn(b, d, device="cuda", dtype=dt)
    fwd_bytes = KEPT * x.numel() * esz + mask.numel() + b * d * esz
    bwd_bytes = b * d * esz + mask.numel() + x.numel() * esz
    emit("mean_pooling_fwd", "torch_eager", text, bench(lambda: pool(x, mask)), fwd_bytes)
    if compiled:
        emit("mean_pooling_fwd", "torch_compile", text, bench(lambda: compiled(x, mask)), fwd_bytes)
    xg = x.detach().requires_grad_(True)
    for impl, f in [("torch_eager", pool)] + ([("torch_compile", compiled)] if compiled else []):
        y = f(xg, mask)
        emit("mean_pooling_bwd", impl + "_autograd", text,
             bench(lambda: torch.autograd.grad(y, xg, dy, retain_graph=True)), bwd_bytes)
    del x, xg, dy, mask
    torch.cuda.empty_cache()
