// The fp64 GEMM the matrix-bound oracles share: row-major, threaded over blocks of C's rows (the
// worker machine has many cores; a 4096^3 product takes seconds instead of minutes).
//
//   C (m x n, ld ldc) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C
//
// op(A) = A (m x k, ld lda) or, with trans_a, A^T of a stored k x m (ld lda); the same for B.
// Plain loops in an order the compiler vectorises (i, kk, j with B's row contiguous), cache-
// blocked over k and j; exactness is the point, speed only has to keep verification short.
//
// Each element is one fixed sequence of roundings: acc = 0, then acc += op(A)[i, kk] * op(B)[kk, j]
// for kk = 0 .. k-1 in order (a product, then a sum: never contracted into an FMA, the file is
// built with -ffp-contract=off), then alpha * acc + beta * C. A product large enough to matter
// (kGpuMinMultiplyAdds) runs the same sequence on the GPU when the calling thread named a device
// for the oracles (harness/catalogue/oracle_device.hpp: the worker's thread does) and it is
// usable (reference/matmul_fp64_gpu.hpp), bit for bit the same result; KWB_ORACLE_GPU=0 keeps
// every product on the CPU, which stays the ground truth.
#pragma once

#include <cstdint>
#include <optional>

#include "harness/catalogue/oracle_device.hpp"

namespace kwb::ref {

struct MatrixView {
  const double* data = nullptr;
  std::int64_t ld = 0;
  bool transposed = false;  // the stored matrix is the transpose of the operand
};

void matmul_fp64(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double alpha = 1.0, double beta = 0.0);

// The magnitudes of the terms a product adds (what an error-bound tolerance scales with,
// harness/catalogue/tolerance.hpp), in the layout of C (ld ldc), in the same pass as C:
//   abs_sum[i, j] = beta * abs_sum[i, j] + sum_k |A[i, k] B[k, j]|
//   sum_sq[i, j]  = beta * sum_sq[i, j]  + sum_k (A[i, k] B[k, j])^2   (a sum of squares: the caller
//                                                                      takes sqrt once it has every term)
// beta is 0 (a fresh product) or 1 (a product summed in blocks of k); alpha is 1.
struct TermMagnitudes {
  double* abs_sum = nullptr;
  double* sum_sq = nullptr;
};
void matmul_fp64(std::int64_t m, std::int64_t n, std::int64_t k, MatrixView a, MatrixView b, double* c,
                 std::int64_t ldc, double beta, TermMagnitudes magnitudes);

// The same product summed in blocks of `k_block` terms of k, each block one matmul_fp64 call
// (alpha 1, beta for the first block and 1 after it), as an oracle does to keep its streamed B
// block in a core's L2; the magnitudes (optional: both or none) follow the same beta. With k = 0,
// C (and the magnitudes) are scaled by beta. On the GPU the blocks run in one launch with the
// same roundings: the result is that of the calls, bit for bit.
void matmul_fp64_k_blocks(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t k_block, MatrixView a,
                          MatrixView b, double* c, std::int64_t ldc, double beta, TermMagnitudes magnitudes = {});

// The smallest product (m n k multiply-adds) sent to the GPU (harness/catalogue/oracle_device.hpp).
using kwb::kGpuMinMultiplyAdds;

// Whether KWB_ORACLE_GPU lets matmul_fp64 use the GPU, and the switch's reading of one value
// (harness/catalogue/oracle_device.hpp, where every oracle's GPU path reads it).
using kwb::oracle_gpu_allowed;
using kwb::read_oracle_gpu_switch;

// Threads matmul_fp64 uses (hardware_concurrency, at least 1); exposed for the tests.
int oracle_threads();

}  // namespace kwb::ref
