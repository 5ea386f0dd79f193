// Sequence lengths drawn from a stated distribution by a formula of the shape, not a draw, so that
// a work model counts exactly the tokens a case holds (paged_attention_decode's context lengths,
// attention_varlen_fwd's packed sequences): uniform over (longest / 4, longest], L_b = longest -
// floor(3 longest f_b / 4) with f_b = frac(b phi) (phi the golden ratio, in 24-bit fixed point: a
// low-discrepancy sequence, so that any batch spreads evenly over the range in a scrambled order);
// sequence 0 always holds `longest`.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KWB_RAGGED_HD __host__ __device__
#else
#define KWB_RAGGED_HD
#endif

namespace kwb {

KWB_RAGGED_HD inline std::int64_t ragged_length(std::int64_t b, std::int64_t longest) {
  // frac(b phi) in 24-bit fixed point; 3 longest f < 2^57 for any longest below 2^31.
  const std::uint64_t f = ((static_cast<std::uint64_t>(b) * 2654435769ull) & 0xffffffffull) >> 8;
  return longest - static_cast<std::int64_t>((static_cast<std::uint64_t>(3 * longest) * f) >> 26);
}

}  // namespace kwb
