// Work models count useful work: what no correct kernel can avoid. Ignored tokens (label -100)
// need neither their logits read (cross_entropy) nor their GEMM rows computed
// (linear_cross_entropy); a variant that computes a symmetric product once declares what it
// executes (newton_schulz fused_v2), and that count is exact per block. Every declared executed
// work is at most the useful work, at every default and edge shape its variant accepts.
#include <gtest/gtest.h>

#include <string>

#include "harness/catalogue/registry.hpp"
#include "kernels/newton_schulz/ns_plans.hpp"
#include "reference/newton_schulz.hpp"

namespace kwb {
namespace work_models_test {
namespace {

const Op& registered_op(const std::string& name) {
  const Op* op = Registry::instance().find_op(name);
  EXPECT_NE(op, nullptr) << name;
  return *op;
}

TEST(WorkModels, CrossEntropyCountsTheLogitsOfLabelledRowsOnly) {
  // 4096 x 32000 bf16: 5% of the rows are ignored as the labels are drawn, so 0.95 of the
  // logits are read; dlogits is written whole (zeros in ignored rows); labels and the loss once.
  const Shape s{{{"tokens", 4096}, {"vocab", 32000}}};
  const WorkModel w = registered_op("cross_entropy").work(s, DType::bf16);
  const double logits = 4096.0 * 32000;
  EXPECT_DOUBLE_EQ(w.bytes, 0.95 * logits * 2 + logits * 2 + 4096 * 4 + 4);
  EXPECT_DOUBLE_EQ(w.flops, 8 * 0.95 * logits);
  // ~2.5% under the tensors' bytes (the half that is the logits, 5% of it).
  const double tensors = tensor_bytes(registered_op("cross_entropy").tensors(s, DType::bf16), DType::bf16);
  EXPECT_NEAR(1 - w.bytes / tensors, 0.025, 0.0001);
  // fp32: the same at 4 bytes.
  EXPECT_DOUBLE_EQ(registered_op("cross_entropy").work(s, DType::fp32).bytes, 1.95 * logits * 4 + 4096 * 4 + 4);
}

TEST(WorkModels, LinearCrossEntropyCountsTheGemmsOfLabelledTokensOnly) {
  // N 1024, D 4096, V 32000 bf16: 6 N V D over the labelled 95% of tokens; h's labelled rows.
  const Shape s{{{"tokens", 1024}, {"hidden", 4096}, {"vocab", 32000}}};
  const WorkModel w = registered_op("linear_cross_entropy").work(s, DType::bf16);
  const double n = 1024, d = 4096, v = 32000;
  EXPECT_DOUBLE_EQ(w.flops, 6 * 0.95 * n * v * d);
  // h (labelled rows), W, labels (int32), loss (fp32), dh, dW.
  EXPECT_DOUBLE_EQ(w.bytes, 0.95 * n * d * 2 + v * d * 2 + n * 4 + n * 4 + n * d * 2 + v * d * 2);
}

TEST(WorkModels, NewtonSchulzSymmetricCountIsTheFullOneAtNoSplit) {
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {1024, 4096}, {4096, 1024}, {300, 700}})
    EXPECT_DOUBLE_EQ(newton_schulz_symmetric_halves_flops(m, n, 0), newton_schulz_flops(m, n)) << m << "x" << n;
  // The op's model: 5 steps of 4 r^2 c + 2 r^3 + 3 r^2 + 2 r c, plus 3 m n.
  const double r = 4096;
  EXPECT_DOUBLE_EQ(newton_schulz_flops(4096, 4096), 5 * (6 * r * r * r + 3 * r * r + 2 * r * r) + 3 * r * r);
}

// Worked out by hand at 4096^2 (split 2048 + 2048): per step the Gram blocks 2 r1 r c + 2 r2^2 c
// = 1.5 r^3, the polynomial blocks 1.5 r^3 + 3 (r1 r + r2^2) = 1.5 r^3 + 2.25 r^2, the update
// 2 r^3 + 2 r^2: 5 r^3 + 4.25 r^2 against the full 6 r^3 + 5 r^2.
TEST(WorkModels, NewtonSchulzFusedV2DeclaresTheBlocksItComputes) {
  const double r = 4096;
  EXPECT_EQ(ns::symmetric_split(4096), 2048);
  EXPECT_DOUBLE_EQ(newton_schulz_symmetric_halves_flops(4096, 4096, 2048),
                   5 * (5 * r * r * r + 4.25 * r * r) + 3 * r * r);
  const Variant* v2 = Registry::instance().find_variant("newton_schulz", "fused_v2_symmetric_halves_tf32");
  ASSERT_NE(v2, nullptr);
  ASSERT_TRUE(v2->executed_work) << "fused_v2 computes 3 of the 4 blocks of A and B: it must declare that";
  const Shape square{{{"rows", 4096}, {"cols", 4096}}};
  const WorkModel executed = v2->executed_work(square, DType::bf16);
  const WorkModel model = registered_op("newton_schulz").work(square, DType::bf16);
  EXPECT_DOUBLE_EQ(executed.flops, newton_schulz_symmetric_halves_flops(4096, 4096, 2048));
  EXPECT_DOUBLE_EQ(executed.bytes, model.bytes);
  EXPECT_NEAR(executed.flops / model.flops, 5.0 / 6, 0.001);
  // A wide 2048 x 8192 (r 2048, split 1024): the update is half the work, so the saving is less.
  const Shape wide{{{"rows", 2048}, {"cols", 8192}}};
  const double share = v2->executed_work(wide, DType::bf16).flops / registered_op("newton_schulz").work(wide, DType::bf16).flops;
  EXPECT_GT(share, 5.0 / 6);
  EXPECT_LT(share, 1.0);
  // The variants that compute the full products declare nothing.
  EXPECT_FALSE(Registry::instance().find_variant("newton_schulz", "fused_v1_cublaslt_epilogues_tf32")->executed_work);
  EXPECT_FALSE(Registry::instance().find_variant("newton_schulz", "baseline_eager_cublaslt")->executed_work);
}

TEST(WorkModels, EveryDeclaredExecutedWorkIsPositiveAndAtMostTheUsefulWork) {
  int checked = 0;
  for (const Op& op : Registry::instance().ops())
    for (const Variant* v : Registry::instance().variants(op.name, true)) {
      if (!v->executed_work) continue;
      std::vector<Shape> shapes = op.default_shapes;
      shapes.insert(shapes.end(), op.edge_shapes.begin(), op.edge_shapes.end());
      for (const Shape& s : shapes)
        for (DType t : op.dtypes) {
          if (v->refuse && v->refuse(s, t)) continue;
          const WorkModel model = op.work(s, t), executed = v->executed_work(s, t);
          EXPECT_GT(executed.flops + executed.bytes, 0) << op.name << ":" << v->name << " at " << s.to_compact();
          EXPECT_LE(executed.flops, model.flops) << op.name << ":" << v->name << " at " << s.to_compact();
          EXPECT_LE(executed.bytes, model.bytes) << op.name << ":" << v->name << " at " << s.to_compact();
          ++checked;
        }
    }
  EXPECT_GT(checked, 0) << "newton_schulz fused_v2 declares executed work";
}

}  // namespace
}  // namespace work_models_test
}  // namespace kwb
