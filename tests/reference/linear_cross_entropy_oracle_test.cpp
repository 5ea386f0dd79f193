// The linear_cross_entropy oracle on the host: hand-computed tiny cases (the V = 2 logistic case,
// uniform logits giving log V, an ignored token), the gradients against finite differences of the
// summed loss, chunking invariance and the work model. The error bounds are tested in
// linear_cross_entropy_bound_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/linear_cross_entropy.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace linear_cross_entropy_oracle_test {
namespace {

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

const Op& lce() { return registered_op("linear_cross_entropy"); }

TEST(LinearCrossEntropyOracle, LogisticCaseWithTwoClassesMatchesHandValues) {
  // h = 2, W = (1, -1): z = (2, -2), label 0: loss = log(1 + e^-4), dl = (-q, q) with
  // q = e^-4 / (1 + e^-4); dh = -q * 1 + q * (-1) = -2q; dW = dl * h = (-2q, 2q).
  const std::vector<HostTensor> in{tensor("h", {1, 1}, {2}), tensor("W", {2, 1}, {1, -1}), tensor("labels", {1}, {0})};
  const auto out = run_oracle(lce(), lce_shape(1, 1, 2), in);
  ASSERT_EQ(out.size(), 3u);
  const double q = std::exp(-4.0) / (1 + std::exp(-4.0));
  EXPECT_NEAR(out[0].values[0], std::log1p(std::exp(-4.0)), 1e-15);
  EXPECT_NEAR(out[1].values[0], -2 * q, 1e-15);
  EXPECT_NEAR(out[2].values[0], -2 * q, 1e-15);
  EXPECT_NEAR(out[2].values[1], 2 * q, 1e-15);
}

TEST(LinearCrossEntropyOracle, UniformLogitsGiveLogVAndAnIgnoredTokenGivesNothing) {
  // W = 0: every logit is 0, loss = log V, dl = 1/V - onehot, dh = dl @ 0 = 0 and
  // dW[v] = sum over labelled tokens of (1/V - [v == label]) h[n]; token 2 is ignored (-100).
  const std::int64_t n = 3, d = 2, v = 5;
  const std::vector<double> h{1, 2, -3, 0.5, 7, 7};
  const std::vector<double> labels{1, 3, -100};
  const std::vector<HostTensor> in{tensor("h", {n, d}, h), tensor("W", {v, d}, std::vector<double>(v * d, 0.0)),
                                   tensor("labels", {n}, labels)};
  const auto out = run_oracle(lce(), lce_shape(n, d, v), in);
  EXPECT_NEAR(out[0].values[0], std::log(5.0), 1e-15);
  EXPECT_NEAR(out[0].values[1], std::log(5.0), 1e-15);
  EXPECT_EQ(out[0].values[2], 0.0);
  for (double g : out[1].values) EXPECT_EQ(g, 0.0);
  for (std::int64_t c = 0; c < v; ++c)
    for (std::int64_t k = 0; k < d; ++k) {
      double expected = 0;
      for (std::int64_t t = 0; t < 2; ++t) expected += (0.2 - (c == labels[t] ? 1.0 : 0.0)) * h[t * d + k];
      EXPECT_NEAR(out[2].values[c * d + k], expected, 1e-14) << "v " << c << " d " << k;
    }
}

TEST(LinearCrossEntropyOracle, GradientsEqualFiniteDifferencesOfTheSummedLoss) {
  for (const Shape& s : {lce_shape(4, 5, 7), lce_shape(3, 1, 2), lce_shape(2, 3, 1)}) {
    auto in = host_inputs(lce().tensors(s, DType::fp32), 11);  // h, W, labels
    in[2].values[0] = 0;                                       // at least one labelled token
    const auto grads = run_oracle(lce(), s, in);
    const HostTensor ones{"dloss", {s.at("tokens")}, std::vector<double>(s.at("tokens"), 1.0)};
    for (std::size_t input : {0u, 1u}) {
      const std::size_t grad = input == 0 ? 1 : 2;  // dh, dW
      for (std::int64_t e = 0; e < static_cast<std::int64_t>(in[input].values.size()); ++e) {
        const double fd = finite_difference_vjp(lce(), s, in, input, e, {ones});
        EXPECT_NEAR(grads[grad].values[e], fd, 1e-6 * (1 + std::abs(fd)))
            << "input " << input << " element " << e << " shape " << s.to_assignments();
      }
    }
  }
}

TEST(LinearCrossEntropyOracle, ChunkingDoesNotChangeTheResult) {
  const Shape s = lce_shape(37, 9, 23);
  const auto in = host_inputs(lce().tensors(s, DType::fp32), 3);
  const auto whole = run_oracle(lce(), s, in);
  for (std::int64_t chunk : {1, 5, 36, 37, 100}) {
    auto out = empty_outputs(lce().tensors(s, DType::fp32));
    lce_reference(37, 9, 23, in[0].values.data(), in[1].values.data(), in[2].values.data(), out[0].values.data(),
                  out[1].values.data(), out[2].values.data(), chunk);
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t e = 0; e < out[k].values.size(); ++e)
        ASSERT_NEAR(out[k].values[e], whole[k].values[e], 1e-12 * (1 + std::abs(whole[k].values[e])))
            << "chunk " << chunk << " output " << k << " element " << e;
  }
}

// The verifier samples dW's vocabulary rows and reads every input whole: the oracle at those rows
// gives exactly those rows of the whole answer (each element the same sum in the same order), with
// their magnitudes, and the loss and dh whole as before.
TEST(LinearCrossEntropyOracle, DwAtSampledVocabularyRowsIsThoseRowsOfTheWholeAnswer) {
  const Shape s = lce_shape(37, 9, 23);
  const auto specs = lce().tensors(s, DType::fp32);
  const auto in = host_inputs(specs, 5);
  const auto whole = run_oracle(lce(), s, in);
  const std::vector<std::int64_t> rows{0, 3, 4, 5, 17, 22};
  SamplePlan plan;
  plan.sampled = true;
  plan.axis = "vocab";
  plan.axis_size = 23;
  plan.indices = rows;
  std::vector<HostTensor> sampled;
  for (const TensorSpec& t : specs)
    if (t.is_output) sampled.push_back({t.name, plan.dims(t), std::vector<double>(plan.elements(t), NAN)});
  ASSERT_EQ(sampled[2].dims, (std::vector<std::int64_t>{6, 9})) << "dW: the sampled rows";
  run_sampled_oracle(lce(), s, plan, in, sampled);
  for (std::size_t k = 0; k < 2; ++k) {  // loss, dh: whole
    EXPECT_EQ(sampled[k].values, whole[k].values) << k;
    EXPECT_EQ(sampled[k].abs_sum, whole[k].abs_sum) << k;
    EXPECT_EQ(sampled[k].root_sum_sq, whole[k].root_sum_sq) << k;
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t d = 0; d < 9; ++d) {
      const auto at = static_cast<std::size_t>(static_cast<std::int64_t>(i) * 9 + d);
      const auto from = static_cast<std::size_t>(rows[i] * 9 + d);
      ASSERT_EQ(sampled[2].values[at], whole[2].values[from]) << "row " << rows[i] << " col " << d;
      ASSERT_EQ(sampled[2].abs_sum[at], whole[2].abs_sum[from]);
      ASSERT_EQ(sampled[2].root_sum_sq[at], whole[2].root_sum_sq[from]);
    }
}

// Over several chunks of tokens (dW summed chunk after chunk) and k blocks: the sampled rows are
// still those rows of the whole answer, with the same chunking, to the bit.
TEST(LinearCrossEntropyOracle, DwRowsAcrossChunksAreThoseRowsOfTheWholeAnswer) {
  const std::int64_t tokens = 300, hidden = 7, vocab = 41;
  const Shape s = lce_shape(tokens, hidden, vocab);
  const auto in = host_inputs(lce().tensors(s, DType::fp32), 9);
  const std::vector<std::int64_t> rows{1, 2, 20, 40};
  const auto run = [&](const std::vector<std::int64_t>* dw_rows, std::int64_t dw_row_count) {
    std::vector<std::vector<double>> o{std::vector<double>(tokens), std::vector<double>(tokens * hidden),
                                       std::vector<double>(dw_row_count * hidden)};
    std::vector<std::vector<double>> m{std::vector<double>(tokens), std::vector<double>(tokens),
                                       std::vector<double>(tokens * hidden), std::vector<double>(tokens * hidden),
                                       std::vector<double>(dw_row_count * hidden),
                                       std::vector<double>(dw_row_count * hidden)};
    const LceMagnitudes mags{m[0].data(), m[1].data(), m[2].data(), m[3].data(), m[4].data(), m[5].data()};
    lce_reference(tokens, hidden, vocab, in[0].values.data(), in[1].values.data(), in[2].values.data(),
                  o[0].data(), o[1].data(), o[2].data(), /*chunk_tokens=*/7, &mags, dw_rows);
    return std::make_pair(o, m);
  };
  const auto [whole, whole_mags] = run(nullptr, vocab);
  const auto [sampled, sampled_mags] = run(&rows, static_cast<std::int64_t>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t d = 0; d < hidden; ++d) {
      const auto at = static_cast<std::size_t>(static_cast<std::int64_t>(i) * hidden + d);
      const auto from = static_cast<std::size_t>(rows[i] * hidden + d);
      ASSERT_EQ(sampled[2][at], whole[2][from]) << "row " << rows[i];
      ASSERT_EQ(sampled_mags[4][at], whole_mags[4][from]);
      ASSERT_EQ(sampled_mags[5][at], whole_mags[5][from]);
    }
  EXPECT_EQ(sampled[0], whole[0]);
  EXPECT_EQ(sampled[1], whole[1]);
}

// At a default shape the plan samples dW's rows along the vocabulary and checks the loss and dh
// whole, from the whole inputs, with or without a device for the oracles.
TEST(LinearCrossEntropyOracle, ALargeCaseSamplesDwRowsAndChecksTheLossAndDhWhole) {
  const Shape s = lce_shape(256, 4096, 128256);
  const auto specs = lce().tensors(s, DType::bf16);
  for (bool device : {false, true}) {
    const SamplePlan plan = plan_sample(lce(), s, specs, 3, device);
    ASSERT_TRUE(plan.sampled) << plan.note;
    EXPECT_FALSE(plan.unaligned_on_device);
    EXPECT_LT(plan.indices.size(), 1024u);
    EXPECT_NE(plan.note.find("'loss', 'dh' (not aligned with vocab) whole, from the whole inputs"), std::string::npos)
        << plan.note;
    for (const TensorSpec& t : specs) EXPECT_EQ(plan.gathers(t), t.name == "dW") << t.name;
  }
}

// Three GEMMs over the labelled tokens (95% of them as the labels are drawn), their rows of h,
// and every other tensor once.
TEST(LinearCrossEntropyOracle, WorkModelCountsThreeGemmsOfLabelledTokensAndEveryOtherTensorOnce) {
  const Shape s = lce_shape(8, 16, 32);
  const WorkModel bf16 = lce().work(s, DType::bf16);
  EXPECT_DOUBLE_EQ(bf16.flops, 6.0 * 0.95 * 8 * 16 * 32);
  // h's labelled rows, W, dh, dW in bf16; labels and loss 4 bytes each.
  EXPECT_DOUBLE_EQ(bf16.bytes, (0.95 * 8 * 16 + 32 * 16 + 8 * 16 + 32 * 16) * 2 + 8 * 4 * 2);
}

TEST(LinearCrossEntropyOracle, AxesReadTokensHiddenVocabOnce) {
  const auto [tokens, hidden, vocab] = LceAxes::of(lce_shape(8192, 4096, 128256));
  EXPECT_EQ(tokens, 8192);
  EXPECT_EQ(hidden, 4096);
  EXPECT_EQ(vocab, 128256);
}

}  // namespace
}  // namespace linear_cross_entropy_oracle_test
}  // namespace kwb
