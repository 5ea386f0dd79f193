// The cross_entropy oracle on the host: hand-computed values, the gradient against finite
// differences of the loss, ignored tokens (no gradient, not in the mean, all of them ignored),
// no overflow at huge logits, the parallel row chunks, the work model and each variant's
// workspace (the device memory beyond inputs and outputs that chunking is about).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace cross_entropy_oracle_test {
namespace {

const Op& xent() { return registered_op("cross_entropy"); }

Shape shape(std::int64_t tokens, std::int64_t vocab) { return Shape{{{"tokens", tokens}, {"vocab", vocab}}}; }

// Seeded random inputs with the given labels (row count = labels.size()).
std::vector<HostTensor> inputs_with_labels(std::int64_t vocab, const std::vector<double>& labels, std::uint64_t seed) {
  const Shape s = shape(static_cast<std::int64_t>(labels.size()), vocab);
  auto in = host_inputs(xent().tensors(s, DType::fp32), seed);
  in[1].values = labels;
  return in;
}

// Cotangents that pick the loss alone: d(loss)/d(input), the gradient the op's dlogits holds.
std::vector<HostTensor> loss_only(const Shape& s) {
  auto cot = empty_outputs(xent().tensors(s, DType::fp32));
  cot[0].values = {1.0};
  std::fill(cot[1].values.begin(), cot[1].values.end(), 0.0);
  return cot;
}

// A sampled case hands the oracle some rows of logits and every label: each given row's gradient
// is that row of the whole case's (scaled by every labelled token, not the sampled ones).
TEST(CrossEntropyOracle, SampledRowsGetTheWholeCasesGradientRows) {
  const std::int64_t tokens = 64, vocab = 50;
  std::vector<double> labels;
  for (std::int64_t t = 0; t < tokens; ++t) labels.push_back(t % 3 == 0 ? -100 : static_cast<double>(t % vocab));
  const auto in = inputs_with_labels(vocab, labels, 9);
  const auto whole = run_oracle(xent(), shape(tokens, vocab), in);
  const std::vector<std::int64_t> rows{0, 3, 4, 5, 40, 63};
  HostTensor sub_logits{"logits", {static_cast<std::int64_t>(rows.size()), vocab}, {}};
  for (std::int64_t r : rows)
    sub_logits.values.insert(sub_logits.values.end(), in[0].values.begin() + r * vocab,
                             in[0].values.begin() + (r + 1) * vocab);
  const Shape sub = shape(static_cast<std::int64_t>(rows.size()), vocab);
  auto out = empty_outputs(xent().tensors(sub, DType::fp32));
  xent().positional_oracle(sub, rows, {sub_logits, in[1]}, out);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t v = 0; v < vocab; ++v) {
      const auto at = static_cast<std::size_t>(i * vocab + v), in_whole = static_cast<std::size_t>(rows[i] * vocab + v);
      ASSERT_EQ(out[1].values[at], whole[1].values[in_whole]) << "row " << rows[i] << " class " << v;
      ASSERT_EQ(out[1].abs_sum[at], whole[1].abs_sum[in_whole]) << "row " << rows[i] << " class " << v;
    }
}

TEST(CrossEntropyOracle, MatchesHandComputedLossAndGradient) {
  // Row 0: equal logits (softmax 1/3 each), label 0: loss ln 3.
  // Row 1: logits ln 1, ln 2, ln 3 (softmax 1/6, 2/6, 3/6), label 2: loss ln 2.
  // Row 2: ignored. Mean over the two labelled rows: (ln 3 + ln 2) / 2.
  const Shape s = shape(3, 3);
  std::vector<HostTensor> in = {
      {"logits", {3, 3}, {0, 0, 0, 0, std::log(2.0), std::log(3.0), 5, -7, 1}},
      {"labels", {3}, {0, 2, -100}},
  };
  const auto out = run_oracle(xent(), s, in);
  EXPECT_NEAR(out[0].values[0], std::log(6.0) / 2, 1e-14);
  const std::vector<double> expected = {-1.0 / 3, 1.0 / 6, 1.0 / 6, 1.0 / 12, 1.0 / 6, -1.0 / 4, 0, 0, 0};
  for (std::size_t e = 0; e < expected.size(); ++e) EXPECT_NEAR(out[1].values[e], expected[e], 1e-14) << e;
}

TEST(CrossEntropyOracle, GradientEqualsFiniteDifferencesOfTheLoss) {
  const std::int64_t vocab = 11;
  const auto in = inputs_with_labels(vocab, {3, 0, -100, 10, 7, 5}, 21);
  const Shape s = shape(6, vocab);
  const auto grads = run_oracle(xent(), s, in);
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<std::int64_t> pick(0, 6 * vocab - 1);
  std::vector<std::int64_t> elements = {0, 3, 1 * vocab + 0, 3 * vocab + 10, 2 * vocab + 4};
  for (int k = 0; k < 12; ++k) elements.push_back(pick(rng));
  for (std::int64_t e : elements) {
    const double fd = finite_difference_vjp(xent(), s, in, 0, e, loss_only(s));
    EXPECT_NEAR(grads[1].values[static_cast<std::size_t>(e)], fd, 1e-8 * (1 + std::abs(fd))) << "element " << e;
  }
}

TEST(CrossEntropyOracle, IgnoredRowsHaveZeroGradientAndDoNotCountInTheMean) {
  const std::int64_t vocab = 17;
  // Rows 1 and 3 are ignored: one by -100, one by a label outside [0, vocab).
  const auto in = inputs_with_labels(vocab, {4, -100, 16, vocab + 2, 0}, 8);
  const auto out = run_oracle(xent(), shape(5, vocab), in);
  for (std::int64_t r : {1, 3})
    for (std::int64_t v = 0; v < vocab; ++v) EXPECT_EQ(out[1].values[static_cast<std::size_t>(r * vocab + v)], 0.0);

  // The same three labelled rows on their own give the same loss and the same gradient rows:
  // the mean divides by 3, not by 5.
  std::vector<HostTensor> kept = {{"logits", {3, vocab}, {}}, {"labels", {3}, {4, 16, 0}}};
  for (std::int64_t r : {0, 2, 4})
    kept[0].values.insert(kept[0].values.end(), in[0].values.begin() + r * vocab, in[0].values.begin() + (r + 1) * vocab);
  const auto ref = run_oracle(xent(), shape(3, vocab), kept);
  EXPECT_NEAR(out[0].values[0], ref[0].values[0], 1e-13);
  EXPECT_GT(out[0].values[0], 0.0);
  for (std::int64_t k = 0; k < 3; ++k) {
    const std::int64_t r = std::vector<std::int64_t>{0, 2, 4}[static_cast<std::size_t>(k)];
    for (std::int64_t v = 0; v < vocab; ++v)
      EXPECT_NEAR(out[1].values[static_cast<std::size_t>(r * vocab + v)], ref[1].values[static_cast<std::size_t>(k * vocab + v)], 1e-15);
  }
  // And the ignored rows' logits do not move the loss.
  const std::int64_t ignored_element = 1 * vocab + 5;
  EXPECT_NEAR(finite_difference_vjp(xent(), shape(5, vocab), in, 0, ignored_element, loss_only(shape(5, vocab))), 0.0, 1e-12);
}

TEST(CrossEntropyOracle, AllLabelsIgnoredGiveZeroLossAndZeroGradientNotNaN) {
  const auto in = inputs_with_labels(9, {-100, -100, -100, -100}, 3);
  const auto out = run_oracle(xent(), shape(4, 9), in);
  EXPECT_EQ(out[0].values[0], 0.0);
  for (double g : out[1].values) EXPECT_EQ(g, 0.0);
}

TEST(CrossEntropyOracle, HugeLogitsDoNotOverflowAndShiftingARowChangesNothing) {
  const std::int64_t vocab = 50;
  const auto in = inputs_with_labels(vocab, {7, 49, 0}, 12);
  auto shifted = in;
  for (std::int64_t v = 0; v < vocab; ++v) {
    shifted[0].values[static_cast<std::size_t>(v)] += 3.0e4;               // exp(3e4) overflows fp64
    shifted[0].values[static_cast<std::size_t>(2 * vocab + v)] -= 5.0e4;   // exp(-5e4) underflows
  }
  const auto a = run_oracle(xent(), shape(3, vocab), in);
  const auto b = run_oracle(xent(), shape(3, vocab), shifted);
  ASSERT_TRUE(std::isfinite(b[0].values[0]));
  EXPECT_NEAR(b[0].values[0], a[0].values[0], 1e-9);
  for (std::size_t e = 0; e < a[1].values.size(); ++e) {
    ASSERT_TRUE(std::isfinite(b[1].values[e])) << e;
    EXPECT_NEAR(b[1].values[e], a[1].values[e], 1e-12) << e;
  }
}

TEST(CrossEntropyOracle, ParallelRowChunksEqualADirectComputationOfEveryRow) {
  // 4M elements: the oracle splits the rows over several threads.
  const std::int64_t tokens = 64, vocab = 65536;
  const Shape s = shape(tokens, vocab);
  const auto in = host_inputs(xent().tensors(s, DType::fp32), 31);
  const auto out = run_oracle(xent(), s, in);
  double sum = 0, n = 0;
  int ignored = 0;
  for (std::int64_t r = 0; r < tokens; ++r) {
    const auto label = static_cast<std::int64_t>(in[1].values[static_cast<std::size_t>(r)]);
    const double* x = in[0].values.data() + r * vocab;
    if (label == -100) {
      ++ignored;
      EXPECT_EQ(out[1].values[static_cast<std::size_t>(r * vocab + 5)], 0.0);
      continue;
    }
    double m = x[0];
    for (std::int64_t v = 1; v < vocab; ++v) m = std::max(m, x[v]);
    double z = 0;
    for (std::int64_t v = 0; v < vocab; ++v) z += std::exp(x[v] - m);
    sum += m + std::log(z) - x[label];
    n += 1;
  }
  EXPECT_LT(ignored, 16) << "about 5% of generated labels are ignored";
  EXPECT_NEAR(out[0].values[0], sum / n, 1e-12 * sum / n);
  // The last row's gradient sums to 0 over the vocabulary (softmax sums to 1, minus the one-hot).
  double row_sum = 0;
  for (std::int64_t v = 0; v < vocab; ++v) row_sum += out[1].values[static_cast<std::size_t>((tokens - 1) * vocab + v)];
  EXPECT_NEAR(row_sum, 0.0, 1e-12);
}

TEST(CrossEntropyOracle, GeneratedLabelsIgnoreAboutFivePercentOfTokens) {
  const Shape s = shape(4000, 1000);
  const auto in = host_inputs(xent().tensors(s, DType::bf16), 77);
  int ignored = 0;
  for (double label : in[1].values) {
    if (label == -100) ++ignored;
    else EXPECT_TRUE(label >= 0 && label < 1000) << label;
  }
  EXPECT_GT(ignored, 120);
  EXPECT_LT(ignored, 290);
}

// The logits of labelled rows (95% of them as the labels are drawn) read once, dlogits written
// once (all of it), labels and the loss once.
TEST(CrossEntropyWork, BytesAreLabelledLogitsReadOnceDlogitsWrittenOnceLabelsAndTheLoss) {
  const Shape s = shape(64, 1000);
  EXPECT_DOUBLE_EQ(xent().work(s, DType::bf16).bytes, 64 * 1000 * (0.95 + 1) * 2 + 64 * 4 + 4);
  EXPECT_DOUBLE_EQ(xent().work(s, DType::fp32).bytes, 64 * 1000 * (0.95 + 1) * 4 + 64 * 4 + 4);
  EXPECT_DOUBLE_EQ(xent().work(s, DType::fp16).flops, 8.0 * 0.95 * 64 * 1000);
}

TEST(CrossEntropyWork, DefaultShapesIncludeThePeerShapeAndKeepBf16TensorsUnderTwoGiB) {
  bool peer = false;
  for (const Shape& s : xent().default_shapes) {
    peer = peer || (s.at("tokens") == 8192 && s.at("vocab") == 128256);
    EXPECT_LE(s.at("tokens") * s.at("vocab") * 2, std::int64_t{2} << 30) << s.to_compact();
  }
  EXPECT_TRUE(peer);
}

TEST(CrossEntropyVariants, WorkspaceIsTheBaselinesFp32IntermediatesAndTheFusedRowLosses) {
  const Shape s = shape(8192, 128256);
  const std::size_t n = 8192ull * 128256ull;
  const Variant* baseline = Registry::instance().find_variant("cross_entropy", "baseline_eager_8_launches");
  const Variant* fused = Registry::instance().find_variant("cross_entropy", "fused_v1_cluster_row_in_registers");
  ASSERT_NE(baseline, nullptr);
  ASSERT_NE(fused, nullptr);
  // Upcast (reused for the nll gradient), log-probs and fp32 dlogits; fp32 skips the casts.
  EXPECT_EQ(baseline->workspace_bytes(s, DType::bf16), 3 * n * 4 + 8);
  EXPECT_EQ(baseline->workspace_bytes(s, DType::fp32), 2 * n * 4 + 8);
  // One fp32 loss per row and n_valid.
  EXPECT_EQ(fused->workspace_bytes(s, DType::bf16), (8192u + 1) * 4);
  EXPECT_EQ(fused->workspace_bytes(s, DType::fp32), (8192u + 1) * 4);
  const Variant* two_pass = Registry::instance().find_variant("cross_entropy", "fused_v2_row_per_block_two_pass");
  ASSERT_NE(two_pass, nullptr);
  EXPECT_EQ(two_pass->workspace_bytes(s, DType::fp16), (8192u + 1) * 4);
  EXPECT_FALSE(two_pass->refuse(shape(4, 1 << 20), DType::fp32)) << "the two-pass kernel takes any vocabulary";
}

TEST(CrossEntropyVariants, FusedRefusesOnlyRowsBeyondAClusterOfEightCtas) {
  const Variant* fused = Registry::instance().find_variant("cross_entropy", "fused_v1_cluster_row_in_registers");
  ASSERT_NE(fused, nullptr);
  for (const Shape& s : xent().default_shapes)
    for (DType d : kAllDTypes) EXPECT_FALSE(fused->refuse(s, d)) << s.to_compact();
  for (const Shape& s : xent().edge_shapes)
    for (DType d : kAllDTypes) EXPECT_FALSE(fused->refuse(s, d)) << s.to_compact();
  EXPECT_FALSE(fused->refuse(shape(4, 524288), DType::bf16));
  EXPECT_TRUE(fused->refuse(shape(4, 524288 + 8), DType::bf16));
  EXPECT_TRUE(fused->refuse(shape(4, 262144 + 4), DType::fp32));
}

}  // namespace
}  // namespace cross_entropy_oracle_test
}  // namespace kwb
