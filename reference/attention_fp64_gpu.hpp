// attention_fwd's oracle on the GPU in fp64: the same formulas as the host oracle
// (reference/attention.cpp: O, lse and the error magnitudes of its tolerances), for cases whose
// host oracle is the long pole (every query of a full verification, or 16k keys per sampled row).
//
// Plain code: one warp per (batch, sampled row, head), each lane a fixed share of head_dim, the
// dot products reduced across the warp in a fixed order; two passes over the visible keys (the
// maximum logit, then the weights and sums), as the host oracle. The sums run in another order
// than the host's, so the two agree to rounding (within 1e-12 of the terms summed), not bit for bit: the host
// oracle stays the ground truth, and tests/gpu/attention_fp64_gpu_test.cpp holds the two together
// on every mask, window, soft-cap and head grouping at small shapes.
#pragma once

#include <cstdint>

#include "reference/attention.hpp"

namespace kwb::ref {

// One call's tensors, fp64, in the host oracle's layouts: q [batch, n, heads, d] (the n sampled
// rows, at positions rows[0..n)), k and v [batch, seq, kv_heads, d]; out o [batch, n, heads, d],
// lse [batch, heads, n] and their magnitudes (o_abs_sum, o_root_sum_sq like o; lse_root_sum_sq
// like lse).
struct AttentionFp64Io {
  const double* q = nullptr;
  const double* k = nullptr;
  const double* v = nullptr;
  const std::int64_t* rows = nullptr;
  std::int64_t n = 0;    // sampled rows
  std::int64_t seq = 0;  // keys
  double* o = nullptr;
  double* lse = nullptr;
  double* o_abs_sum = nullptr;
  double* o_root_sum_sq = nullptr;
  double* lse_root_sum_sq = nullptr;
};

// Runs on the device the calling thread named for the oracles, which must be its current one.
// Returns false, the outputs untouched, where it could not run (no device named, out of memory,
// any CUDA error: an unexpected one is noted once per process): the caller computes on the CPU.
bool attention_fp64_gpu(const AttentionAxes& axes, const AttentionFp64Io& io);

// Calls that completed in this process (the tests check that the oracle's dispatch used it).
std::int64_t attention_fp64_gpu_runs();

}  // namespace kwb::ref
