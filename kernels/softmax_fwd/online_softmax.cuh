// Pieces the softmax_fwd kernels share: the (max, sum) state of an online softmax and its
// combine rule, reduced across a warp and a block; the exp they all compute; and the split of
// a row into a scalar head, a body of 16-byte vectors and a scalar tail (any cols).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kwb {

inline constexpr float kLog2e = 1.4426950408889634f;

// 2^v on the SFU (ex2.approx: at most 2 ulp of relative error); results below 2^-126 flush
// to 0, which the op's atol allows for.
__device__ __forceinline__ float fast_exp2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

// exp(v - max): the difference first (exact near the max, and never overflowing for large
// logits), then the change to base 2. Its relative error is about |v - max| * 1.5 u + 2 ulp.
__device__ __forceinline__ float exp_shifted(float v, float max) { return fast_exp2((v - max) * kLog2e); }

// The online softmax state of a set of elements: their max and sum = sum exp(x - max).
// The empty set is {-inf, 0}; any element makes sum >= 1 (its max contributes exp(0)), so
// sum == 0 marks "empty" and keeps -inf - -inf (NaN) out of the combine. A row that holds no
// finite value gives NaN, as PyTorch's softmax does.
struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum empty_max_sum() { return {-INFINITY, 0.0f}; }

// The state of the union of two sets: both sums rescaled to the larger max. Symmetric in its
// arguments to the bit (fmaxf and one float addition commute), so both lanes of a butterfly
// exchange hold the same result and every reduction below is deterministic.
__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float max = fmaxf(a.max, b.max);
  const float sa = a.sum > 0.0f ? a.sum * exp_shifted(a.max, max) : 0.0f;
  const float sb = b.sum > 0.0f ? b.sum * exp_shifted(b.max, max) : 0.0f;
  return {max, sa + sb};
}

__device__ __forceinline__ MaxSum warp_combine(MaxSum v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const MaxSum other{__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)};
    v = combine(v, other);
  }
  return v;
}

// Every thread gets the block's state. `scratch` holds at least 32 entries; blockDim.x must be
// a multiple of 32.
__device__ __forceinline__ MaxSum block_combine(MaxSum v, MaxSum* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_combine(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = lane < warps ? scratch[lane] : empty_max_sum();
  return warp_combine(v);
}

// A row of `cols` elements of T as [head | nvec 16-byte vectors | tail]: the head runs up to
// the first 16-byte boundary, so the body takes 16-byte accesses at any cols and any row
// offset. x and y rows share their offsets (both are row-major [rows, cols] from 256-byte
// aligned allocations), so one split serves both. Head plus tail is at most 2 (E - 1)
// elements, one per thread of the first threads of a block.
template <class T>
struct RowSplit {
  static constexpr int E = 16 / sizeof(T);  // elements per 16-byte vector
  int head = 0;
  int nvec = 0;
  int tail_start = 0;
  int cols = 0;

  __device__ int edge_count() const { return head + (cols - tail_start); }
  // Column of edge element k (k < edge_count()).
  __device__ int edge_col(int k) const { return k < head ? k : tail_start + (k - head); }
};

template <class T>
__device__ __forceinline__ RowSplit<T> split_row(const T* row, int cols) {
  constexpr int E = RowSplit<T>::E;
  RowSplit<T> s;
  const int misalign = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) & 15) / sizeof(T));
  s.cols = cols;
  s.head = min(cols, misalign == 0 ? 0 : E - misalign);
  s.nvec = (cols - s.head) / E;
  s.tail_start = s.head + s.nvec * E;
  return s;
}

// The fused kernels index columns with int.
inline std::optional<std::string> refuse_cols_beyond_int(std::int64_t cols) {
  if (cols > 2147483647 - 16) return "cols above 2^31 - 17 exceed the kernels' int column index";
  return std::nullopt;
}

}  // namespace kwb
