// qk_norm_fwd fused_v2_two_heads_per_group: v1 with two head vectors per group, both loaded
// before either is reduced.
//
// v1 gives each thread one 16-byte load (bf16 head_dim 128) and then retires the block: ~41 K
// blocks of 256 threads at the target shape (tokens 16384, heads 32, kv_heads 8), 39 waves of
// block launches, each waiting out one DRAM round trip with 32 KB per SM in flight. Here a group
// takes head vectors v and v + 1 (adjacent in memory, so a group's accesses stay contiguous),
// issues all their loads first, then does both shuffle sums: twice the bytes in flight per
// thread and half the blocks. The math per head vector is v1's.
// Expected: at or above v1; >= 90% of the copy ceiling at large bf16 shapes (v1 should already
// be there if block turnover does not limit it; this version is the control for that question).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/qk_norm_fwd/head_vector_launch.cuh"
#include "reference/qk_norm.hpp"

namespace kwb {
namespace {

constexpr int kHeadsPerGroup = 2;

// E: elements per access, A: slots per lane (compile time so the vectors stay in registers).
template <class T, int E, int A>
__global__ void __launch_bounds__(kQkThreads)
qk_norm_fwd_v2(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ q_weight,
               const T* __restrict__ k_weight, T* __restrict__ q_out, T* __restrict__ k_out,
               std::int64_t q_vectors, std::int64_t all_vectors, int head_dim, int lanes, float eps) {
  using P = Pack<T, E>;
  constexpr int U = kHeadsPerGroup;
  const int lane = threadIdx.x & (lanes - 1);
  const std::int64_t group = blockIdx.x * std::int64_t{blockDim.x / lanes} + threadIdx.x / lanes;
  const int accesses = head_dim / E;

  P row[U][A];  // (U, A, E): this lane's slots of its group's head vectors
  float sum_sq[U];
  bool valid[U];
  const P* w[U];
  P* y[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::int64_t v = group * U + u;
    valid[u] = v < all_vectors;
    const bool is_q = v < q_vectors;
    const std::int64_t offset = (is_q ? v : v - q_vectors) * head_dim;  // elements
    const P* x = reinterpret_cast<const P*>((is_q ? q : k) + offset);
    w[u] = reinterpret_cast<const P*>(is_q ? q_weight : k_weight);
    y[u] = reinterpret_cast<P*>((is_q ? q_out : k_out) + offset);
#pragma unroll
    for (int a = 0; a < A; ++a) {
      const int j = lane + a * lanes;
      if (valid[u] && j < accesses) row[u][a] = x[j];
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    sum_sq[u] = 0;
#pragma unroll
    for (int a = 0; a < A; ++a) {
      const int j = lane + a * lanes;
      if (valid[u] && j < accesses) {
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const float f = to_float(row[u][a].v[e]);
          sum_sq[u] += f * f;
        }
      }
    }
  }
  // Every lane of the warp takes part (invalid groups add zeros); xor offsets below `lanes`
  // stay inside the group.
  for (int offset_lanes = lanes / 2; offset_lanes > 0; offset_lanes >>= 1)
#pragma unroll
    for (int u = 0; u < U; ++u) sum_sq[u] += __shfl_xor_sync(0xffffffffu, sum_sq[u], offset_lanes);

#pragma unroll
  for (int u = 0; u < U; ++u) {
    const float r = rsqrtf(sum_sq[u] + eps);
#pragma unroll
    for (int a = 0; a < A; ++a) {
      const int j = lane + a * lanes;
      if (valid[u] && j < accesses) {
        const P wp = w[u][j];
        P out;
#pragma unroll
        for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(to_float(row[u][a].v[e]) * r * to_float(wp.v[e]));
        y[u][j] = out;
      }
    }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  launch_qk_norm_fwd<T, kHeadsPerGroup>(a, [](auto elems, auto slots) {
    return qk_norm_fwd_v2<T, decltype(elems)::value, decltype(slots)::value>;
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "qk_norm_fwd",
    .name = "fused_v2_two_heads_per_group",
    .role = Role::fused,
    .description = "v1 with two adjacent head vectors per group, all loads issued before the shuffle "
                   "sums: twice the bytes in flight, half the blocks",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = refuse_qk_norm_fwd<kHeadsPerGroup>,
});

}  // namespace
}  // namespace kwb
