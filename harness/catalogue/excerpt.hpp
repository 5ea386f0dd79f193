// A value from a user's file or flag as a message quotes it: whole when short, else its start and
// how long it was. A message that echoed a 100 KB value whole would bury what it says.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kwb {

inline constexpr std::size_t kExcerptBytes = 60;

// `value` itself when it has at most kExcerptBytes bytes; else its first 48 bytes (not cutting a
// UTF-8 character), "...", and its length: "abcd... (100000 bytes)".
inline std::string excerpt(std::string_view value) {
  if (value.size() <= kExcerptBytes) return std::string(value);
  std::size_t cut = 48;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
  return std::string(value.substr(0, cut)) + "... (" + std::to_string(value.size()) + " bytes)";
}

}  // namespace kwb
