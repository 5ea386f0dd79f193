#!/usr/bin/env python3
"""Peers for attention_varlen_fwd at its default shapes, timed as torch_peers.py times its peers
(Triton's do_bench, median), one JSON line per figure:

- varlen_attn: PyTorch's torch.nn.attention.varlen.varlen_attn (FlashAttention-2's varlen kernel
  inside PyTorch), with grouped-query heads where this PyTorch takes enable_gqa, else with K and V
  expanded to every query head before timing (said in the line's "note").
- aten_flash_forward: the op under it, torch.ops.aten._flash_attention_forward, which takes
  grouped-query K and V as they are.

Inputs are laid out as the catalogue's: q [total, h, d], k and v [total, kv_heads, d], the lengths
by the op's formula (reference/attention_varlen.hpp; "ragged": uniform over (s/4, s]). FLOPs count
the real pairs as the work model does: 4 h d per visible (query, key) pair of each sequence.

    python3 scripts/peers/attention_varlen_peers.py [--dtype bf16]
"""
import argparse
import json

import torch
from triton.testing import do_bench

ap = argparse.ArgumentParser()
ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
args = ap.parse_args()
dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
torch.manual_seed(0)

# (batch, longest, heads, kv_heads, head_dim, causal, lengths): the op's default shapes.
SHAPES = [(6, 4096, 32, 8, 128, True, "ragged"), (16, 2048, 32, 8, 128, True, "ragged"),
          (4, 8192, 32, 8, 128, True, "ragged"), (4, 4096, 32, 32, 128, True, "equal"),
          (8, 4096, 32, 8, 64, True, "ragged"), (8, 4096, 32, 8, 128, False, "ragged")]


def ragged_length(b, longest):
    """reference/ragged_lengths.hpp: uniform over (longest / 4, longest] by a golden-ratio sequence."""
    f = ((b * 2654435769) & 0xFFFFFFFF) >> 8
    return longest - ((3 * longest * f) >> 26)


try:
    from torch.nn.attention.varlen import varlen_attn
except ImportError:
    varlen_attn = None

for b, s, h, kvh, d, causal, kind in SHAPES:
    label = f"b{b} s{s} h{h}/{kvh} d{d}" + (" causal" if causal else "") + ("" if kind == "ragged" else f" {kind}")
    lengths = [s if kind == "equal" else ragged_length(i, s) for i in range(b)]
    total, longest = sum(lengths), max(lengths)
    pairs = sum(n * (n + 1) // 2 if causal else n * n for n in lengths)
    flops = 4 * h * d * pairs
    cu = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)), device="cuda", dtype=torch.int32)
    q = torch.randn(total, h, d, device="cuda", dtype=dt).mul_(1.5)
    k = torch.randn(total, kvh, d, device="cuda", dtype=dt).mul_(1.5)
    v = torch.randn(total, kvh, d, device="cuda", dtype=dt)
    impls = []
    if varlen_attn is not None:
        # The signature moved between PyTorch releases (is_causal, then a window; enable_gqa later):
        # the first form this one takes, K and V expanded to every query head where it has no GQA.
        gqa = {"enable_gqa": True} if kvh != h else {}
        ke, ve = (k, v) if kvh == h else (k.repeat_interleave(h // kvh, dim=1), v.repeat_interleave(h // kvh, dim=1))
        causal_forms = [{"window_size": (-1, 0) if causal else (-1, -1)}, {"is_causal": causal}]
        forms = [(k, v, dict(c, **gqa), "") for c in causal_forms]
        if kvh != h:
            forms += [(ke, ve, c, "kv expanded to every query head before timing") for c in causal_forms]
        for k_, v_, extra, note in forms:
            fn = (lambda k_=k_, v_=v_, extra=extra:
                  varlen_attn(q, k_, v_, cu, cu, longest, longest, **extra))
            try:
                fn()
            except Exception:  # this form is not this PyTorch's (or it cannot run it): the next
                continue
            impls.append(("varlen_attn", fn, note))
            break
    impls.append(("aten_flash_forward", lambda: torch.ops.aten._flash_attention_forward(
        q, k, v, cu, cu, longest, longest, 0.0, causal, False), ""))
    for name, fn, note in impls:
        try:
            fn()
            torch.cuda.synchronize()
            ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
            line = {"op": "attention_varlen_fwd", "impl": name, "shape": label, "dtype": args.dtype,
                    "us": round(ms * 1e3, 1), "TFLOPs": round(flops / ms / 1e9, 1)}
            if note:
                line["note"] = note
            print(json.dumps(line), flush=True)
        except Exception as error:  # a backend that cannot take the shape says so and the rest go on
            print(json.dumps({"op": "attention_varlen_fwd", "impl": name, "shape": label, "dtype": args.dtype,
                              "error": str(error)[:200]}), flush=True)
