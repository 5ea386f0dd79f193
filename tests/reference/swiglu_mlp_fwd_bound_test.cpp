// swiglu_mlp_fwd's error bound against simulated kernels: the fused variant (gate/up on the
// tensor cores, tf32 in fp32 cases, h = silu(g) * u rounded once in the epilogue, the down GEMM by
// cuBLASLt in tf32 for fp32) and the eager baseline (g, silu(g), u and h each rounded to the
// dtype, GEMMs in full fp32 for fp32), every GEMM accumulating in fp32 with truncating additions;
// checked by the verifier with the op's tolerance and the oracle's magnitudes. Real kernels stay
// well inside (worst element under kWellInsideTheBound), at the default f and at edge shapes;
// defects fail.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference/swiglu_mlp.hpp"
#include "tests/reference/gemm_bound_support.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace swiglu_mlp_fwd_bound_test {
namespace {

const Op& op() { return registered_op("swiglu_mlp_fwd"); }

enum class Kernel {
  fused,
  baseline,
  gate_up_swapped,  // defect: silu(u) * g
  h_in_fp8_like,    // defect: h kept to 4 significand bits (a narrower intermediate than declared)
};

std::vector<HostTensor> device_inputs(const Shape& s, DType dtype, std::uint64_t seed) {
  auto in = host_inputs(op().tensors(s, dtype), seed);
  for (auto& t : in)
    for (double& x : t.values) x = round_bits(x, significand_bits(dtype));
  return in;
}

double f32(double x) { return round_bits(x, kFp32Bits); }
double silu(double g) { return f32(g / f32(1.0 + f32(std::exp(-g)))); }

std::vector<double> simulate(Kernel kernel, const Shape& s, DType dtype, const std::vector<HostTensor>& in) {
  const auto [m, d, f] = SwigluMlpAxes::of(s);
  const int io = significand_bits(dtype);
  const bool tf32 = dtype == DType::fp32 && kernel != Kernel::baseline;
  auto operand = [tf32](double v) { return tf32 ? round_bits(v, kTf32Bits) : v; };
  auto dot = [&](const double* a, const double* b, std::int64_t k, std::int64_t stride_b) {
    Fp32Accumulator acc{.truncate = true};
    for (std::int64_t p = 0; p < k; ++p) acc.add(operand(a[p]) * operand(b[p * stride_b]));
    return acc.value;
  };
  const auto &x = in[0].values, &wg = in[1].values, &wu = in[2].values, &wd = in[3].values;
  std::vector<double> h(f), y(m * d);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < f; ++j) {
      double g = dot(&x[i * d], &wg[j * d], d, 1), u = dot(&x[i * d], &wu[j * d], d, 1);
      if (kernel == Kernel::baseline) {
        g = round_bits(g, io), u = round_bits(u, io);
        h[j] = round_bits(f32(round_bits(silu(g), io) * u), io);
      } else if (kernel == Kernel::gate_up_swapped) {
        h[j] = round_bits(f32(silu(u) * g), io);
      } else {
        h[j] = round_bits(f32(silu(g) * u), kernel == Kernel::h_in_fp8_like ? 4 : io);
      }
    }
    for (std::int64_t c = 0; c < d; ++c) y[i * d + c] = round_bits(dot(h.data(), &wd[c * f], f, 1), io);
  }
  return y;
}

OutputCheck check(Kernel kernel, const Shape& s, DType dtype, std::uint64_t seed) {
  const auto in = device_inputs(s, dtype, seed);
  const auto ref = run_oracle(op(), s, in);
  return check_with_bound(op().tensors(s, dtype)[4], dtype, simulate(kernel, s, dtype, in), ref[0]);
}

std::string describe(const Shape& s, DType dtype, const OutputCheck& c) {
  return std::string(to_string(dtype)) + " " + s.to_assignments() + ": worst element " +
         std::to_string(c.worst_bound_fraction) + " of its bound, " + std::to_string(c.mismatches) + " mismatches";
}

TEST(SwigluMlpFwdBound, RealKernelsStayWellInsideTheBoundInEveryDtype) {
  // The default f (11008, 14336) with few rows, and the op's small edge shapes, over a few seeds.
  const std::vector<Shape> shapes{swiglu_mlp_shape(2, 16, 14336), swiglu_mlp_shape(1, 1, 1),
                                  swiglu_mlp_shape(3, 5, 7),       swiglu_mlp_shape(7, 33, 65),
                                  swiglu_mlp_shape(65, 127, 129),  swiglu_mlp_shape(16, 64, 1000)};
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16})
    for (Kernel kernel : {Kernel::fused, Kernel::baseline})
      for (const Shape& s : shapes)
        for (std::uint64_t seed : {3u, 4u, 5u}) {
          const OutputCheck c = check(kernel, s, dtype, seed);
          EXPECT_TRUE(c.passed) << static_cast<int>(kernel) << " " << describe(s, dtype, c);
          EXPECT_LT(c.worst_bound_fraction, kWellInsideTheBound)
              << static_cast<int>(kernel) << " " << describe(s, dtype, c);
        }
}

TEST(SwigluMlpFwdBound, SwappedGateAndUpOrANarrowerHFails) {
  const Shape s = swiglu_mlp_shape(16, 64, 1000);
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    const OutputCheck swapped = check(Kernel::gate_up_swapped, s, dtype, 3);
    EXPECT_FALSE(swapped.passed) << describe(s, dtype, swapped);
    EXPECT_GT(swapped.worst_bound_fraction, 5.0) << describe(s, dtype, swapped);
    const OutputCheck narrow = check(Kernel::h_in_fp8_like, s, dtype, 3);
    EXPECT_FALSE(narrow.passed) << describe(s, dtype, narrow);
  }
}

}  // namespace
}  // namespace swiglu_mlp_fwd_bound_test
}  // namespace kwb
