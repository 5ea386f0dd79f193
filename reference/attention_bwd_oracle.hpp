// attention_bwd's fp64 oracle and error bounds (reference/attention_bwd_op.cpp), shared with the
// packed backward (attention_varlen_bwd), which runs this oracle on each sequence as a dense
// attention of its own length and checks with the same bounds.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"

namespace kwb {

// The positional oracle of attention_bwd. in: q, k, v, o, lse, do whole (bshd; lse [b, h, s]);
// out: dq [b, n, h, d], dk and dv [b, n, kv_heads, d] at positions rows[0..n) of the sequence
// (s's seq is n; the true seq is K's dim 1), with their error magnitudes (abs_sum, root_sum_sq).
void attention_bwd_oracle(const Shape& s, const std::vector<std::int64_t>& rows, const std::vector<HostTensor>& in,
                          std::vector<HostTensor>& out);

// The tolerance of a gradient whose elements sum `terms` pair terms (dq: the keys a query sees;
// dk and dv: the queries that see a key, over the group's heads). attention_bwd_op.cpp says what
// each part bounds.
Tolerance attention_bwd_gradient_tolerance(const AttentionAxes& a, DType dtype, double terms);

}  // namespace kwb
