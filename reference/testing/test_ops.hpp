// Names and constants the hidden test-only ops share with their kernels (kernels/testing/).
#pragma once

namespace kwb::testing_ops {

inline constexpr const char* kColsum = "test_colsum";            // fp32 reduction over rows
inline constexpr const char* kLabelNll = "test_label_nll";       // int32 labels, ignore index
inline constexpr const char* kBhsdScale = "test_bhsd_scale";     // [b, h, s, d] sampled on seq
inline constexpr long long kIgnoreIndex = -100;
inline constexpr double kPositionScale = 1.0 / 1024;  // test_bhsd_scale: y += pos * this

}  // namespace kwb::testing_ops
