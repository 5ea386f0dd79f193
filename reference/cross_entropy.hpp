// Constants of the cross_entropy contract that its kernels share with the oracle.
#pragma once

namespace kwb {

// PyTorch's default ignore_index: a token labelled so counts neither in the loss nor in the mean.
inline constexpr int kCrossEntropyIgnoreIndex = -100;

// A label takes part in the loss when it names a class. -100 is the documented way to skip a
// token; any other label outside [0, vocab) is skipped the same way (PyTorch device-asserts
// instead), so that no kernel ever indexes a row out of bounds.
inline constexpr bool cross_entropy_label_counts(long long label, long long vocab) {
  return label >= 0 && label < vocab;
}

}  // namespace kwb
