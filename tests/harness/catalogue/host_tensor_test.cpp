// fp16/bf16 <-> float conversions, round_to_dtype and the poison pattern, checked against values
// worked out by hand and against a reference rounding built from an independent decoder.
#include "harness/catalogue/host_tensor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace kwb {
namespace {

// ---- independent references -------------------------------------------------------------

// IEEE binary16 decoded by its definition, in double: written apart from the code under test.
double reference_half_value(std::uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0) magnitude = mantissa * 0x1p-24;
  else if (exponent == 31) magnitude = mantissa ? std::nan("") : HUGE_VAL;
  else magnitude = (1024 + mantissa) * std::pow(2.0, exponent - 25);
  return sign ? -magnitude : magnitude;
}

// bfloat16 is the top half of a binary32.
double reference_bf16_value(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint32_t bits_of_float(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// Every non-negative finite value of a 16-bit format in increasing order (index == bit pattern),
// followed by the value at which the format overflows to +inf (one step past the largest
// finite value), so that rounding to the nearest entry with ties to the even pattern is exactly
// IEEE round-to-nearest-even including the overflow rule.
struct Ladder {
  std::vector<double> values;  // values[i] has bit pattern i; the last one stands for +inf
  std::uint16_t inf_bits = 0;
};

Ladder half_ladder() {
  Ladder l;
  for (std::uint32_t b = 0; b < 0x7C00; ++b) l.values.push_back(reference_half_value(static_cast<std::uint16_t>(b)));
  l.values.push_back(65536.0);  // 2^16: where the exponent field would reach 31
  l.inf_bits = 0x7C00;
  return l;
}

Ladder bf16_ladder() {
  Ladder l;
  for (std::uint32_t b = 0; b < 0x7F80; ++b) l.values.push_back(reference_bf16_value(static_cast<std::uint16_t>(b)));
  l.values.push_back(std::ldexp(1.0, 128));
  l.inf_bits = 0x7F80;
  return l;
}

// Round a finite float to the ladder: nearest value, ties to the even bit pattern.
std::uint16_t reference_round(const Ladder& l, float f) {
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= l.values.back()) return sign | l.inf_bits;
  const auto hi = static_cast<std::size_t>(std::upper_bound(l.values.begin(), l.values.end(), a) - l.values.begin());
  const std::size_t lo = hi - 1;  // values[lo] <= a < values[hi]
  const double below = a - l.values[lo], above = l.values[hi] - a;
  std::size_t pick = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
  const std::uint16_t bits = pick == l.values.size() - 1 ? l.inf_bits : static_cast<std::uint16_t>(pick);
  return sign | bits;
}

bool is_half_nan(std::uint16_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0; }
bool is_bf16_nan(std::uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0; }

// ---- decode -----------------------------------------------------------------------------

TEST(HalfDecode, EveryBitPatternMatchesTheIeeeDefinition) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double expected = reference_half_value(bits);
    const float got = half_bits_to_float(bits);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << b;
    } else {
      EXPECT_EQ(static_cast<double>(got), expected) << std::hex << b;
      EXPECT_EQ(std::signbit(got), std::signbit(expected)) << std::hex << b;
    }
  }
}

TEST(Bf16Decode, KnownPatterns) {
  EXPECT_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(0xC000), -2.0f);
  EXPECT_EQ(bf16_bits_to_float(0x3F81), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_bits_to_float(0x7F80), INFINITY);
  EXPECT_EQ(bf16_bits_to_float(0xFF80), -INFINITY);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(0x7FC0)));
}

// ---- exact values -----------------------------------------------------------------------

TEST(HalfEncode, RepresentableValuesAreExact) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half_bits(0.5f), 0x3800);
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-10f), 0x3C01);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);    // largest finite
  EXPECT_EQ(float_to_half_bits(0x1p-14f), 0x0400);    // smallest normal
  EXPECT_EQ(float_to_half_bits(0x1p-24f), 0x0001);    // smallest subnormal
  EXPECT_EQ(float_to_half_bits(-0x1p-24f), 0x8001);
  EXPECT_EQ(float_to_half_bits(0x3FFp-24f), 0x03FF);  // largest subnormal
}

TEST(HalfEncode, EveryFiniteBitPatternRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    if (is_half_nan(bits)) continue;
    EXPECT_EQ(float_to_half_bits(half_bits_to_float(bits)), bits) << std::hex << b;
  }
}

TEST(Bf16Encode, RepresentableValuesAreExact) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16_bits(0.15625f), 0x3E20);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-7f), 0x3F81);
  EXPECT_EQ(float_to_bf16_bits(INFINITY), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(-INFINITY), 0xFF80);
}

TEST(Bf16Encode, EveryNonNanBitPatternRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    if (is_bf16_nan(bits)) continue;
    EXPECT_EQ(float_to_bf16_bits(bf16_bits_to_float(bits)), bits) << std::hex << b;
  }
}

// ---- ties: round half to even -----------------------------------------------------------

TEST(HalfEncode, TiesRoundToEvenAtHandPickedMidpoints) {
  // 1 + 2^-11 lies halfway between 0x3C00 (even) and 0x3C01: goes down.
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 lies halfway between 0x3C01 and 0x3C02 (even): goes up.
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(float_to_half_bits(-(1.0f + 3 * 0x1p-11f)), 0xBC02);
  // One float ulp either side of a tie is no tie.
  EXPECT_EQ(float_to_half_bits(std::nextafter(1.0f + 0x1p-11f, 2.0f)), 0x3C01);
  EXPECT_EQ(float_to_half_bits(std::nextafter(1.0f + 3 * 0x1p-11f, 0.0f)), 0x3C01);
  // Subnormal tie: 1.5 * 2^-24 between 0x0001 and 0x0002 (even).
  EXPECT_EQ(float_to_half_bits(1.5f * 0x1p-24f), 0x0002);
  // 2047.5 is halfway between 2047 (odd) and 2048: carries into the next binade.
  EXPECT_EQ(float_to_half_bits(2047.5f), float_to_half_bits(2048.0f));
}

TEST(HalfEncode, HalfTheSmallestSubnormalIsATieThatRoundsToZero) {
  // 2^-25 is halfway between 0 (even) and 2^-24 (0x0001, odd).
  EXPECT_EQ(float_to_half_bits(0x1p-25f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0x1p-25f), 0x8000);
  EXPECT_EQ(float_to_half_bits(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::nextafter(0x1p-25f, 0.0f)), 0x0000);
}

TEST(HalfEncode, EveryMidpointBetweenNeighboursRoundsToTheEvenOne) {
  // Prepare the reference: every adjacent pair of non-negative finite halves (and the largest
  // one with the overflow threshold); the midpoint of each is exact in float.
  const Ladder l = half_ladder();
  for (std::size_t i = 0; i + 1 < l.values.size(); ++i) {
    const float mid = static_cast<float>((l.values[i] + l.values[i + 1]) / 2);
    ASSERT_EQ(static_cast<double>(mid), (l.values[i] + l.values[i + 1]) / 2);
    const std::size_t even = i % 2 == 0 ? i : i + 1;
    const std::uint16_t expected = even == l.values.size() - 1 ? l.inf_bits : static_cast<std::uint16_t>(even);
    // Run and verify, both signs.
    EXPECT_EQ(float_to_half_bits(mid), expected) << "midpoint " << mid;
    EXPECT_EQ(float_to_half_bits(-mid), expected | 0x8000) << "midpoint " << -mid;
  }
}

TEST(Bf16Encode, TiesRoundToEvenAtHandPickedMidpoints) {
  // 1 + 2^-8 lies halfway between 0x3F80 (even) and 0x3F81: goes down.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 0x3F81 and 0x3F82 (even): goes up.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(float_to_bf16_bits(-(1.0f + 3 * 0x1p-8f)), 0xBF82);
  EXPECT_EQ(float_to_bf16_bits(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3F81);
  EXPECT_EQ(float_to_bf16_bits(std::nextafter(1.0f + 3 * 0x1p-8f, 0.0f)), 0x3F81);
}

TEST(Bf16Encode, EveryMidpointBetweenNeighboursRoundsToTheEvenOne) {
  // The last pair is the largest finite bf16 and 2^128: their midpoint 0x7F7F8000 must overflow.
  const Ladder l = bf16_ladder();
  for (std::size_t i = 0; i + 1 < l.values.size(); ++i) {
    const double mid_exact = (l.values[i] + l.values[i + 1]) / 2;
    const float mid = static_cast<float>(mid_exact);
    ASSERT_EQ(static_cast<double>(mid), mid_exact);
    const std::size_t even = i % 2 == 0 ? i : i + 1;
    const std::uint16_t expected = even == l.values.size() - 1 ? l.inf_bits : static_cast<std::uint16_t>(even);
    EXPECT_EQ(float_to_bf16_bits(mid), expected) << "midpoint " << mid;
    EXPECT_EQ(float_to_bf16_bits(-mid), expected | 0x8000) << "midpoint " << -mid;
  }
}

// ---- overflow, subnormals, NaN, signed zero ---------------------------------------------

TEST(HalfEncode, OverflowsToInfinityFrom65520) {
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half_bits(std::nextafter(65520.0f, 0.0f)), 0x7BFF);  // just below the tie
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7C00);                         // tie goes to "even" inf
  EXPECT_EQ(float_to_half_bits(-65520.0f), 0xFC00);
  EXPECT_EQ(float_to_half_bits(1e9f), 0x7C00);
  EXPECT_EQ(float_to_half_bits(INFINITY), 0x7C00);
  EXPECT_EQ(float_to_half_bits(-INFINITY), 0xFC00);
  EXPECT_TRUE(std::isinf(half_bits_to_float(float_to_half_bits(70000.0f))));
}

TEST(HalfEncode, SubnormalsKeepTheirValue) {
  EXPECT_EQ(half_bits_to_float(float_to_half_bits(0x1p-24f)), 0x1p-24f);
  EXPECT_EQ(half_bits_to_float(float_to_half_bits(5 * 0x1p-24f)), 5 * 0x1p-24f);
  EXPECT_EQ(half_bits_to_float(float_to_half_bits(-0x1p-20f)), -0x1p-20f);
  // Below half the smallest subnormal everything flushes to a signed zero.
  EXPECT_EQ(float_to_half_bits(0x1p-26f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0x1p-30f), 0x8000);
  EXPECT_EQ(float_to_half_bits(1e-40f), 0x0000);  // a float subnormal
}

TEST(HalfEncode, NanStaysNan) {
  EXPECT_TRUE(is_half_nan(float_to_half_bits(NAN)));
  EXPECT_TRUE(is_half_nan(float_to_half_bits(-NAN)));
  EXPECT_TRUE(is_half_nan(float_to_half_bits(float_from_bits(0x7F800001))));  // signalling, low bit only
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(NAN))));
}

TEST(Bf16Encode, NanStaysNan) {
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(NAN)));
  // A NaN whose payload sits only in the low 16 bits would truncate to inf without care.
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(float_from_bits(0x7F800001))));
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(float_from_bits(0xFF80FFFF))));
  // A NaN whose rounding increment would carry into the exponent stays a NaN too.
  EXPECT_TRUE(is_bf16_nan(float_to_bf16_bits(float_from_bits(0x7FFFFFFF))));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(NAN))));
}

TEST(Bf16Encode, LargestFloatRoundsToInfinity) {
  // FLT_MAX sits above the midpoint between bf16's largest finite value and 2^128.
  EXPECT_EQ(float_to_bf16_bits(3.4028234663852886e38f), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(float_from_bits(0x7F7F7FFF)), 0x7F7F);  // just below that midpoint
}

TEST(HalfAndBf16Encode, NegativeZeroKeepsItsSign) {
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000);
  EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
  EXPECT_TRUE(std::signbit(bf16_bits_to_float(0x8000)));
  EXPECT_TRUE(std::signbit(round_to_dtype(-0.0, DType::fp16)));
  EXPECT_TRUE(std::signbit(round_to_dtype(-0.0, DType::bf16)));
}

// ---- random sweeps against the reference rounding ---------------------------------------

// Random floats over every magnitude the format can see (with margins into overflow and
// underflow), plus raw 32-bit patterns.
std::vector<float> random_floats(std::uint64_t seed, int min_exp, int max_exp, std::size_t count) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exponent(min_exp, max_exp);
  std::uniform_int_distribution<std::uint32_t> mantissa(0, (1u << 23) - 1);
  std::uniform_int_distribution<std::uint32_t> raw;
  std::vector<float> out;
  out.reserve(count);
  while (out.size() < count) {
    float f;
    if (out.size() % 4 == 3) {
      f = float_from_bits(raw(rng));
    } else {
      f = std::ldexp(1.0f + static_cast<float>(mantissa(rng)) * 0x1p-23f, exponent(rng));
      if (rng() & 1) f = -f;
    }
    if (!std::isnan(f) && f != 0) out.push_back(f);
  }
  return out;
}

TEST(HalfEncode, RandomFloatsMatchTheReferenceRounding) {
  // Prepare the reference: all finite halves, decoded independently, as a sorted ladder.
  const Ladder l = half_ladder();
  const std::vector<float> inputs = random_floats(0x5EED'0016, -30, 17, 200000);
  // Run and verify.
  int failures = 0;
  for (float f : inputs) {
    const std::uint16_t expected = std::isinf(f) ? (std::signbit(f) ? 0xFC00 : 0x7C00) : reference_round(l, f);
    const std::uint16_t got = float_to_half_bits(f);
    if (got != expected && ++failures <= 10)
      ADD_FAILURE() << "float_to_half_bits(" << f << " = 0x" << std::hex << bits_of_float(f) << ") = 0x" << got
                    << ", expected 0x" << expected;
  }
  EXPECT_EQ(failures, 0);
}

TEST(Bf16Encode, RandomFloatsMatchTheReferenceRounding) {
  const Ladder l = bf16_ladder();
  const std::vector<float> inputs = random_floats(0x5EED'0B16, -140, 127, 200000);
  int failures = 0;
  for (float f : inputs) {
    const std::uint16_t expected = std::isinf(f) ? (std::signbit(f) ? 0xFF80 : 0x7F80) : reference_round(l, f);
    const std::uint16_t got = float_to_bf16_bits(f);
    if (got != expected && ++failures <= 10)
      ADD_FAILURE() << "float_to_bf16_bits(" << f << " = 0x" << std::hex << bits_of_float(f) << ") = 0x" << got
                    << ", expected 0x" << expected;
  }
  EXPECT_EQ(failures, 0);
}

// ---- round_to_dtype, encode/decode of arrays --------------------------------------------

TEST(RoundToDtype, GivesTheValueEachDtypeStores) {
  EXPECT_EQ(round_to_dtype(0.1, DType::fp32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(0.1, DType::fp16), reference_half_value(0x2E66));  // 0.0999755859375
  EXPECT_EQ(round_to_dtype(0.1, DType::bf16), reference_bf16_value(0x3DCD));  // 0.10009765625
  EXPECT_EQ(round_to_dtype(1.0 + 0x1p-11, DType::fp16), 1.0);                  // tie to even
  EXPECT_EQ(round_to_dtype(1.0 + 3 * 0x1p-8, DType::bf16), 1.0 + 0x1p-6);      // tie to even
  EXPECT_TRUE(std::isinf(round_to_dtype(1e5, DType::fp16)));
  EXPECT_EQ(round_to_dtype(1e5, DType::bf16), 99840.0);
  EXPECT_EQ(round_to_dtype(-3.0, DType::fp16), -3.0);
}

TEST(RoundToDtype, IsIdempotentOnSeededRandomValues) {
  std::mt19937_64 rng(1234);
  std::normal_distribution<double> normal(0.0, 3.0);
  for (DType dtype : kAllDTypes) {
    for (int i = 0; i < 2000; ++i) {
      double v;
      do v = normal(rng);
      while (std::fabs(v) < 1e-3);  // keep clear of fp16 subnormals, where the bound is absolute
      const double once = round_to_dtype(v, dtype);
      EXPECT_EQ(round_to_dtype(once, dtype), once) << to_string(dtype) << " " << v;
      EXPECT_NE(once, 0.0);
      // Within half an ulp of the format at this magnitude: 2^-24, 2^-11, 2^-8 relative.
      const double rel = dtype == DType::fp32 ? 0x1p-24 : dtype == DType::fp16 ? 0x1p-11 : 0x1p-8;
      EXPECT_LE(std::fabs(once - v), rel * std::fabs(v) * 1.0000001) << to_string(dtype) << " " << v;
    }
  }
}

TEST(EncodeDecodeDtype, ArraysRoundTripRepresentableValues) {
  // Prepare: seeded random values already rounded to each dtype.
  std::mt19937_64 rng(99);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (DType dtype : kAllDTypes) {
    std::vector<double> values(257);
    for (auto& v : values) {
      do v = round_to_dtype(normal(rng), dtype);
      while (v == 0);
    }
    // Run: encode to the dtype's bytes, decode back.
    std::vector<unsigned char> bytes(values.size() * dtype_size(dtype));
    encode_dtype(values.data(), dtype, static_cast<std::int64_t>(values.size()), bytes.data());
    std::vector<double> decoded(values.size());
    decode_dtype(bytes.data(), dtype, static_cast<std::int64_t>(values.size()), decoded.data());
    // Verify.
    EXPECT_EQ(decoded, values) << to_string(dtype);
  }
}

// ---- poison -----------------------------------------------------------------------------

TEST(IsPoison, AllFfBytesArePoisonAndNanInEveryDtype) {
  for (DType dtype : kAllDTypes) {
    std::vector<unsigned char> element(dtype_size(dtype), kPoisonByte);
    EXPECT_TRUE(is_poison(element.data(), dtype)) << to_string(dtype);
    double value = 0;
    decode_dtype(element.data(), dtype, 1, &value);
    EXPECT_TRUE(std::isnan(value)) << to_string(dtype);
  }
}

TEST(IsPoison, AnyOtherByteIsNotPoison) {
  for (DType dtype : kAllDTypes) {
    for (std::size_t i = 0; i < dtype_size(dtype); ++i) {
      std::vector<unsigned char> element(dtype_size(dtype), kPoisonByte);
      element[i] = 0xFE;
      EXPECT_FALSE(is_poison(element.data(), dtype)) << to_string(dtype) << " byte " << i;
    }
  }
}

TEST(IsPoison, ComputedNansAndOrdinaryValuesAreNotPoison) {
  for (DType dtype : kAllDTypes) {
    for (double v : {std::nan(""), -1.0, 0.0, HUGE_VAL}) {
      unsigned char element[4] = {};
      encode_dtype(&v, dtype, 1, element);
      EXPECT_FALSE(is_poison(element, dtype)) << to_string(dtype) << " " << v;
    }
  }
}

}  // namespace
}  // namespace kwb
