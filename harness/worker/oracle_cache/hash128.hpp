// A 128-bit non-cryptographic hash of structured data, for the oracle cache's keys and checksums.
//
// What it is for: naming a cache entry after its key and fingerprinting the input values an
// oracle read, where an accidental collision must be out of reach (2^-64 and below for the
// inputs of one key) but nobody is trying to forge one. The cache never trusts the hash alone:
// an entry holds its whole key text and is compared on read (oracle_cache.hpp).
//
// Every add_* call is self-delimiting (its length goes in first), so "ab"+"c" and "a"+"bc" differ.
// The hash is of that sequence of calls, not of a raw byte stream.
//
// Large buffers (above kHashChunkBytes) are hashed as a tree over the host's cores: each fixed
// chunk's own digest, then those digests in order. One word chain runs at about 1.3 GB/s, and an
// oracle's inputs reach several GB (keying 4.3 GB of mean_pooling input took longer than its
// oracle). The chunks depend on the size alone, so the digest is the same on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

struct Digest128 {
  std::uint64_t hi = 0, lo = 0;
  friend bool operator==(const Digest128&, const Digest128&) = default;
  std::string hex() const;  // 32 lower-case hex digits, hi first
};

inline constexpr std::size_t kHashChunkBytes = std::size_t{8} << 20;

class Hash128 {
 public:
  Hash128& add_u64(std::uint64_t value);
  Hash128& add_i64(std::int64_t value) { return add_u64(static_cast<std::uint64_t>(value)); }
  Hash128& add_bytes(const void* data, std::size_t size);
  Hash128& add_string(std::string_view text) { return add_bytes(text.data(), text.size()); }
  // Each value's bits: NaN payloads, -0.0 and +0.0 all count as they are.
  Hash128& add_doubles(const std::vector<double>& values);
  Hash128& add_i64s(const std::vector<std::int64_t>& values);
  Digest128 finish() const;

 private:
  void word(std::uint64_t w);
  void words_of(const unsigned char* p, std::size_t size);
  // Two lanes of 64 bits, each updated by a bijection of its state for every word, started from
  // unrelated constants (the fractional bits of sqrt(2) and sqrt(3)).
  std::uint64_t a_ = 0x6A09E667F3BCC908ull, b_ = 0xBB67AE8584CAA73Bull;
  std::uint64_t words_ = 0;
};

// The digest of one string.
Digest128 hash128(std::string_view text);

}  // namespace kwb
