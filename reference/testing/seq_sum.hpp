// test_seq_sum: a hidden test-only op that proves the contract features no real op uses yet:
// choice axes (layout, causal), a non-row layout, and a variant with a prepare step, a reset step
// and a tunable. Shared by the op (reference/testing/seq_sum.cpp), its kernel
// (kernels/testing/seq_sum_atomic.cu) and the GPU tests.
//
//   y[b, s, h, d] = sum over t of x[b, t, h, d] * w[t],  w[t] = 1 / (1 + t)
//   causal=1: t runs over 0..s; causal=0: t runs over the whole sequence.
// x and y have the same layout: bshd = [batch, seq, heads, dim], bhsd = [batch, heads, seq, dim].
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "harness/catalogue/types.hpp"

namespace kwb::seq_sum {

inline constexpr const char* kOp = "test_seq_sum";
inline constexpr const char* kVariant = "test_atomic_scatter";

// The axes of a case, read once, and where element (b, t, h, d) sits in its layout.
struct Axes {
  std::int64_t batch, seq, heads, dim;
  bool bhsd, causal;
  static Axes of(const Shape& s) {
    return {s.at("batch"), s.at("seq"), s.at("heads"), s.at("dim"), s.choice("layout") == "bhsd",
            s.choice("causal") == "1"};
  }
  std::int64_t index(std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t d) const {
    return bhsd ? ((b * heads + h) * seq + t) * dim + d : ((b * seq + t) * heads + h) * dim + d;
  }
  std::int64_t numel() const { return batch * seq * heads * dim; }
  std::vector<std::int64_t> tensor_dims() const {
    return bhsd ? std::vector<std::int64_t>{batch, heads, seq, dim}
                : std::vector<std::int64_t>{batch, seq, heads, dim};
  }
};

// Position weight of sequence index t (the variant's prepare step tabulates it on the device).
inline double weight(std::int64_t t) { return 1.0 / (1.0 + static_cast<double>(t)); }

// How often the harness called the variant's launch and reset since the last reset_counts():
// a GPU test compares them to prove that every launch had its reset.
struct Counts {
  std::atomic<std::int64_t> launches{0};
  std::atomic<std::int64_t> resets{0};
  std::atomic<std::int64_t> prepares{0};
};
Counts& counts();

}  // namespace kwb::seq_sum
