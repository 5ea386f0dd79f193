// The fp64 GEMM the matrix-bound oracles share: row-major, threaded over blocks of C's rows (the
// worker machine has many cores; a 4096^3 product takes seconds instead of minutes).
//
//   C (m x n, ld ldc) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C
//
// op(A) = A (m x k, ld lda) or, with trans_a, A^T of a stored k x m (ld lda); the same for B.
// Plain loops in an order the compiler vectorises (i, kk, j with B's row contiguous), cache-
// blocked over k and j; exactness is the point, speed only has to keep verification short.
#pragma once

#include <cstdint>

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

// Threads matmul_fp64 uses (hardware_concurrency, at least 1); exposed for the tests.
int oracle_threads();

}  // namespace kwb::ref
