// What the swiglu_mlp_fwd kernels share: the case's tensors, the down projection's cuBLASLt
// plan, and the 256-byte-aligned carving of a workspace into buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/catalogue/registry.hpp"
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "reference/swiglu_mlp.hpp"

namespace kwb {

// x [m, d], Wg [f, d], Wu [f, d], Wd [d, f], y [m, d].
template <class T>
struct SwigluMlpArgs {
  const T* x;
  const T* wg;
  const T* wu;
  const T* wd;
  T* y;
  std::int64_t m, d, f;
};

template <class T>
SwigluMlpArgs<T> swiglu_mlp_args(const LaunchArgs& a) {
  const auto [m, d, f] = SwigluMlpAxes::of(a.shape);
  return {a.tensor<const T>("x"), a.tensor<const T>("Wg"), a.tensor<const T>("Wu"), a.tensor<const T>("Wd"),
          a.tensor<T>("y"),       m,                       d,                       f};
}


// Row-major out [rows, n_out] = in [rows, k_in] @ W^T, W [n_out, k_in] (nn.Linear): column-major
// out^T = W (transposed) in^T (kernels/common/cublaslt_matmul.cuh). Output in the dtype, fp32
// accumulate; fp32 inputs in tf32 only when asked.
inline LtMatmulSpec linear_spec(std::int64_t rows, std::int64_t n_out, std::int64_t k_in, DType dtype, bool tf32) {
  LtMatmulSpec s;
  s.trans_a = true;
  s.m = n_out, s.n = rows, s.k = k_in;
  s.lda = k_in, s.ldb = k_in, s.ldd = n_out;
  s.ab_type = s.cd_type = elem_type_of(dtype);
  s.tf32 = tf32 && dtype == DType::fp32;
  return s;
}

}  // namespace kwb
