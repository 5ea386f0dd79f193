#!/usr/bin/env python3
"""Peers for the catalogue's backward ops, measured as torch_peers.py measures its forward peers
(Triton's do_bench, median, 256 MiB cache clear), one JSON line per figure.

torch_peers.py times cross-entropy as a forward-only loss; the catalogue's cross_entropy also writes
the logits' gradient, so its fair peer is the compiled forward plus backward (autograd through
torch.compile). Bytes are counted as the catalogue's work model counts them: logits read once,
gradient written once (the peer actually reads the logits at least twice).

    python3 scripts/peers/backward_peers.py [--dtype bf16]
"""
import argparse
import json

import torch
import torch.nn.functional as F
from triton.testing import do_bench

ap = argparse.ArgumentParser()
ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
ap.add_argument("--tokens", type=int, default=8192)
ap.add_argument("--vocab", type=int, default=128256)
args = ap.parse_args()
dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
esz = torch.tensor([], dtype=dt).element_size()
torch.manual_seed(0)


def bench(fn):
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def emit(op, impl, shape, ms, nbytes):
    print(json.dumps({"op": op, "impl": impl, "shape": shape, "dtype": args.dtype, "us": round(ms * 1e3, 2),
                      "GBps": round(nbytes / ms / 1e6, 1)}), flush=True)


T, V = args.tokens, args.vocab
logits = torch.randn(T, V, device="cuda", dtype=dt, requires_grad=True)
labels = torch.randint(0, V, (T,), device="cuda")
nbytes = 2 * T * V * esz + 4 * T + 4
shape = f"{T}x{V}"


def fwd_bwd(loss_fn):
    return lambda: torch.autograd.grad(loss_fn(logits, labels), logits)


emit("cross_entropy", "F.cross_entropy fwd+bwd", shape, bench(fwd_bwd(lambda l, t: F.cross_entropy(l.float(), t))),
     nbytes)
compiled = torch.compile(lambda l, t: F.cross_entropy(l.float(), t))
emit("cross_entropy", "torch.compile fwd+bwd", shape, bench(fwd_bwd(compiled)), nbytes)
