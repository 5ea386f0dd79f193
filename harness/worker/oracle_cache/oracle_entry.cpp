// The entry codec: a writer that appends fixed-width fields and a reader that checks every
// length against what is left before it allocates, so a damaged file is refused, never trusted.
#include "harness/worker/oracle_cache/oracle_entry.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "harness/worker/oracle_cache/hash128.hpp"

namespace kwb {
namespace {

constexpr std::string_view kMagic = "KWBORACL";
constexpr std::uint32_t kByteOrderMark = 0x01020304;
static_assert(kOracleEntryHeadBytes == kMagic.size() + sizeof(std::uint32_t) * 2 + sizeof(double));

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_text(std::string& out, std::string_view text) {
  put<std::uint64_t>(out, text.size());
  out.append(text);
}

void put_doubles(std::string& out, const std::vector<double>& values) {
  put<std::uint64_t>(out, values.size());
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

// Reads fields in order; the first failure sticks and says where it happened.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::size_t offset() const { return at_; }

  template <class T>
  T get(const char* what) {
    T value{};
    if (!take(sizeof(T), what)) return value;
    std::memcpy(&value, bytes_.data() + at_ - sizeof(T), sizeof(T));
    return value;
  }
  void skip(std::size_t size, const char* what) { take(size, what); }
  std::string text(const char* what) {
    const auto size = get<std::uint64_t>(what);
    if (!fits(size, 1, what) || !take(size, what)) return {};
    return std::string(bytes_.substr(at_ - size, size));
  }
  std::vector<double> doubles(const char* what) {
    const auto count = get<std::uint64_t>(what);
    if (!fits(count, sizeof(double), what) || !take(count * sizeof(double), what)) return {};
    std::vector<double> values(count);
    std::memcpy(values.data(), bytes_.data() + at_ - count * sizeof(double), count * sizeof(double));
    return values;
  }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }

 private:
  // Whether `count` items of `size` bytes can still be in the file (checked before allocating).
  bool fits(std::uint64_t count, std::size_t size, const char* what) {
    if (!ok()) return false;
    if (count > (bytes_.size() - at_) / size) {
      fail(fmt::format("{} claims {} items at byte {}, more than the {} bytes left", what, count, at_,
                       bytes_.size() - at_));
      return false;
    }
    return true;
  }
  bool take(std::size_t size, const char* what) {
    if (!ok()) return false;
    if (size > bytes_.size() - at_) {
      fail(fmt::format("cut short in {} at byte {} of {}", what, at_, bytes_.size()));
      return false;
    }
    at_ += size;
    return true;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
  std::string error_;
};

Digest128 checksum(std::string_view bytes) { return Hash128().add_bytes(bytes.data(), bytes.size()).finish(); }

}  // namespace

std::optional<double> peek_oracle_entry_compute_ms(std::string_view head) {
  if (head.size() < kOracleEntryHeadBytes || head.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  Reader in(head.substr(kMagic.size()));
  if (in.get<std::uint32_t>("format") != kOracleEntryFormat) return std::nullopt;
  if (in.get<std::uint32_t>("byte order") != kByteOrderMark) return std::nullopt;
  const double ms = in.get<double>("compute_ms");
  if (!in.ok() || !(ms >= 0)) return std::nullopt;  // NaN or negative: not a figure this build wrote
  return ms;
}

std::uint64_t encoded_oracle_entry_size(std::string_view key_text, const std::vector<HostTensor>& outputs) {
  std::uint64_t size = kOracleEntryHeadBytes + 8 + key_text.size() + 4;
  for (const HostTensor& t : outputs)
    size += 8 + t.name.size() + 4 + 8 * t.dims.size() +
            3 * 8 + 8 * (t.values.size() + t.abs_sum.size() + t.root_sum_sq.size());
  return size + 16;  // the checksum
}

std::string encode_oracle_entry(std::string_view key_text, const std::vector<HostTensor>& outputs, double compute_ms) {
  std::string out;
  out.reserve(encoded_oracle_entry_size(key_text, outputs));  // one allocation, however large
  out.append(kMagic);
  put<std::uint32_t>(out, kOracleEntryFormat);
  put<std::uint32_t>(out, kByteOrderMark);
  put<double>(out, compute_ms);
  put_text(out, key_text);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(outputs.size()));
  for (const HostTensor& t : outputs) {
    put_text(out, t.name);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.dims.size()));
    for (std::int64_t d : t.dims) put<std::int64_t>(out, d);
    put_doubles(out, t.values);
    put_doubles(out, t.abs_sum);
    put_doubles(out, t.root_sum_sq);
  }
  const Digest128 sum = checksum(out);
  put<std::uint64_t>(out, sum.hi);
  put<std::uint64_t>(out, sum.lo);
  return out;
}

std::optional<OracleEntry> decode_oracle_entry(std::string_view bytes, std::string* why) {
  const auto refuse = [&](std::string reason) -> std::optional<OracleEntry> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (bytes.size() < kMagic.size() + 16) return refuse(fmt::format("cut short: {} bytes", bytes.size()));
  if (bytes.substr(0, kMagic.size()) != kMagic) return refuse("not an oracle cache entry (no KWBORACL magic)");
  // The checksum first: the fields below are only read from bytes known to be the ones written.
  const std::string_view body = bytes.substr(0, bytes.size() - 16);
  Digest128 stored;
  std::memcpy(&stored.hi, bytes.data() + body.size(), 8);
  std::memcpy(&stored.lo, bytes.data() + body.size() + 8, 8);
  if (checksum(body) != stored) return refuse("checksum mismatch (the file is cut short or damaged)");

  Reader in(body);
  in.skip(kMagic.size(), "magic");
  const auto format = in.get<std::uint32_t>("format");
  if (in.ok() && format != kOracleEntryFormat)
    return refuse(fmt::format("format {}, this build reads {}", format, kOracleEntryFormat));
  if (in.get<std::uint32_t>("byte order") != kByteOrderMark && in.ok())
    return refuse("written on a machine of the other byte order");
  OracleEntry entry;
  entry.compute_ms = in.get<double>("compute_ms");
  entry.key_text = in.text("key");
  const auto outputs = in.get<std::uint32_t>("output count");
  for (std::uint32_t i = 0; i < outputs && in.ok(); ++i) {
    HostTensor t;
    t.name = in.text("output name");
    const auto dims = in.get<std::uint32_t>("dims count");
    if (dims > 64) in.fail(fmt::format("output '{}' has {} dims", t.name, dims));
    for (std::uint32_t d = 0; d < dims && in.ok(); ++d) t.dims.push_back(in.get<std::int64_t>("dim"));
    t.values = in.doubles("values");
    t.abs_sum = in.doubles("abs_sum");
    t.root_sum_sq = in.doubles("root_sum_sq");
    entry.outputs.push_back(std::move(t));
  }
  if (!in.ok()) return refuse(in.error());
  if (in.offset() != body.size())
    return refuse(fmt::format("{} bytes after the last output", body.size() - in.offset()));
  return entry;
}

}  // namespace kwb
