// The passes around a flash backward's main kernel, shared by attention_bwd's and
// attention_varlen_bwd's fused variants: the workspace they share (D, one fp32 per query row of
// every head, then the fp32 dQ accumulator shaped as dq), the preprocess (D = rowsum(dO * O), the
// accumulator zeroed) and the last pass (dq = scale * accumulator in T), each on a.stream (kernels
// in flash_bwd_v1.cuh). Packed sequences run both passes as they are over the packed tokens taken
// as one sequence of `total` (batch 1): their rows [total, h] are the packed rows, and D [1, h,
// total] is the packed [h, total] layout of lse.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "kernels/attention_bwd/flash_bwd_v1.cuh"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/common/align_up.hpp"

namespace kwb {
namespace flash {

// Workspace layout: D at 0, the dQ accumulator at dq_offset (256-byte aligned).
struct BwdWorkspace {
  std::size_t dq_offset, total;

  // rows: the query rows of every head (b s h dense, total h packed).
  static BwdWorkspace of_rows(std::int64_t rows, std::int64_t head_dim) {
    const std::size_t dq_offset = align_up(static_cast<std::size_t>(rows) * sizeof(float));
    return {dq_offset, dq_offset + align_up(static_cast<std::size_t>(rows * head_dim) * sizeof(float))};
  }
  static BwdWorkspace of(const AttentionAxes& x) { return of_rows(x.batch * x.seq * x.heads, x.head_dim); }
  float* d_sum(const LaunchArgs& a) const { return static_cast<float*>(a.workspace); }
  float* dq_accum(const LaunchArgs& a) const {
    return reinterpret_cast<float*>(static_cast<unsigned char*>(a.workspace) + dq_offset);
  }
};

// What every flash backward refuses: the grid's y and z (kv heads, sequences), positions in 32 bits,
// and the preprocess's 32-bit grid over query_rows (b s h dense, total h packed) x d / 8 threads.
inline std::optional<std::string> refuse_flash_bwd(const AttentionAxes& a, std::int64_t query_rows) {
  if (a.batch > 65535 || a.kv_heads > 65535) return "batch and kv_heads must be at most 65535 (grid y and z)";
  if (a.seq >= (std::int64_t{1} << 30)) return "seq must be below 2^30 (positions in 32-bit integers)";
  if (query_rows * (a.head_dim / 8) / kBwdPrepThreads >= (std::int64_t{1} << 31))
    return "the query rows of every head (batch * seq * heads, or the packed tokens * heads) times head_dim / 8 "
           "exceed the preprocess's 32-bit grid: fewer tokens per case";
  return std::nullopt;
}

// The params as the two passes take them: packed tokens as one dense sequence (neither pass reads
// cu_seqlens).
inline AttentionParams as_one_sequence(const AttentionParams& p) {
  if (!p.cu_seqlens) return p;
  AttentionParams flat = p;
  flat.batch = 1;
  flat.seq = p.total;
  flat.cu_seqlens = nullptr;
  return flat;
}

// Launch 1: D and the zeroed accumulator.
template <class T, int D>
void launch_bwd_preprocess(const LaunchArgs& a, const AttentionParams& params, const BwdWorkspace& ws,
                           const char* what) {
  const AttentionParams p = as_one_sequence(params);
  const std::int64_t threads = p.batch * p.seq * p.heads * (D / 8);
  if (threads == 0) return;  // no tokens (every packed sequence empty)
  flash_bwd_preprocess<T, D><<<static_cast<unsigned>((threads + kBwdPrepThreads - 1) / kBwdPrepThreads),
                               kBwdPrepThreads, 0, a.stream>>>(a.tensor<const T>("o"), a.tensor<const T>("do"),
                                                               ws.d_sum(a), ws.dq_accum(a), p);
  cuda_check_launch(what);
}

// The last launch: dq = scale * accumulator, in T.
template <class T, int D>
void launch_bwd_convert_dq(const LaunchArgs& a, const AttentionParams& params, const BwdWorkspace& ws,
                           const char* what) {
  const AttentionParams p = as_one_sequence(params);
  const std::int64_t n8 = p.batch * p.seq * p.heads * (D / 8);
  if (n8 == 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((n8 + kBwdPrepThreads - 1) / kBwdPrepThreads, std::int64_t{1} << 20);
  flash_bwd_convert_dq<T><<<static_cast<unsigned>(blocks), kBwdPrepThreads, 0, a.stream>>>(
      ws.dq_accum(a), a.tensor<T>("dq"), n8, p.scale);
  cuda_check_launch(what);
}

}  // namespace flash
}  // namespace kwb
