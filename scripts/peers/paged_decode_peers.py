#!/usr/bin/env python3
"""Peers for paged_attention_decode at its default shapes, timed as torch_peers.py times its peers
(Triton's do_bench, median), one JSON line per figure:

- gather_sdpa: what a framework without a paged kernel runs: index the cache by the block tables
  (one gather of K and one of V into a contiguous [b, pages * page_size, kv_heads, d] copy), then
  PyTorch's scaled_dot_product_attention (its own backend choice) with a boolean mask for each
  sequence's length and the causal order of its new tokens; the issue's "gather + SDPA".
- sdpa_contiguous: SDPA alone on caches already contiguous (no gather, the same mask): what the
  attention costs without the paging, a floor for the unpaged route.
- flash_attn_kvcache: FlashAttention's flash_attn_with_kvcache on the paged cache, where the
  flash_attn package is installed (it needs pages of a multiple of 256 tokens).

The inputs are laid out as the catalogue's: q [b, q_len, h, d], k_cache and v_cache [pages,
page_size, kv_heads, d] with shuffled block tables, context lengths by the op's formula
(reference/paged_attention_decode.hpp). GB/s counts the catalogue's bytes (each sequence's K and
V rows once, q, o, the block-table entries in use and the lengths).

    python3 scripts/peers/paged_decode_peers.py [--dtype bf16]
"""
import argparse
import json

import torch
import torch.nn.functional as F
from triton.testing import do_bench

ap = argparse.ArgumentParser()
ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
args = ap.parse_args()
dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
torch.manual_seed(0)

# (batch, q_len, context, heads, kv_heads, head_dim, page_size, ragged): the op's default shapes.
SHAPES = [(24, 1, 5000, 32, 8, 128, 16, False), (32, 1, 4096, 32, 8, 128, 16, False), (8, 1, 16384, 32, 8, 128, 16, False),
          (64, 1, 8192, 32, 8, 128, 16, True), (128, 1, 2048, 32, 8, 128, 16, True),
          (16, 4, 8192, 32, 8, 128, 16, True), (32, 1, 4096, 32, 32, 128, 16, False),
          (64, 1, 4096, 16, 2, 64, 64, False), (1, 1, 32768, 32, 8, 128, 256, False)]


def context_length(b, context, q_len, ragged):
    """paged_decode::context_length: uniform over (context / 4, context] by a golden-ratio sequence."""
    if not ragged:
        return context
    f = ((b * 2654435769) & 0xFFFFFFFF) >> 8
    return max(q_len, context - ((3 * context * f) >> 26))


try:
    from flash_attn import flash_attn_with_kvcache
except ImportError:
    flash_attn_with_kvcache = None

for b, q_len, ctx, h, kvh, d, page, ragged in SHAPES:
    label = f"b{b} q{q_len} ctx{ctx} h{h}/{kvh} d{d} page{page}" + (" ragged" if ragged else "")
    pps = -(-ctx // page)
    padded = pps * page
    lengths = [context_length(i, ctx, q_len, ragged) for i in range(b)]
    e = torch.finfo(dt).bits // 8
    nbytes = (2 * sum(lengths) * kvh * d * e + 2 * b * q_len * h * d * e
              + 4 * sum(-(-n // page) for n in lengths) + 4 * b)
    q = torch.randn(b, q_len, h, d, device="cuda", dtype=dt).mul_(1.5)
    k_cache = torch.randn(b * pps, page, kvh, d, device="cuda", dtype=dt).mul_(1.5)
    v_cache = torch.randn(b * pps, page, kvh, d, device="cuda", dtype=dt)
    tables = torch.randperm(b * pps, device="cuda", dtype=torch.int32).view(b, pps)
    lens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
    # Key j is visible to new token t of sequence i when j <= L_i - q_len + t.
    pos = lens.view(b, 1, 1, 1) - q_len + torch.arange(q_len, device="cuda").view(1, 1, q_len, 1)
    mask = torch.arange(padded, device="cuda").view(1, 1, 1, padded) <= pos  # [b, 1, q_len, padded]
    qt = q.transpose(1, 2)

    def gather_sdpa():
        k = k_cache[tables].view(b, padded, kvh, d).transpose(1, 2)
        v = v_cache[tables].view(b, padded, kvh, d).transpose(1, 2)
        return F.scaled_dot_product_attention(qt, k, v, attn_mask=mask, enable_gqa=kvh != h)

    k_flat = k_cache[tables].view(b, padded, kvh, d).transpose(1, 2).contiguous()
    v_flat = v_cache[tables].view(b, padded, kvh, d).transpose(1, 2).contiguous()

    def sdpa_contiguous():
        return F.scaled_dot_product_attention(qt, k_flat, v_flat, attn_mask=mask, enable_gqa=kvh != h)

    impls = [("gather_sdpa", gather_sdpa), ("sdpa_contiguous", sdpa_contiguous)]
    if flash_attn_with_kvcache is not None and page % 256 == 0:
        impls.append(("flash_attn_kvcache", lambda: flash_attn_with_kvcache(
            q, k_cache, v_cache, cache_seqlens=lens, block_table=tables, causal=True)))
    for name, fn in impls:
        try:
            fn()
            torch.cuda.synchronize()
            ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
            print(json.dumps({"op": "paged_attention_decode", "impl": name, "shape": label, "dtype": args.dtype,
                              "us": round(ms * 1e3, 1), "GBs": round(nbytes / ms / 1e6, 1)}), flush=True)
        except Exception as error:  # a backend that cannot take the shape says so and the rest go on
            print(json.dumps({"op": "paged_attention_decode", "impl": name, "shape": label, "dtype": args.dtype,
                              "error": str(error)[:200]}), flush=True)
    del k_flat, v_flat, k_cache, v_cache
    torch.cuda.empty_cache()
