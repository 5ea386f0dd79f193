#!/usr/bin/env python3
"""Peers for attention_varlen_bwd at its default shapes, timed as attention_varlen_peers.py times the
forward's (Triton's do_bench, median), one JSON line per figure:

- aten_flash_backward: torch.ops.aten._flash_attention_backward (FlashAttention-2's varlen backward
  inside PyTorch) with cum_seq_q = cum_seq_k = cu_seqlens, fed the O, lse and RNG state of
  torch.ops.aten._flash_attention_forward on the same inputs (computed once, outside the timing),
  grouped-query K and V as they are. Only the backward is timed: its D = rowsum(dO * O)
  preprocessing, the dQ/dK/dV kernels and the dK/dV group sums, as the op's work.
- varlen_attn_autograd: torch.nn.attention.varlen.varlen_attn's autograd backward
  (torch.autograd.grad of its output with dO), where this PyTorch has varlen_attn; it includes
  autograd's bookkeeping, so it is the figure a training step sees.

Inputs are laid out as the catalogue's: q, o, do [total, h, d], k and v [total, kv_heads, d], the
lengths by the op's formula (reference/attention_varlen.hpp; "ragged": uniform over (s/4, s]),
seeded. FLOPs count the real pairs as the work model does: 10 h d per visible (query, key) pair of
each sequence (attention_bwd's five products, 2.5x the forward's 4 h d).

    python3 scripts/peers/attention_varlen_bwd_peers.py [--dtype bf16]
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
OP = "attention_varlen_bwd"

# (batch, longest, heads, kv_heads, head_dim, causal, lengths): the op's default shapes
# (reference/attention_varlen_bwd.cpp).
SHAPES = [(6, 4096, 32, 8, 128, True, "ragged"), (8, 2048, 32, 8, 128, True, "ragged"),
          (8, 4096, 32, 8, 128, True, "ragged"), (8, 4096, 32, 8, 64, True, "ragged"),
          (8, 2048, 32, 8, 128, False, "ragged")]


def ragged_length(b, longest):
    """reference/ragged_lengths.hpp: uniform over (longest / 4, longest] by a golden-ratio sequence."""
    f = ((b * 2654435769) & 0xFFFFFFFF) >> 8
    return longest - ((3 * longest * f) >> 26)


try:
    from torch.nn.attention.varlen import varlen_attn
except ImportError:
    varlen_attn = None


def print_line(name, label, flops, fn, note=""):
    try:
        fn()
        torch.cuda.synchronize()
        ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
        line = {"op": OP, "impl": name, "shape": label, "dtype": args.dtype,
                "us": round(ms * 1e3, 1), "TFLOPs": round(flops / ms / 1e9, 1)}
        if note:
            line["note"] = note
        print(json.dumps(line), flush=True)
    except Exception as error:  # a backend that cannot take the shape says so and the rest go on
        print(json.dumps({"op": OP, "impl": name, "shape": label, "dtype": args.dtype,
                          "error": str(error)[:200]}), flush=True)


for b, s, h, kvh, d, causal, kind in SHAPES:
    label = f"b{b} s{s} h{h}/{kvh} d{d}" + (" causal" if causal else "") + ("" if kind == "ragged" else f" {kind}")
    lengths = [s if kind == "equal" else ragged_length(i, s) for i in range(b)]
    total, longest = sum(lengths), max(lengths)
    pairs = sum(n * (n + 1) // 2 if causal else n * n for n in lengths)
    flops = 10 * h * d * pairs
    cu = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)), device="cuda", dtype=torch.int32)
    q = torch.randn(total, h, d, device="cuda", dtype=dt).mul_(1.5)
    k = torch.randn(total, kvh, d, device="cuda", dtype=dt).mul_(1.5)
    v = torch.randn(total, kvh, d, device="cuda", dtype=dt)
    do = torch.randn(total, h, d, device="cuda", dtype=dt)

    # The forward once, for the O, lse ([h, total]) and RNG state the backward takes.
    try:
        out, lse, rng_state, unused, _ = torch.ops.aten._flash_attention_forward(
            q, k, v, cu, cu, longest, longest, 0.0, causal, False)
        print_line("aten_flash_backward", label, flops, lambda: torch.ops.aten._flash_attention_backward(
            do, q, k, v, out, lse, cu, cu, longest, longest, 0.0, causal, rng_state, unused))
    except Exception as error:
        print(json.dumps({"op": OP, "impl": "aten_flash_backward", "shape": label, "dtype": args.dtype,
                          "error": "forward: " + str(error)[:200]}), flush=True)

    if varlen_attn is not None:
        # The forward's signature moved between PyTorch releases (is_causal, then a window;
        # enable_gqa later): the first form this one takes, K and V expanded to every query head
        # (inside the graph, so their gradients' group sums are timed too) where it has no GQA.
        qg, kg, vg = (t.detach().requires_grad_(True) for t in (q, k, v))
        gqa = {"enable_gqa": True} if kvh != h else {}
        causal_forms = [{"window_size": (-1, 0) if causal else (-1, -1)}, {"is_causal": causal}]

        def expanded(t):
            return t if kvh == h else t.repeat_interleave(h // kvh, dim=1)

        forms = [(lambda extra: varlen_attn(qg, kg, vg, cu, cu, longest, longest, **extra), dict(c, **gqa), "")
                 for c in causal_forms]
        if kvh != h:
            forms += [(lambda extra: varlen_attn(qg, expanded(kg), expanded(vg), cu, cu, longest, longest, **extra),
                       c, "kv expanded to every query head (repeat_interleave in the graph)") for c in causal_forms]
        for forward, extra, note in forms:
            try:
                o = forward(extra)
            except Exception:  # this form is not this PyTorch's (or it cannot run it): the next
                continue
            if isinstance(o, tuple):  # (out, lse) where this PyTorch returns the aux too
                o = o[0]
            print_line("varlen_attn_autograd", label, flops,
                       lambda o=o: torch.autograd.grad(o, (qg, kg, vg), do, retain_graph=True), note)
            break
