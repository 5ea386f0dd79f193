// Math labels: the default of each compute unit per dtype, a variant's declaration read per dtype,
// the registry's check of it, the "tf32 vs fp32" comparison, and the labels the real catalogue
// gives the variants whose arithmetic differs from their op's (library GEMMs in full fp32, CUDA-core
// kernels of tensor ops).
#include "harness/catalogue/math_label.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/catalogue/registry.hpp"

namespace kwb {
namespace {

Op tensor_op() {
  Op op;
  op.name = "test_gemm";
  op.dtypes = {DType::fp32, DType::fp16, DType::bf16};
  op.compute_unit = "tensor";
  op.default_shapes = {Shape{{{"m", 64}}}};
  return op;
}

Variant variant_with(std::string math) {
  Variant v;
  v.op = "test_gemm";
  v.name = "v";
  v.math = std::move(math);
  return v;
}

bool any_mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

TEST(MathLabel, DefaultFollowsTheComputeUnitAndTheCaseDtype) {
  EXPECT_EQ(default_math_label("fp32", DType::bf16), "fp32");
  EXPECT_EQ(default_math_label("fp32", DType::fp32), "fp32");
  EXPECT_EQ(default_math_label("tensor", DType::fp32), "tf32");
  EXPECT_EQ(default_math_label("tensor", DType::bf16), "bf16, fp32 acc");
  EXPECT_EQ(default_math_label("tensor", DType::fp16), "fp16, fp32 acc");
  EXPECT_EQ(default_math_label("tensor_bf16", DType::fp32), "bf16, fp32 acc");
  EXPECT_EQ(default_math_label("tensor_tf32", DType::bf16), "tf32");
  EXPECT_EQ(default_math_label("tensor_fp16", DType::bf16), "fp16, fp32 acc");
  // Every default is a label of the vocabulary.
  for (const char* unit : {"fp32", "tensor", "tensor_tf32", "tensor_bf16", "tensor_fp16"})
    for (DType d : kAllDTypes) EXPECT_TRUE(is_math_label(default_math_label(unit, d))) << unit;
}

TEST(MathLabel, OneLabelCoversEveryDtypeAndEntriesOnlyTheirOwn) {
  const Op op = tensor_op();
  EXPECT_EQ(math_label(op, variant_with(""), DType::fp32), "tf32");
  EXPECT_EQ(math_label(op, variant_with("fp32"), DType::bf16), "fp32");
  EXPECT_EQ(math_label(op, variant_with("fp32"), DType::fp32), "fp32");
  const Variant library = variant_with("fp32: fp32");
  EXPECT_EQ(math_label(op, library, DType::fp32), "fp32");
  EXPECT_EQ(math_label(op, library, DType::bf16), "bf16, fp32 acc");
  const Variant two = variant_with(" bf16 : fp32 ;fp16:  fp32");
  EXPECT_EQ(math_label(op, two, DType::bf16), "fp32");
  EXPECT_EQ(math_label(op, two, DType::fp16), "fp32");
  EXPECT_EQ(math_label(op, two, DType::fp32), "tf32");
}

TEST(MathLabel, ProblemsNameTheUnknownLabelTheForeignDtypeTheRepeatAndTheMalformedEntry) {
  Op op = tensor_op();
  op.dtypes = {DType::fp32, DType::bf16};
  EXPECT_TRUE(math_declaration_problems(op, variant_with("")).empty());
  EXPECT_TRUE(math_declaration_problems(op, variant_with("fp32: fp32; bf16: bf16, fp32 acc")).empty());
  EXPECT_TRUE(any_mentions(math_declaration_problems(op, variant_with("tf-32")), "\"tf-32\" is not a math label"));
  EXPECT_TRUE(any_mentions(math_declaration_problems(op, variant_with("fp32: bf16")), "\"bf16\" (for fp32)"));
  EXPECT_TRUE(any_mentions(math_declaration_problems(op, variant_with("fp16: fp32")), "has no dtype fp16"));
  EXPECT_TRUE(any_mentions(math_declaration_problems(op, variant_with("fp32: fp32; fp32: tf32")), "named twice"));
  EXPECT_TRUE(any_mentions(math_declaration_problems(op, variant_with("fp32: fp32; tf32")), "is not \"DTYPE: LABEL\""));
  EXPECT_TRUE(any_mentions(math_declaration_problems(op, variant_with("f64: fp32")), "\"f64\" is not a dtype"));
  // Each says where (the variant) and how to fix it (the labels it may use).
  const auto p = math_declaration_problems(op, variant_with("tf-32"));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("variant 'test_gemm:v'"), std::string::npos) << p[0];
  EXPECT_NE(p[0].find("\"bf16, fp32 acc\""), std::string::npos) << p[0];
}

TEST(MathLabel, RegistryReportsABadDeclarationAndAnUnsplitLibraryList) {
  Registry r;
  Op op = tensor_op();
  op.tensors = [](const Shape&, DType) { return std::vector<TensorSpec>{}; };
  op.work = [](const Shape&, DType) { return WorkModel{}; };
  op.oracle = [](const Shape&, const std::vector<HostTensor>&, std::vector<HostTensor>&) {};
  op.axes = {AxisSpec{.name = "m", .default_value = 64}};
  r.add(op);
  Variant v = variant_with("fp64");
  v.launch = [](const LaunchArgs&) {};
  v.uses = {"cuBLAS+cuDNN"};
  r.add(v);
  const auto problems = r.problems();
  EXPECT_TRUE(any_mentions(problems, "\"fp64\" is not a math label")) << problems.size();
  EXPECT_TRUE(any_mentions(problems, ".uses names \"cuBLAS+cuDNN\""));
}

TEST(MathLabel, ComparisonIsEmptyForLikeWithLikeOrAnUnknownSide) {
  EXPECT_EQ(math_comparison("tf32", "fp32"), "tf32 vs fp32");
  EXPECT_EQ(math_comparison("fp32", "bf16, fp32 acc"), "fp32 vs bf16, fp32 acc");
  EXPECT_EQ(math_comparison("tf32", "tf32"), "");
  EXPECT_EQ(math_comparison("", "fp32"), "");
  EXPECT_EQ(math_comparison("tf32", ""), "");
}

TEST(MathLabel, UsesTextJoinsLibraries) {
  EXPECT_EQ(uses_text({}), "");
  EXPECT_EQ(uses_text({"cuBLASLt"}), "cuBLASLt");
  EXPECT_EQ(uses_text({"cuBLAS", "cuDNN"}), "cuBLAS+cuDNN");
}

TEST(MathLabel, SummaryListsOnlyTheDtypesTheVariantRuns) {
  const Op op = tensor_op();
  EXPECT_EQ(math_summary(op, variant_with("fp32")), "fp32");
  EXPECT_EQ(math_summary(op, variant_with("fp32: fp32")), "fp32: fp32; fp16: fp16, fp32 acc; bf16: bf16, fp32 acc");
  Variant tf32_only = variant_with("");
  tf32_only.refuse = [](const Shape&, DType d) -> std::optional<std::string> {
    if (d != DType::fp32) return "fp32 only";
    return std::nullopt;
  };
  EXPECT_EQ(math_summary(op, tf32_only), "tf32");
}

// The catalogue's own declarations: what each variant's kernels and library plans really run
// (kernels/common/cublaslt_matmul.cuh: tf32 only when a plan asks for it).
TEST(MathLabel, RealCatalogueLabelsLibraryGemmsAndCudaCoreKernels) {
  const Registry& r = Registry::instance();
  auto label = [&](const char* op, const char* variant, DType d) {
    const Variant* v = r.find_variant(op, variant);
    const Op* o = r.find_op(op);
    EXPECT_TRUE(v && o) << op << ":" << variant;
    return v && o ? math_label(*o, *v, d) : std::string();
  };
  auto uses = [&](const char* op, const char* variant) {
    const Variant* v = r.find_variant(op, variant);
    return v ? uses_text(v->uses) : std::string("(missing)");
  };
  // Baselines as PyTorch runs them: fp32 GEMMs in full fp32 (allow_tf32 off), bf16 on the tensor cores.
  for (auto [op, variant] : {std::pair{"linear_bias_relu", "baseline_cublas_then_bias_relu"},
                             {"newton_schulz", "baseline_eager_cublaslt"},
                             {"swiglu_mlp_fwd", "baseline_eager_3_gemms"},
                             {"linear_cross_entropy", "baseline_eager_materialised_logits"}}) {
    EXPECT_EQ(label(op, variant, DType::fp32), "fp32") << op;
    EXPECT_EQ(label(op, variant, DType::bf16), "bf16, fp32 acc") << op;
    EXPECT_EQ(uses(op, variant), "cuBLASLt") << op;
  }
  // The fused ones that hand GEMMs to cuBLASLt say so, and run fp32 in tf32.
  for (auto [op, variant] : {std::pair{"newton_schulz", "fused_v1_cublaslt_epilogues_tf32"},
                             {"newton_schulz", "fused_v2_symmetric_halves_tf32"},
                             {"linear_cross_entropy", "fused_v1_token_chunks_4096_f32_logits_tf32"},
                             {"swiglu_mlp_fwd", "fused_v1_mma_gate_up_swiglu_tf32_cp_async"}}) {
    EXPECT_EQ(label(op, variant, DType::fp32), "tf32") << variant;
    EXPECT_EQ(uses(op, variant), "cuBLASLt") << variant;
  }
  EXPECT_EQ(uses("attention_fwd", "baseline_eager_cublaslt"), "cuBLASLt");
  EXPECT_EQ(uses("linear_bias_relu", "fused_v3_mma_sync_tf32_cp_async"), "");
  // CUDA-core kernels of tensor ops.
  EXPECT_EQ(label("linear_bias_relu", "fused_v1_naive_thread_per_output", DType::bf16), "fp32");
  EXPECT_EQ(label("linear_bias_relu", "fused_v2_smem_tiled", DType::fp32), "fp32");
  EXPECT_EQ(label("mhc_rmsnorm_project_fwd", "fused_v1_fma_warp_per_token", DType::bf16), "fp32");
  EXPECT_EQ(label("mhc_rmsnorm_project_fwd", "fused_v3_mma_bf16_cp_async_k64", DType::fp32), "fp32");
  EXPECT_EQ(label("mhc_rmsnorm_project_fwd", "fused_v3_mma_bf16_cp_async_k64", DType::bf16), "bf16, fp32 acc");
  EXPECT_EQ(label("mhc_rmsnorm_project_bwd_dx", "fused_v2_mma_bf16_tile16_split_k", DType::bf16), "bf16, fp32 acc");
  EXPECT_EQ(label("mhc_rmsnorm_project_bwd_dx", "fused_v2_mma_bf16_tile16_split_k", DType::fp32), "fp32");
  EXPECT_EQ(label("linear_bias_relu", "fused_v3_mma_sync_tf32_cp_async", DType::fp32), "tf32");
  EXPECT_EQ(label("rmsnorm_fwd", "baseline_eager_8_launches", DType::bf16), "fp32");
}

// A variant whose name says tf32 (the op's contract: "variants that run it so carry tf32 in
// their names") is labelled tf32 at fp32.
TEST(MathLabel, Tf32InTheNameMatchesTheLabel) {
  const Registry& r = Registry::instance();
  for (const Op& op : r.ops()) {
    if (std::find(op.dtypes.begin(), op.dtypes.end(), DType::fp32) == op.dtypes.end()) continue;
    for (const Variant* v : r.variants(op.name, false)) {
      const bool named = v->name.find("tf32") != std::string::npos;
      if (named) EXPECT_EQ(math_label(op, *v, DType::fp32), "tf32") << op.name << ":" << v->name;
    }
  }
}

}  // namespace
}  // namespace kwb
