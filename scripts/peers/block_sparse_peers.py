#!/usr/bin/env python3
"""Peers for block_sparse_attention_fwd at its default shapes, timed as torch_peers.py times its
peers (Triton's do_bench, median), one JSON line per figure:

- flex_attention: PyTorch's FlexAttention, compiled (torch.compile), with a BlockMask of the op's
  own kept blocks at the op's block size (BlockMask.from_kv_blocks) and, under causal, the causal
  mask_mod inside the diagonal blocks; grouped-query heads by enable_gqa;
  the log-sum-exp returned as the op returns it. The BlockMask is built once, outside the timing.
- sdpa_flash_dense: PyTorch SDPA's FlashAttention-2 backend on the same shape with no block mask,
  the dense attention the sparse kernels are measured against (its TFLOP/s counts every visible
  pair, not only the kept ones).

Inputs: q, k, v [b, h, s, d] (FlexAttention's and SDPA's layout; the op's bshd holds the same
values); the block mask by the op's formula (reference/block_sparse_attention.hpp: visible block
(qb, kb) kept where hi32(splitmix64(((b * heads + h) * blocks + qb) * blocks + kb)) * 100 <
density * 2^32). TFLOP/s counts 4 d per visible pair inside a kept block, as the work model.

    python3 scripts/peers/block_sparse_peers.py [--dtype bf16]
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

# (batch, seq, heads, kv_heads, head_dim, causal, block, density): the op's default shapes.
SHAPES = [(4, 4096, 32, 8, 128, True, 128, 50), (4, 4096, 32, 8, 128, False, 128, 50),
          (1, 16384, 32, 8, 128, True, 128, 50), (1, 16384, 32, 8, 128, False, 128, 10),
          (4, 4096, 32, 8, 64, True, 128, 50), (4, 4096, 32, 8, 128, True, 64, 50),
          (4, 4096, 32, 8, 128, True, 128, 100)]

M64 = (1 << 64) - 1


def splitmix64(x):
    """reference/block_sparse_attention.hpp's hash, on Python integers (wrapped to 64 bits)."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def block_mask(b, h, blocks, density, causal):
    """The op's kept blocks: nested lists [b][h][qb][kb] of bools."""
    def kept(bi, hi, qb, kb):
        if causal and kb > qb:
            return False
        return (splitmix64(((bi * h + hi) * blocks + qb) * blocks + kb) >> 32) * 100 < density << 32
    return [[[[kept(bi, hi, qb, kb) for kb in range(blocks)] for qb in range(blocks)] for hi in range(h)]
            for bi in range(b)]


def kept_pairs(kept, seq, block, causal):
    """Visible (query, key) pairs inside kept blocks: the work model's count."""
    pairs = 0
    for per_head in kept:
        for rows in per_head:
            for qb, row in enumerate(rows):
                nq = min(block, seq - qb * block)
                for kb, keep in enumerate(row):
                    if keep:
                        pairs += nq * (nq + 1) // 2 if causal and kb == qb else nq * min(block, seq - kb * block)
    return pairs


def flex_block_mask(kept, block, causal, seq):
    """FlexAttention's BlockMask of the op's kept blocks, built from the block lists themselves
    (BlockMask.from_kv_blocks: no mask_mod evaluated per element, which at 16k tokens would
    materialise b h s^2 values): kept blocks off the diagonal are full blocks; under causal the kept
    diagonal blocks are partial ones, masked inside by the causal mask_mod."""
    kept_t = torch.tensor(kept, dtype=torch.bool, device="cuda")
    n = kept_t.shape[-1]
    diagonal = torch.eye(n, dtype=torch.bool, device="cuda") if causal else torch.zeros(n, n, dtype=torch.bool,
                                                                                          device="cuda")
    partial, full = kept_t & diagonal, kept_t & ~diagonal

    def lists(m):  # per row: how many blocks, and their indices first (ascending), the rest after
        order = torch.argsort((~m).to(torch.int8), dim=-1, stable=True)
        return m.sum(-1).to(torch.int32), order.to(torch.int32)

    kv_num, kv_idx = lists(partial)
    full_num, full_idx = lists(full)
    mask_mod = (lambda b, h, q_idx, kv_idx: q_idx >= kv_idx) if causal else None
    try:
        return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx, BLOCK_SIZE=block, mask_mod=mask_mod,
                                        seq_lengths=(seq, seq))
    except TypeError:  # a PyTorch without seq_lengths
        return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx, BLOCK_SIZE=block, mask_mod=mask_mod)


try:
    from torch.nn.attention.flex_attention import BlockMask, flex_attention
    flex = torch.compile(flex_attention)
except Exception as error:  # an older PyTorch: say so once, time SDPA alone
    print(json.dumps({"op": "block_sparse_attention_fwd", "impl": "flex_attention", "error": str(error)[:200]}),
          flush=True)
    flex = None

for b, s, h, kvh, d, causal, block, density in SHAPES:
    label = f"b{b} s{s} h{h}/{kvh} d{d}" + (" causal" if causal else "") + f" block{block} density{density}"
    blocks = (s + block - 1) // block
    kept = block_mask(b, h, blocks, density, causal)
    flops = 4 * d * kept_pairs(kept, s, block, causal)
    dense_pairs = b * h * (s * (s + 1) // 2 if causal else s * s)
    q = torch.randn(b, h, s, d, device="cuda", dtype=dt).mul_(1.5)
    k = torch.randn(b, kvh, s, d, device="cuda", dtype=dt).mul_(1.5)
    v = torch.randn(b, kvh, s, d, device="cuda", dtype=dt)
    impls = []
    if flex is not None:
        try:
            bm = flex_block_mask(kept, block, causal, s)
            # Its kernel's tiles must divide the block: 64-token blocks need 64-row tiles.
            options = {"BLOCK_M": block, "BLOCK_N": block} if block < 128 else None
            fn = (lambda bm=bm, options=options:
                  flex(q, k, v, block_mask=bm, enable_gqa=kvh != h, return_lse=True, kernel_options=options))
            impls.append(("flex_attention", fn, flops))
        except Exception as error:
            print(json.dumps({"op": "block_sparse_attention_fwd", "impl": "flex_attention", "shape": label,
                              "dtype": args.dtype, "error": str(error)[:200]}), flush=True)
    ke, ve = (k, v) if kvh == h else (k.repeat_interleave(h // kvh, dim=1), v.repeat_interleave(h // kvh, dim=1))

    def sdpa(ke=ke, ve=ve, causal=causal):
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, ke, ve, is_causal=causal)

    impls.append(("sdpa_flash_dense", sdpa, 4 * d * dense_pairs))
    for name, fn, work in impls:
        try:
            fn()
            torch.cuda.synchronize()
            ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
            line = {"op": "block_sparse_attention_fwd", "impl": name, "shape": label, "dtype": args.dtype,
                    "us": round(ms * 1e3, 1), "TFLOPs": round(work / ms / 1e9, 1)}
            if name == "sdpa_flash_dense":
                line["note"] = "dense: every visible pair, no block mask; K and V expanded to every head"
            print(json.dumps(line), flush=True)
        except Exception as error:  # a backend that cannot take the shape says so and the rest go on
            print(json.dumps({"op": "block_sparse_attention_fwd", "impl": name, "shape": label, "dtype": args.dtype,
                              "error": str(error)[:200]}), flush=True)
