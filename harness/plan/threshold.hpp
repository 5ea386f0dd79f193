// Regression thresholds as written in suite files (and on command lines): "3%" or 0.03.
//
// A threshold is the smallest slowdown a compare treats as a regression, kept as a fraction. A
// bare number of 1 or more is refused rather than guessed at: "3" could mean 3% or 300%.
#pragma once

#include <stdexcept>
#include <string_view>

namespace kwb {

struct ThresholdError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// "2%" -> 0.02, "0.02" -> 0.02, "2.5 %" -> 0.025. The fraction must be finite, above 0 and at
// most 1 (100%). Throws ThresholdError saying what to write instead.
double parse_threshold(std::string_view text);

}  // namespace kwb
