// Names and constants the hidden test-only ops share with their kernels (kernels/testing/).
#pragma once

#include <cstdint>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/types.hpp"

namespace kwb::testing_ops {

inline constexpr const char* kColsum = "test_colsum";            // fp32 reduction over rows
inline constexpr const char* kLabelNll = "test_label_nll";       // int32 labels, ignore index
inline constexpr const char* kBhsdScale = "test_bhsd_scale";     // [b, h, s, d] sampled on seq
inline constexpr const char* kDerivedCopy = "test_derived_copy";  // a derived input, copied out
inline constexpr long long kIgnoreIndex = -100;
inline constexpr double kPositionScale = 1.0 / 1024;  // test_bhsd_scale: y += pos * this

// test_label_nll's axes, read once: logits [rows, vocab].
struct LabelNllAxes {
  std::int64_t rows, vocab;
  static LabelNllAxes of(const Shape& s) { return {s.at("rows"), s.at("vocab")}; }
};

// test_bhsd_scale's axes, read once: x and y [batch, heads, seq, dim].
struct BhsdScaleAxes {
  std::int64_t batch, heads, seq, dim;
  static BhsdScaleAxes of(const Shape& s) { return {s.at("batch"), s.at("heads"), s.at("seq"), s.at("dim")}; }
  std::int64_t numel() const { return batch * heads * seq * dim; }
};

// test_derived_copy's derive_inputs (kernels/testing/test_op_kernels.cu): y = 2 x, over every
// element, or (axis written=half, a planted defect) over the first half only.
void derived_copy_derive(const LaunchArgs& args);

}  // namespace kwb::testing_ops
