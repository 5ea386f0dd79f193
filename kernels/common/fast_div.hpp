// n / d by a multiply-high, an add and a shift for a divisor fixed per launch (Granlund-
// Montgomery, the form of PyTorch's IntDivider): index splits in kernels without a software
// division (~20 instructions) per item. Valid for 0 <= n < 2^31 and 1 <= d < 2^31 (a divisor
// of 0 is taken as 1). Host and device; tests/kernels/fast_div_test.cpp checks it against `/`.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KWB_FAST_DIV_HD __host__ __device__ __forceinline__
#else
#define KWB_FAST_DIV_HD inline
#endif

namespace kwb {

struct FastDiv {
  unsigned d = 1, m = 1, s = 0;  // quotient = (umulhi(n, m) + n) >> s
  FastDiv() = default;
  explicit FastDiv(unsigned divisor) : d(divisor > 0 ? divisor : 1) {
    while ((std::uint64_t{1} << s) < d) ++s;
    m = static_cast<unsigned>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << s) - d)) / d + 1);
  }
  KWB_FAST_DIV_HD int div(int n) const {
#if defined(__CUDA_ARCH__)
    const unsigned hi = __umulhi(static_cast<unsigned>(n), m);
#else
    const auto hi = static_cast<unsigned>((std::uint64_t{static_cast<unsigned>(n)} * m) >> 32);
#endif
    return static_cast<int>((hi + static_cast<unsigned>(n)) >> s);  // < 2^32: n < 2^31, hi <= n
  }
};

}  // namespace kwb

#undef KWB_FAST_DIV_HD
