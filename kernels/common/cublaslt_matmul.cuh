// One cuBLASLt matmul planned once (handle, descriptors, epilogue, heuristic algorithm) and
// launched many times: what a baseline's or a vendor variant's GEMM needs, with the plan built in
// a variant's prepare() so that timing sees only cublasLtMatmul. Column-major, as cuBLAS sees
// memory:
//
//   D (m x n, ld ldd) = epilogue(alpha * op(A) (m x k) * op(B) (k x n) + beta * C (ld ldd) [+ bias])
//
// batched over `batch` matrices `stride_*` elements apart (0: one matrix shared by the batch).
// A row-major [rows, cols] tensor is a column-major cols x rows matrix with ld = cols, so a
// row-major Y = X @ W^T (X [M, K], W [N, K]) is the column-major Y^T = W X^T:
//   m = N, n = M, k = K, trans_a = true (W stored K x N col-major), trans_b = false, lda = ldb = K.
//
// Types: A and B share an element type; C and D share one (bf16, fp16 or fp32). Compute is fp32,
// with fp32 inputs in full fp32 unless `tf32` (PyTorch's default allow_tf32 = False is the
// baseline's; a tf32 variant says so in its name). The bias, when the epilogue adds one, is a
// vector of m elements in D's type (cuBLASLt's rule for bf16/fp16 outputs; fp32 for fp32).
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/catalogue/elem_type.hpp"

namespace kwb {

// Workspace handed to cuBLASLt (a Variant::workspace_bytes share): 32 MiB, its usual ask on Hopper.
inline constexpr std::size_t kLtWorkspaceBytes = std::size_t{32} << 20;

inline cudaDataType_t lt_data_type(ElemType type) {
  switch (type) {
    case ElemType::fp32: return CUDA_R_32F;
    case ElemType::fp16: return CUDA_R_16F;
    case ElemType::bf16: return CUDA_R_16BF;
    default: throw std::invalid_argument("cuBLASLt matmul: element type " + std::string(to_string(type)) +
                                         " is not a matmul operand (use fp32, fp16 or bf16)");
  }
}
inline cudaDataType_t lt_data_type(DType dtype) { return lt_data_type(elem_type_of(dtype)); }

struct LtMatmulSpec {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldd = 0;  // C uses D's layout
  ElemType ab_type = ElemType::fp32;       // A and B
  ElemType cd_type = ElemType::fp32;       // C and D (and the bias)
  bool tf32 = false;                       // fp32 A/B on the tensor cores in tf32
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // e.g. CUBLASLT_EPILOGUE_RELU_BIAS
  int batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_d = 0;  // elements between batch matrices
};

class LtMatmul {
 public:
  explicit LtMatmul(const LtMatmulSpec& s) : spec_(s) {
    check(cublasLtCreate(&handle_), "cublasLtCreate");
    const bool fp32_in = s.ab_type == ElemType::fp32;
    const cublasComputeType_t compute = fp32_in && s.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    check(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    set(CUBLASLT_MATMUL_DESC_TRANSA, ta);
    set(CUBLASLT_MATMUL_DESC_TRANSB, tb);
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, s.epilogue);
    if (has_bias()) set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, lt_data_type(s.cd_type));
    // Stored shapes: op(A) is m x k, so A is stored k x m when transposed.
    const cudaDataType_t ab = lt_data_type(s.ab_type), cd = lt_data_type(s.cd_type);
    check(cublasLtMatrixLayoutCreate(&a_, ab, s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.lda), "layout A");
    check(cublasLtMatrixLayoutCreate(&b_, ab, s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.ldb), "layout B");
    check(cublasLtMatrixLayoutCreate(&d_, cd, s.m, s.n, s.ldd), "layout D");
    if (s.batch > 1) {
      batched(a_, s.stride_a);
      batched(b_, s.stride_b);
      batched(d_, s.stride_d);
    }
    cublasLtMatmulPreference_t pref;
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    const std::size_t ws = kLtWorkspaceBytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, pref, 1, &heuristic_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (found < 1) {
      release();
      throw std::runtime_error("cuBLASLt found no algorithm for this matmul (" + std::to_string(s.m) + "x" +
                               std::to_string(s.n) + "x" + std::to_string(s.k) + ", " +
                               std::string(to_string(s.ab_type)) + " -> " + std::string(to_string(s.cd_type)) + ")");
    }
  }
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul() { release(); }

  // d = epilogue(alpha * op(a) op(b) + beta * c [+ bias]); `workspace` holds kLtWorkspaceBytes.
  // c may be d (in place) or null when beta is 0; bias is needed when the epilogue adds one.
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream, float alpha = 1,
           float beta = 0, const void* c = nullptr, const void* bias = nullptr) const {
    if (has_bias()) {
      if (!bias) throw std::invalid_argument("cuBLASLt matmul: this epilogue adds a bias; pass one");
      // The descriptor is the plan's own; setting the pointer is host-side and does not re-plan.
      set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    }
    check(cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, c ? c : d, d_, d, d_, &heuristic_.algo,
                         workspace, kLtWorkspaceBytes, stream),
          "cublasLtMatmul");
  }

  const LtMatmulSpec& spec() const { return spec_; }

 private:
  bool has_bias() const {
    return spec_.epilogue == CUBLASLT_EPILOGUE_BIAS || spec_.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
           spec_.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  template <class T>
  void set(cublasLtMatmulDescAttributes_t attribute, const T& value) const {
    check(cublasLtMatmulDescSetAttribute(desc_, attribute, &value, sizeof value), "cublasLtMatmulDescSetAttribute");
  }
  void batched(cublasLtMatrixLayout_t layout, std::int64_t stride) const {
    const std::int32_t count = spec_.batch;
    check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
          "layout batch count");
    check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
          "layout batch stride");
  }
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

  LtMatmulSpec spec_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

// The fp32 plan the mHC baselines use: full fp32, no epilogue.
inline LtMatmulSpec lt_f32_spec(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                                std::int64_t lda, std::int64_t ldb, std::int64_t ldd) {
  LtMatmulSpec s;
  s.trans_a = trans_a;
  s.trans_b = trans_b;
  s.m = m, s.n = n, s.k = k;
  s.lda = lda, s.ldb = ldb, s.ldd = ldd;
  return s;
}

}  // namespace kwb
