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

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"

namespace kwb {

struct OracleEntry {
  std::string key_text;
  std::vector<HostTensor> outputs;
};

std::string encode_oracle_entry(const OracleEntry& entry);

// nullopt when `bytes` are not a whole, intact entry of this format; `why` (when given) then says
// what was wrong ("cut short at byte 120 of 4096", "checksum mismatch", ...).
std::optional<OracleEntry> decode_oracle_entry(std::string_view bytes, std::string* why = nullptr);

}  // namespace kwb
