// linear_bias_relu baseline_cublas_then_bias_relu: the GEMM by cuBLASLt, then the bias and ReLU
// by a separate elementwise kernel, as an unfused framework runs the layer:
//
//   y = torch.matmul(x, W.t())      # 1  cuBLASLt GEMM, output in the dtype (fp32 accumulate)
//   y = torch.relu_(y.add_(b))      # 2  one bias + ReLU pass over y, in place
//
// 2 launches. (Eager PyTorch's add_ and relu_ would be two more passes; the issue fixes the
// baseline as GEMM + one bias+ReLU kernel, what a pointwise-fusing compiler leaves.) fp32 runs
// the GEMM in full fp32 (allow_tf32 off, PyTorch's default); bf16/fp16 GEMMs write y in the
// dtype, so x W^T is rounded once before b is added and again after (the op's tolerance covers
// it). The plan is built in prepare().
//
// Napkin math (bf16, 8192^3): the GEMM ~1.4 ms at 790 TFLOP/s; the bias+ReLU pass reads and
// writes y (2 x 134 MB) in ~90 us at 3000 GB/s: ~6% over cuBLAS alone.
#include <cstdint>
#include <memory>

#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/common/fast_div.hpp"
#include "kernels/linear_bias_relu/bias_relu.cuh"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<bias_relu>, ...).
namespace step {
struct bias_relu;
struct bias_relu_i64;
}  // namespace step

namespace {

template <class T>
void launch_typed(const LaunchArgs& a) {
  const LinearArgs<T> l = linear_args<T>(a);
  a.state_as<LtMatmul>().run(l.w, l.x, l.y, a.workspace, a.stream);
  T* y = l.y;
  const T* b = l.b;
  const std::int64_t total = l.m * l.n, n = l.n;
  if (total < (std::int64_t{1} << 31)) {  // 32-bit index math, as PyTorch's offset calculator
    const FastDiv by_n(static_cast<unsigned>(n));
    eager_map<step::bias_relu>(total, a.stream, [=] __device__(std::int64_t i) {
      const int col = static_cast<int>(i) - by_n.div(static_cast<int>(i)) * static_cast<int>(n);
      y[i] = bias_relu(to_float(y[i]), b[col]);
    });
  } else {
    eager_map<step::bias_relu_i64>(total, a.stream, [=] __device__(std::int64_t i) { y[i] = bias_relu(to_float(y[i]), b[i % n]); });
  }
}

// Row-major y [m, n] = x [m, k] W^T is column-major y^T (n x m) = W (k x n stored, transposed)
// times x^T (k x m): m' = n, n' = m, trans_a (kernels/common/cublaslt_matmul.cuh).
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto [m, n, k] = LinearAxes::of(a.shape);
  LtMatmulSpec s;
  s.trans_a = true;
  s.m = n, s.n = m, s.k = k;
  s.lda = k, s.ldb = k, s.ldd = n;
  s.ab_type = s.cd_type = elem_type_of(a.dtype);
  s.tf32 = false;
  return std::make_shared<LtMatmul>(s);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_bias_relu",
    .name = "baseline_cublas_then_bias_relu",
    .role = Role::baseline,
    .description = "cuBLASLt GEMM (fp32: no tf32), then one bias + ReLU elementwise pass over y: 2 launches",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = [](const Shape&, DType) { return kLtWorkspaceBytes; },
    .uses = {"cuBLASLt"},
    .math = "fp32: fp32",
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
