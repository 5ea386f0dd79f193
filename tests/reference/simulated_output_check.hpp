// Checking a CPU simulation of a kernel against an op's oracle exactly as the worker checks the
// device's output: values encoded to the output's element type, then the Verifier with the
// op's own tolerance and the oracle's error magnitudes. The error-bound tests (attention, mHC,
// QK-norm) simulate each real variant's rounding steps and each planted defect with this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "harness/worker/verify/verify.hpp"

namespace kwb {

// `got` holds the simulated output (one value per element of `expected`); it is rounded to
// `elem` here, as storing it on the device would.
inline OutputCheck check_simulated(const std::string& name, ElemType elem, const Tolerance& tolerance,
                                   const std::vector<double>& got, const HostTensor& expected) {
  std::vector<unsigned char> bytes(got.size() * elem_size(elem));
  encode_elements(got.data(), elem, static_cast<std::int64_t>(got.size()), bytes.data());
  Verifier verifier(DType::fp32, tolerance);
  verifier.compare(OutputToCheck{name, elem, tolerance, static_cast<std::int64_t>(got.size()), false, std::nullopt},
                   bytes, expected.values, ErrorMagnitudes{expected.abs_sum, expected.root_sum_sq});
  return verifier.finish(1, 1).outputs.at(0);
}

// The value a float computation holds after rounding to `type` (fp32, fp16, bf16).
inline float round_float_to(float value, ElemType type) {
  switch (type) {
    case ElemType::bf16: return bf16_bits_to_float(float_to_bf16_bits(value));
    case ElemType::fp16: return half_bits_to_float(float_to_half_bits(value));
    default: return value;
  }
}

}  // namespace kwb
