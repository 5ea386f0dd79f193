// attention_bwd's derived inputs: the forward's output O and log-sum-exp lse, computed on the
// device from the case's drawn Q, K and V (Op::derive_inputs), so that the backward sees what a
// training step hands it: an O and an lse that belong to its Q, K and V.
//
// Plain code in fp32: one warp per (batch, query, head) (per (packed token, head) for the packed
// backward, which finds the token's sequence in cu_seqlens), each lane a share of head_dim, an online
// softmax over the visible keys (reference/attention.hpp's mask and logits), O rounded to the case
// dtype once at the end, lse kept in fp32 (as FlashAttention saves it). These are inputs, not
// answers: the oracle reads them as the variants do (its p_ij is exp(l_ij - lse_i) with this lse,
// its D_i the dot product of dO and this O), so their own rounding is no error of anyone's.
#pragma once

#include "harness/catalogue/registry.hpp"

namespace kwb::ref {

// Writes `o` and `lse` of attention_bwd's tensors from `q`, `k` and `v` on args.stream.
void attention_bwd_derive_inputs(const LaunchArgs& args);

// attention_varlen_bwd's: `cu_seqlens` from the lengths' formula (attention_varlen_fwd's
// derivation), then `o` and `lse` ([heads, total]) of each packed sequence the same way.
void attention_varlen_bwd_derive_inputs(const LaunchArgs& args);

}  // namespace kwb::ref
