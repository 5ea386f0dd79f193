// The readable shape form: labels, left-out defaults, flags, the joined label, and the fall-backs.
#include "harness/catalogue/shape_label.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

std::vector<AxisSpec> attention_like() {
  return {{"batch", 4, {}, "", {}, "b"},     {"seq", 4096, {}, "", {}, "s"},
          {"heads", 32, {}, "", {}, "h"},    {"kv_heads", 32, {}, "", {}, "/"},
          {"head_dim", 128, {}, "", {}, "d"}, {"causal", 0, {}, "", {"0", "1"}, "causal"},
          {"window", 0, {}, "", {}, "w"},    {"softcap", 0, {}, "", {"0", "30", "50"}, "cap"}};
}

Shape attention_shape(std::int64_t kv_heads, const char* causal, std::int64_t window, const char* cap) {
  return Shape{{{"batch", 4}, {"seq", 4096}, {"heads", 32}, {"kv_heads", kv_heads}, {"head_dim", 128},
                {"causal", causal}, {"window", window}, {"softcap", cap}}};
}

TEST(ShapeLabel, LabelledAxesReadAsLabelAndValueWithSwitchesThatAreOffLeftOut) {
  EXPECT_EQ(shape_label(attention_shape(32, "1", 0, "0"), attention_like()), "b4 s4096 h32/32 d128 causal");
  EXPECT_EQ(shape_label(attention_shape(8, "0", 0, "0"), attention_like()), "b4 s4096 h32/8 d128");
  EXPECT_EQ(shape_label(attention_shape(8, "0", 256, "30"), attention_like()), "b4 s4096 h32/8 d128 w256 cap30");
}

TEST(ShapeLabel, AChoiceAtItsDefaultIsLeftOutAndAnotherReadsAsLabelAndChoice) {
  const std::vector<AxisSpec> axes{{"seq", 8, {}, "", {}, "s"}, {"positions", 0, {}, "", {"index", "ids"}, "pos="}};
  EXPECT_EQ(shape_label(Shape{{{"seq", 8192}, {"positions", "index"}}}, axes), "s8192");
  EXPECT_EQ(shape_label(Shape{{{"seq", 8192}, {"positions", "ids"}}}, axes), "s8192 pos=ids");
}

TEST(ShapeLabel, AZeroIsShownWhereZeroIsNotTheAxisDefault) {
  const std::vector<AxisSpec> axes{{"tokens", 8, {}, "", {}, "t"}, {"vocab", 8, {}, "", {}, "v"}};
  EXPECT_EQ(shape_label(Shape{{{"tokens", 0}, {"vocab", 32000}}}, axes), "t0 v32000");
}

TEST(ShapeLabel, AnOpThatLabelsNoAxisKeepsTheCompactForm) {
  const std::vector<AxisSpec> axes{{"rows", 16384, {}, ""}, {"cols", 4096, {}, ""}};
  EXPECT_EQ(shape_label(Shape{{{"rows", 16384}, {"cols", 4100}}}, axes), "16384x4100");
}

TEST(ShapeLabel, AShapeThatDoesNotMatchTheAxesFallsBackToTheCompactForm) {
  const Shape other{{{"rows", 2}, {"cols", 3}}};
  EXPECT_EQ(shape_label(other, attention_like()), "2x3");
  EXPECT_EQ(shape_label("no_such_op", other), "2x3");
}

TEST(ShapeLabel, ARecordKeepsALabelOnlyWhereItsOpLabelsItsAxes) {
  const Shape rows{{{"rows", 16384}, {"cols", 4096}}};
  EXPECT_EQ(recorded_shape_label("rmsnorm_fwd", rows), "") << "no labels: nothing frozen into the report";
  EXPECT_EQ(recorded_shape_label("no_such_op", rows), "");
  const Shape qk{{{"tokens", 16384}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}}};
  EXPECT_EQ(recorded_shape_label("qk_norm_fwd", qk), "t16384 h32/8 d128");
}

TEST(ShapeLabel, TheBuiltCatalogueLabelsAttentionAsAReaderExpects) {
  const Shape s{{{"batch", 1}, {"seq", 16384}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 64},
                 {"causal", "1"}, {"window", 0}, {"softcap", "50"}}};
  EXPECT_EQ(shape_label("attention_fwd", s), "b1 s16384 h32/8 d64 causal cap50");
}

}  // namespace
}  // namespace kwb
