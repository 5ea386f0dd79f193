// SHA-256 of a plugin's bytes: the content hash records carry beside its path
// (harness/catalogue/plugin_source.hpp). SHA-256 rather than a hash the tree already has (FNV-1a
// in harness/plan/shard.hpp, the oracle cache's 128-bit digest): a reader can check a recorded
// value against a file with `sha256sum`, which no other hash here allows.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kwb {

// 64 lowercase hex digits (FIPS 180-4).
std::string sha256_hex(std::string_view bytes);

// The SHA-256 of a file's contents; throws std::runtime_error naming the file when it cannot be read.
std::string sha256_hex_of_file(const std::filesystem::path& path);

}  // namespace kwb
