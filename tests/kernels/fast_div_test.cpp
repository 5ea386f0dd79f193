// FastDiv (kernels/common/fast_div.hpp), the kernels' division by a per-launch divisor, agrees
// with integer division over its whole stated range: edge dividends and divisors, then a
// sweep of small ones and pseudo-random pairs.
#include "kernels/common/fast_div.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace kwb {
namespace {

TEST(FastDiv, MatchesIntegerDivisionAtEdgesAndOverRandomPairs) {
  const unsigned divisors[] = {1, 2, 3, 5, 7, 8, 9, 24, 40, 64, 80, 320, 520, 1000, 4096, 5120, 65535, 65536,
                               123457, 1u << 20, (1u << 30) + 1, (1u << 31) - 1};
  const int dividends[] = {0, 1, 2, 63, 64, 65, 1000, 1 << 20, 1 << 30, (1 << 30) + 7, 2147483646, 2147483647};
  for (unsigned d : divisors)
    for (int n : dividends) ASSERT_EQ(FastDiv(d).div(n), n / static_cast<int>(d)) << n << " / " << d;
  for (unsigned d = 1; d < 600; ++d) {
    const FastDiv f(d);
    for (int n = 0; n < 5000; ++n) ASSERT_EQ(f.div(n), n / static_cast<int>(d)) << n << " / " << d;
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const auto d = static_cast<unsigned>(1 + rng() % ((i & 1) ? 5000u : 2147483646u));
    const auto n = static_cast<int>(rng() % 2147483648ull);
    ASSERT_EQ(FastDiv(d).div(n), n / static_cast<int>(d)) << n << " / " << d;
  }
}

TEST(FastDiv, ZeroDivisorIsTakenAsOne) { EXPECT_EQ(FastDiv(0).div(12345), 12345); }

}  // namespace
}  // namespace kwb
