// The entry codec: doubles come back bit for bit, and a cut, damaged or foreign file is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "harness/worker/oracle_cache/hash128.hpp"
#include "harness/worker/oracle_cache/oracle_entry.hpp"

namespace kwb {
namespace {

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

double nan_with_payload(std::uint64_t payload) {
  std::uint64_t b = bits_of(std::numeric_limits<double>::quiet_NaN()) | payload;
  double v;
  std::memcpy(&v, &b, 8);
  return v;
}

// Every special double there is, in the values and both magnitude fields.
OracleEntry special_entry() {
  const std::vector<double> specials = {0.0,
                                        -0.0,
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN(),
                                        nan_with_payload(0x5a5a5),
                                        -nan_with_payload(3),
                                        std::numeric_limits<double>::denorm_min(),
                                        std::numeric_limits<double>::max(),
                                        -std::numeric_limits<double>::min(),
                                        0.1 + 0.2,
                                        1.0 / 3.0};
  OracleEntry e;
  e.key_text = "kwb oracle cache entry\nop test\n";
  HostTensor y{"y", {3, 4}, specials};
  y.abs_sum = specials;
  y.root_sum_sq = std::vector<double>(specials.rbegin(), specials.rend());
  HostTensor stats{"rstd", {3}, {1.5, -0.0, std::numeric_limits<double>::infinity()}};  // no magnitudes
  HostTensor empty{"nothing", {0, 7}, {}};
  e.outputs = {y, stats, empty};
  return e;
}

void expect_bitwise_equal(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(bits_of(a[i]), bits_of(b[i])) << what << "[" << i << "]";
}

TEST(OracleEntry, RoundTripsEveryDoubleBitForBitNaNInfAndMinusZeroIncluded) {
  const OracleEntry e = special_entry();
  std::string why;
  const auto back = decode_oracle_entry(encode_oracle_entry(e), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->key_text, e.key_text);
  ASSERT_EQ(back->outputs.size(), e.outputs.size());
  for (std::size_t i = 0; i < e.outputs.size(); ++i) {
    EXPECT_EQ(back->outputs[i].name, e.outputs[i].name);
    EXPECT_EQ(back->outputs[i].dims, e.outputs[i].dims);
    expect_bitwise_equal(back->outputs[i].values, e.outputs[i].values, e.outputs[i].name + " values");
    expect_bitwise_equal(back->outputs[i].abs_sum, e.outputs[i].abs_sum, e.outputs[i].name + " abs_sum");
    expect_bitwise_equal(back->outputs[i].root_sum_sq, e.outputs[i].root_sum_sq, e.outputs[i].name + " root_sum_sq");
  }
}

TEST(OracleEntry, ItsSizeIsKnownBeforeItIsMade) {
  const OracleEntry e = special_entry();
  EXPECT_EQ(encoded_oracle_entry_size(e.key_text, e.outputs), encode_oracle_entry(e).size());
  EXPECT_EQ(encoded_oracle_entry_size("", {}), encode_oracle_entry("", {}).size());
}

TEST(OracleEntry, AFileCutAtAnyByteIsRefused) {
  const std::string bytes = encode_oracle_entry(special_entry());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    std::string why;
    EXPECT_FALSE(decode_oracle_entry(std::string_view(bytes).substr(0, size), &why)) << "cut at " << size;
    EXPECT_FALSE(why.empty());
  }
}

TEST(OracleEntry, AnyFlippedBitIsRefused) {
  const std::string bytes = encode_oracle_entry(special_entry());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ (1 << (i % 8)));
    EXPECT_FALSE(decode_oracle_entry(damaged)) << "bit " << i % 8 << " of byte " << i;
  }
}

TEST(OracleEntry, ExtraBytesAndForeignFilesAreRefusedSayingWhy) {
  std::string why;
  EXPECT_FALSE(decode_oracle_entry(encode_oracle_entry(special_entry()) + "x", &why));
  EXPECT_FALSE(decode_oracle_entry(std::string(200, 'k'), &why));
  EXPECT_NE(why.find("not an oracle cache entry"), std::string::npos) << why;
  EXPECT_FALSE(decode_oracle_entry("", &why));
  EXPECT_NE(why.find("cut short"), std::string::npos) << why;
}

// Rewrites a field and the checksum after it, as a file written by another build would be.
std::string with_field(std::string bytes, std::size_t offset, std::uint32_t value) {
  std::memcpy(bytes.data() + offset, &value, 4);
  const std::size_t body = bytes.size() - 16;
  const Digest128 sum = Hash128().add_bytes(bytes.data(), body).finish();
  std::memcpy(bytes.data() + body, &sum.hi, 8);
  std::memcpy(bytes.data() + body + 8, &sum.lo, 8);
  return bytes;
}

TEST(OracleEntry, AnotherFormatOrByteOrderIsRefusedEvenWithAValidChecksum) {
  const std::string bytes = encode_oracle_entry(special_entry());
  std::string why;
  EXPECT_FALSE(decode_oracle_entry(with_field(bytes, 8, 999), &why));
  EXPECT_NE(why.find("format 999"), std::string::npos) << why;
  EXPECT_FALSE(decode_oracle_entry(with_field(bytes, 12, 0x04030201), &why));
  EXPECT_NE(why.find("byte order"), std::string::npos) << why;
  EXPECT_TRUE(decode_oracle_entry(with_field(bytes, 8, kOracleEntryFormat)));  // the same field rewritten as it was: still read
}

TEST(OracleEntry, ALengthBeyondTheFileIsRefusedBeforeAnythingIsAllocated) {
  std::string bytes = encode_oracle_entry(special_entry());
  // The key's length field (after magic, format, byte-order mark and compute_ms) claims far more than there is.
  std::string huge = bytes;
  const std::uint64_t claim = std::uint64_t{1} << 60;
  std::memcpy(huge.data() + kOracleEntryHeadBytes, &claim, 8);
  const std::size_t body = huge.size() - 16;
  const Digest128 sum = Hash128().add_bytes(huge.data(), body).finish();
  std::memcpy(huge.data() + body, &sum.hi, 8);
  std::memcpy(huge.data() + body + 8, &sum.lo, 8);
  std::string why;
  EXPECT_FALSE(decode_oracle_entry(huge, &why));
  EXPECT_NE(why.find("key"), std::string::npos) << why;
}

TEST(OracleEntry, WhatItsOracleTookTravelsWithItAndIsReadFromTheHeadAlone) {
  OracleEntry e = special_entry();
  e.compute_ms = 1234.5;
  const std::string bytes = encode_oracle_entry(e);
  const auto back = decode_oracle_entry(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->compute_ms, 1234.5);
  EXPECT_EQ(peek_oracle_entry_compute_ms(std::string_view(bytes).substr(0, kOracleEntryHeadBytes)), 1234.5);
  EXPECT_FALSE(peek_oracle_entry_compute_ms(std::string_view(bytes).substr(0, kOracleEntryHeadBytes - 1)));
  EXPECT_FALSE(peek_oracle_entry_compute_ms(with_field(bytes, 8, kOracleEntryFormat - 1)));  // the former format
  EXPECT_FALSE(peek_oracle_entry_compute_ms("not an oracle cache entry at all"));
  e.compute_ms = -1;
  EXPECT_FALSE(peek_oracle_entry_compute_ms(encode_oracle_entry(e))) << "a negative time is no figure";
}

}  // namespace
}  // namespace kwb
