#!/usr/bin/env python3
"""Peers for attention_bwd: PyTorch's scaled_dot_product_attention backward through its flash
(FlashAttention-2) and cuDNN backends, at the op's default shapes that SDPA can express (causal or
not, grouped-query heads; no sliding window, no soft-cap), timed as torch_peers.py times its peers
(Triton's do_bench, median), one JSON line per figure.

Only the backward is timed: the forward runs once and its graph is kept (retain_graph), so each
timed call is the backend's backward kernels (the preprocessing D = rowsum(dO * O) included) and
the accumulation of dQ. FLOPs are counted as the catalogue's work model counts them: 10 b h d per
visible (query, key) pair, FlashAttention's convention.

    python3 scripts/peers/attention_bwd_peers.py [--dtype bf16]
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

ap = argparse.ArgumentParser()
ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
args = ap.parse_args()
dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
torch.manual_seed(0)

# (batch, seq, heads, kv_heads, head_dim, causal): attention_bwd's default shapes without a window
# or a soft-cap.
SHAPES = [(16, 1024, 32, 8, 128, True), (4, 4096, 32, 32, 128, True), (4, 4096, 32, 32, 128, False),
          (4, 4096, 32, 8, 64, True), (1, 16384, 32, 8, 128, True),
          (1, 16384, 32, 8, 128, False)]


def visible_pairs(s, causal):
    return s * (s + 1) / 2 if causal else s * s


for b, s, h, kvh, d, causal in SHAPES:
    label = f"b{b} s{s} h{h}/{kvh} d{d}" + (" causal" if causal else "")
    flops = 10 * b * h * d * visible_pairs(s, causal)
    # bshd storage, as the catalogue's; SDPA takes [b, h, s, d] views of it.
    q = torch.randn(b, s, h, d, device="cuda", dtype=dt).mul_(1.5).requires_grad_()
    k = torch.randn(b, s, kvh, d, device="cuda", dtype=dt).mul_(1.5).requires_grad_()
    v = torch.randn(b, s, kvh, d, device="cuda", dtype=dt).requires_grad_()
    do = torch.randn(b, h, s, d, device="cuda", dtype=dt)
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        try:
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                     is_causal=causal, enable_gqa=kvh != h)

                def backward():
                    return torch.autograd.grad(out, (q, k, v), do, retain_graph=True)

                backward()
                torch.cuda.synchronize()
                ms = do_bench(backward, warmup=25, rep=200, return_mode="median")
            print(json.dumps({"op": "attention_bwd", "impl": backend.name.lower(), "shape": label,
                              "dtype": args.dtype, "us": round(ms * 1e3, 1),
                              "TFLOPs": round(flops / ms / 1e9, 1)}), flush=True)
        except Exception as e:  # a backend that refuses a shape says so and the rest go on
            print(json.dumps({"op": "attention_bwd", "impl": backend.name.lower(), "shape": label,
                              "error": str(e)[:200]}), flush=True)
        finally:
            out = None
            torch.cuda.empty_cache()
