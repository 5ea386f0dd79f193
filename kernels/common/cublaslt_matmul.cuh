// One fp32 cuBLASLt matmul planned once (handle, descriptors, heuristic algorithm) and launched
// many times: what a baseline's GEMM needs, with the plan built in a variant's prepare() so that
// timing sees only cublasLtMatmul. Column-major, as cuBLAS sees memory:
//
//   D (m x n, ld ldc) = op(A) (m x k) * op(B) (k x n),  all fp32, full-fp32 compute (no TF32,
//   as PyTorch's default torch.backends.cuda.matmul.allow_tf32 = False).
//
// A row-major [rows, cols] tensor is a column-major cols x rows matrix with ld = cols, so a
// row-major Y = X @ W is the column-major Y^T = W^T X^T (see the users' comments).
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace kwb {

// Workspace handed to cuBLASLt (a Variant::workspace_bytes share): 32 MiB, its usual ask on Hopper.
inline constexpr std::size_t kLtWorkspaceBytes = std::size_t{32} << 20;

class LtMatmulF32 {
 public:
  LtMatmulF32(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
              std::int64_t ldb, std::int64_t ldc) {
    check(cublasLtCreate(&handle_), "cublasLtCreate");
    check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    // Stored shapes: op(A) is m x k, so A is stored k x m when transposed.
    check(cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, trans_a ? k : m, trans_a ? m : k, lda), "layout A");
    check(cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, trans_b ? n : k, trans_b ? k : n, ldb), "layout B");
    check(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, m, n, ldc), "layout D");
    cublasLtMatmulPreference_t pref;
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    const std::size_t ws = kLtWorkspaceBytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, pref, 1, &heuristic_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (found < 1) {
      release();
      throw std::runtime_error("cuBLASLt found no fp32 algorithm for this matmul");
    }
  }
  LtMatmulF32(const LtMatmulF32&) = delete;
  LtMatmulF32& operator=(const LtMatmulF32&) = delete;
  ~LtMatmulF32() { release(); }

  // d = op(a) * op(b); `workspace` holds kLtWorkspaceBytes.
  void run(const float* a, const float* b, float* d, void* workspace, cudaStream_t stream) const {
    const float alpha = 1, beta = 0;
    check(cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &heuristic_.algo, workspace,
                         kLtWorkspaceBytes, stream),
          "cublasLtMatmul");
  }

 private:
  static void check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string(what) + " failed (cuBLAS status " + std::to_string(int(status)) + ")");
  }
  void release() {
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (handle_) cublasLtDestroy(handle_);
    d_ = b_ = a_ = nullptr;
    desc_ = nullptr;
    handle_ = nullptr;
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace kwb
