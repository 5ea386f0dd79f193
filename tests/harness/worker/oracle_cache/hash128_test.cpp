// The oracle cache's hash: every input bit matters, calls are self-delimiting, doubles count by
// their bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "harness/worker/oracle_cache/hash128.hpp"

namespace kwb {
namespace {

std::pair<std::uint64_t, std::uint64_t> pair_of(const Digest128& d) { return {d.hi, d.lo}; }

TEST(Hash128, EverySingleBitFlipOfABufferGivesItsOwnDigest) {
  std::mt19937_64 rng(20261125);
  std::vector<unsigned char> bytes(517);  // not a multiple of 8: the tail word counts too
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  seen.insert(pair_of(Hash128().add_bytes(bytes.data(), bytes.size()).finish()));
  for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    seen.insert(pair_of(Hash128().add_bytes(bytes.data(), bytes.size()).finish()));
    bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
  EXPECT_EQ(seen.size(), bytes.size() * 8 + 1);
}

TEST(Hash128, EachHalfAloneHasNoCollisionOverManyNearbyInputs) {
  std::set<std::uint64_t> hi, lo;
  constexpr std::uint64_t kInputs = 200000;
  for (std::uint64_t i = 0; i < kInputs; ++i) {
    const Digest128 d = Hash128().add_u64(i).finish();
    hi.insert(d.hi);
    lo.insert(d.lo);
  }
  EXPECT_EQ(hi.size(), kInputs);
  EXPECT_EQ(lo.size(), kInputs);
}

TEST(Hash128, FlippingOneInputBitFlipsAboutHalfTheOutputBits) {
  std::mt19937_64 rng(7);
  double flipped = 0;
  constexpr int kTrials = 2000;
  for (int t = 0; t < kTrials; ++t) {
    const std::uint64_t a = rng(), b = rng();
    const int bit = static_cast<int>(rng() % 64);
    const Digest128 x = Hash128().add_u64(a).add_u64(b).finish();
    const Digest128 y = Hash128().add_u64(a ^ (std::uint64_t{1} << bit)).add_u64(b).finish();
    flipped += __builtin_popcountll(x.hi ^ y.hi) + __builtin_popcountll(x.lo ^ y.lo);
  }
  const double mean = flipped / kTrials;  // 64 of 128 for an ideal hash
  EXPECT_GT(mean, 60.0);
  EXPECT_LT(mean, 68.0);
}

TEST(Hash128, CallsAreSelfDelimiting) {
  EXPECT_NE(Hash128().add_string("ab").add_string("c").finish(), Hash128().add_string("a").add_string("bc").finish());
  EXPECT_NE(Hash128().add_string("").finish(), Hash128().finish());
  const char zeros[3] = {0, 0, 0};
  EXPECT_NE(Hash128().add_bytes(zeros, 2).finish(), Hash128().add_bytes(zeros, 3).finish());
  EXPECT_NE(Hash128().add_i64s({1, 2}).add_i64s({}).finish(), Hash128().add_i64s({1}).add_i64s({2}).finish());
}

TEST(Hash128, DoublesCountByTheirBits) {
  const double quiet = std::numeric_limits<double>::quiet_NaN();
  double payload = quiet;
  std::uint64_t bits;
  std::memcpy(&bits, &payload, 8);
  bits |= 1;
  std::memcpy(&payload, &bits, 8);
  ASSERT_TRUE(std::isnan(payload));
  EXPECT_NE(Hash128().add_doubles({0.0}).finish(), Hash128().add_doubles({-0.0}).finish());
  EXPECT_NE(Hash128().add_doubles({quiet}).finish(), Hash128().add_doubles({payload}).finish());
  EXPECT_NE(Hash128().add_doubles({1.0}).finish(), Hash128().add_doubles({std::nextafter(1.0, 2.0)}).finish());
  EXPECT_EQ(Hash128().add_doubles({quiet, -0.0}).finish(), Hash128().add_doubles({quiet, -0.0}).finish());
}

// Above kHashChunkBytes the buffer is hashed as a tree of chunks over the host's cores: the
// digest must still see every bit (a flip in the first, a middle and the last chunk), depend on
// nothing but the bytes (the same buffer twice, a copy), and tell sizes apart at the boundary.
TEST(Hash128, ALargeBufferHashedInChunksStillSeesEveryBit) {
  const std::size_t n = 3 * kHashChunkBytes / sizeof(double) + 5;  // a short last chunk
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = std::sin(static_cast<double>(i));
  const Digest128 whole = Hash128().add_doubles(values).finish();
  EXPECT_EQ(whole, Hash128().add_doubles(std::vector<double>(values)).finish());
  for (std::size_t at : {std::size_t{0}, n / 2, kHashChunkBytes / sizeof(double), n - 1}) {
    std::vector<double> flipped = values;
    std::uint64_t bits;
    std::memcpy(&bits, &flipped[at], 8);
    bits ^= 1;
    std::memcpy(&flipped[at], &bits, 8);
    EXPECT_NE(Hash128().add_doubles(flipped).finish(), whole) << "a flip at " << at << " went unseen";
  }
  // Swapping two chunks changes the digest: they go in in order.
  std::vector<double> swapped = values;
  const std::size_t per_chunk = kHashChunkBytes / sizeof(double);
  std::swap_ranges(swapped.begin(), swapped.begin() + per_chunk, swapped.begin() + per_chunk);
  EXPECT_NE(Hash128().add_doubles(swapped).finish(), whole);
  const std::vector<unsigned char> bytes(kHashChunkBytes + 1, 7);
  EXPECT_NE(Hash128().add_bytes(bytes.data(), kHashChunkBytes).finish(),
            Hash128().add_bytes(bytes.data(), kHashChunkBytes + 1).finish());
}

TEST(Hash128, HexIsThirtyTwoLowerCaseDigitsHighHalfFirst) {
  const Digest128 d{0x0123456789abcdefull, 0xfedcba9876543210ull};
  EXPECT_EQ(d.hex(), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(hash128("x").hex().size(), 32u);
}

}  // namespace
}  // namespace kwb
