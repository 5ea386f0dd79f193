// An oracle cache entry as bytes: the key it answers and the expected outputs, exactly.
//
// Layout (little-endian, as the machine that wrote it; the byte-order mark refuses another):
//   "KWBORACL"  u32 format  u32 0x01020304
//   u64 key length, key text
//   u32 outputs; per output: u64 name length, name; u32 dims, i64 each;
//                            then values, abs_sum, root_sum_sq: u64 count, f64 each (their bits)
//   u64 u64  the Hash128 of every byte before it
// Doubles travel as their bits, so NaN payloads, infinities and -0.0 come back as they went.
// The trailing checksum catches a flipped bit as well as a cut file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"

namespace kwb {

// The version of the entry file format; part of every key too, so an entry of another format is
// never read as this one's.
inline constexpr std::uint32_t kOracleEntryFormat = 1;

// The file name suffix of an entry (and, followed by ".tmp.", of one being written).
inline constexpr std::string_view kOracleEntrySuffix = ".kwb-oracle";

struct OracleEntry {
  std::string key_text;
  std::vector<HostTensor> outputs;
};

std::string encode_oracle_entry(std::string_view key_text, const std::vector<HostTensor>& outputs);
inline std::string encode_oracle_entry(const OracleEntry& entry) {
  return encode_oracle_entry(entry.key_text, entry.outputs);
}
// The size encode_oracle_entry's bytes will have, without making them.
std::uint64_t encoded_oracle_entry_size(std::string_view key_text, const std::vector<HostTensor>& outputs);

// nullopt when `bytes` are not a whole, intact entry of this format; `why` (when given) then says
// what was wrong ("cut short at byte 120 of 4096", "checksum mismatch", ...).
std::optional<OracleEntry> decode_oracle_entry(std::string_view bytes, std::string* why = nullptr);

}  // namespace kwb
