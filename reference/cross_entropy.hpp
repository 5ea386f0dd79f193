// Constants of the cross_entropy contract that its kernels share with the oracle.
#pragma once

#include <cstdint>

#include "harness/catalogue/types.hpp"

namespace kwb {

// The axes of a case, read once: const auto [tokens, vocab] = CrossEntropyAxes::of(a.shape).
struct CrossEntropyAxes {
  std::int64_t tokens = 0;  // rows of logits
  std::int64_t vocab = 0;   // classes per row
  static CrossEntropyAxes of(const Shape& s) { return {s.at("tokens"), s.at("vocab")}; }
};

// PyTorch's default ignore_index: a token labelled so counts neither in the loss nor in the mean.
inline constexpr int kCrossEntropyIgnoreIndex = -100;

// A label takes part in the loss when it names a class. -100 is the documented way to skip a
// token; any other label outside [0, vocab) is skipped the same way (PyTorch device-asserts
// instead), so that no kernel ever indexes a row out of bounds.
inline constexpr bool cross_entropy_label_counts(long long label, long long vocab) {
  return label >= 0 && label < vocab;
}

}  // namespace kwb
