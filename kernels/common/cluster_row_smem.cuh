// A long row split over a thread-block cluster, each CTA's slice staged in dynamic SHARED memory
// (not registers) by 16-byte cp.async, so that several CTAs fit per SM and one CTA's
// load / cluster-barrier / write phases overlap another's. Shared by cross_entropy fused_v3 and
// softmax_fwd fused_v5: the slice's (max, sum of exp) combined across the cluster through DSMEM,
// and the output written from shared memory with 16-byte stores by an op-specific functor.
//
// Row layout (any length, any 2-byte-aligned row start): [head | nvec 16-byte vectors | tail];
// the body is shared out among the cluster's CTAs in contiguous slices of `per_cta` vectors,
// rank 0 also takes the scalar head and tail (< 2 * (16 / sizeof(T)) elements, one per thread).
// The output row must have the input row's offset modulo 16 bytes (both row-major from cudaMalloc).
//
// Everything here lives in namespace kwb::crow: the softmax and row_in_registers helpers define
// their own RowSplit / fast_exp2, and a kernel may include either.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/cluster_row_plan.hpp"
#include "kernels/common/vector_pack.cuh"

namespace kwb::crow {

namespace cg = cooperative_groups;

inline constexpr float kLog2e = 1.4426950408889634f;

// ---------------------------------------------------------------------------------------------
// Host: the launch (the plan: kernels/common/cluster_row_plan.hpp).

// Launches kernel<<<rows * cluster, threads, smem>>> as clusters of plan.cluster CTAs; throws
// (naming the configuration) if the runtime refuses it.
template <class... KArgs, class... Args>
void launch_clustered(void (*kernel)(KArgs...), const Plan& plan, std::int64_t rows, cudaStream_t stream,
                      Args... args) {
  // Once per kernel (host calls kept out of the timed launches). The opt-in maximum does not
  // reserve anything: occupancy follows each launch's own dynamicSmemBytes. The carveout asks for
  // the largest shared-memory share of L1: the slices are the working set, L1 is not.
  static const bool attributes_set = [&] {
    (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kMaxSliceBytes));
    (void)cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    return true;
  }();
  (void)attributes_set;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(rows * plan.cluster));
  config.blockDim = dim3(static_cast<unsigned>(plan.threads));
  config.dynamicSmemBytes = plan.smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(plan.cluster);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  const cudaError_t err = cudaLaunchKernelEx(&config, kernel, static_cast<KArgs>(args)...);
  if (err != cudaSuccess)
    throw std::runtime_error("cluster launch (" + std::to_string(plan.cluster) + " CTAs of " +
                             std::to_string(plan.threads) + " threads, " + std::to_string(plan.smem_bytes) +
                             " bytes of shared memory each): " + cudaGetErrorString(err));
}

// ---------------------------------------------------------------------------------------------
// Device.

// The (max, sum of exp(x - max)) of a set; {-inf, 0} is the empty set (sum == 0 marks it, which
// keeps -inf - -inf out of the combine).
struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  const float sa = a.sum > 0.0f ? a.sum * exp2f((a.max - m) * kLog2e) : 0.0f;
  const float sb = b.sum > 0.0f ? b.sum * exp2f((b.max - m) * kLog2e) : 0.0f;
  return {m, sa + sb};
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_add(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The block's reduction in every thread (a fixed butterfly order: deterministic). scratch: 32
// floats; blockDim.x a multiple of 32.
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = kMax ? warp_max(v) : warp_add(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const float empty = kMax ? -INFINITY : 0.0f;
  v = lane < static_cast<int>(blockDim.x >> 5) ? scratch[lane] : empty;
  return kMax ? warp_max(v) : warp_add(v);
}

// Where this CTA's part of a row lies.
template <class T>
struct Slice {
  static constexpr int E = 16 / sizeof(T);
  int head;        // scalars before the first 16-byte boundary
  int nvec;        // body vectors of the row
  int tail_start;  // first column after the body
  int v0, v1;      // this CTA's body vectors [v0, v1)
  int edge_count;  // head + tail scalars this CTA owns (rank 0 only): threads [0, edge_count)

  __device__ __forceinline__ Slice(const T* row, int cols, int rank, int per_cta) {
    const int misalign = static_cast<int>(reinterpret_cast<std::uintptr_t>(row) & 15) / static_cast<int>(sizeof(T));
    head = min(cols, misalign == 0 ? 0 : E - misalign);
    nvec = (cols - head) / E;
    tail_start = head + nvec * E;
    v0 = min(nvec, rank * per_cta);
    v1 = min(nvec, v0 + per_cta);
    edge_count = rank == 0 ? head + (cols - tail_start) : 0;
  }
  __device__ __forceinline__ int count() const { return v1 - v0; }
  __device__ __forceinline__ bool has_edge() const { return static_cast<int>(threadIdx.x) < edge_count; }
  __device__ __forceinline__ int edge_col() const {
    const int k = static_cast<int>(threadIdx.x);
    return k < head ? k : tail_start + (k - head);
  }
};

// Issues 16-byte cp.async copies of src[0, n) (16-byte aligned global) into smem[0, n) and
// waits for this thread's copies. Thread t copies vectors t, t + blockDim.x, ...: the same ones
// it later reads, so no block barrier is needed for them (cp.async.wait_all makes a thread's
// own copies visible to it). .cg: cache in L2 only, the data is used once.
__device__ __forceinline__ void load_slice_async(uint4* smem, const uint4* src, int n) {
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem + i));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src + i) : "memory");
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// The slice's (max, sum of exp(x - max)) over this thread's vectors of smem[0, n) and an optional
// edge scalar, reduced over the block (every thread gets it). Two passes over shared memory
// (max, then sum): shared-memory bandwidth is ~10x the SM's share of DRAM's.
template <class T>
__device__ __forceinline__ MaxSum slice_max_sum(const uint4* smem, int n, bool has_edge, float edge, float* scratch) {
  constexpr int E = 16 / sizeof(T);
  float m = has_edge ? edge : -INFINITY;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    Pack<T, E> p;
    *reinterpret_cast<uint4*>(&p) = smem[i];
#pragma unroll
    for (int e = 0; e < E; ++e) m = fmaxf(m, to_float(p.v[e]));
  }
  m = block_reduce<true>(m, scratch);
  float s = 0.0f;
  if (m > -INFINITY) {  // an empty slice contributes (-inf, 0)
    const float m_l2 = m * kLog2e;
    if (has_edge) s += exp2f(fmaf(edge, kLog2e, -m_l2));
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
      Pack<T, E> p;
      *reinterpret_cast<uint4*>(&p) = smem[i];
#pragma unroll
      for (int e = 0; e < E; ++e) s += exp2f(fmaf(to_float(p.v[e]), kLog2e, -m_l2));
    }
  }
  s = block_reduce<false>(s, scratch);
  return {m, s};
}

// Publishes this CTA's state and combines the cluster's states in rank order (the same bits in
// every CTA). Returns the row's state in every thread. After it, the caller has ARRIVED at the
// cluster barrier and must call cluster_finish() before exiting (so no CTA leaves, freeing its
// `published`, while another still reads it); the writes in between overlap the other CTAs.
// `published` and `row_state` are __shared__ of the caller.
__device__ __forceinline__ MaxSum cluster_combine(MaxSum mine, MaxSum* published, MaxSum* row_state) {
  cg::cluster_group cluster = cg::this_cluster();
  const int ranks = static_cast<int>(cluster.num_blocks());
  if (threadIdx.x == 0) *published = mine;
  cluster.sync();  // every CTA's state is published (release / acquire across the cluster)
  if (threadIdx.x < 32) {
    MaxSum k_state{-INFINITY, 0.0f};
    if (static_cast<int>(threadIdx.x) < ranks)
      k_state = *cluster.map_shared_rank(published, static_cast<unsigned>(threadIdx.x));  // loads in parallel
    MaxSum total{-INFINITY, 0.0f};
    for (int k = 0; k < ranks; ++k)  // rank order, the same in every lane and every CTA
      total = combine(total, {__shfl_sync(0xffffffffu, k_state.max, k), __shfl_sync(0xffffffffu, k_state.sum, k)});
    if (threadIdx.x == 0) *row_state = total;
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  __syncthreads();
  return *row_state;
}

__device__ __forceinline__ void cluster_finish() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// Writes out[i] = f(smem[i]) for this thread's vectors of the slice, 16 bytes at a time:
// fn(const Pack& in, int i, Pack& out) (packs by reference: a Pack of bf16 returned by value may
// be copied element by element through local memory).
template <class T, class Fn>
__device__ __forceinline__ void write_slice(uint4* out, const uint4* smem, int n, Fn&& fn) {
  constexpr int E = 16 / sizeof(T);
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    Pack<T, E> in, o;
    *reinterpret_cast<uint4*>(&in) = smem[i];
    fn(in, i, o);
    out[i] = *reinterpret_cast<const uint4*>(&o);
  }
}

}  // namespace kwb::crow
