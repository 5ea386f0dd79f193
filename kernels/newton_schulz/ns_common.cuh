// What the newton_schulz variants share: the orientation of the work (which side is the Gram
// side), the cuBLASLt plans of the three GEMMs of a step in either orientation, the
// deterministic sum of squares of G, and workspace carving.
//
// Layouts. X is row-major [m, n]; a row-major C = P Q is the column-major C^T = Q^T P^T, so each
// GEMM below names cuBLASLt's operand A after Q and B after P (kernels/common/cublaslt_matmul.cuh).
// With r = min(m, n), c = max(m, n) and Y = X (m <= n, "wide") or Y = X^T (m > n, "tall"), Muon's
// step is A = Y Y^T, B = b A + c A A, Y = a Y + B Y, all r x r or r x c. Y is stored either
// contiguous r x c ("contig") or as the [c, r] storage of X ("view", the tall case read in place).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "catalogue/device_types.cuh"
#include "catalogue/types.hpp"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/cublaslt_matmul.cuh"
#include "reference/newton_schulz.hpp"

namespace kwb::ns {

struct Dims {
  std::int64_t m, n, r, c;
  bool tall;
};
inline Dims dims_of(const Shape& s) {
  const std::int64_t m = s.at("rows"), n = s.at("cols");
  return {m, n, std::min(m, n), std::max(m, n), m > n};
}

inline LtMatmulSpec spec(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                         std::int64_t ldb, std::int64_t ldd, DType dtype, bool tf32) {
  LtMatmulSpec s = lt_f32_spec(ta, tb, m, n, k, lda, ldb, ldd);
  s.ab_type = s.cd_type = elem_type_of(dtype);
  s.tf32 = tf32;
  return s;
}

// A (r x r) = Y Y^T with Y contiguous r x c: operand A = Y (the column-major view of Y is Y^T,
// transposed back), operand B = Y^T (Y's view as is).
inline LtMatmulSpec gram_contig(const Dims& d, DType t, bool tf32) {
  return spec(true, false, d.r, d.r, d.c, d.c, d.c, d.r, t, tf32);
}
// A = Y Y^T with Y = X^T read in X's [c, r] storage (column-major view: Y itself, ld r).
inline LtMatmulSpec gram_view(const Dims& d, DType t, bool tf32) {
  return spec(false, true, d.r, d.r, d.c, d.r, d.r, d.r, t, tf32);
}
// A A (r x r), or with alpha = c, beta = b and C = A: B = c A A + b A.
inline LtMatmulSpec square(const Dims& d, DType t, bool tf32) {
  return spec(false, false, d.r, d.r, d.r, d.r, d.r, d.r, t, tf32);
}
// B Y (r x c, contiguous) with Y contiguous: operand A = Y^T (Y's view), operand B = B^T (B's view).
inline LtMatmulSpec update_contig(const Dims& d, DType t, bool tf32) {
  return spec(false, false, d.c, d.r, d.r, d.c, d.r, d.c, t, tf32);
}
// B Y (r x c, contiguous) with Y read in X's [c, r] storage: operand A = Y^T = X, the view
// (Y, ld r) transposed.
inline LtMatmulSpec update_view(const Dims& d, DType t, bool tf32) {
  return spec(true, false, d.c, d.r, d.r, d.r, d.r, d.c, t, tf32);
}
// The tall case kept in X's layout [c, r]: X' = X B^T (+ a X), = (B Y)^T, written as X:
// column-major D (r x c, ld r) = B (operand A: B's view B^T, transposed) X^T (operand B: X's view).
inline LtMatmulSpec update_tall_in_place_layout(const Dims& d, DType t, bool tf32) {
  return spec(true, false, d.r, d.c, d.r, d.r, d.r, d.r, t, tf32);
}

// The general form, for submatrices: row-major C (p x q, ld ldc) = P (p x k) Q (k x q), where P
// is stored row-major with ld ldp, or stored as P^T (k x p) when p_transposed; the same for Q.
// As above, cuBLASLt computes C^T = Q^T P^T: operand A is Q's storage (transposed back when Q
// is stored transposed), operand B is P's. Launch with run(Q pointer, P pointer, C pointer).
inline LtMatmulSpec row_major(std::int64_t p, std::int64_t q, std::int64_t k, bool p_transposed, std::int64_t ldp,
                              bool q_transposed, std::int64_t ldq, std::int64_t ldc, DType t, bool tf32) {
  return spec(q_transposed, p_transposed, q, p, k, ldq, ldp, ldc, t, tf32);
}

// Deterministic ||G||_F^2 in two stages: kNormParts blocks each leave the fp32 sum of squares of
// a fixed grid-stride slice; the consumer sums the partials in a fixed order. No atomics: two
// runs give the same bits.
inline constexpr int kNormParts = 1024, kNormThreads = 256;

template <class T>
__global__ void sum_squares_partials(const T* __restrict__ g, std::int64_t count, float* __restrict__ partials) {
  __shared__ float scratch[32];
  float sum = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{kNormThreads} + threadIdx.x; i < count;
       i += std::int64_t{kNormParts} * kNormThreads) {
    const float v = to_float(g[i]);
    sum += v * v;
  }
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

template <class T>
void launch_sum_squares(const T* g, std::int64_t count, float* partials, cudaStream_t stream) {
  sum_squares_partials<<<kNormParts, kNormThreads, 0, stream>>>(g, count, partials);
}

// The total of the partials, the same bits in every warp that calls it (fixed lane slices, then
// a fixed butterfly).
__device__ __forceinline__ float sum_partials_in_warp(const float* partials) {
  float s = 0;
  for (int p = threadIdx.x & 31; p < kNormParts; p += 32) s += partials[p];
  return warp_sum(s);
}

// X0 = G / (||G||_F + eps) in X's layout, from the partials: warp 0 of each block sums them (the
// same bits in every block), then the block scales a grid-stride slice.
template <class T>
__global__ void scale_by_inverse_norm(const T* __restrict__ g, const float* __restrict__ partials,
                                      std::int64_t count, float eps, T* __restrict__ x0) {
  __shared__ float inv;
  if (threadIdx.x < 32) {
    const float total = sum_partials_in_warp(partials);
    if (threadIdx.x == 0) inv = 1.0f / (sqrtf(total) + eps);
  }
  __syncthreads();
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    x0[i] = from_float<T>(to_float(g[i]) * inv);
}

template <class T>
void launch_scale_by_inverse_norm(const T* g, const float* partials, std::int64_t count, T* x0,
                                  cudaStream_t stream) {
  const float eps = static_cast<float>(kNsEps);
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 1024));
  scale_by_inverse_norm<<<blocks, 256, 0, stream>>>(g, partials, count, eps, x0);
}

// Workspace carving: regions aligned to 256 bytes (cuBLASLt wants 16), in order.
inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

struct Carver {
  std::size_t used = 0;
  std::size_t take(std::size_t bytes) {
    const std::size_t at = used;
    used += align_up(bytes);
    return at;
  }
};

}  // namespace kwb::ns
