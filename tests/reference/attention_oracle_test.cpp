// The attention_fwd oracle on the host: hand-computed values at tiny shapes (one key, uniform
// scores, the causal first row, the window's band, the soft-cap, grouped-query heads), the
// log-sum-exp definition, the positional oracle on sampled rows against the full oracle, the
// work model's visible pairs and the K-scaled tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace attention_oracle_test {
namespace {

Shape shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads, std::int64_t d,
            const char* causal, std::int64_t window = 0, const char* softcap = "0") {
  return attention_shape(batch, seq, heads, kv_heads, d, causal, window, softcap);
}

const Op& attention() { return registered_op("attention_fwd"); }

// The oracle on every query row (rows 0 .. seq-1), as the verifier calls it unsampled.
std::vector<HostTensor> run_full(const Shape& s, const std::vector<HostTensor>& in) {
  auto out = empty_outputs(attention().tensors(s, DType::bf16));
  std::vector<std::int64_t> rows(static_cast<std::size_t>(s.at("seq")));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);
  attention().positional_oracle(s, rows, in, out);
  return out;
}

// q = 0 (every logit 0: uniform weights over the visible keys), k anything, v[j] = j + 1 in every
// element of every head: O of row i is the mean of (j + 1) over its visible keys.
std::vector<HostTensor> uniform_inputs(const Shape& s) {
  auto in = host_inputs(attention().tensors(s, DType::bf16), 3);
  std::fill(in[0].values.begin(), in[0].values.end(), 0.0);
  const std::int64_t seq = s.at("seq"), row = s.at("kv_heads") * s.at("head_dim");
  for (std::size_t e = 0; e < in[2].values.size(); ++e)
    in[2].values[e] = static_cast<double>((static_cast<std::int64_t>(e) / row) % seq + 1);
  return in;
}

TEST(AttentionOracle, OneKeyGivesItsValueRowAndItsLogitAsLse) {
  const Shape s = shape(1, 1, 1, 1, 64, "0");
  auto in = host_inputs(attention().tensors(s, DType::bf16), 1);
  const auto out = run_full(s, in);
  double dot = 0;
  for (int e = 0; e < 64; ++e) dot += in[0].values[e] * in[1].values[e];
  for (int e = 0; e < 64; ++e) EXPECT_DOUBLE_EQ(out[0].values[e], in[2].values[e]) << "e " << e;
  EXPECT_NEAR(out[1].values[0], dot / 8.0, 1e-12);  // scale 1 / sqrt(64)
}

TEST(AttentionOracle, UniformScoresAverageTheVisibleValues) {
  // Non-causal: every row averages 1..5 = 3, lse = log 5.
  const Shape full = shape(1, 5, 1, 1, 64, "0");
  auto out = run_full(full, uniform_inputs(full));
  for (std::int64_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(out[0].values[i * 64 + 7], 3.0, 1e-12) << "row " << i;
    EXPECT_NEAR(out[1].values[i], std::log(5.0), 1e-12);
  }
  // Causal: row i averages 1..i+1 = (i + 2) / 2; the first row is V[0]; lse = log(i + 1).
  const Shape causal = shape(1, 5, 1, 1, 64, "1");
  out = run_full(causal, uniform_inputs(causal));
  for (std::int64_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(out[0].values[i * 64], (i + 2) / 2.0, 1e-12) << "row " << i;
    EXPECT_NEAR(out[1].values[i], std::log(i + 1.0), 1e-12) << "row " << i;
  }
  EXPECT_DOUBLE_EQ(out[0].values[0], 1.0);
}

TEST(AttentionOracle, WindowKeepsTheLastWKeysCausalOrASymmetricBand) {
  // Causal window 2: row i sees i-1 and i; row 0 only itself.
  const Shape causal = shape(1, 6, 1, 1, 64, "1", 2);
  auto out = run_full(causal, uniform_inputs(causal));
  EXPECT_NEAR(out[0].values[0], 1.0, 1e-12);
  for (std::int64_t i = 1; i < 6; ++i) EXPECT_NEAR(out[0].values[i * 64], i + 0.5, 1e-12) << "row " << i;
  // Non-causal window 2: |i - j| < 2, so keys i-1, i, i+1 where they exist.
  const Shape band = shape(1, 6, 1, 1, 64, "0", 2);
  out = run_full(band, uniform_inputs(band));
  EXPECT_NEAR(out[0].values[0], 1.5, 1e-12);        // keys 0, 1
  EXPECT_NEAR(out[0].values[3 * 64], 4.0, 1e-12);   // keys 2, 3, 4
  EXPECT_NEAR(out[0].values[5 * 64], 5.5, 1e-12);   // keys 4, 5
  EXPECT_NEAR(out[1].values[3], std::log(3.0), 1e-12);
  // Window 1 is the diagonal alone: O = V row i.
  const Shape diag = shape(1, 4, 1, 1, 64, "1", 1);
  out = run_full(diag, uniform_inputs(diag));
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_NEAR(out[0].values[i * 64 + 3], i + 1.0, 1e-12);
}

TEST(AttentionOracle, SoftCapBoundsTheLogitsAndLseIsTheirLogSumExp) {
  // Two keys, d = 64: q = 1 everywhere, k0 = 2 and k1 = -1 everywhere: s = 64 * 2 / 8 = 16 and -8.
  for (const char* cap : {"0", "30"}) {
    const Shape s = shape(1, 2, 1, 1, 64, "0", 0, cap);
    auto in = host_inputs(attention().tensors(s, DType::bf16), 5);
    std::fill(in[0].values.begin(), in[0].values.end(), 1.0);
    for (int e = 0; e < 64; ++e) {
      in[1].values[e] = 2.0;
      in[1].values[64 + e] = -1.0;
      in[2].values[e] = 1.0;
      in[2].values[64 + e] = 0.0;
    }
    const auto out = run_full(s, in);
    const double c = std::stod(cap);
    const double l0 = c > 0 ? c * std::tanh(16.0 / c) : 16.0, l1 = c > 0 ? c * std::tanh(-8.0 / c) : -8.0;
    EXPECT_NEAR(out[1].values[0], std::log(std::exp(l0) + std::exp(l1)), 1e-12) << "cap " << cap;
    EXPECT_NEAR(out[0].values[0], 1.0 / (1.0 + std::exp(l1 - l0)), 1e-12) << "cap " << cap;
  }
  EXPECT_LT(attention_logit(16.0, 30.0), 16.0);
  EXPECT_NEAR(attention_logit(1e6, 30.0), 30.0, 1e-9);
}

TEST(AttentionOracle, GroupedQueryHeadsReadTheirGroupsKvHead) {
  // heads 4, kv_heads 2: heads 0, 1 read kv head 0 and heads 2, 3 kv head 1. q = 0, s = 1:
  // O of head h = V[kv head h / 2].
  const Shape s = shape(1, 1, 4, 2, 64, "1");
  auto in = host_inputs(attention().tensors(s, DType::bf16), 9);
  std::fill(in[0].values.begin(), in[0].values.end(), 0.0);
  const auto out = run_full(s, in);
  for (std::int64_t h = 0; h < 4; ++h)
    for (std::int64_t e = 0; e < 64; e += 9) EXPECT_DOUBLE_EQ(out[0].values[h * 64 + e], in[2].values[(h / 2) * 64 + e]);
}

TEST(AttentionOracle, SampledRowsMatchTheFullOracleAtTheirPositions) {
  // The verifier's view: q, o, lse gathered at rows {2, 5, 6}, k and v whole. The mask must use
  // the original positions, not 0, 1, 2.
  const Shape s = shape(2, 9, 4, 2, 64, "1", 3, "30");
  const auto in = host_inputs(attention().tensors(s, DType::bf16), 11);
  const auto full = run_full(s, in);
  const std::vector<std::int64_t> rows{2, 5, 6};
  const std::int64_t n = 3, h = 4, d = 64, seq = 9;
  Shape sub = s;
  for (auto& [name, value] : sub.axes)
    if (name == "seq") value = n;
  std::vector<HostTensor> sampled_in = in;
  sampled_in[0].dims[1] = n;
  sampled_in[0].values.assign(static_cast<std::size_t>(2 * n * h * d), 0);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t e = 0; e < h * d; ++e)
        sampled_in[0].values[(b * n + r) * h * d + e] = in[0].values[(b * seq + rows[r]) * h * d + e];
  auto out = empty_outputs(attention().tensors(sub, DType::bf16));
  attention().positional_oracle(sub, rows, sampled_in, out);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t e = 0; e < h * d; ++e)
        ASSERT_DOUBLE_EQ(out[0].values[(b * n + r) * h * d + e], full[0].values[(b * seq + rows[r]) * h * d + e]);
      for (std::int64_t head = 0; head < h; ++head)
        ASSERT_DOUBLE_EQ(out[1].values[(b * h + head) * n + r], full[1].values[(b * h + head) * seq + rows[r]]);
    }
}

TEST(AttentionOracle, TiledOracleEqualsTheOneRowFormula) {
  // heads 6, kv_heads 3 (group 2: 32 rows per tile, so 70 rows make 3 tiles), window and cap.
  for (const char* causal : {"0", "1"}) {
    const Shape s = shape(2, 70, 6, 3, 64, causal, 9, "30");
    const auto in = host_inputs(attention().tensors(s, DType::bf16), 21);
    const auto out = run_full(s, in);
    const AttentionMask mask{std::string(causal) == "1", 9};
    std::vector<double> o(64), logits(70);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t i = 0; i < 70; ++i)
        for (std::int64_t head = 0; head < 6; ++head) {
          const double* q = in[0].values.data() + ((b * 70 + i) * 6 + head) * 64;
          const std::int64_t kv_offset = (b * 70 * 3 + head / 2) * 64;
          const double lse = attention_row(q, in[1].values.data() + kv_offset, in[2].values.data() + kv_offset,
                                           o.data(), logits.data(), i, 70, 64, 3 * 64, mask, 30.0);
          ASSERT_NEAR(out[1].values[(b * 6 + head) * 70 + i], lse, 1e-12) << "b " << b << " i " << i;
          for (std::int64_t e = 0; e < 64; ++e)
            ASSERT_NEAR(out[0].values[((b * 70 + i) * 6 + head) * 64 + e], o[e], 1e-12);
        }
  }
}

TEST(AttentionOracle, WorkModelCountsVisiblePairsAndTolerancesGrowWithKeys) {
  // Causal: s (s + 1) / 2 pairs, FlashAttention's "half" up to the diagonal.
  const auto causal = attention().work(shape(4, 4096, 32, 32, 128, "1"), DType::bf16);
  const auto dense = attention().work(shape(4, 4096, 32, 32, 128, "0"), DType::bf16);
  EXPECT_DOUBLE_EQ(dense.flops, 4.0 * 4 * 32 * 128 * 4096.0 * 4096.0);
  EXPECT_DOUBLE_EQ(causal.flops, 4.0 * 4 * 32 * 128 * (4096.0 * 4097.0 / 2));
  // Bytes: q, k, v, o in bf16 and lse in fp32.
  EXPECT_DOUBLE_EQ(dense.bytes, 4.0 * 4 * 4096 * 32 * 128 * 2 + 4.0 * 32 * 4096 * 4);
  // Window 3, causal, 10 keys: rows see 1, 2, 3, 3, ... = 1 + 2 + 8 * 3 = 27 pairs.
  EXPECT_DOUBLE_EQ((AttentionMask{true, 3}.visible_pairs(10)), 27.0);
  // Non-causal window 2 over 4 keys: 2 + 3 + 3 + 2.
  EXPECT_DOUBLE_EQ((AttentionMask{false, 2}.visible_pairs(4)), 10.0);

  const auto specs_short = attention().tensors(shape(1, 512, 1, 1, 128, "1"), DType::bf16);
  const auto specs_long = attention().tensors(shape(1, 16384, 1, 1, 128, "1"), DType::bf16);
  EXPECT_LT(specs_short[3].tolerance->abs_sum_scale, specs_long[3].tolerance->abs_sum_scale);
  const auto specs_window = attention().tensors(shape(1, 16384, 1, 1, 128, "1", 512), DType::bf16);
  EXPECT_DOUBLE_EQ(specs_window[3].tolerance->abs_sum_scale, specs_short[3].tolerance->abs_sum_scale)
      << "K is the keys seen";
  EXPECT_LT(specs_short[4].tolerance->atol, specs_long[4].tolerance->atol) << "lse's fp32 row sum";
  EXPECT_EQ(specs_long[4].elem, ElemType::fp32);
}

TEST(AttentionOracle, ShapesOutsideTheContractAreInvalidWithAReason) {
  const Op& op = attention();
  EXPECT_FALSE(op.invalid(shape(1, 7, 4, 2, 64, "1", 3, "50")));
  EXPECT_TRUE(op.invalid(shape(1, 7, 4, 3, 64, "1")));
  EXPECT_TRUE(op.invalid(shape(1, 7, 4, 2, 96, "1")));
  for (const auto& s : op.default_shapes) EXPECT_FALSE(op.invalid(s)) << s.to_compact();
  for (const auto& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s)) << s.to_compact();
}

TEST(AttentionOracle, AxesReadEveryAxisOnceWithTheMaskAndItsLongestRow) {
  const auto a = AttentionAxes::of(shape(2, 129, 4, 2, 64, "1", 7, "50"));
  EXPECT_EQ(a.batch, 2);
  EXPECT_EQ(a.seq, 129);
  EXPECT_EQ(a.heads, 4);
  EXPECT_EQ(a.kv_heads, 2);
  EXPECT_EQ(a.head_dim, 64);
  EXPECT_EQ(a.window, 7);
  EXPECT_TRUE(a.causal);
  EXPECT_DOUBLE_EQ(a.softcap, 50.0);
  EXPECT_TRUE(a.mask().causal);
  EXPECT_EQ(a.mask().window, 7);
  EXPECT_EQ(a.max_keys(), 7) << "a causal window sees w keys";
  EXPECT_EQ(AttentionAxes::of(shape(1, 129, 1, 1, 64, "0", 7)).max_keys(), 13) << "a symmetric band, 2w - 1";
  EXPECT_EQ(AttentionAxes::of(shape(1, 129, 1, 1, 64, "1")).max_keys(), 129) << "no window: the whole sequence";
  EXPECT_FALSE(AttentionAxes::of(shape(1, 1, 1, 1, 64, "0")).causal);
}

}  // namespace
}  // namespace attention_oracle_test
}  // namespace kwb
