// Machinery of the row-in-registers kernels (one block per row, 16-byte vectors at any row
// length): how a row splits into a scalar head, a body of 16-byte vectors and a scalar tail; the
// widest load a per-column vector (weight, bias) allows at the body's offset; a block sum of
// several floats in one pass; and the launch plan (vectors per thread, threads).
//
// The pattern is the one of kernels/rmsnorm/fused_v3_vec16_any_cols.cu, shared here so that
// later kernels need not copy it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "kernels/common/block_reduce.cuh"
#include "kernels/common/vector_pack.cuh"

namespace kwb {

// One row of `cols` elements of T: [head | nvec 16-byte vectors | tail]. Every row-shaped tensor
// of the kernel shares the row's offset and (from cudaMalloc) a 16-byte-aligned base, so the
// split computed from one applies to all of them.
template <class T>
struct RowSplit {
  static constexpr int E = 16 / sizeof(T);  // elements per vector
  int head;        // scalar elements before the first 16-byte boundary (< E)
  int nvec;        // 16-byte vectors of the body
  int tail_start;  // first column after the body
  int edge_count;  // head + tail elements: one per thread, threads [0, edge_count)
  int vec_align;   // alignment in bytes of a per-column vector at column `head`: 16, 8, 4 or 2

  // The row at `row`, wherever it lies.
  __device__ __forceinline__ RowSplit(const T* row, int cols) {
    init(static_cast<int>(reinterpret_cast<std::uintptr_t>(row) & 15) / static_cast<int>(sizeof(T)), cols);
  }
  // The row that starts `row_start` elements into a tensor whose base is 16-byte aligned.
  __device__ __forceinline__ RowSplit(std::int64_t row_start, int cols) { init(static_cast<int>(row_start % E), cols); }

 private:
  __device__ __forceinline__ void init(int misalign, int cols) {
    head = min(cols, misalign == 0 ? 0 : E - misalign);
    nvec = (cols - head) / E;
    tail_start = head + nvec * E;
    edge_count = head + (cols - tail_start);
    const int head_bytes = head * static_cast<int>(sizeof(T));
    vec_align = head == 0 ? 16 : (head_bytes & -head_bytes);  // lowest set bit
  }

 public:
  // The column of edge element k (k < edge_count): the head first, then the tail.
  __device__ __forceinline__ int edge_col(int k) const { return k < head ? k : tail_start + (k - head); }
};

// One 16-byte pack to or from a 16-byte-aligned address, moved as a uint4 (loads through the
// read-only path). Assigning a Pack of __nv_bfloat16 (returning one by value included) copies it
// element by element, which the compiler may route through local memory: it spilled the
// layernorm backward kernel at 80 registers.
template <class T, int E>
__device__ __forceinline__ void load_vector16(Pack<T, E>& out, const Pack<T, E>* p) {
  static_assert(sizeof(Pack<T, E>) == 16, "16-byte packs only");
  *reinterpret_cast<uint4*>(&out) = __ldg(reinterpret_cast<const uint4*>(p));
}
template <class T, int E>
__device__ __forceinline__ void store_vector16(Pack<T, E>* p, const Pack<T, E>& v) {
  static_assert(sizeof(Pack<T, E>) == 16, "16-byte packs only");
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&v);
}

// E elements of a per-column vector starting at `p`, whose address is only `align` bytes aligned:
// the widest accesses that alignment allows (16, 8 bytes, else element by element).
template <class T, int E>
__device__ __forceinline__ Pack<T, E> load_pack_aligned(const T* p, int align) {
  Pack<T, E> out;
  if (align >= 16) return *reinterpret_cast<const Pack<T, E>*>(p);
  if (align >= 8 && E * sizeof(T) >= 8) {
    constexpr int N = 8 / sizeof(T);
#pragma unroll
    for (int k = 0; k < E / N; ++k) {
      const auto half = *reinterpret_cast<const Pack<T, N>*>(p + k * N);
#pragma unroll
      for (int e = 0; e < N; ++e) out.v[k * N + e] = half.v[e];
    }
    return out;
  }
#pragma unroll
  for (int e = 0; e < E; ++e) out.v[e] = p[e];
  return out;
}

// Block sums of N floats at once (one pair of barriers for all of them): every thread gets the
// totals in v. `scratch` holds at least 32 * N floats; blockDim.x must be a multiple of 32.
template <int N>
__device__ __forceinline__ void block_sums(float (&v)[N], float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
  for (int k = 0; k < N; ++k) v[k] = warp_sum(v[k]);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < N; ++k) scratch[k * 32 + warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < N; ++k) v[k] = warp_sum(lane < warps ? scratch[k * 32 + lane] : 0.0f);
}

struct RowPlan {
  int vectors_per_thread = 1;
  int threads = 32;
};

// Up to 1024 vectors: the fewest vectors per thread (1, 2, 4) at <= 256 threads. Longer rows: 4
// vectors per thread and more threads, up to max_threads. nullopt when the row does not fit.
// Threads are a multiple of 32 and at least 2 * (E - 1), enough for the scalar head and tail.
inline std::optional<RowPlan> row_plan(std::int64_t cols, std::size_t elem_bytes, int max_threads) {
  const std::int64_t per_vector = 16 / static_cast<std::int64_t>(elem_bytes);
  const std::int64_t nvec = cols / per_vector;  // a misaligned row has fewer, never more
  RowPlan p;
  std::int64_t threads;
  if (nvec <= 1024) {
    for (p.vectors_per_thread = 1; (nvec + p.vectors_per_thread - 1) / p.vectors_per_thread > 256;)
      p.vectors_per_thread *= 2;
    threads = (nvec + p.vectors_per_thread - 1) / p.vectors_per_thread;
  } else {
    p.vectors_per_thread = 4;
    threads = (nvec + 3) / 4;
  }
  threads = std::max(threads, 2 * (per_vector - 1));
  threads = (threads + 31) / 32 * 32;
  if (threads > max_threads) return std::nullopt;
  p.threads = static_cast<int>(threads);
  return p;
}

}  // namespace kwb
