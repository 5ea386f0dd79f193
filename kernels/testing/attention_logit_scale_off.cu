// A test-only attention_fwd variant with a planted numerical defect: fused_v1's FlashAttention-2
// kernel (kernels/attention_fwd/flash_fwd_v1.cuh, q_tile 128, k_tile 64, 2 stages: its default
// configuration) launched with the logit scale 1% too large, 1.01 / sqrt(d). Everything else is
// the real kernel, so the only error is the one a wrong scale constant would make.
//
// It must fail verification at attention_fwd's default shapes in bf16 and fp16, causal or not:
// the scale moves each logit by 0.01 g_j (reference/attention.hpp), which shifts lse coherently by
// 0.01 sum_j p_j g_j (~0.05 at seq 4096), far outside lse's error bound, and O by a random-sign
// 0.01 sum_j p_j (g_j - mean g) (v_j - o), outside O's bound in fp16 for most elements and in bf16
// for its tail (reference/attention.cpp works the numbers; tests/reference/
// attention_error_bound_test.cpp simulates it on the CPU). Hidden unless --include-test-variants.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/catalogue/cuda_check.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v1.cuh"

namespace kwb {
namespace {

constexpr float kScaleError = 1.01f;
constexpr int kQueryTile = 128, kKeyTile = 64, kStages = 2;

template <class T, int D>
void launch_scaled(const LaunchArgs& a, AttentionParams p) {
  auto* kernel = &flash::flash_fwd_v1<T, D, kQueryTile, kKeyTile>;
  static const cudaError_t attribute = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, flash::smem_bytes<D, kQueryTile, kKeyTile>(kStages));
  cuda_check(attribute, "cudaFuncSetAttribute (test_attention_logit_scale_1pct_off shared memory)");
  const dim3 grid(static_cast<unsigned>((p.seq + kQueryTile - 1) / kQueryTile), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, kQueryTile / 16 * 32, flash::smem_bytes<D, kQueryTile, kKeyTile>(kStages), a.stream>>>(
      a.tensor<const T>("q"), a.tensor<const T>("k"), a.tensor<const T>("v"), a.tensor<T>("o"),
      a.tensor<float>("lse"), p, kStages);
}

template <class T>
void launch(const LaunchArgs& a) {
  AttentionParams p = AttentionParams::of(AttentionAxes::of(a.shape));
  p.scale *= kScaleError;  // the defect
  if (p.head_dim == 64) launch_scaled<T, 64>(a, p);
  else launch_scaled<T, 128>(a, p);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_fwd",
    .name = "test_attention_logit_scale_1pct_off",
    .role = Role::fused,
    .description = "TEST ONLY: fused_v1's FlashAttention-2 kernel with the logit scale 1% too large "
                   "(1.01 / sqrt(d)); must fail verification",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape& s, DType) -> std::optional<std::string> {
      const auto axes = AttentionAxes::of(s);
      if (axes.batch > 65535 || axes.heads > 65535) return "batch and heads must be at most 65535 (grid y and z)";
      return std::nullopt;
    },
    .test_only = true,
});

}  // namespace
}  // namespace kwb
