// softmax_fwd on the host: the fp64 oracle against values worked by hand, its invariants (rows
// sum to 1, a constant added to a row changes nothing, huge logits neither overflow nor
// vanish), rows independent (so the verifier may sample them), the work model, the tolerance
// and the shape lists the kernels' limits rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/catalogue/tolerance.hpp"
#include "reference/softmax.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace softmax_oracle_test {
namespace {

const Op& softmax() { return registered_op("softmax_fwd"); }

Shape shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

std::vector<double> softmax_of(std::int64_t rows, std::int64_t cols, const std::vector<double>& x) {
  const Shape s = shape(rows, cols);
  return run_oracle(softmax(), s, {HostTensor{"x", {rows, cols}, x}})[0].values;
}

TEST(SoftmaxOracle, MatchesValuesWorkedByHand) {
  // Row 0: e^{-2}, e^{-1}, e^0 over 1 + e^-1 + e^-2 = 1.5032147244; row 1: equal logits.
  const auto y = softmax_of(2, 3, {1, 2, 3, -0.5, -0.5, -0.5});
  const double expected[] = {0.0900305732, 0.2447284711, 0.6652409558, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expected[i], 1e-9) << "element " << i;
}

TEST(SoftmaxOracle, SingleColumnRowsAreOne) {
  const auto y = softmax_of(3, 1, {-7.25, 0.125, 1e4});
  for (double v : y) EXPECT_EQ(v, 1.0);
}

TEST(SoftmaxOracle, RowsSumToOneWithEveryValueInZeroOne) {
  const Shape s = shape(5, 1000);
  const auto in = host_inputs(softmax().tensors(s, DType::fp32), 11);
  const auto y = run_oracle(softmax(), s, in)[0].values;
  for (int r = 0; r < 5; ++r) {
    double sum = 0;
    for (int c = 0; c < 1000; ++c) {
      const double v = y[r * 1000 + c];
      EXPECT_GT(v, 0.0);
      EXPECT_LT(v, 1.0);
      sum += v;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << r;
  }
}

TEST(SoftmaxOracle, AddingAConstantToARowChangesNothing) {
  const Shape s = shape(4, 257);
  const auto in = host_inputs(softmax().tensors(s, DType::fp32), 12);
  auto shifted = in;
  const double shift[] = {-300.0, 0.75, 41.5, 1e3};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 257; ++c) shifted[0].values[r * 257 + c] += shift[r];
  const auto y = run_oracle(softmax(), s, in)[0].values;
  const auto ys = run_oracle(softmax(), s, shifted)[0].values;
  // A shift of 1e3 moves each logit by up to half an ulp of 1e3 (~6e-14), so exp changes by
  // that much relatively.
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(ys[i], y[i], 1e-12 * y[i]) << "element " << i;
}

TEST(SoftmaxOracle, HugeLogitsNeitherOverflowNorVanish) {
  // exp(1000) overflows fp64 and exp(-1000) underflows: a naive exp / sum gives inf / inf and
  // 0 / 0. Subtracting the max first gives 1 / (1 + e^-1) and e^-1 / (1 + e^-1).
  const auto y = softmax_of(2, 3, {1000, 999, -1000, -1000, -1000, -1e300});
  EXPECT_NEAR(y[0], 0.7310585786, 1e-9);
  EXPECT_NEAR(y[1], 0.2689414214, 1e-9);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_NEAR(y[3], 0.5, 1e-15);
  EXPECT_NEAR(y[4], 0.5, 1e-15);
  EXPECT_EQ(y[5], 0.0);
  for (double v : y) EXPECT_TRUE(std::isfinite(v));
}

TEST(SoftmaxOracle, OracleOnSomeRowsEqualsThoseRowsOfTheFullOracle) {
  // What the verifier's row sampling relies on: a row's output depends on that row only.
  const Shape s = shape(6, 100);
  const auto in = host_inputs(softmax().tensors(s, DType::fp32), 13);
  const auto full = run_oracle(softmax(), s, in)[0].values;
  std::vector<double> picked;
  for (int r : {1, 4})
    picked.insert(picked.end(), in[0].values.begin() + r * 100, in[0].values.begin() + (r + 1) * 100);
  const auto sub = softmax_of(2, 100, picked);
  for (int c = 0; c < 100; ++c) {
    EXPECT_EQ(sub[c], full[100 + c]);
    EXPECT_EQ(sub[100 + c], full[400 + c]);
  }
}

TEST(SoftmaxWork, BytesAreOneReadOfXAndOneWriteOfY) {
  const Shape s = shape(16, 8);
  EXPECT_EQ(softmax().work(s, DType::bf16).bytes, 2 * 16 * 8 * 2);
  EXPECT_EQ(softmax().work(s, DType::fp16).bytes, 2 * 16 * 8 * 2);
  EXPECT_EQ(softmax().work(s, DType::fp32).bytes, 2 * 16 * 8 * 4);
  EXPECT_EQ(softmax().work(s, DType::bf16).flops, 5 * 16 * 8);
}

Tolerance y_tolerance(std::int64_t cols, DType dtype) {
  return *softmax().tensors(shape(1, cols), dtype)[1].tolerance;
}

TEST(SoftmaxTolerance, BoundIsRelativeToEachOutputAndGrowsWithTheRow) {
  const double u = std::ldexp(1.0, -24);
  // fp32: 2 u32 |y| for the store, c u32 A from the magnitudes; no flat relative part.
  const Tolerance t = y_tolerance(262144, DType::fp32);
  EXPECT_EQ(t.rtol, 2 * u);
  EXPECT_EQ(t.abs_sum_scale, kFp32BoundSafety * u);
  // The magnitudes: y_i (sqrt(K) + |x_i - max| + sum_k y_k |x_k - max| + 2), so the element at
  // the max of a row {0, -1} (y = 1/(1+e^-1)) has A = y (sqrt 2 + 0 + y_1 * 1 + 2).
  const auto out = run_oracle(softmax(), shape(1, 2), {{"x", {1, 2}, {0.0, -1.0}}});
  const double y0 = 1 / (1 + std::exp(-1.0)), y1 = 1 - y0;
  ASSERT_EQ(out[0].abs_sum.size(), 2u);
  EXPECT_NEAR(out[0].abs_sum[0], y0 * (std::sqrt(2.0) + 0 + y1 + 2), 1e-12);
  EXPECT_NEAR(out[0].abs_sum[1], y1 * (std::sqrt(2.0) + 1 + y1 + 2), 1e-12);
  // A long row's bound grows with sqrt(K) and stays relative: at 256K columns about
  // 8 u (512 + ~10) ~ 2.5e-4 of each output.
  const Shape s = shape(1, 262144);
  const auto long_row = run_oracle(softmax(), s, host_inputs(softmax().tensors(s, DType::fp32), 14))[0];
  double worst_relative = 0;
  for (std::size_t i = 0; i < long_row.values.size(); ++i)
    worst_relative = std::max(worst_relative, t.abs_sum_scale * long_row.abs_sum[i] / long_row.values[i]);
  EXPECT_GT(worst_relative, 8 * u * 512);
  EXPECT_LT(worst_relative, 8 * u * 600);
  // The outputs of a 256K row of N(0, 2) logits are ~4e-6 on average and far smaller at the
  // tail: the absolute part must sit below all of them or it would check nothing.
  const double smallest = *std::min_element(long_row.values.begin(), long_row.values.end());
  EXPECT_GT(smallest, 0.0);
  for (DType d : {DType::fp32, DType::bf16}) EXPECT_LT(y_tolerance(262144, d).atol, 1e-6 * smallest);
  // fp16 keeps only what its subnormal spacing can hold.
  EXPECT_EQ(y_tolerance(262144, DType::fp16).atol, std::ldexp(1.0, -24));
  // bf16 and fp16: the store's rounding, twice its unit roundoff, as the relative floor.
  EXPECT_EQ(y_tolerance(7, DType::bf16).rtol, 2 * std::ldexp(1.0, -8));
  EXPECT_EQ(y_tolerance(7, DType::fp16).rtol, 2 * std::ldexp(1.0, -11));
}

TEST(SoftmaxShapes, DefaultsHoldThePeerShapeAndSpanVocabularySizedRows) {
  const Op& op = softmax();
  bool peer = false;
  std::int64_t shortest = 1 << 30, longest = 0;
  bool odd = false;
  for (const Shape& s : op.default_shapes) {
    const std::int64_t rows = s.at("rows"), cols = s.at("cols");
    peer |= rows == 16384 && cols == 4096;
    odd |= cols % 8 != 0;
    shortest = std::min(shortest, cols);
    longest = std::max(longest, cols);
    const double bf16_bytes = static_cast<double>(rows * cols * 2);
    EXPECT_GE(bf16_bytes, 64.0 * (1 << 20)) << s.to_compact();
    EXPECT_LE(bf16_bytes * 2, 2.0 * (1 << 30)) << "fp32 tensor of " << s.to_compact();
    EXPECT_FALSE(op.invalid(s)) << s.to_compact();
  }
  EXPECT_TRUE(peer) << "TARGETS.md's 16384 x 4096 must be swept";
  EXPECT_TRUE(odd) << "a row that is not a multiple of the 16-byte vector";
  EXPECT_EQ(shortest, 1024);
  EXPECT_EQ(longest, kSoftmaxLongestRow);
}

TEST(SoftmaxShapes, EdgeShapesReachOnePastEveryKernelLimit) {
  std::int64_t longest = 0;
  bool past_fp32_warp = false, past_half_warp = false;
  bool past_fp32_registers = false, past_half_registers = false, past_fp32_cluster = false;
  for (const Shape& s : softmax().edge_shapes) {
    const std::int64_t cols = s.at("cols");
    longest = std::max(longest, cols);
    past_fp32_warp |= cols == 1025;  // fused_v4_warp_per_row: 4 KiB per warp
    past_half_warp |= cols == 2049;
    past_fp32_registers |= cols == kSoftmaxRegisterRowBytes / 4 + 1;
    past_half_registers |= cols == kSoftmaxRegisterRowBytes / 2 + 1;
    past_fp32_cluster |= cols == kSoftmaxClusterRowBytes / 4 + 1;
    EXPECT_LE(s.at("rows") * cols, 600000) << "small enough for compute-sanitizer: " << s.to_compact();
  }
  EXPECT_TRUE(past_fp32_warp);
  EXPECT_TRUE(past_half_warp);
  EXPECT_TRUE(past_fp32_registers);
  EXPECT_TRUE(past_half_registers);
  EXPECT_TRUE(past_fp32_cluster);
  EXPECT_GT(longest, kSoftmaxClusterRowBytes / 2) << "past the bf16/fp16 cluster limit";
}

}  // namespace
}  // namespace softmax_oracle_test
}  // namespace kwb
