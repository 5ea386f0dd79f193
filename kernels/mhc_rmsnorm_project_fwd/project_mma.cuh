// What the tensor-core (bf16 mma.sync) kernels of mhc_rmsnorm_project_fwd share: W packed once
// in prepare() as Wt [P = 32][Kpad] (K zero-padded to a multiple of the 64-wide K chunk, so that
// the B fragments' k pairs are contiguous and a chunk of W needs no bounds checks), the gather
// of 8 values of H with zeros past T and K, and the m16n8k16 MMA.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "harness/catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {
namespace {  // internal linkage: each kernel file gets its own copy of the pack kernel

constexpr int kMmaChunk = 64;              // K values per chunk (v2; v3's is a tunable multiple of it)
constexpr int kMmaRowPad = kMmaChunk + 8;  // shared row length in bf16: 144 bytes, conflict-free fragments
constexpr int kMmaMaxChunk = 256;          // Wt is zero-padded to a multiple of every kernel's chunk

std::int64_t mma_padded_k(std::int64_t k_len) { return (k_len + kMmaMaxChunk - 1) / kMmaMaxChunk * kMmaMaxChunk; }

// Wt[p][k] = W[k][p] for k < K, 0 for K <= k < Kpad.
__global__ void pack_weight(const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ wt, std::int64_t k_len,
                            std::int64_t k_pad) {
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;  // over P x Kpad
  if (i >= kProjectP * k_pad) return;
  const std::int64_t p = i / k_pad, k = i % k_pad;
  wt[i] = k < k_len ? w[k * kProjectP + p] : __float2bfloat16_rn(0.0f);
}

struct PackedWeight {
  __nv_bfloat16* wt = nullptr;
  ~PackedWeight() { cudaFree(wt); }
};

// Variant::prepare: the packed W of a bf16 case (fp32 cases run the FMA kernel and need none).
std::shared_ptr<void> prepare_packed_weight(const LaunchArgs& a) {
  if (a.dtype == DType::fp32) return nullptr;
  const std::int64_t k_len = MhcAxes::of(a.shape).flat_len(), k_pad = mma_padded_k(k_len);
  auto packed = std::make_shared<PackedWeight>();
  const std::int64_t n = kProjectP * k_pad;
  if (cudaMalloc(&packed->wt, static_cast<std::size_t>(n) * sizeof(__nv_bfloat16)) != cudaSuccess)
    throw std::runtime_error("cudaMalloc of the packed W failed");
  pack_weight<<<static_cast<unsigned>((n + 255) / 256), 256, 0, a.stream>>>(
      a.tensor<const __nv_bfloat16>("W"), packed->wt, k_len, k_pad);
  return packed;
}

// 8 consecutive values of row `token` from column k, zero past T or K; one 16-byte load when the
// row is 16-byte aligned and the 8 values lie inside it.
__device__ __forceinline__ uint4 load_h8(const __nv_bfloat16* h, std::int64_t token, std::int64_t tokens,
                                         std::int64_t k, std::int64_t k_len, bool aligned) {
  if (token >= tokens) return make_uint4(0, 0, 0, 0);
  const __nv_bfloat16* src = h + token * k_len + k;
  if (aligned && k + 8 <= k_len) return __ldcs(reinterpret_cast<const uint4*>(src));
  uint4 v;
  __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&v);
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = k + i < k_len ? src[i] : __float2bfloat16_rn(0.0f);
  return v;
}

// d += A (16 x 16, row) * B (16 x 8, col), bf16 in, fp32 accumulate.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                               std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two consecutive bf16 of shared memory as one fragment register.
__device__ __forceinline__ std::uint32_t mma_pair(const __nv_bfloat16* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}

}  // namespace
}  // namespace kwb
