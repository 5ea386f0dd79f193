// softmax_fwd's variants on the host: each refuses exactly the rows past its own limit, with a
// reason that names the variant covering them, and every swept shape has a fused variant.
#include <gtest/gtest.h>

#include "reference/softmax.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

const Variant& variant(const char* name) {
  const Variant* v = Registry::instance().find_variant("softmax_fwd", name);
  if (!v) throw std::runtime_error(std::string("no softmax_fwd variant ") + name);
  return *v;
}

std::optional<std::string> variant_refusal(const char* name, std::int64_t rows, std::int64_t cols, DType dtype) {
  const Variant& v = variant(name);
  return v.refuse ? v.refuse(Shape{{{"rows", rows}, {"cols", cols}}}, dtype) : std::nullopt;
}

TEST(SoftmaxVariants, BaselineIsNamedForItsSevenLaunches) {
  EXPECT_EQ(variant("baseline_eager_7_launches").role, Role::baseline);
  const Shape s{{{"rows", 3}, {"cols", 5}}};
  // xf, z, e, p in fp32 and the two per-row vectors.
  EXPECT_EQ(variant("baseline_eager_7_launches").workspace_bytes(s, DType::bf16), (4 * 15 + 2 * 3) * 4u);
}

TEST(SoftmaxVariants, RowInRegistersTakesRowsUpTo64KiBAndNamesTheOthersBeyond) {
  EXPECT_FALSE(variant_refusal("fused_v1_row_in_registers", 7, 32768, DType::bf16));
  EXPECT_FALSE(variant_refusal("fused_v1_row_in_registers", 7, 32768, DType::fp16));
  EXPECT_FALSE(variant_refusal("fused_v1_row_in_registers", 7, 16384, DType::fp32));
  EXPECT_FALSE(variant_refusal("fused_v1_row_in_registers", 7, 1, DType::bf16));
  const auto why = variant_refusal("fused_v1_row_in_registers", 7, 32769, DType::bf16);
  ASSERT_TRUE(why);
  EXPECT_TRUE(test::Mentions(*why, "fused_v3_cluster_split_row"));
  EXPECT_TRUE(test::Mentions(*why, "fused_v2_online_two_pass"));
  EXPECT_TRUE(variant_refusal("fused_v1_row_in_registers", 7, 16385, DType::fp32));
}

TEST(SoftmaxVariants, WarpPerRowTakesRowsUpTo4KiBAndNamesTheBlockVariantBeyond) {
  EXPECT_FALSE(variant_refusal("fused_v4_warp_per_row", 7, 2048, DType::bf16));
  EXPECT_FALSE(variant_refusal("fused_v4_warp_per_row", 7, 1024, DType::fp32));
  EXPECT_FALSE(variant_refusal("fused_v4_warp_per_row", 7, 1, DType::fp16));
  const auto why = variant_refusal("fused_v4_warp_per_row", 7, 2049, DType::bf16);
  ASSERT_TRUE(why);
  EXPECT_TRUE(test::Mentions(*why, "fused_v1_row_in_registers"));
  EXPECT_TRUE(variant_refusal("fused_v4_warp_per_row", 7, 1025, DType::fp32));
}

TEST(SoftmaxVariants, ClusterSplitTakesRowsUpTo512KiB) {
  EXPECT_FALSE(variant_refusal("fused_v3_cluster_split_row", 7, 262144, DType::bf16));
  EXPECT_FALSE(variant_refusal("fused_v3_cluster_split_row", 7, 131072, DType::fp32));
  EXPECT_FALSE(variant_refusal("fused_v3_cluster_split_row", 7, 33, DType::fp32));
  const auto why = variant_refusal("fused_v3_cluster_split_row", 7, 262145, DType::bf16);
  ASSERT_TRUE(why);
  EXPECT_TRUE(test::Mentions(*why, "fused_v2_online_two_pass"));
  EXPECT_TRUE(variant_refusal("fused_v3_cluster_split_row", 7, 131073, DType::fp32));
}

TEST(SoftmaxVariants, OnlineTwoPassTakesAnyRow) {
  for (std::int64_t cols : {1, 7, 4100, 262147, 1 << 24})
    for (DType d : {DType::fp32, DType::fp16, DType::bf16})
      EXPECT_FALSE(variant_refusal("fused_v2_online_two_pass", 3, cols, d)) << cols;
}

TEST(SoftmaxVariants, EverySweptShapeHasAFusedVariantInEveryDtype) {
  const Op& op = registered_op("softmax_fwd");
  std::vector<Shape> shapes = op.default_shapes;
  shapes.insert(shapes.end(), op.edge_shapes.begin(), op.edge_shapes.end());
  for (const Shape& s : shapes)
    for (DType d : op.dtypes) {
      int fused = 0;
      for (const Variant* v : Registry::instance().variants("softmax_fwd", false))
        if (v->role == Role::fused && !(v->refuse && v->refuse(s, d))) ++fused;
      EXPECT_GE(fused, 1) << s.to_compact() << " " << to_string(d);
    }
}

}  // namespace
}  // namespace kwb
