#!/usr/bin/env python3
"""Peers for attention_fwd: PyTorch's scaled_dot_product_attention forward through its flash
(FlashAttention-2) and cuDNN backends at the shapes issue 26 judges the forward by (d128: b4 h32
s4096 and b1 h32 s16384, causal and not; d64 at b4 s4096 causal), timed as torch_peers.py times its
peers (Triton's do_bench, median), one JSON line per figure.

FLOPs are counted as the catalogue's work model counts them: 4 b h d per visible (query, key)
pair (s (s + 1) / 2 of them causal), so the TFLOP/s here and kwb's compare directly.

    python3 scripts/peers/attention_fwd_peers.py [--dtype bf16]
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

# (batch, seq, heads, kv_heads, head_dim, causal)
SHAPES = [(4, 4096, 32, 32, 128, True), (4, 4096, 32, 32, 128, False), (1, 16384, 32, 8, 128, True),
          (1, 16384, 32, 8, 128, False), (4, 4096, 32, 8, 64, True), (4, 4096, 32, 8, 64, False)]


def visible_pairs(s, causal):
    return s * (s + 1) / 2 if causal else s * s


for b, s, h, kvh, d, causal in SHAPES:
    label = f"b{b} s{s} h{h}/{kvh} d{d}" + (" causal" if causal else "")
    flops = 4 * b * h * d * visible_pairs(s, causal)
    # bshd storage, as the catalogue's; SDPA takes [b, h, s, d] views of it.
    q = torch.randn(b, s, h, d, device="cuda", dtype=dt).transpose(1, 2)
    k = torch.randn(b, s, kvh, d, device="cuda", dtype=dt).transpose(1, 2)
    v = torch.randn(b, s, kvh, d, device="cuda", dtype=dt).transpose(1, 2)
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        try:
            with sdpa_kernel(backend):
                def forward():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=kvh != h)

                forward()
                torch.cuda.synchronize()
                ms = do_bench(forward, warmup=25, rep=200, return_mode="median")
            print(json.dumps({"op": "attention_fwd", "impl": backend.name.lower(), "shape": label,
                              "dtype": args.dtype, "us": round(ms * 1e3, 1),
                              "TFLOPs": round(flops / ms / 1e9, 1)}), flush=True)
        except Exception as e:  # a backend that refuses a shape says so and the rest go on
            print(json.dumps({"op": "attention_fwd", "impl": backend.name.lower(), "shape": label,
                              "error": str(e)[:200]}), flush=True)
        finally:
            torch.cuda.empty_cache()
