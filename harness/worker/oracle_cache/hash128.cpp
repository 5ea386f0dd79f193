// Two 64-bit lanes fed one 64-bit word at a time, cross-mixed and finished with a full
// avalanche (the splitmix64 finaliser), so every input bit reaches every output bit.
#include "harness/worker/oracle_cache/hash128.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "harness/catalogue/parallel_chunks.hpp"

namespace kwb {
namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// splitmix64's output function: a bijection in which each input bit flips each output bit with
// probability about one half.
constexpr std::uint64_t avalanche(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::string Digest128::hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

void Hash128::word(std::uint64_t w) {
  // The word is spread first (odd multiply, then its high bits folded down) so that a change in
  // any bit of it moves both lanes; each lane's step is a bijection of that lane for a fixed word,
  // so two inputs that differ in one word cannot meet again in the same state by that word alone.
  std::uint64_t m = w * 0x9E3779B97F4A7C15ull;
  m ^= m >> 29;
  a_ = rotl(a_ ^ m, 31) * 0xD6E8FEB86659FD93ull + 0xA0761D6478BD642Full;
  b_ = (rotl(b_ + m, 27) * 0xE7037ED1A0B428DBull) ^ a_;
  ++words_;
}

Hash128& Hash128::add_u64(std::uint64_t value) {
  word(value);
  return *this;
}

// The words of [p, p + size), the tail zero-padded (the caller's length tells the padding apart).
void Hash128::words_of(const unsigned char* p, std::size_t size) {
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    word(w);
  }
  if (i < size) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i, size - i);
    word(w);
  }
}

Hash128& Hash128::add_bytes(const void* data, std::size_t size) {
  word(size);
  const auto* p = static_cast<const unsigned char*>(data);
  if (size <= kHashChunkBytes) {
    words_of(p, size);
    return *this;
  }
  const auto n = static_cast<std::int64_t>(size);
  const auto chunk = static_cast<std::int64_t>(kHashChunkBytes);
  std::vector<Digest128> chunks(static_cast<std::size_t>(chunk_count(n, chunk)));
  parallel_chunks(
      n,
      [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
        Hash128 h;
        h.words_of(p + begin, static_cast<std::size_t>(end - begin));
        chunks[static_cast<std::size_t>(c)] = h.finish();
      },
      chunk);
  for (const Digest128& d : chunks) {
    word(d.hi);
    word(d.lo);
  }
  return *this;
}

// A double's bits are its 8 bytes in memory: the same words add_bytes makes of them.
Hash128& Hash128::add_doubles(const std::vector<double>& values) {
  word(values.size());
  return add_bytes(values.data(), values.size() * sizeof(double));
}

Hash128& Hash128::add_i64s(const std::vector<std::int64_t>& values) {
  word(values.size());
  for (std::int64_t v : values) word(static_cast<std::uint64_t>(v));
  return *this;
}

Digest128 Hash128::finish() const {
  const std::uint64_t a = a_ ^ (words_ * 0x9E3779B97F4A7C15ull);
  const std::uint64_t b = b_ + rotl(words_, 32);
  Digest128 d;
  d.hi = avalanche(a + rotl(b, 17));
  d.lo = avalanche(b ^ d.hi);
  return d;
}

Digest128 hash128(std::string_view text) { return Hash128().add_string(text).finish(); }

}  // namespace kwb
