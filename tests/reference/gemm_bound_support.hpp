// What the GEMM ops' bound tests share: simulating a kernel's roundings on the host (a value to
// a given significand, nearest or truncated; an fp32 accumulator whose additions round or
// truncate as tensor cores may), and checking simulated outputs with the verifier itself, so a
// test sees exactly the per-element bound a case is checked with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "harness/worker/verify/verify.hpp"

namespace kwb {

// Significand bits of each format (with the implicit bit): bf16 8, fp16 11, tf32 11, fp32 24.
inline constexpr int kBf16Bits = 8, kFp16Bits = 11, kTf32Bits = 11, kFp32Bits = 24;
inline int significand_bits(DType dtype) {
  return dtype == DType::bf16 ? kBf16Bits : dtype == DType::fp16 ? kFp16Bits : kFp32Bits;
}

// x to a `bits`-bit significand: nearest (ties to even), or truncated toward zero.
inline double round_bits(double x, int bits, bool truncate = false) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);
  const double scaled = std::ldexp(x, bits - e);
  return std::ldexp(truncate ? std::trunc(scaled) : std::nearbyint(scaled), e - bits);
}

// x stored in `dtype`: its significand, and under fp16's normal range (2^-14) fp16's fixed
// subnormal spacing 2^-24 (bf16 and fp32 share fp32's range, never left by these tests' values).
inline double round_to_storage(double x, DType dtype) {
  if (dtype == DType::fp16 && std::fabs(x) < std::ldexp(1.0, -14)) return std::ldexp(std::nearbyint(std::ldexp(x, 24)), -24);
  return round_bits(x, significand_bits(dtype));
}

// An fp32 accumulator: each addition rounded to nearest (CUDA cores) or truncated (the worse of
// what tensor cores do with the bits an addition drops).
struct Fp32Accumulator {
  bool truncate = false;
  double value = 0;
  void add(double term) { value = round_bits(value + term, kFp32Bits, truncate); }
};

// A dot product of `k_len` terms as a tensor-core GEMM accumulates it: each block of
// kMmaBlockTerms products (an m16n8k16 MMA's k) summed exactly, then added to an fp32 accumulator
// that truncates. Over a long reduction (a vocabulary) truncating every single term instead would
// drift ~k u |y| once a large term sits in the sum, 16x what the MMAs do.
inline constexpr std::int64_t kMmaBlockTerms = 16;
template <class Term>
double mma_dot(std::int64_t k_len, Term term) {
  Fp32Accumulator acc{.truncate = true};
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kMmaBlockTerms) {
    double block = 0;
    for (std::int64_t k = k0; k < std::min(k_len, k0 + kMmaBlockTerms); ++k) block += term(k);
    acc.add(block);
  }
  return acc.value;
}

// What a real kernel's worst element may reach, as a fraction of its bound: the bound puts 8 sigma
// on the random-sign sums (harness/catalogue/tolerance.hpp), and the largest of 10^5..10^6
// Gaussian errors sits at 4.4..4.9 sigma, 0.55..0.62 of it; the deterministic terms are doubled
// (at most 0.5). A model that underestimated a kernel's spread by 1.3x would cross it.
inline constexpr double kWellInsideTheBound = 0.65;

// The verifier's check of one simulated output against the oracle's values and magnitudes, with
// the tolerance the op gives that output at this shape and dtype.
inline OutputCheck check_with_bound(const TensorSpec& spec, DType dtype, const std::vector<double>& got,
                                    const HostTensor& expected) {
  const ElemType elem = spec.elem_type(dtype);
  std::vector<unsigned char> bytes(got.size() * elem_size(elem));
  encode_elements(got.data(), elem, static_cast<std::int64_t>(got.size()), bytes.data());
  Verifier v;
  v.compare(OutputToCheck{spec.name, elem, tolerance_for(spec, dtype), static_cast<std::int64_t>(got.size()), false,
                          std::nullopt},
            bytes, expected.values, {expected.abs_sum, expected.root_sum_sq});
  return v.finish(1, 1).outputs.at(0);
}

}  // namespace kwb
