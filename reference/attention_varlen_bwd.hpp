// attention_varlen_bwd's contract, shared by its oracle, its kernels and their tests: the backward
// of attention_varlen_fwd (reference/attention_varlen.hpp: its packed layout, axes and lengths).
// Inputs q, o, do [total, heads, d], k and v [total, kv_heads, d], lse [heads, total] (fp32),
// cu_seqlens [batch + 1]; outputs dq [total, heads, d], dk and dv [total, kv_heads, d]. Each
// sequence is attention_bwd's backward on its own tokens (reference/attention_bwd.hpp).
#pragma once

#include "reference/attention_varlen.hpp"

namespace kwb {
namespace varlen_bwd {

inline constexpr const char* kOp = "attention_varlen_bwd";

}  // namespace varlen_bwd
}  // namespace kwb
