// softmax_fwd's error bound against CPU simulations of its kernels' arithmetic
// (kernels/softmax_fwd/): the eager baseline (expf, a row sum, a division) and the fused online
// softmax (ex2.approx of (x - max) log2 e, per-thread (max, sum) states combined in a tree with
// rescaling, one reciprocal) stay well inside the bound at the edge shapes in every dtype, and a
// logit scale off by 1% fails it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "tests/support/kernel_simulation.hpp"

namespace kwb {
namespace softmax_bounds_test {
namespace {

using sim::FastMath;

Shape shape(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}

constexpr float kLog2e = 1.4426950408889634f;

// baseline_eager_7_launches: max, z = x - max, e = expf(z), a row sum, p = e / sum.
std::vector<float> eager(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                         FastMath& fm, float scale = 1.0f) {
  std::vector<float> y(x.size()), e(cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * cols;
    const float max = *std::max_element(xr, xr + cols) * scale;
    for (std::int64_t c = 0; c < cols; ++c) e[c] = fm.expf(xr[c] * scale - max);
    const float sum = sim::blocked_sum(e, 256);
    for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = e[c] / sum;
  }
  return y;
}

// The fused kernels' online softmax (online_softmax.cuh): each thread a (max, sum) state over
// its elements, taken `chunk` elements at a time (the state rescaled as its max moves, as
// fused_v2 does; chunk = all: the row-in-registers kernels), then combined over the threads in a
// tree; y = exp2((x - max) log2 e) * (1 / sum).
struct MaxSum {
  float max, sum;
};
MaxSum combine(MaxSum a, MaxSum b, FastMath& fm) {
  const float max = std::fmax(a.max, b.max);
  const float sa = a.sum > 0 ? a.sum * fm.exp2_approx((a.max - max) * kLog2e) : 0.0f;
  const float sb = b.sum > 0 ? b.sum * fm.exp2_approx((b.max - max) * kLog2e) : 0.0f;
  return {max, sa + sb};
}

std::vector<float> online(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                          FastMath& fm, int chunk) {
  const int threads = static_cast<int>(std::clamp<std::int64_t>(cols / 8, 1, 1024));
  std::vector<float> y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * cols;
    std::vector<MaxSum> state(static_cast<std::size_t>(threads), MaxSum{-INFINITY, 0.0f});
    std::vector<std::vector<float>> mine(static_cast<std::size_t>(threads));
    for (std::int64_t c = 0; c < cols; ++c)
      mine[static_cast<std::size_t>((c / 4) % threads)].push_back(xr[c]);
    for (int t = 0; t < threads; ++t) {
      const auto& v = mine[static_cast<std::size_t>(t)];
      for (std::size_t begin = 0; begin < v.size(); begin += static_cast<std::size_t>(chunk)) {
        const std::size_t end = std::min(v.size(), begin + static_cast<std::size_t>(chunk));
        MaxSum part{*std::max_element(v.begin() + begin, v.begin() + end), 0.0f};
        for (std::size_t k = begin; k < end; ++k)
          part.sum += fm.exp2_approx((v[k] - part.max) * kLog2e);
        state[static_cast<std::size_t>(t)] = combine(state[static_cast<std::size_t>(t)], part, fm);
      }
    }
    for (std::size_t width = state.size(); width > 1; width = (width + 1) / 2)
      for (std::size_t i = 0; i < width / 2; ++i)
        state[i] = combine(state[i], state[i + (width + 1) / 2], fm);
    const float inv_sum = 1.0f / state[0].sum;
    for (std::int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = fm.exp2_approx((xr[c] - state[0].max) * kLog2e) * inv_sum;
  }
  return y;
}

OutputCheck check(const Shape& s, DType dtype, int variant, std::uint64_t seed) {
  const Op& op = registered_op("softmax_fwd");
  const auto in = sim::case_inputs(op, s, dtype, seed);
  const auto ref = sim::oracle_outputs(op, s, dtype, in);
  const std::vector<float> x(in[0].values.begin(), in[0].values.end());
  FastMath fm(seed + 101);
  const std::int64_t rows = s.at("rows"), cols = s.at("cols");
  const std::vector<float> y = variant == 0   ? eager(x, rows, cols, fm)
                               : variant == 1 ? online(x, rows, cols, fm, 1 << 30)
                                              : online(x, rows, cols, fm, 8);
  return sim::check_simulated(op, s, dtype, ref, y, 0);
}

TEST(SoftmaxBounds, SimulatedVariantsStayWellInsideTheBoundAtTheEdgeShapes) {
  const char* names[] = {"baseline_eager_7_launches", "fused row in registers (v1, v4)",
                         "fused online two pass (v2)"};
  double worst_fp32 = 0;
  for (int variant = 0; variant < 3; ++variant)
    for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
      for (const Shape& s : {shape(7, 1), shape(7, 7), shape(7, 33), shape(7, 1000), shape(7, 4100),
                             shape(7, 2049), shape(3, 16385), shape(2, 131073)}) {
        const OutputCheck o = check(s, dtype, variant, 21);
        EXPECT_TRUE(o.passed) << names[variant] << " " << to_string(dtype) << " " << s.to_compact();
        // bf16 and fp16: the store alone may use 0.5 of the bound (its 2 u_out share).
        EXPECT_LT(o.worst_bound_fraction, dtype == DType::fp32 ? 0.4 : 0.6)
            << names[variant] << " " << to_string(dtype) << " " << s.to_compact();
        if (dtype == DType::fp32) worst_fp32 = std::max(worst_fp32, o.worst_bound_fraction);
        if (std::getenv("KWB_PRINT_BOUNDS"))
          std::cout << names[variant] << " " << to_string(dtype) << " " << s.to_compact() << " "
                    << o.worst_bound_fraction << "\n";
      }
  // Tight: the fp32 arithmetic uses a visible share of its bound, not a thousandth of it.
  EXPECT_GT(worst_fp32, 0.02);
}

TEST(SoftmaxBounds, ALogitScaleOffByOnePercentFails) {
  const Op& op = registered_op("softmax_fwd");
  for (DType dtype : {DType::fp32, DType::bf16}) {
    const Shape s = shape(7, 4100);
    const auto in = sim::case_inputs(op, s, dtype, 3);
    const auto ref = sim::oracle_outputs(op, s, dtype, in);
    const std::vector<float> x(in[0].values.begin(), in[0].values.end());
    FastMath fm(5);
    const OutputCheck o = sim::check_simulated(op, s, dtype, ref, eager(x, 7, 4100, fm, 1.01f), 0);
    EXPECT_FALSE(o.passed) << to_string(dtype);
    EXPECT_GT(o.mismatches, 7 * 4100 / 4)
        << to_string(dtype) << ": most of the row moves by more than its bound";
  }
}

}  // namespace
}  // namespace softmax_bounds_test
}  // namespace kwb
