// qk_norm_fwd fused_v1_group_per_head_vec16: Q and K normalised in one launch, one head vector
// per group of threads, kept in registers.
//
// One grid runs over the tokens * (heads + kv_heads) head vectors, Q's first, then K's (both
// tensors are contiguous arrays of head vectors, so the split is one compare). A group of
// `lanes` threads (16 for bf16/fp16 head_dim 128: one 16-byte load each; 32 for fp32) loads its
// head vector once, sums the squares with xor shuffles inside the group, and writes
// x * r * w from the same registers. Odd head_dim takes 8-, 4-, 2-byte or scalar accesses (the
// widest that divides it); each group is independent, so there are no block-wide barriers.
//
// Napkin math at tokens 16384, heads 32, kv_heads 8, head_dim 128, bf16: 2 * 84 M elements * 2 B
// = 336 MB (read + write), ~112 us at a 3.0 TB/s copy on H100, ~84 us at 4.0 TB/s on H200. A
// block of 256 threads moves 4 KB each way and the SM holds 8 of them (32 KB of loads in flight),
// enough for Little's law at DRAM latency. Expected: >= 90% of the copy ceiling at large bf16
// shapes, as a plain copy with one shuffle reduction per 256 bytes.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/qk_norm_fwd/head_vector_launch.cuh"
#include "reference/qk_norm.hpp"

namespace kwb {
namespace {

// E: elements per access, A: slots per lane (compile time so the vector stays in registers).
template <class T, int E, int A>
__global__ void __launch_bounds__(kQkThreads)
qk_norm_fwd_v1(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ q_weight,
               const T* __restrict__ k_weight, T* __restrict__ q_out, T* __restrict__ k_out,
               std::int64_t q_vectors, std::int64_t all_vectors, int head_dim, int lanes, float eps) {
  using P = Pack<T, E>;
  const int lane = threadIdx.x & (lanes - 1);
  const std::int64_t v = blockIdx.x * std::int64_t{blockDim.x / lanes} + threadIdx.x / lanes;
  const bool valid = v < all_vectors;
  const bool is_q = v < q_vectors;
  const std::int64_t offset = (is_q ? v : v - q_vectors) * head_dim;  // elements
  const P* x = reinterpret_cast<const P*>((is_q ? q : k) + offset);
  const P* w = reinterpret_cast<const P*>(is_q ? q_weight : k_weight);
  P* y = reinterpret_cast<P*>((is_q ? q_out : k_out) + offset);
  const int accesses = head_dim / E;

  P row[A];  // (A, E): this lane's slots of the head vector
  float sum_sq = 0;
#pragma unroll
  for (int a = 0; a < A; ++a) {
    const int j = lane + a * lanes;
    if (valid && j < accesses) {
      row[a] = x[j];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float f = to_float(row[a].v[e]);
        sum_sq += f * f;
      }
    }
  }
  // Every lane of the warp takes part (invalid groups add zeros); xor offsets below `lanes`
  // stay inside the group.
  for (int offset_lanes = lanes / 2; offset_lanes > 0; offset_lanes >>= 1)
    sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, offset_lanes);
  const float r = rsqrtf(sum_sq + eps);

#pragma unroll
  for (int a = 0; a < A; ++a) {
    const int j = lane + a * lanes;
    if (valid && j < accesses) {
      const P wp = w[j];
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(to_float(row[a].v[e]) * r * to_float(wp.v[e]));
      y[j] = out;
    }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  launch_qk_norm_fwd<T, 1>(a, [](auto elems, auto slots) {
    return qk_norm_fwd_v1<T, decltype(elems)::value, decltype(slots)::value>;
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "qk_norm_fwd",
    .name = "fused_v1_group_per_head_vec16",
    .role = Role::fused,
    .description = "Q and K in one launch: a group of up to 32 lanes per head vector, 16-byte loads, "
                   "shuffle sum of squares, vector kept in registers",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = refuse_qk_norm_fwd<1>,
});

}  // namespace
}  // namespace kwb
