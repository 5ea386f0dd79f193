// The attention_varlen_fwd oracle on the host: each packed sequence equals attention_fwd's oracle
// on that sequence alone (causal, window, soft-cap, grouped heads), empty sequences included;
// equal lengths packed equal the dense op on the same tokens; the lengths' formula and offsets;
// the work model's real pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"
#include "reference/attention_varlen.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace attention_varlen_oracle_test {
namespace {

using varlen::VarlenAxes;

const Op& packed() { return registered_op(varlen::kOp); }
const Op& dense() { return registered_op("attention_fwd"); }

Shape varlen_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads, std::int64_t d,
                   const char* causal, const char* lengths, std::int64_t window = 0, const char* softcap = "0") {
  Shape s = attention_shape(batch, seq, heads, kv_heads, d, causal, window, softcap);
  s.axes.emplace_back("lengths", lengths);
  return s;
}

// Host inputs as a case draws them, cu_seqlens (derived on the device) from the formula.
std::vector<HostTensor> inputs(const Shape& s, std::uint64_t seed) {
  auto in = host_inputs(packed().tensors(s, DType::bf16), seed);
  const auto v = VarlenAxes::of(s);
  double at = 0;
  in[3].values[0] = 0;
  for (std::int64_t b = 0; b < v.attention.batch; ++b) in[3].values[static_cast<std::size_t>(b + 1)] = at += static_cast<double>(v.length(b));
  return in;
}

// attention_fwd's oracle on sequence b alone: o [1, L, h, d] and lse [1, h, L].
std::vector<HostTensor> one_sequence(const Shape& s, const std::vector<HostTensor>& in, std::int64_t b) {
  const auto v = VarlenAxes::of(s);
  const AttentionAxes& a = v.attention;
  const auto start = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b)]);
  const std::int64_t length = v.length(b);
  const Shape alone = attention_shape(1, length, a.heads, a.kv_heads, a.head_dim, a.causal ? "1" : "0", a.window,
                                      s.choice("softcap").c_str());
  std::vector<HostTensor> part = host_inputs(dense().tensors(alone, DType::bf16), 1);
  for (int t = 0; t < 3; ++t) {
    const std::int64_t heads = t == 0 ? a.heads : a.kv_heads;
    const auto first = in[static_cast<std::size_t>(t)].values.begin() + start * heads * a.head_dim;
    std::copy(first, first + length * heads * a.head_dim, part[static_cast<std::size_t>(t)].values.begin());
  }
  return run_oracle(dense(), alone, part);
}

TEST(AttentionVarlenOracle, EachSequenceIsAttentionFwdOnItsOwnTokens) {
  for (const Shape& s : {varlen_shape(4, 37, 4, 2, 64, "1", "ragged"),
                         varlen_shape(5, 29, 2, 1, 64, "1", "with_empty", 0, "30"),
                         varlen_shape(3, 41, 2, 2, 128, "0", "ragged", 7)}) {
    const auto in = inputs(s, 17);
    const auto out = run_oracle(packed(), s, in);
    const auto v = VarlenAxes::of(s);
    const std::int64_t h = v.attention.heads, d = v.attention.head_dim, total = v.total();
    for (std::int64_t b = 0; b < v.attention.batch; ++b) {
      const std::int64_t length = v.length(b);
      if (length == 0) continue;
      const auto start = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b)]);
      const auto ref = one_sequence(s, in, b);
      for (std::int64_t e = 0; e < length * h * d; ++e)
        ASSERT_NEAR(out[0].values[static_cast<std::size_t>(start * h * d + e)], ref[0].values[static_cast<std::size_t>(e)], 1e-12)
            << s.to_compact() << " sequence " << b << " element " << e;
      for (std::int64_t head = 0; head < h; ++head)
        for (std::int64_t i = 0; i < length; ++i)
          ASSERT_NEAR(out[1].values[static_cast<std::size_t>(head * total + start + i)],
                      ref[1].values[static_cast<std::size_t>(head * length + i)], 1e-12)
              << s.to_compact() << " sequence " << b << " head " << head << " row " << i;
    }
  }
}

TEST(AttentionVarlenOracle, EqualLengthsPackedEqualTheDenseOp) {
  // Packed [b * s, h, d] is bshd's memory: the same tokens, the same answer; lse moves from
  // [b, h, s] to [h, b * s].
  const Shape s = varlen_shape(3, 33, 4, 2, 64, "1", "equal");
  const auto in = inputs(s, 5);
  const auto out = run_oracle(packed(), s, in);
  const Shape d = attention_shape(3, 33, 4, 2, 64, "1");
  auto din = host_inputs(dense().tensors(d, DType::bf16), 1);
  for (int t = 0; t < 3; ++t) din[static_cast<std::size_t>(t)].values = in[static_cast<std::size_t>(t)].values;
  const auto ref = run_oracle(dense(), d, din);
  ASSERT_EQ(out[0].values.size(), ref[0].values.size());
  for (std::size_t e = 0; e < ref[0].values.size(); ++e) ASSERT_NEAR(out[0].values[e], ref[0].values[e], 1e-12) << e;
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t head = 0; head < 4; ++head)
      for (std::int64_t i = 0; i < 33; ++i)
        ASSERT_NEAR(out[1].values[static_cast<std::size_t>(head * 99 + b * 33 + i)],
                    ref[1].values[static_cast<std::size_t>((b * 4 + head) * 33 + i)], 1e-12);
}

TEST(AttentionVarlenOracle, TokensSeeOnlyTheirOwnSequence) {
  // Changing the last sequence's keys must leave every other sequence's output as it was, and
  // change its own.
  const Shape s = varlen_shape(3, 20, 2, 2, 64, "0", "ragged");
  auto in = inputs(s, 3);
  const auto before = run_oracle(packed(), s, in);
  const auto v = VarlenAxes::of(s);
  const auto last = static_cast<std::size_t>(in[3].values[2]) * 2 * 64;
  // (A shift shared by every key would cancel in the softmax: each key moves differently.)
  for (std::size_t e = last; e < in[1].values.size(); ++e) in[1].values[e] += 0.3 * static_cast<double>(e % 5);
  const auto after = run_oracle(packed(), s, in);
  for (std::size_t e = 0; e < last; ++e) ASSERT_EQ(before[0].values[e], after[0].values[e]) << e;
  double moved = 0;
  for (std::size_t e = last; e < before[0].values.size(); ++e) moved += std::fabs(before[0].values[e] - after[0].values[e]);
  EXPECT_GT(moved, 1e-3);
  EXPECT_EQ(v.total(), static_cast<std::int64_t>(in[3].values[3]));
}

TEST(AttentionVarlenLengths, EveryThirdSequenceIsEmptyAndTheOthersRagged) {
  const Shape s = varlen_shape(9, 100, 1, 1, 64, "1", "with_empty");
  const auto v = VarlenAxes::of(s);
  EXPECT_EQ(v.length(0), 100);
  for (std::int64_t b = 0; b < 9; ++b) {
    if (b % 3 == 2) EXPECT_EQ(v.length(b), 0) << b;
    else {
      EXPECT_GT(v.length(b), 25) << b;
      EXPECT_LE(v.length(b), 100) << b;
      EXPECT_EQ(v.length(b), ragged_length(b, 100));
    }
  }
  EXPECT_EQ(VarlenAxes::of(varlen_shape(4, 64, 1, 1, 64, "1", "equal")).total(), 256);
}

TEST(AttentionVarlenWork, CountsTheRealPairsOfEachSequence) {
  const Shape s = varlen_shape(3, 50, 4, 2, 64, "1", "with_empty");
  const auto v = VarlenAxes::of(s);
  double pairs = 0;
  for (std::int64_t b = 0; b < 3; ++b) pairs += static_cast<double>(v.length(b) * (v.length(b) + 1) / 2);
  const WorkModel w = packed().work(s, DType::bf16);
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 4 * 64 * pairs);
  const double t = static_cast<double>(v.total());
  EXPECT_DOUBLE_EQ(w.bytes, (t * 4 * 64 * 2) * 2 + (t * 2 * 64 * 2) * 2 + 4.0 * 4 * t + 4.0 * 4);
}

}  // namespace
}  // namespace attention_varlen_oracle_test
}  // namespace kwb
