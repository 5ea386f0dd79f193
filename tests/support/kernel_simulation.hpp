// CPU simulations of a kernel's fp32 arithmetic, to check an op's error bound on the host: the
// approximate device intrinsics at their documented worst error, the blocked sums the kernels
// reduce rows with, and the verifier run on the simulated outputs against the op's oracle.
//
//   FastMath fm(seed);                                  // rsqrtf, ex2.approx, expf at their error
//   bounds float s = blocked_sum(terms, /*threads=*/256);      // per-thread serial sums, then a
//   tree OutputCheck o = check_simulated(op, shape, dtype, oracle_out, simulated, /*output=*/0);
//   EXPECT_LT(o.worst_bound_fraction, 0.5);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/verify/sampling.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "harness/worker/verify/verify.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb::sim {

// The device's approximate math, each result off by a seeded random amount within its documented
// maximum error (CUDA C Programming Guide, "Mathematical Functions" and PTX ISA): rsqrtf and
// ex2.approx 2 ulp; expf and exp2f (full precision, as an eager framework's kernels call them)
// 2 ulp; logf 1 ulp.
class FastMath {
 public:
  explicit FastMath(std::uint64_t seed) : rng_(seed) {}
  float rsqrt(float v) { return off_by_ulps(1.0 / std::sqrt(static_cast<double>(v)), 2.0); }
  // ex2.approx.ftz.f32: results below 2^-126 flush to 0.
  float exp2_approx(float v) {
    const float r = off_by_ulps(std::exp2(static_cast<double>(v)), 2.0);
    return std::fabs(r) < std::ldexp(1.0f, -126) ? 0.0f : r;
  }
  float expf(float v) { return off_by_ulps(std::exp(static_cast<double>(v)), 2.0); }
  float exp2f(float v) { return off_by_ulps(std::exp2(static_cast<double>(v)), 2.0); }
  float logf(float v) { return off_by_ulps(std::log(static_cast<double>(v)), 1.0); }

 private:
  float off_by_ulps(double exact, double ulps) {
    std::uniform_real_distribution<double> u(-ulps, ulps);
    if (exact == 0) return 0.0f;
    const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
    return static_cast<float>(exact + u(rng_) * ulp);
  }
  std::mt19937_64 rng_;
};

// A row sum as the kernels reduce: `threads` threads each add their elements in order (thread t
// takes vectors t, t + threads, ... of `vector` elements), then a tree over the threads (warp
// shuffles and shared memory are both pairwise trees up to order).
inline float blocked_sum(std::span<const float> v, int threads, int vector = 1) {
  std::vector<float> part(static_cast<std::size_t>(threads), 0.0f);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t t =
        (i / static_cast<std::size_t>(vector)) % static_cast<std::size_t>(threads);
    part[t] += v[i];
  }
  for (std::size_t width = part.size(); width > 1; width = (width + 1) / 2)
    for (std::size_t i = 0; i < width / 2; ++i) part[i] += part[i + (width + 1) / 2];
  return part[0];
}

// Column sums over rows in two stages, as eager_col_sum and the fused kernels' partials do:
// `parts` partial sums (part p adds rows p, p + parts, ... in order), then those in part order.
inline std::vector<float> column_sums(std::span<const float> v, std::int64_t rows,
                                      std::int64_t cols, int parts) {
  parts = static_cast<int>(std::min<std::int64_t>(parts, rows));
  std::vector<float> out(static_cast<std::size_t>(cols), 0.0f);
  for (std::int64_t c = 0; c < cols; ++c) {
    float total = 0;
    for (int p = 0; p < parts; ++p) {
      float sum = 0;
      for (std::int64_t r = p; r < rows; r += parts)
        sum += v[static_cast<std::size_t>(r * cols + c)];
      total += sum;
    }
    out[static_cast<std::size_t>(c)] = total;
  }
  return out;
}

// The op's inputs for a case, drawn as the device draws them and rounded to each tensor's type.
inline std::vector<HostTensor> case_inputs(const Op& op, const Shape& shape, DType dtype,
                                           std::uint64_t seed) {
  const auto specs = op.tensors(shape, dtype);
  auto in = host_inputs(specs, seed);
  std::size_t k = 0;
  for (const auto& spec : specs) {
    if (spec.is_output) continue;
    const ElemType type = spec.elem_type(dtype);
    if (is_floating(type))
      for (double& v : in[k].values) {
        v = static_cast<double>(static_cast<float>(v));
        if (type == ElemType::bf16) v = round_to_dtype(v, DType::bf16);
        if (type == ElemType::fp16) v = round_to_dtype(v, DType::fp16);
      }
    ++k;
  }
  return in;
}

// The op's oracle on `in` (output shapes from the case's own specs).
inline std::vector<HostTensor> oracle_outputs(const Op& op, const Shape& shape, DType dtype,
                                              const std::vector<HostTensor>& in) {
  auto out = empty_outputs(op.tensors(shape, dtype));
  run_full_oracle(op, shape, in, out);
  return out;
}

// Verifies a simulated output (fp32 values, rounded here to the output's element type, as the
// kernel's store does) against the oracle with the tolerance the op declares for this case.
inline OutputCheck check_simulated(const Op& op, const Shape& shape, DType dtype,
                                   const std::vector<HostTensor>& oracle,
                                   std::span<const float> simulated, std::size_t output,
                                   std::optional<Tolerance> tolerance = std::nullopt) {
  std::vector<TensorSpec> outputs;
  for (auto& s : op.tensors(shape, dtype))
    if (s.is_output) outputs.push_back(s);
  const TensorSpec& spec = outputs.at(output);
  const ElemType elem = spec.elem_type(dtype);
  const HostTensor& ref = oracle.at(output);
  std::vector<double> values(simulated.begin(), simulated.end());
  std::vector<unsigned char> bytes(values.size() * elem_size(elem));
  encode_elements(values.data(), elem, static_cast<std::int64_t>(values.size()), bytes.data());
  Verifier verifier;
  const auto n = static_cast<std::int64_t>(values.size());
  verifier.compare(
      OutputToCheck{spec.name, elem, tolerance ? *tolerance : tolerance_for(spec, dtype), n, false,
                    std::nullopt},
      bytes, ref.values, ErrorMagnitudes{ref.abs_sum, ref.root_sum_sq});
  return verifier.finish(1, 1).outputs.at(0);
}

}  // namespace kwb::sim
