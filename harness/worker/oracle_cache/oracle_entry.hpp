// An oracle cache entry as bytes: the key it answers and the expected outputs, exactly.
//
// Layout (little-endian, as the machine that wrote it; the byte-order mark refuses another):
//   "KWBORACL"  u32 format  u32 0x01020304  f64 compute_ms
//   u64 key length, key text
//   u32 outputs; per output: u64 name length, name; u32 dims, i64 each;
//                            then values, abs_sum, root_sum_sq: u64 count, f64 each (their bits)
//   u64 u64  the Hash128 of every byte before it
// Doubles travel as their bits, so NaN payloads, infinities and -0.0 come back as they went.
// The trailing checksum catches a flipped bit as well as a cut file. compute_ms, what the oracle
// took to make the answer, sits at a fixed offset so that eviction can weigh an entry by the time
// it saves without reading the rest (peek_oracle_entry_compute_ms).
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
inline constexpr std::uint32_t kOracleEntryFormat = 2;  // 2: compute_ms in the header

// The file name suffix of an entry (and, followed by ".tmp.", of one being written).
inline constexpr std::string_view kOracleEntrySuffix = ".kwb-oracle";

struct OracleEntry {
  std::string key_text;
  std::vector<HostTensor> outputs;
  double compute_ms = 0;  // the oracle's host time for this answer (0: not known)
};

std::string encode_oracle_entry(std::string_view key_text, const std::vector<HostTensor>& outputs,
                                double compute_ms = 0);
inline std::string encode_oracle_entry(const OracleEntry& entry) {
  return encode_oracle_entry(entry.key_text, entry.outputs, entry.compute_ms);
}

// The bytes of an entry's header (magic, format, byte order, compute_ms).
inline constexpr std::size_t kOracleEntryHeadBytes = 8 + 4 + 4 + 8;
// compute_ms from the first kOracleEntryHeadBytes of an entry file; nullopt when they are not the
// head of an entry of this format (the checksum is not checked: a wrong figure only misorders an
// eviction, and a load checks everything).
std::optional<double> peek_oracle_entry_compute_ms(std::string_view head);
// The size encode_oracle_entry's bytes will have, without making them.
std::uint64_t encoded_oracle_entry_size(std::string_view key_text, const std::vector<HostTensor>& outputs);

// nullopt when `bytes` are not a whole, intact entry of this format; `why` (when given) then says
// what was wrong ("cut short at byte 120 of 4096", "checksum mismatch", ...).
std::optional<OracleEntry> decode_oracle_entry(std::string_view bytes, std::string* why = nullptr);

}  // namespace kwb
