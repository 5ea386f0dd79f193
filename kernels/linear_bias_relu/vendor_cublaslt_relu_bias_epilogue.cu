// linear_bias_relu vendor_cublaslt_relu_bias_epilogue (bf16, fp16) and
// vendor_cublaslt_relu_bias_epilogue_tf32 (fp32): cuBLASLt doing the whole layer in one launch,
// the bias and ReLU applied to the fp32 accumulators in its epilogue (CUBLASLT_EPILOGUE_RELU_BIAS)
// before the single rounding to the dtype.
//
// Two names rather than one: the fp32 case runs on the tensor cores in tf32
// (CUBLAS_COMPUTE_32F_FAST_TF32), which changes the accuracy contract, so that variant says tf32
// in its name and the 16-bit one refuses fp32 (and vice versa), and a report row never hides
// which math ran. The plan (heuristic algorithm, descriptors) is built in prepare().
//
// Napkin math (8192^3): bf16 1.10 TFLOP at ~790 TFLOP/s: ~1.4 ms; tf32 at ~360 TFLOP/s: ~3.1 ms.
// y is written once; no second pass. This is the bar of the fused kernels (v4 must reach 90%).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/catalogue/registry.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "reference/linear_bias_relu.hpp"

namespace kwb {
namespace {

void launch(const LaunchArgs& a) {
  // y^T (n x m, column-major) = W (trans) x^T, bias over the n rows of y^T (the cols of y).
  // cuBLASLt takes untyped buffers: the plan knows the dtype.
  a.state_as<LtMatmul>().run(a.tensor<const void>("W"), a.tensor<const void>("x"), a.tensor<void>("y"), a.workspace,
                             a.stream, 1.0f, 0.0f, nullptr, a.tensor<const void>("b"));
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto [m, n, k] = LinearAxes::of(a.shape);
  LtMatmulSpec s;
  s.trans_a = true;
  s.m = n, s.n = m, s.k = k;
  s.lda = k, s.ldb = k, s.ldd = n;
  s.ab_type = s.cd_type = elem_type_of(a.dtype);
  s.tf32 = a.dtype == DType::fp32;
  s.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  return std::make_shared<LtMatmul>(s);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "vendor_cublaslt_relu_bias_epilogue",
    .role = Role::vendor,
    .description = "cuBLASLt GEMM with its RELU_BIAS epilogue: one launch (bf16, fp16)",
    .launch = launch,
    .refuse = [](const Shape&, DType dtype) -> std::optional<std::string> {
      if (dtype == DType::fp32) return "fp32 runs in tf32: see vendor_cublaslt_relu_bias_epilogue_tf32";
      return std::nullopt;
    },
    .workspace_bytes = [](const Shape&, DType) { return kLtWorkspaceBytes; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "vendor_cublaslt_relu_bias_epilogue_tf32",
    .role = Role::vendor,
    .description = "cuBLASLt GEMM with its RELU_BIAS epilogue, fp32 on the tensor cores in tf32: one launch",
    .launch = launch,
    .refuse = [](const Shape&, DType dtype) -> std::optional<std::string> {
      if (dtype != DType::fp32) return "the tf32 variant runs fp32 cases only: see vendor_cublaslt_relu_bias_epilogue";
      return std::nullopt;
    },
    .workspace_bytes = [](const Shape&, DType) { return kLtWorkspaceBytes; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
