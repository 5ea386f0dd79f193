// The bulk tensor copy engine (TMA): tensor maps built on the host (in a variant's prepare(), so
// timing never sees the encoding) and the device-side copies between global and shared memory.
//
// A tensor map describes a row-major tensor (dims innermost first, strides in bytes for the outer
// dims, which must be multiples of 16) and the box one copy moves. Boxes past the tensor's end
// are zero-filled on loads and clipped on stores, so edge tiles need no predication. The map is
// passed to the kernel by value as a `const __grid_constant__ CUtensorMap` parameter.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/catalogue/elem_type.hpp"
#include "kernels/common/hopper/wgmma.cuh"

namespace kwb::hopper {

inline CUtensorMapDataType tensor_map_type(ElemType type) {
  switch (type) {
    case ElemType::fp32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ElemType::fp16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ElemType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    default: throw std::invalid_argument("tensor map: element type " + std::string(to_string(type)) + " unsupported");
  }
}

// The driver's encoder, reached through the runtime so that nothing links libcuda directly.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw std::runtime_error("tensor map: the driver has no cuTensorMapEncodeTiled (needs a CUDA 12+ driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A map of a rank-R tensor: dims[0] innermost (contiguous), row_strides[i] the byte stride of
// dims[i + 1]; box the elements one copy moves along each dim. The 128-byte swizzle needs the
// box's inner extent to be 128 bytes or less.
template <int R>
CUtensorMap make_tensor_map(const void* base, ElemType type, const std::array<std::uint64_t, R>& dims,
                            const std::array<std::uint64_t, R - 1>& row_strides, const std::array<std::uint32_t, R>& box,
                            CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  CUtensorMap map{};
  std::array<std::uint32_t, R> unit_steps{};
  unit_steps.fill(1);
  const CUresult r = tensor_map_encoder()(
      &map, tensor_map_type(type), R, const_cast<void*>(base), dims.data(), row_strides.data(), box.data(),
      unit_steps.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::string what = "tensor map: cuTensorMapEncodeTiled failed (error " + std::to_string(static_cast<int>(r)) +
                       ") for dims";
    for (auto d : dims) what += " " + std::to_string(d);
    what += ", box";
    for (auto b : box) what += " " + std::to_string(b);
    throw std::runtime_error(what + " (outer strides must be multiples of 16 bytes, the base 16-byte aligned)");
  }
  return map;
}

// The 2-D case of the GEMMs: a row-major [rows, cols] matrix with rows `ld` elements apart.
inline CUtensorMap make_matrix_map(const void* base, ElemType type, std::uint64_t rows, std::uint64_t cols,
                                   std::uint64_t ld, std::uint32_t box_rows, std::uint32_t box_cols,
                                   CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  return make_tensor_map<2>(base, type, {cols, rows}, {ld * elem_size(type)}, {box_cols, box_rows}, swizzle);
}

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// Loads the box at coordinates (c0 innermost, c1) into `dst`, completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                         int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                         int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// The same box delivered to the same shared-memory offset of every block in `cta_mask` of the
// cluster, each completing on its own barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                                   std::uint16_t cta_mask, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%4, %5}], [%2], %3;\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}

// Stores the box at `src` to coordinates (c0, c1); clipped at the tensor's edges.
__device__ __forceinline__ void tma_store(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(smem_u32(src)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until the committed stores have read their shared-memory source (it may be reused).
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// Waits until the committed stores have completed (their writes are visible in global memory).
__device__ __forceinline__ void tma_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// Shared memory written by ordinary stores, read next by the copy engine or the tensor cores.
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

}  // namespace kwb::hopper
