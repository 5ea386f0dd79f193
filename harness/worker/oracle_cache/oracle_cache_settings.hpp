// Where the oracle cache lives and how large it may grow, from the command line and the
// environment, and how a run hands that to its workers.
//
// Location: `--oracle-cache DIR|off`, else $KWB_ORACLE_CACHE (DIR or off), else the "oracle"
// folder of the cache root ($KWB_CACHE_DIR, $XDG_CACHE_HOME/kwb, $HOME/.cache/kwb:
// harness/record/cache_dir.hpp). Bound: `--oracle-cache-max-bytes SIZE`, else
// $KWB_CACHE_MAX_BYTES, else 16 GiB; SIZE is bytes or a number with K, M, G or T (powers of 1024).
// `kwb run` resolves both once, checks the folder can be written (one warning and no cache when it
// cannot), and sets both variables for its workers, which resolve them the same way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/worker/oracle_cache/oracle_cache.hpp"

namespace kwb {

inline constexpr const char* kOracleCacheEnv = "KWB_ORACLE_CACHE";       // DIR or off
inline constexpr const char* kCacheMaxBytesEnv = "KWB_CACHE_MAX_BYTES";  // SIZE
// The default bound: room for the answers the whole default sweep stores (those worth a place: see
// worth_storing), so that a second sweep reads every one of them back.
inline constexpr std::uint64_t kDefaultOracleCacheMaxBytes = std::uint64_t{16} << 30;

struct OracleCacheSettings {
  bool enabled = true;
  std::filesystem::path dir;  // the entries' folder (when enabled)
  std::string dir_source;     // what chose it: "--oracle-cache", "$KWB_ORACLE_CACHE", "$HOME/.cache/kwb", ...
  std::uint64_t max_bytes = kDefaultOracleCacheMaxBytes;
  std::string max_source = "default";  // "default", "$KWB_CACHE_MAX_BYTES", "--oracle-cache-max-bytes"
  std::string off_reason;     // when off: "--oracle-cache off", "$KWB_ORACLE_CACHE=off", or the folder's problem
};

// "4G", "512M", "1073741824", "1.5G" is refused (whole numbers only); case-insensitive suffix,
// an optional "iB"/"B" after it. nullopt for anything else, 0 included (turn the cache off instead).
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

// 4294967296 -> "4.0 GiB", 1536 -> "1.5 KiB", 12 -> "12 B".
std::string format_bytes(std::uint64_t bytes);

// From the flags' text ("" for a flag not given) and the environment. Throws std::invalid_argument
// naming the flag or variable for a malformed size or an empty folder. Checks nothing on disk.
OracleCacheSettings resolve_oracle_cache_settings(std::string_view location_flag, std::string_view max_bytes_flag);

// Turns `settings` off when its folder cannot be created or written; returns the one warning to
// give then (what, where, and how to fix it), else nullopt.
std::optional<std::string> check_oracle_cache(OracleCacheSettings& settings);

// The variables that give a worker these settings exactly (the folder or "off", and the bound).
std::vector<std::pair<std::string, std::string>> oracle_cache_environment(const OracleCacheSettings& settings);

// A worker's cache, from the variables its parent set (or, started by another front end, from
// what it inherited); null when off or unusable, said once to stderr (the worker's log).
std::unique_ptr<OracleCache> oracle_cache_from_environment();

}  // namespace kwb
