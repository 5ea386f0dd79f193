// The linear_cross_entropy oracle on the host: hand-computed tiny cases (the V = 2 logistic case,
// uniform logits giving log V, an ignored token), the gradients against finite differences of the
// summed loss, chunking invariance, the work model, and the tolerances: they scale with the
// reduction lengths, admit a simulation of the device's roundings (the baseline's dtype logits,
// dlogits in the dtype, tf32 operands) in every dtype, and still reject plausible bugs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "reference/linear_cross_entropy.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
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

// Three GEMMs over the labelled tokens (95% of them as the labels are drawn), their rows of h,
// and every other tensor once.
TEST(LinearCrossEntropyOracle, WorkModelCountsThreeGemmsOfLabelledTokensAndEveryOtherTensorOnce) {
  const Shape s = lce_shape(8, 16, 32);
  const WorkModel bf16 = lce().work(s, DType::bf16);
  EXPECT_DOUBLE_EQ(bf16.flops, 6.0 * 0.95 * 8 * 16 * 32);
  // h's labelled rows, W, dh, dW in bf16; labels and loss 4 bytes each.
  EXPECT_DOUBLE_EQ(bf16.bytes, (0.95 * 8 * 16 + 32 * 16 + 8 * 16 + 32 * 16) * 2 + 8 * 4 * 2);
}

TEST(LinearCrossEntropyOracle, TolerancesGrowWithTheReductionLengths) {
  for (DType dt : {DType::fp32, DType::fp16, DType::bf16}) {
    const LceTolerances small = lce_tolerances(lce_shape(1024, 1024, 1000), dt);
    const LceTolerances long_v = lce_tolerances(lce_shape(1024, 1024, 128000), dt);
    const LceTolerances long_n = lce_tolerances(lce_shape(65536, 1024, 1000), dt);
    EXPECT_GT(long_v.loss.rtol, small.loss.rtol);  // lse over V
    EXPECT_GT(long_v.dh.rtol, small.dh.rtol);      // dh sums over V
    EXPECT_GT(long_n.dw.rtol, small.dw.rtol);      // dW sums over N
    EXPECT_GT(long_n.dw.atol, small.dw.atol);
  }
}

// ---------------------------------------------------------------------------------------------
// The device's roundings, simulated on the host: the tolerances must admit them.

// To a `bits`-bit significand: nearest even, or truncated (toward zero), as tensor cores may
// read fp32 operands in tf32.
double round_bits(double x, int bits, bool truncate = false) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);
  const double scaled = std::ldexp(x, bits - e);
  return std::ldexp(truncate ? std::trunc(scaled) : std::nearbyint(scaled), e - bits);
}
int dtype_bits(DType dt) { return dt == DType::bf16 ? 8 : dt == DType::fp16 ? 11 : 24; }

// loss, dh, dW as a device computes them: fp32 (float) accumulation, the logits stored in the
// dtype (the baseline's), dl rounded to the dtype, fp32 operands rounded to tf32.
std::vector<HostTensor> simulated_device(const Shape& s, DType dt, const std::vector<HostTensor>& in) {
  const std::int64_t n = s.at("tokens"), d = s.at("hidden"), v = s.at("vocab");
  const int io = dtype_bits(dt), op = dt == DType::fp32 ? 11 : 24;
  const bool tf32 = dt == DType::fp32;  // truncated: the worse of the two
  auto operand = [op, tf32](const std::vector<double>& x) {  // as the tensor cores read it
    std::vector<float> r(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) r[i] = static_cast<float>(round_bits(x[i], op, tf32));
    return r;
  };
  const std::vector<float> h = operand(in[0].values), w = operand(in[1].values);
  auto out = empty_outputs(lce().tensors(s, dt));
  std::vector<float> z(v), dl(n * v);
  for (std::int64_t t = 0; t < n; ++t) {
    for (std::int64_t c = 0; c < v; ++c) {
      float acc = 0;
      for (std::int64_t k = 0; k < d; ++k) acc += h[t * d + k] * w[c * d + k];
      z[c] = static_cast<float>(round_bits(acc, io));
    }
    const auto label = static_cast<long long>(in[2].values[t]);
    if (label < 0 || label >= v) {
      out[0].values[t] = 0;
      for (std::int64_t c = 0; c < v; ++c) dl[t * v + c] = 0;
      continue;
    }
    float m = -INFINITY, sum = 0;
    for (float x : z) m = std::max(m, x);
    for (float x : z) sum += std::exp(x - m);
    const float lse = m + std::log(sum);
    out[0].values[t] = lse - z[label];
    for (std::int64_t c = 0; c < v; ++c)  // dl in the dtype, then as the tensor cores read it
      dl[t * v + c] = static_cast<float>(
          round_bits(round_bits(std::exp(z[c] - lse) - (c == label ? 1.0f : 0.0f), io), op, tf32));
  }
  for (std::int64_t t = 0; t < n; ++t)
    for (std::int64_t k = 0; k < d; ++k) {
      float acc = 0;
      for (std::int64_t c = 0; c < v; ++c) acc += dl[t * v + c] * w[c * d + k];
      out[1].values[t * d + k] = round_bits(acc, io);
    }
  for (std::int64_t c = 0; c < v; ++c)
    for (std::int64_t k = 0; k < d; ++k) {
      float acc = 0;
      for (std::int64_t t = 0; t < n; ++t) acc += dl[t * v + c] * h[t * d + k];
      out[2].values[c * d + k] = round_bits(acc, io);
    }
  return out;
}

// Elements outside |got - ref| <= atol + rtol |ref|, the verifier's test, per output.
std::vector<std::int64_t> mismatches(const Shape& s, DType dt, const std::vector<HostTensor>& got,
                                     const std::vector<HostTensor>& ref, bool report = true) {
  const LceTolerances tol = lce_tolerances(s, dt);
  const Tolerance per[3] = {tol.loss, tol.dh, tol.dw};
  std::vector<std::int64_t> bad(3, 0);
  for (int k = 0; k < 3; ++k)
    for (std::size_t e = 0; e < ref[k].values.size(); ++e)
      if (!(std::abs(got[k].values[e] - ref[k].values[e]) <= per[k].atol + per[k].rtol * std::abs(ref[k].values[e]))) {
        if (++bad[k] <= 3 && report)  // the first few, with the tolerance they missed
          ADD_FAILURE() << ref[k].name << "[" << e << "] got " << got[k].values[e] << " expected " << ref[k].values[e]
                        << " (atol " << per[k].atol << ", rtol " << per[k].rtol << ")";
      }
  return bad;
}

std::vector<HostTensor> device_inputs(const Shape& s, DType dt, std::uint64_t seed) {
  auto in = host_inputs(lce().tensors(s, dt), seed);
  for (int k = 0; k < 2; ++k)
    for (double& x : in[k].values) x = round_bits(x, dtype_bits(dt));  // as the device stores them
  return in;
}

TEST(LinearCrossEntropyOracle, TolerancesAdmitTheDevicesRoundingsInEveryDtype) {
  for (DType dt : {DType::fp32, DType::fp16, DType::bf16})
    for (const Shape& s : {lce_shape(48, 96, 700), lce_shape(33, 7, 3), lce_shape(200, 16, 2), lce_shape(5, 256, 4099)}) {
      const auto in = device_inputs(s, dt, 21);
      const auto bad = mismatches(s, dt, simulated_device(s, dt, in), run_oracle(lce(), s, in));
      EXPECT_EQ(bad, (std::vector<std::int64_t>{0, 0, 0}))
          << to_string(dt) << " " << s.to_assignments() << ": loss, dh, dW elements out of tolerance";
    }
}

TEST(LinearCrossEntropyOracle, TolerancesRejectPlausibleBugs) {
  const Shape s = lce_shape(48, 96, 700);
  for (DType dt : {DType::fp32, DType::fp16, DType::bf16}) {
    auto in = device_inputs(s, dt, 21);
    in[2].values[0] = 5;  // token 0 labelled
    const auto ref = run_oracle(lce(), s, in);
    // A chunk boundary off by one: token 0 skipped, its dh row left at zero and its
    // contribution missing from dW (the oracle with token 0 ignored).
    auto dropped = ref;
    for (std::int64_t k = 0; k < 96; ++k) dropped[1].values[k] = 0;
    auto without0 = in;
    without0[2].values[0] = -100;
    dropped[2] = run_oracle(lce(), s, without0)[2];
    const auto bad = mismatches(s, dt, dropped, ref, false);
    EXPECT_GT(bad[1], 0) << to_string(dt);
    EXPECT_GT(bad[2], 0) << to_string(dt);
    // The loss of the wrong class.
    auto wrong = in;
    wrong[2].values[0] = 6;
    EXPECT_GT(mismatches(s, dt, run_oracle(lce(), s, wrong), ref, false)[0], 0) << to_string(dt);
  }
}

TEST(LinearCrossEntropyOracle, AxesReadTokensHiddenVocabOnce) {
  const auto [tokens, hidden, vocab] = LceAxes::of(lce_shape(8192, 4096, 128256));
  EXPECT_EQ(tokens, 8192);
  EXPECT_EQ(hidden, 4096);
  EXPECT_EQ(vocab, 128256);
}

}  // namespace
}  // namespace kwb
