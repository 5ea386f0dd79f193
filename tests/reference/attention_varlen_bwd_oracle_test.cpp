// The attention_varlen_bwd oracle on the host: each packed sequence's dq, dk and dv (and their error
// magnitudes) are attention_bwd's registered oracle on that sequence alone, to the bit (causal,
// window, soft-cap, grouped heads); empty sequences give nothing (dropping them from cu_seqlens
// changes no element, and every element is written); with O and lse from attention_varlen_fwd's
// oracle the gradients are central differences of that forward, every element of a small packed
// case with an empty sequence; the tolerances are attention_bwd's bounds; the work model counts
// attention_bwd's 10 h d per real pair.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"
#include "reference/attention_bwd_oracle.hpp"
#include "reference/attention_varlen_bwd.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace attention_varlen_bwd_oracle_test {
namespace {

using varlen::VarlenAxes;
using varlen::varlen_shape;

const Op& packed() { return registered_op(varlen_bwd::kOp); }
const Op& dense() { return registered_op("attention_bwd"); }
const Op& packed_forward() { return registered_op(varlen::kOp); }

// Inputs q, k, v, cu_seqlens, o, lse, do as a case would hold them: cu_seqlens from the lengths'
// formula, o and lse attention_varlen_fwd's oracle on q, k and v (derived on the device in a case).
std::vector<HostTensor> consistent_inputs(const Shape& s, std::uint64_t seed) {
  auto in = host_inputs(packed().tensors(s, DType::bf16), seed);
  const auto v = VarlenAxes::of(s);
  double at = 0;
  in[3].values[0] = 0;
  for (std::int64_t b = 0; b < v.attention.batch; ++b) in[3].values[static_cast<std::size_t>(b + 1)] = at += static_cast<double>(v.length(b));
  const auto forward = run_oracle(packed_forward(), s, {in[0], in[1], in[2], in[3]});
  in[4].values = forward[0].values;  // o
  in[5].values = forward[1].values;  // lse [h, total]
  return in;
}

// attention_bwd's oracle on sequence b alone (batch 1, seq its length): dq [1, L, h, d], dk and dv
// [1, L, kv_heads, d].
std::vector<HostTensor> one_sequence(const Shape& s, const std::vector<HostTensor>& in, std::int64_t b) {
  const AttentionAxes a = VarlenAxes::of(s).attention;
  const auto start = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b)]);
  const auto length = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b + 1)]) - start;
  const std::int64_t total = in[0].dims[0];
  const Shape alone = attention_shape(1, length, a.heads, a.kv_heads, a.head_dim, a.causal ? "1" : "0", a.window,
                                      s.choice("softcap").c_str());
  std::vector<HostTensor> part = host_inputs(dense().tensors(alone, DType::bf16), 1);  // q, k, v, o, lse, do
  const std::size_t from[] = {0, 1, 2, 4, 5, 6};  // each one's input of the packed op
  for (std::size_t t = 0; t < 6; ++t) {
    const HostTensor& src = in[from[t]];
    if (t == 4) {  // lse: [h, total] -> [1, h, L]
      for (std::int64_t head = 0; head < a.heads; ++head)
        for (std::int64_t i = 0; i < length; ++i)
          part[t].values[static_cast<std::size_t>(head * length + i)] = src.values[static_cast<std::size_t>(head * total + start + i)];
      continue;
    }
    const std::int64_t width = src.dims[1] * src.dims[2];
    std::copy(src.values.begin() + start * width, src.values.begin() + (start + length) * width, part[t].values.begin());
  }
  return run_oracle(dense(), alone, part);
}

TEST(AttentionVarlenBwdOracle, EachSequenceIsAttentionBwdOnItsOwnTokens) {
  for (const Shape& s : {varlen_shape(4, 37, 4, 2, 16, "1", "ragged"),
                         varlen_shape(5, 29, 2, 1, 16, "1", "with_empty", 0, "30"),
                         varlen_shape(3, 41, 2, 2, 32, "0", "ragged", 7),
                         varlen_shape(3, 1, 3, 1, 16, "1", "equal")}) {  // single tokens: dq = dk = 0
    SCOPED_TRACE(s.to_compact());
    const auto in = consistent_inputs(s, 17);
    const auto out = run_oracle(packed(), s, in);
    const AttentionAxes a = VarlenAxes::of(s).attention;
    for (std::int64_t b = 0; b < a.batch; ++b) {
      const auto start = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b)]);
      const auto length = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b + 1)]) - start;
      if (length == 0) continue;
      const auto ref = one_sequence(s, in, b);
      for (std::size_t k = 0; k < 3; ++k) {
        const std::int64_t width = out[k].dims[1] * out[k].dims[2];
        ASSERT_EQ(static_cast<std::int64_t>(ref[k].values.size()), length * width);
        for (std::int64_t e = 0; e < length * width; ++e) {
          const auto at = static_cast<std::size_t>(start * width + e);
          const auto e_ = static_cast<std::size_t>(e);
          // The same sums in the same order: equal to the bit.
          ASSERT_EQ(out[k].values[at], ref[k].values[e_]) << out[k].name << " sequence " << b << " element " << e;
          ASSERT_EQ(out[k].abs_sum[at], ref[k].abs_sum[e_]) << out[k].name << " sequence " << b;
          ASSERT_EQ(out[k].root_sum_sq[at], ref[k].root_sum_sq[e_]) << out[k].name << " sequence " << b;
        }
      }
    }
  }
}

TEST(AttentionVarlenBwdOracle, EmptySequencesGiveNothingAndEveryElementIsWritten) {
  // with_empty: sequences 2 and 5 hold no token. The same tokens as a batch of the four non-empty
  // sequences (cu_seqlens without the repeated offsets) give the same gradients, bit for bit; and
  // no element is left as the NaN the outputs start as.
  const Shape s = varlen_shape(6, 23, 4, 2, 16, "1", "with_empty", 0, "20");
  const auto in = consistent_inputs(s, 29);
  const auto v = VarlenAxes::of(s);
  ASSERT_EQ(v.length(2), 0);
  ASSERT_EQ(v.length(5), 0);
  const auto out = run_oracle(packed(), s, in);
  // The oracle takes the batch from the shape and the offsets and token count from its inputs.
  const Shape four = varlen_shape(4, 23, 4, 2, 16, "1", "ragged", 0, "20");
  auto in_four = in;
  in_four[3].values = {0};
  for (std::int64_t b = 0; b < 6; ++b)
    if (v.length(b) > 0) in_four[3].values.push_back(in[3].values[static_cast<std::size_t>(b + 1)]);
  in_four[3].dims = {5};
  auto out_four = empty_outputs(packed().tensors(s, DType::fp32));
  packed().oracle(four, in_four, out_four);
  for (std::size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(out[k].values.size(), out_four[k].values.size());
    for (std::size_t e = 0; e < out[k].values.size(); ++e) {
      ASSERT_TRUE(std::isfinite(out[k].values[e])) << out[k].name << "[" << e << "] not written";
      ASSERT_EQ(out[k].values[e], out_four[k].values[e]) << out[k].name << "[" << e << "]";
    }
  }
}

// dO drawn N(0, 1), in o's layout.
HostTensor cotangent(const HostTensor& o, std::uint64_t seed) {
  HostTensor d{"do", o.dims, std::vector<double>(o.values.size())};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (double& x : d.values) x = normal(rng);
  return d;
}

void expect_gradients_match_finite_differences(const Shape& s, std::uint64_t seed) {
  SCOPED_TRACE(s.to_assignments());
  auto in = consistent_inputs(s, seed);
  in[6] = cotangent(in[4], seed + 1);
  const auto grads = run_oracle(packed(), s, in);
  // attention_varlen_fwd's inputs: q, k, v, cu_seqlens. L = sum(dO * O): lse's cotangent is 0.
  const std::vector<HostTensor> forward_in{in[0], in[1], in[2], in[3]};
  for (std::size_t input = 0; input < 3; ++input) {
    ASSERT_EQ(grads[input].values.size(), in[input].values.size()) << grads[input].name;
    for (std::size_t e = 0; e < in[input].values.size(); ++e) {
      const double fd = finite_difference_vjp(packed_forward(), s, forward_in, input, static_cast<std::int64_t>(e), {in[6]});
      EXPECT_NEAR(grads[input].values[e], fd, 1e-6 * (1 + std::abs(fd))) << grads[input].name << "[" << e << "]";
    }
  }
}

TEST(AttentionVarlenBwdOracle, GradientsEqualFiniteDifferencesOfTheForwardOracle) {
  // Lengths 6, 5 and an empty third; causal with grouped heads, then a non-causal band with a
  // soft-cap of 1 against scores of order 1 (tanh's derivative far from 1).
  expect_gradients_match_finite_differences(varlen_shape(3, 6, 4, 2, 4, "1", "with_empty"), 1);
  expect_gradients_match_finite_differences(varlen_shape(3, 5, 2, 1, 4, "0", "ragged", 2, "1.0"), 2);
}

TEST(AttentionVarlenBwdContract, ToleranceIsAttentionBwdsBoundAtTheLongestSequence) {
  const Shape s = varlen_shape(5, 300, 8, 2, 64, "1", "ragged", 100);
  const AttentionAxes a = VarlenAxes::of(s).attention;
  for (DType dtype : {DType::bf16, DType::fp16}) {
    const auto specs = packed().tensors(s, dtype);
    const Tolerance keys = attention_bwd_gradient_tolerance(a, dtype, 100);       // the window's keys
    const Tolerance queries = attention_bwd_gradient_tolerance(a, dtype, 400);    // x 4 heads a kv head
    ASSERT_EQ(specs[7].name, "dq");
    EXPECT_EQ(specs[7].tolerance->abs_sum_scale, keys.abs_sum_scale);
    EXPECT_EQ(specs[7].tolerance->atol, keys.atol);
    for (std::size_t t : {std::size_t{8}, std::size_t{9}}) {
      EXPECT_EQ(specs[t].tolerance->abs_sum_scale, queries.abs_sum_scale) << specs[t].name;
      EXPECT_EQ(specs[t].tolerance->atol, queries.atol) << specs[t].name;
      EXPECT_EQ(specs[t].tolerance->root_sum_sq_scale, queries.root_sum_sq_scale) << specs[t].name;
    }
  }
}

TEST(AttentionVarlenBwdWork, CountsTenHdPerRealPairAndEveryTensorOnce) {
  const Shape s = varlen_shape(3, 50, 4, 2, 64, "1", "with_empty");
  const auto v = VarlenAxes::of(s);
  double pairs = 0;
  for (std::int64_t b = 0; b < 3; ++b) pairs += static_cast<double>(v.length(b) * (v.length(b) + 1) / 2);
  const WorkModel w = packed().work(s, DType::bf16);
  EXPECT_DOUBLE_EQ(w.flops, 10.0 * 4 * 64 * pairs);
  // q, o, do, dq [t, 4, 64] and k, v, dk, dv [t, 2, 64] in bf16; lse [4, t] fp32; cu_seqlens 4 int32.
  const double t = static_cast<double>(v.total());
  EXPECT_DOUBLE_EQ(w.bytes, (t * 4 * 64 * 2) * 4 + (t * 2 * 64 * 2) * 4 + 4.0 * 4 * t + 4.0 * 4);
}

}  // namespace
}  // namespace attention_varlen_bwd_oracle_test
}  // namespace kwb
