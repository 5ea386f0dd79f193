// The mHC-lite ops' error bounds (reference/mhc_pre_map.cpp, mhc_post_res.cpp,
// mhc_rmsnorm_project.cpp) against CPU simulations of their kernels, checked by the Verifier as a
// device output is: each output computed in fp32 and rounded once, as every real variant does,
// stays well inside; an fp32 coefficient rounded to bf16 before the mix (an error the old flat
// bf16 atol of 8e-3 let through) fails.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "reference/mhc.hpp"
#include "tests/reference/gemm_bound_support.hpp"
#include "tests/reference/simulated_output_check.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace mhc_error_bound_test {
namespace {

constexpr std::int64_t n = kMhcStreams;

std::vector<HostTensor> device_inputs(const Op& op, const Shape& s, DType dtype, std::uint64_t seed) {
  const auto specs = op.tensors(s, dtype);
  auto in = host_inputs(specs, seed);
  std::size_t i = 0;
  for (const auto& spec : specs) {
    if (spec.is_output) continue;
    const ElemType type = spec.elem_type(dtype);
    for (double& x : in[i].values) x = round_float_to(static_cast<float>(x), type);
    ++i;
  }
  return in;
}

// Edge and default-like sizes (T small: the bound is per element).
std::vector<Shape> shapes() { return {mhc_shape(1, 1), mhc_shape(7, 33), mhc_shape(5, 1003), mhc_shape(9, 1024)}; }

// A fused kernel's fp32 coefficient, or the defect's (rounded to bf16 first).
float coefficient(double c, bool rounded_to_bf16) {
  return rounded_to_bf16 ? round_float_to(static_cast<float>(c), ElemType::bf16) : static_cast<float>(c);
}

struct Result {
  OutputCheck real, defect;
};

// X[t, c] = sum_i h_pre[t, i] H[t, i, c] in fp32, rounded once.
Result pre_map_fwd(const Shape& s, DType dtype, std::uint64_t seed) {
  const Op& op = registered_op("mhc_pre_map_fwd");
  const auto [T, C] = MhcAxes::of(s);
  const auto in = device_inputs(op, s, dtype, seed);
  const auto expected = run_oracle(op, s, in);
  const ElemType out = elem_type_of(dtype);
  auto simulate = [&](bool defect) {
    std::vector<double> x(static_cast<std::size_t>(T * C));
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < C; ++c) {
        float sum = 0;
        for (std::int64_t i = 0; i < n; ++i)
          sum = std::fma(coefficient(in[1].values[t * n + i], defect),
                         static_cast<float>(in[0].values[(t * n + i) * C + c]), sum);
        x[t * C + c] = round_float_to(sum, out);
      }
    return x;
  };
  const Tolerance tol = *op.tensors(s, dtype)[2].tolerance;
  return {check_simulated("X", out, tol, simulate(false), expected[0]),
          check_simulated("X", out, tol, simulate(true), expected[0])};
}

// Hout[t, i, c] = sum_j R[t, i, j] H[t, j, c] + h_post[t, i] F[t, c] in fp32, rounded once.
Result post_res_fwd(const Shape& s, DType dtype, std::uint64_t seed) {
  const Op& op = registered_op("mhc_post_res_fwd");
  const auto [T, C] = MhcAxes::of(s);
  const auto in = device_inputs(op, s, dtype, seed);  // H, F, R, h_post
  const auto expected = run_oracle(op, s, in);
  const ElemType out = elem_type_of(dtype);
  auto simulate = [&](bool defect) {
    std::vector<double> h(static_cast<std::size_t>(T * n * C));
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < C; ++c) {
          float v = static_cast<float>(in[3].values[t * n + i]) * static_cast<float>(in[1].values[t * C + c]);
          for (std::int64_t j = 0; j < n; ++j)
            v = std::fma(coefficient(in[2].values[(t * n + i) * n + j], defect),
                         static_cast<float>(in[0].values[(t * n + j) * C + c]), v);
          h[(t * n + i) * C + c] = round_float_to(v, out);
        }
    return h;
  };
  const Tolerance tol = *op.tensors(s, dtype)[4].tolerance;
  return {check_simulated("Hout", out, tol, simulate(false), expected[0]),
          check_simulated("Hout", out, tol, simulate(true), expected[0])};
}

// dH[t, j, c] = sum_i R[t, i, j] dHout[t, i, c] and dF[t, c] = sum_i h_post[t, i] dHout[t, i, c].
std::pair<Result, Result> post_res_bwd(const Shape& s, DType dtype, std::uint64_t seed) {
  const Op& op = registered_op("mhc_post_res_bwd");
  const auto [T, C] = MhcAxes::of(s);
  const auto in = device_inputs(op, s, dtype, seed);  // H, F, R, h_post, dHout
  const auto expected = run_oracle(op, s, in);
  const ElemType out = elem_type_of(dtype);
  auto simulate = [&](bool defect, bool stream_grad) {
    std::vector<double> g(static_cast<std::size_t>(stream_grad ? T * n * C : T * C));
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t j = 0; j < (stream_grad ? n : 1); ++j) {
          float v = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            const double coef = stream_grad ? in[2].values[(t * n + i) * n + j] : in[3].values[t * n + i];
            v = std::fma(coefficient(coef, defect), static_cast<float>(in[4].values[(t * n + i) * C + c]), v);
          }
          g[stream_grad ? (t * n + j) * C + c : t * C + c] = round_float_to(v, out);
        }
    return g;
  };
  const auto specs = op.tensors(s, dtype);
  return {{check_simulated("dH", out, *specs[5].tolerance, simulate(false, true), expected[0]),
           check_simulated("dH", out, *specs[5].tolerance, simulate(true, true), expected[0])},
          {check_simulated("dF", out, *specs[6].tolerance, simulate(false, false), expected[1]),
           check_simulated("dF", out, *specs[6].tolerance, simulate(true, false), expected[1])}};
}

TEST(MhcErrorBound, StreamMixesInFp32StayInsideAndBf16CoefficientsFail) {
  std::uint64_t seed = 600;
  for (const Shape& s : shapes())
    for (DType dtype : {DType::fp32, DType::bf16}) {
      const std::string where = s.to_compact() + " " + std::string(to_string(dtype));
      const Result x = pre_map_fwd(s, dtype, ++seed);
      const Result h = post_res_fwd(s, dtype, ++seed);
      const auto [dh, df] = post_res_bwd(s, dtype, ++seed);
      for (const Result* r : {&x, &h, &dh, &df}) {
        EXPECT_LT(r->real.worst_bound_fraction, 0.85) << r->real.name << " " << where;
        // One coefficient rounded to bf16 moves a term by up to 2^-9 of it: caught wherever a
        // few hundred elements give it the chance (every shape here but 1 x 1).
        if (mhc_token_channels(s) >= 100) EXPECT_GT(r->defect.mismatches, 0) << r->defect.name << " " << where;
      }
    }
}

TEST(MhcErrorBound, PreMapGradientToTheStreamsIsOneProductOneRounding) {
  const Op& op = registered_op("mhc_pre_map_bwd_dx");
  std::uint64_t seed = 700;
  for (const Shape& s : shapes())
    for (DType dtype : {DType::fp32, DType::bf16}) {
      const auto [T, C] = MhcAxes::of(s);
      const auto in = device_inputs(op, s, dtype, ++seed);  // h_pre, dX
      const auto expected = run_oracle(op, s, in);
      std::vector<double> dh(static_cast<std::size_t>(T * n * C));
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t c = 0; c < C; ++c)
            dh[(t * n + i) * C + c] = round_float_to(
                static_cast<float>(in[0].values[t * n + i]) * static_cast<float>(in[1].values[t * C + c]),
                elem_type_of(dtype));
      const auto c = check_simulated("dH", elem_type_of(dtype), *op.tensors(s, dtype)[2].tolerance, dh, expected[0]);
      EXPECT_LT(c.worst_bound_fraction, 0.85) << s.to_compact() << " " << to_string(dtype);
    }
}

// dH = r g - (r^3 / K) s h with g = dZ W^T (32 terms) and s = h . g (K terms), in fp32: the
// FMA kernel (a warp per token: lanes sum K / 32 terms each) and the bf16 tensor-core kernel's
// split of dZ into two bf16 halves.
TEST(MhcErrorBound, RmsnormProjectBackwardStaysInsideItsBound) {
  const Op& op = registered_op("mhc_rmsnorm_project_bwd_dx");
  std::uint64_t seed = 800;
  for (const Shape& s : shapes())
    for (DType dtype : {DType::fp32, DType::bf16}) {
      const auto [T, C] = MhcAxes::of(s);
      const std::int64_t K = n * C, P = kMhcProjectWidth;
      const auto in = device_inputs(op, s, dtype, ++seed);  // H, W, r, dZ
      const auto expected = run_oracle(op, s, in);
      ASSERT_EQ(expected[0].abs_sum.size(), expected[0].values.size());
      std::vector<double> dh(static_cast<std::size_t>(T * K));
      for (const bool split_dz : {false, true}) {
        if (split_dz && dtype != DType::bf16) continue;
        for (std::int64_t t = 0; t < T; ++t) {
          std::vector<float> dz(static_cast<std::size_t>(P)), g(static_cast<std::size_t>(K));
          for (std::int64_t p = 0; p < P; ++p) {
            const float full = static_cast<float>(in[3].values[t * P + p]);
            const float hi = round_float_to(full, ElemType::bf16);
            dz[p] = split_dz ? hi + round_float_to(full - hi, ElemType::bf16) : full;
          }
          float lane_sums[32] = {};
          for (std::int64_t k = 0; k < K; ++k) {
            float gk = 0;
            for (std::int64_t p = 0; p < P; ++p) gk = std::fma(dz[p], static_cast<float>(in[1].values[k * P + p]), gk);
            g[k] = gk;
            lane_sums[k % 32] = std::fma(static_cast<float>(in[0].values[t * K + k]), gk, lane_sums[k % 32]);
          }
          float sum = 0;
          for (const float x : lane_sums) sum += x;
          const float r = static_cast<float>(in[2].values[t]);
          const float coef = r * r * r * sum / static_cast<float>(K);
          for (std::int64_t k = 0; k < K; ++k)
            dh[t * K + k] = round_float_to(r * g[k] - coef * static_cast<float>(in[0].values[t * K + k]),
                                           elem_type_of(dtype));
        }
        const auto c = check_simulated("dH", elem_type_of(dtype), *op.tensors(s, dtype)[4].tolerance, dh, expected[0]);
        EXPECT_LT(c.worst_bound_fraction, 0.85) << s.to_compact() << " " << to_string(dtype) << " split " << split_dz;
      }
    }
}


// Z = r (h @ W) as the bf16 tensor-core kernels sum it (blocks of 16 products added to an fp32
// accumulator that truncates; K = 16384 as at the default 32768 x 4096) and as the FMA kernels do
// (a warp per token: 32 lane sums rounded to nearest, then the lanes added): both well inside the
// bound. A kernel that drops the last K value (an edge bug, |h W| ~ 1 / sqrt(K) off) fails.
TEST(MhcErrorBound, RmsnormProjectForwardCoversTruncatingMmaBlocks) {
  const Op& op = registered_op("mhc_rmsnorm_project_fwd");
  std::uint64_t seed = 900;
  for (const Shape& s : {mhc_shape(1, 1), mhc_shape(3, 33), mhc_shape(5, 1003), mhc_shape(8, 4096)})
    for (DType dtype : {DType::fp32, DType::bf16}) {
      const auto [T, C] = MhcAxes::of(s);
      const std::int64_t K = n * C, P = kMhcProjectWidth;
      const auto in = device_inputs(op, s, dtype, ++seed);  // H, W
      const auto expected = run_oracle(op, s, in);
      ASSERT_EQ(expected[0].root_sum_sq.size(), expected[0].values.size());
      const double* h = in[0].values.data();
      const double* w = in[1].values.data();
      auto simulate = [&](bool mma, std::int64_t k_used) {
        std::vector<double> z(static_cast<std::size_t>(T * P));
        for (std::int64_t t = 0; t < T; ++t) {
          double sum_sq = 0;
          for (std::int64_t k = 0; k < K; ++k) sum_sq += h[t * K + k] * h[t * K + k];
          const float r = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(K) + kMhcRmsEps));
          for (std::int64_t p = 0; p < P; ++p) {
            float dot = 0;
            if (mma) {
              dot = static_cast<float>(mma_dot(k_used, [&](std::int64_t k) { return h[t * K + k] * w[k * P + p]; }));
            } else {
              float lanes[32] = {};
              for (std::int64_t k = 0; k < k_used; ++k)
                lanes[k % 32] = std::fma(static_cast<float>(h[t * K + k]), static_cast<float>(w[k * P + p]), lanes[k % 32]);
              for (const float x : lanes) dot += x;
            }
            z[t * P + p] = r * dot;
          }
        }
        return z;
      };
      const Tolerance tolerance = *op.tensors(s, dtype)[2].tolerance;  // a copy: tensors() returns a temporary
      for (const bool mma : {false, true}) {
        if (mma && dtype != DType::bf16) continue;
        const std::string where = s.to_compact() + " " + std::string(to_string(dtype)) + (mma ? " mma" : " fma");
        const auto real = check_simulated("Z", ElemType::fp32, tolerance, simulate(mma, K), expected[0]);
        EXPECT_LT(real.worst_bound_fraction, kWellInsideTheBound) << where;
        if (C >= 1003) {
          const auto defect = check_simulated("Z", ElemType::fp32, tolerance, simulate(mma, K - 1), expected[0]);
          EXPECT_GT(defect.mismatches, defect.elements_checked / 2) << where;
        }
      }
    }
}

}  // namespace
}  // namespace mhc_error_bound_test
}  // namespace kwb
