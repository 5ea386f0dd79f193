// The cuBLASLt plans of the newton_schulz variants' GEMMs, host-only (tests/kernels/
// newton_schulz_plans_test.cpp replays them on the host against the oracle).
//
// Layouts. X is row-major [m, n]; a row-major C = P Q is the column-major C^T = Q^T P^T, so each
// GEMM below names cuBLASLt's operand A after Q and B after P (kernels/common/cublaslt_matmul.cuh).
// With r = min(m, n), c = max(m, n) and Y = X (m <= n, "wide") or Y = X^T (m > n, "tall"), Muon's
// step is A = Y Y^T, B = b A + c A A, Y = a Y + B Y, all r x r or r x c. Y is stored either
// contiguous r x c ("contig") or as the [c, r] storage of X ("view", the tall case read in place).
#pragma once

#include <algorithm>
#include <cstdint>

#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/types.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb::ns {

// A case's axes, read once: G and X are [m, n] = [rows, cols].
struct Dims {
  std::int64_t m, n, r, c;
  bool tall;
};
inline Dims dims_of(const Shape& s) {
  const auto [m, n] = RowsCols::of(s);
  return {m, n, std::min(m, n), std::max(m, n), m > n};
}

inline LtMatmulSpec spec(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                         std::int64_t ldb, std::int64_t ldd, DType dtype, bool tf32) {
  LtMatmulSpec s = lt_f32_spec(ta, tb, m, n, k, lda, ldb, ldd);
  s.ab_type = s.cd_type = elem_type_of(dtype);
  s.tf32 = tf32;
  return s;
}

// A (r x r) = Y Y^T with Y contiguous r x c: operand A = Y (the column-major view of Y is Y^T,
// transposed back), operand B = Y^T (Y's view as is).
inline LtMatmulSpec gram_contig(const Dims& d, DType t, bool tf32) {
  return spec(true, false, d.r, d.r, d.c, d.c, d.c, d.r, t, tf32);
}
// A = Y Y^T with Y = X^T read in X's [c, r] storage (column-major view: Y itself, ld r).
inline LtMatmulSpec gram_view(const Dims& d, DType t, bool tf32) {
  return spec(false, true, d.r, d.r, d.c, d.r, d.r, d.r, t, tf32);
}
// A A (r x r), or with alpha = c, beta = b and C = A: B = c A A + b A.
inline LtMatmulSpec square(const Dims& d, DType t, bool tf32) {
  return spec(false, false, d.r, d.r, d.r, d.r, d.r, d.r, t, tf32);
}
// B Y (r x c, contiguous) with Y contiguous: operand A = Y^T (Y's view), operand B = B^T (B's view).
inline LtMatmulSpec update_contig(const Dims& d, DType t, bool tf32) {
  return spec(false, false, d.c, d.r, d.r, d.c, d.r, d.c, t, tf32);
}
// B Y (r x c, contiguous) with Y read in X's [c, r] storage: operand A = Y^T = X, the view
// (Y, ld r) transposed.
inline LtMatmulSpec update_view(const Dims& d, DType t, bool tf32) {
  return spec(true, false, d.c, d.r, d.r, d.r, d.r, d.c, t, tf32);
}
// The tall case kept in X's layout [c, r]: X' = X B^T (+ a X), = (B Y)^T, written as X:
// column-major D (r x c, ld r) = B (operand A: B's view B^T, transposed) X^T (operand B: X's view).
inline LtMatmulSpec update_tall_in_place_layout(const Dims& d, DType t, bool tf32) {
  return spec(true, false, d.r, d.c, d.r, d.r, d.r, d.r, t, tf32);
}

// The general form, for submatrices: row-major C (p x q, ld ldc) = P (p x k) Q (k x q), where P
// is stored row-major with ld ldp, or stored as P^T (k x p) when p_transposed; the same for Q.
// As above, cuBLASLt computes C^T = Q^T P^T: operand A is Q's storage (transposed back when Q
// is stored transposed), operand B is P's. Launch with run(Q pointer, P pointer, C pointer).
inline LtMatmulSpec row_major(std::int64_t p, std::int64_t q, std::int64_t k, bool p_transposed, std::int64_t ldp,
                              bool q_transposed, std::int64_t ldq, std::int64_t ldc, DType t, bool tf32) {
  return spec(q_transposed, p_transposed, q, p, k, ldq, ldp, ldc, t, tf32);
}

// fused_v2's split of the r x r Gram matrix into halves r1 + r2: r1 ~ r / 2 rounded up to 128
// elements, so that every block pointer stays 256-byte aligned (cuBLASLt's default minimum
// alignment, which its plans assume). Needs r >= 256 for r2 >= 1.
inline constexpr std::int64_t kSplitAlign = 128;
inline std::int64_t symmetric_split(std::int64_t r) { return ((r + 1) / 2 + kSplitAlign - 1) / kSplitAlign * kSplitAlign; }

}  // namespace kwb::ns
