// The tensor-core building blocks of the attention_fwd flash kernels (sm_80+ instructions, run
// on sm_90): 16-byte cp.async with zero fill, ldmatrix (plain and transposed), the m16n8k16
// mma.sync for bf16 and fp16 with fp32 accumulate (mma_16816, from kernels/common/mma_gemm.cuh),
// packing two floats into one operand
// register, and the XOR swizzle of [rows][D] tiles in shared memory.
//
// Fragment layouts of mma.m16n8k16 (g = lane / 4, c = lane % 4), which the kernels rely on:
//   A (16 x 16, row):  a0 (g, 2c..2c+1)  a1 (g+8, 2c..)  a2 (g, 2c+8..)  a3 (g+8, 2c+8..)
//   B (16 x 8, col):   b0 (k 2c..2c+1, n g)  b1 (k 2c+8.., n g)
//   C (16 x 8):        c0 c1 (g, 2c..2c+1)   c2 c3 (g+8, 2c..2c+1)
// ldmatrix.x4 loads four 8 x 8 b16 matrices, lanes 8m..8m+7 giving the row addresses of matrix m;
// thread t receives row t / 4, elements 2 (t % 4), +1 of each (with .trans: column t / 4, rows
// 2 (t % 4), +1). So an A fragment is matrices (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15),
// (8-15, 8-15); a B fragment from a [n][k] tile (K rows) is plain ldmatrix of (n 0-7, k 0-7) and
// (n 0-7, k 8-15); from a [k][n] tile (V rows) it is ldmatrix.trans of (k 0-7, n 0-7), (k 8-15, n 0-7).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/mma_gemm.cuh"  // mma_16816

namespace kwb {
namespace flash {

// Offset in elements of (row, col) in a [rows][D] tile whose 16-byte chunks are XOR-swizzled by
// row % 8: the 8 rows an ldmatrix phase reads (same logical chunk) land in 8 different bank
// groups, and a row's 128 or 256 bytes stay contiguous for the cp.async writes. col % 8 == 0
// for every access that needs the swizzle (chunks); the low 3 bits pass through.
template <int D>
__device__ __forceinline__ int swizzle(int row, int col) {
  return row * D + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
}

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared; when !valid, 16 zero bytes (src-size 0: nothing is read).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// Two floats rounded to T, `lo` in the low half: one operand register (or one 4-byte store).
template <class T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  }
}

}  // namespace flash
}  // namespace kwb
