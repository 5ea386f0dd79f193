// The GEMM ops' error bounds on the device: a linear_cross_entropy backward without the softmax
// term (test-only variant) fails dh and dW, naming them, while the real fused variant passes the
// same case well inside its bounds; linear_bias_relu's tf32 v3 passes k = 1 over a million
// outputs (it failed the old flat tolerance there).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "harness/catalogue/registry.hpp"
#include "harness/worker/case_runner.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"

namespace kwb {
namespace {

CaseRecord run_case(const std::string& op, const std::string& variant, DType dtype, const Shape& shape) {
  return test::run_in_process(op, variant, dtype, shape, "quick", 7);
}

const OutputCheck& output(const CaseRecord& rec, const std::string& name) { return test::output_named(rec, name); }

Shape lce(std::int64_t n, std::int64_t d, std::int64_t v) {
  return Shape{{{"tokens", n}, {"hidden", d}, {"vocab", v}}};
}

// bf16 at a default shape (Llama 2 7B's head, 1024 tokens), the other dtypes at a smaller head.
TEST(GemmBounds, LceBackwardWithoutTheSoftmaxTermFailsDhAndDwInEveryDtype) {
  KWB_REQUIRE_GPU();
  for (const auto& [dtype, shape] : {std::pair{DType::bf16, lce(1024, 4096, 32000)},
                                     std::pair{DType::fp16, lce(256, 1024, 8000)},
                                     std::pair{DType::fp32, lce(256, 1024, 8000)}}) {
    const CaseRecord bad = run_case("linear_cross_entropy", "test_lce_backward_without_softmax", dtype, shape);
    ASSERT_TRUE(bad.verify.has_value()) << bad.reason;
    EXPECT_EQ(bad.disposition, Disposition::failed) << to_string(dtype);
    EXPECT_TRUE(output(bad, "loss").passed) << "the forward is right: " << bad.reason;
    for (const char* name : {"dh", "dW"}) {
      EXPECT_FALSE(output(bad, name).passed) << to_string(dtype) << " " << name;
      EXPECT_GT(output(bad, name).worst_bound_fraction, 10.0) << to_string(dtype) << " " << name;
      EXPECT_NE(bad.reason.find(std::string(name) + ":"), std::string::npos) << bad.reason;
    }
    // The real chunked variant, same case: passes, well inside every bound.
    const CaseRecord good =
        run_case("linear_cross_entropy", "fused_v1_token_chunks_1024_f32_logits_tf32", dtype, shape);
    ASSERT_TRUE(good.verify.has_value()) << good.reason;
    EXPECT_EQ(good.disposition, Disposition::passed) << good.reason;
    for (const auto& o : good.verify->outputs)
      EXPECT_LT(o.worst_bound_fraction, 0.65) << to_string(dtype) << " " << o.name;
  }
}

TEST(GemmBounds, LinearBiasReluTf32PassesKOne) {
  KWB_REQUIRE_GPU();
  const Shape k1{{{"m", 1024}, {"n", 1024}, {"k", 1}}};
  for (const char* variant : {"fused_v3_mma_sync_tf32_cp_async", "vendor_cublaslt_relu_bias_epilogue_tf32",
                              "baseline_cublas_then_bias_relu", "fused_v2_smem_tiled"}) {
    const CaseRecord rec = run_case("linear_bias_relu", variant, DType::fp32, k1);
    ASSERT_TRUE(rec.verify.has_value()) << variant << ": " << rec.reason;
    EXPECT_EQ(rec.disposition, Disposition::passed) << variant << ": " << rec.reason;
    EXPECT_LT(output(rec, "y").worst_bound_fraction, 0.65) << variant;
  }
}

}  // namespace
}  // namespace kwb
