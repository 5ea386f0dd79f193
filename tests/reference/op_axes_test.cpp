// The axes structs that kernels read a case through (QkNormDims, rope::Axes, CrossEntropyAxes)
// read the shape's axes, and the tensor names rope's kernels use are the op's own.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/cross_entropy.hpp"
#include "reference/qk_norm.hpp"
#include "reference/rope.hpp"

namespace kwb {
namespace {

std::vector<std::string> tensor_names(const char* op, const Shape& shape) {
  const Op* o = Registry::instance().find_op(op);
  EXPECT_NE(o, nullptr) << op;
  std::vector<std::string> names;
  if (o)
    for (const TensorSpec& t : o->tensors(shape, DType::bf16)) names.push_back(t.name);
  return names;
}

bool has_tensor(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(OpAxes, QkNormDimsReadTheShape) {
  const Shape s{{{"tokens", 7}, {"heads", 8}, {"kv_heads", 2}, {"head_dim", 64}}};
  const QkNormDims d = QkNormDims::of(s);
  EXPECT_EQ(d.tokens, 7);
  EXPECT_EQ(d.heads, 8);
  EXPECT_EQ(d.kv_heads, 2);
  EXPECT_EQ(d.head_dim, 64);
  EXPECT_EQ(d.q_vectors(), 56);
  EXPECT_EQ(d.k_vectors(), 14);
  EXPECT_EQ(d.max_vectors(), 56) << "the larger of Q and K sizes the baselines' workspace";
}

TEST(OpAxes, RopeAxesReadTheShape) {
  const Shape index{{{"batch", 2}, {"seq", 5}, {"heads", 4}, {"kv_heads", 2}, {"head_dim", 6}, {"positions", "index"}}};
  const rope::Axes n = rope::Axes::of(index);
  EXPECT_EQ(n.batch, 2);
  EXPECT_EQ(n.seq, 5);
  EXPECT_EQ(n.heads, 4);
  EXPECT_EQ(n.kv_heads, 2);
  EXPECT_EQ(n.head_dim, 6);
  EXPECT_FALSE(n.ids);
  EXPECT_EQ(n.half(), 3);
  EXPECT_EQ(n.tokens(), 10);
  EXPECT_EQ(n.table_rows(), 5);
  const Shape ids{{{"batch", 2}, {"seq", 5}, {"heads", 4}, {"kv_heads", 2}, {"head_dim", 6}, {"positions", "ids"}}};
  EXPECT_TRUE(rope::Axes::of(ids).ids);
  EXPECT_EQ(rope::Axes::of(ids).table_rows(), rope::kIdsTableRowsPerSeq * 5);
}

// The kernels find their tensors by these names (LaunchArgs::tensor throws on any other).
TEST(OpAxes, RopeRotationsNameTheOpsTensors) {
  const Shape ids{{{"batch", 1}, {"seq", 3}, {"heads", 2}, {"kv_heads", 1}, {"head_dim", 4}, {"positions", "ids"}}};
  for (const auto& [op, r] : {std::pair{"rope_fwd", rope::kForwardRotation}, std::pair{"rope_bwd", rope::kBackwardRotation}}) {
    const std::vector<std::string> names = tensor_names(op, ids);
    for (const char* name : {r.q, r.k, r.q_out, r.k_out, "cos", "sin", "position_ids"})
      EXPECT_TRUE(has_tensor(names, name)) << op << " has no tensor " << name;
  }
  EXPECT_EQ(rope::kForwardRotation.sin_sign, 1.0f);
  EXPECT_EQ(rope::kBackwardRotation.sin_sign, -1.0f) << "the backward is the transposed rotation";
}

TEST(OpAxes, CrossEntropyAxesReadTheShape) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(Shape{{{"tokens", 9}, {"vocab", 50257}}});
  EXPECT_EQ(tokens, 9);
  EXPECT_EQ(vocab, 50257);
}

}  // namespace
}  // namespace kwb
