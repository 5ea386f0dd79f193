// Device kernels shared by the ceiling micro-benchmarks, the clean L2 flush and the read probe
// (scripts/probes/read_at_size.cu).
#pragma once

#include <cstddef>

namespace kwb {

// Reads every 16-byte vector of `in` once (grid-stride). The xor is stored only if it hits a
// value no fill gives, so the loads stay in the program but nothing is written: a read-only
// DRAM stream for the ceilings, and a sweep that refills the L2 with clean lines for the flush.
// static: each translation unit keeps its own copy (no separable compilation here); the templates
// below need no such mark (each instantiation is the translation unit's own).
static __global__ void read_stream(const uint4* __restrict__ in, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

// The xor of a vector's words: what the read kernels fold their loads into.
__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x ^ v.y; }

// The read-only ceiling's kernels. Each folds what it loads into an xor that is stored only if
// it hits a value no fill gives, so the loads stay in the program and nothing is written.
// UNROLL independent loads of V (uint4: 16 bytes, uint2: 8) in flight per thread, grid-stride.
template <class V, int UNROLL>
__global__ void read_unrolled(const V* __restrict__ in, std::size_t n, unsigned* sink) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  unsigned acc = 0;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    V v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= fold(v[u]);
  }
  for (; i < n; i += stride) acc ^= fold(in[i]);
  if (acc == 0x9E3779B9u) *sink = acc;
}

// One block per blockDim.x * UNROLL vectors, no grid-stride loop: how the catalogue's elementwise
// and row kernels read (a block's loads on the same DRAM pages, the whole grid launched at once).
template <int UNROLL>
__global__ void read_blocks(const uint4* __restrict__ in, std::size_t n, unsigned* sink) {
  const std::size_t base = blockIdx.x * std::size_t{blockDim.x} * UNROLL + threadIdx.x;
  uint4 v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const std::size_t i = base + u * std::size_t{blockDim.x};
    v[u] = i < n ? in[i] : uint4{0, 0, 0, 0};
  }
  unsigned acc = 0;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc ^= fold(v[u]);
  if (acc == 0x9E3779B9u) *sink = acc;
}

}  // namespace kwb
