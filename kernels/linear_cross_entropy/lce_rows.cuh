// The per-row (per-token) kernel of the chunked linear_cross_entropy variants: loss and dlogits
// from one fp32 logits row, one CTA per row, rows of any length, fp32 arithmetic; ignored tokens
// (label outside [0, V), e.g. -100) get loss 0 and a zero gradient row. The block max is shared
// with the baseline's log_softmax.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/block_reduce.cuh"
#include "reference/cross_entropy.hpp"

namespace kwb {

inline constexpr int kLceRowThreads = 512;

__device__ __forceinline__ float lce_block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x >> 5) ? scratch[lane] : -INFINITY;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Fused: one row of fp32 logits z (row `blockIdx.x`, ld `ld_z` floats) gives the token's loss and
// dl = softmax(z) - onehot(label) written in T (row ld `ld_dl` elements). Pass 1 keeps an online
// max and sum of exp per thread, pass 2 re-reads the row (from L2: a 128256-float row is 0.5 MB)
// and writes dl. dl may alias z when T is float: each element is read and then written by the
// same thread in pass 2, and every read of pass 1 (and z[label]) happens before the block
// reductions' barriers, so no thread overwrites what another still has to read.
template <class T>
__global__ void __launch_bounds__(kLceRowThreads)
lce_chunk_rows_kernel(const float* z, std::int64_t ld_z, T* dl, std::int64_t ld_dl, const int* __restrict__ labels,
                      float* __restrict__ loss, std::int64_t vocab) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const float* zr = z + row * ld_z;
  T* gr = dl + row * ld_dl;
  const int label = labels[row];
  if (!cross_entropy_label_counts(label, vocab)) {  // the whole block takes this branch
    for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) gr[v] = from_float<T>(0.0f);
    if (threadIdx.x == 0) loss[row] = 0.0f;
    return;
  }
  const float z_label = threadIdx.x == 0 ? zr[label] : 0.0f;  // read before any write
  float m = -INFINITY, s = 0;
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) {
    const float x = zr[v];
    if (x > m) {
      s = s * __expf(m - x) + 1.0f;  // m = -inf at first: 0 * 0 + 1
      m = x;
    } else {
      s += __expf(x - m);
    }
  }
  const float row_max = lce_block_max(m, scratch);
  const float row_sum = block_sum(m > -INFINITY ? s * __expf(m - row_max) : 0.0f, scratch);
  const float lse = row_max + logf(row_sum);
  if (threadIdx.x == 0) loss[row] = lse - z_label;
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) {
    const float p = __expf(zr[v] - lse);
    gr[v] = from_float<T>(v == label ? p - 1.0f : p);
  }
}

// The op's tensors as every variant reads them (T: the case's storage type):
//   const auto [h, w, labels, loss, dh, dw] = LceTensors<T>::of(a);
template <class T>
struct LceTensors {
  const T* h;
  const T* w;
  const int* labels;
  float* loss;
  T* dh;
  T* dw;
  static LceTensors of(const LaunchArgs& a) {
    return {a.tensor<const T>("h"),       a.tensor<const T>("W"),  a.tensor<const std::int32_t>("labels"),
            a.tensor<float>("loss"),      a.tensor<T>("dh"),       a.tensor<T>("dW")};
  }
};

}  // namespace kwb
