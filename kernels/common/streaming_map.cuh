// A streaming elementwise kernel over flat arrays: NIn inputs and NOut outputs of one storage
// type T, all of n elements, out_k[i] = fn(in_0[i], ..., in_{NIn-1}[i])_k in fp32.
//
// Built to run at the copy ceiling:
//   - 16-byte accesses: each thread moves U packs of 16 bytes per tensor per step (U = 2: 32
//     bytes per tensor), all loads issued before any math, so a step has NIn * U independent
//     16-byte loads in flight per thread;
//   - packs are strided by the grid's thread count within a step (pack base + j * G + t), so
//     every load instruction of a warp covers 512 contiguous bytes;
//   - the grid holds at most `waves` full waves of resident blocks (occupancy x SMs) and strides
//     over the rest: the body loop runs whole steps with no bounds checks, then one remainder
//     step checks each pack against the end, then a scalar tail covers the last n % (16 /
//     sizeof(T)) elements (or everything, when a pointer is not 16-byte aligned);
//   - 64-bit indices throughout (n may exceed 2^31).
// Access picks how packs move: PlainAccess (ordinary 16-byte loads and stores) or
// StreamingHintAccess (loads that skip L1 and ask L2 for whole 256-byte lines, evict-first
// stores), so variants can measure whether the cache hints matter.
// The functor is a struct with a __device__ `void operator()(const float* in, float* out) const`
// (NIn values in, NOut values out), so the math lives with the op and the streaming here.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/vector_pack.cuh"

namespace kwb {

inline constexpr int kStreamThreads = 256;

// Ordinary 16-byte loads and stores.
struct PlainAccess {
  template <class P>
  __device__ __forceinline__ static P load(const P* p) { return *p; }
  template <class P>
  __device__ __forceinline__ static void store(P* p, const P& v) { *p = v; }
};

// Read-only loads that do not allocate in L1 and prefetch the 256-byte L2 line (sm_80+), and
// evict-first ("streaming") stores: every byte is touched once, so no cache should keep it.
// Inputs must not alias outputs (ld.global.nc), which holds for every op that uses this.
struct StreamingHintAccess {
  template <class P>
  __device__ __forceinline__ static P load(const P* p) {
    static_assert(sizeof(P) == 16, "16-byte packs only");
    int4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    P out;
    __builtin_memcpy(&out, &v, sizeof(P));
    return out;
  }
  template <class P>
  __device__ __forceinline__ static void store(P* p, const P& v) {
    int4 bits;
    __builtin_memcpy(&bits, &v, sizeof(P));
    __stcs(reinterpret_cast<int4*>(p), bits);
  }
};

template <class T, int NIn, int NOut>
struct StreamTensors {
  const T* in[NIn];
  T* out[NOut];
};

// One pack-sized slice of every tensor through fn: E elements, converted through fp32.
template <class T, int E, int NIn, int NOut, class Fn>
__device__ __forceinline__ void apply_pack(const Pack<T, E> (&in)[NIn], Pack<T, E> (&out)[NOut], const Fn& fn) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    float x[NIn], y[NOut];
#pragma unroll
    for (int k = 0; k < NIn; ++k) x[k] = to_float(in[k].v[e]);
    fn(x, y);
#pragma unroll
    for (int k = 0; k < NOut; ++k) out[k].v[e] = from_float<T>(y[k]);
  }
}

// nvec: 16-byte packs handled vectorised (n / E, or 0 when a pointer is misaligned); the scalar
// tail covers elements nvec * E .. n - 1.
template <class T, int NIn, int NOut, int U, class Access, class Fn>
__global__ void __launch_bounds__(kStreamThreads)
streaming_map_kernel(StreamTensors<T, NIn, NOut> t, std::int64_t n, std::int64_t nvec, Fn fn) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  const std::int64_t tid = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t threads = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t step = threads * U;           // packs per grid-wide step
  const std::int64_t body_end = nvec / step * step;  // packs covered by whole steps

  for (std::int64_t base = 0; base < body_end; base += step) {
    P in[U][NIn];  // (U, NIn): this thread's packs of this step
#pragma unroll
    for (int j = 0; j < U; ++j)
#pragma unroll
      for (int k = 0; k < NIn; ++k)
        in[j][k] = Access::load(reinterpret_cast<const P*>(t.in[k]) + base + j * threads + tid);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      P out[NOut];
      apply_pack<T, E, NIn, NOut>(in[j], out, fn);
#pragma unroll
      for (int k = 0; k < NOut; ++k) Access::store(reinterpret_cast<P*>(t.out[k]) + base + j * threads + tid, out[k]);
    }
  }

  // Remainder step: fewer than `step` packs are left; each is checked against the end.
  {
    P in[U][NIn];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const std::int64_t idx = body_end + j * threads + tid;
      if (idx < nvec) {
#pragma unroll
        for (int k = 0; k < NIn; ++k) in[j][k] = Access::load(reinterpret_cast<const P*>(t.in[k]) + idx);
      }
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const std::int64_t idx = body_end + j * threads + tid;
      if (idx < nvec) {
        P out[NOut];
        apply_pack<T, E, NIn, NOut>(in[j], out, fn);
#pragma unroll
        for (int k = 0; k < NOut; ++k) Access::store(reinterpret_cast<P*>(t.out[k]) + idx, out[k]);
      }
    }
  }

  // Scalar tail: the elements after the last whole pack (all of them when nvec == 0).
  for (std::int64_t i = nvec * E + tid; i < n; i += threads) {
    float x[NIn], y[NOut];
#pragma unroll
    for (int k = 0; k < NIn; ++k) x[k] = to_float(t.in[k][i]);
    fn(x, y);
#pragma unroll
    for (int k = 0; k < NOut; ++k) t.out[k][i] = from_float<T>(y[k]);
  }
}

// Launches streaming_map_kernel over n elements: U packs per thread per step (1, 2 or 4), a grid
// of at most `waves` waves of resident blocks, and never more blocks than the work needs.
template <class T, int U, class Access = PlainAccess, int NIn, int NOut, class Fn>
void streaming_map(const StreamTensors<T, NIn, NOut>& t, std::int64_t n, int waves, cudaStream_t stream, Fn fn) {
  if (n <= 0) return;
  constexpr int E = 16 / sizeof(T);
  bool aligned = true;
  for (const T* p : t.in) aligned = aligned && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  for (T* p : t.out) aligned = aligned && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  const std::int64_t nvec = aligned ? n / E : 0;

  const auto kernel = streaming_map_kernel<T, NIn, NOut, U, Access, Fn>;
  int device = 0, sms = 1, per_sm = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kStreamThreads, 0);
  const std::int64_t resident = std::int64_t{std::max(sms, 1)} * std::max(per_sm, 1) * std::max(waves, 1);
  // Blocks the work needs: every pack once, and the scalar tail one element per thread.
  const std::int64_t per_block = std::int64_t{kStreamThreads} * U;
  const std::int64_t need = std::max((nvec + per_block - 1) / per_block,
                                     (n - nvec * E + kStreamThreads - 1) / kStreamThreads);
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>(need, 1, std::min<std::int64_t>(resident, 2147483647)));
  kernel<<<blocks, kStreamThreads, 0, stream>>>(t, n, nvec, fn);
}

}  // namespace kwb
