// Flags and variables -> OracleCacheSettings; the folder check; the worker's side.
#include "harness/worker/oracle_cache/oracle_cache_settings.hpp"

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/record/cache_dir.hpp"

namespace kwb {
namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::uint64_t size_or_throw(std::string_view text, const std::string& where) {
  if (auto bytes = parse_byte_size(text)) return *bytes;
  throw std::invalid_argument(fmt::format(
      "{}: '{}' is not a size; write a whole number of bytes above 0 or one with K, M, G or T (powers of 1024): "
      "4G, 512M (to turn the oracle cache off: --oracle-cache off)",
      where, text.size() > 60 ? std::string(text.substr(0, 57)) + "..." : std::string(text)));
}

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 20) return std::nullopt;
  const std::string unit = lower(text.substr(digits));
  int shift = -1;
  static constexpr std::pair<const char*, int> kUnits[] = {{"k", 10}, {"m", 20}, {"g", 30}, {"t", 40}};
  for (const auto& [letter, bits] : kUnits)
    if (unit == letter || unit == std::string(letter) + "b" || unit == std::string(letter) + "ib") shift = bits;
  if (unit.empty() || unit == "b") shift = 0;
  if (shift < 0) return std::nullopt;
  std::uint64_t number = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (number > (UINT64_MAX - digit) / 10) return std::nullopt;
    number = number * 10 + digit;
  }
  if (number == 0 || number > (UINT64_MAX >> shift)) return std::nullopt;
  return number << shift;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}

OracleCacheSettings resolve_oracle_cache_settings(std::string_view location_flag, std::string_view max_bytes_flag) {
  OracleCacheSettings s;
  if (!max_bytes_flag.empty()) {
    s.max_bytes = size_or_throw(max_bytes_flag, "--oracle-cache-max-bytes");
    s.max_source = "--oracle-cache-max-bytes";
  } else if (const char* env = variable(kCacheMaxBytesEnv)) {
    s.max_bytes = size_or_throw(env, fmt::format("${}", kCacheMaxBytesEnv));
    s.max_source = fmt::format("${}", kCacheMaxBytesEnv);
  }
  std::string location;
  std::string source;
  if (!location_flag.empty()) {
    location = location_flag;
    source = "--oracle-cache";
  } else if (const char* env = variable(kOracleCacheEnv)) {
    location = env;
    source = fmt::format("${}", kOracleCacheEnv);
  }
  if (location == "off") {
    s.enabled = false;
    s.off_reason = source == "--oracle-cache" ? "--oracle-cache off" : fmt::format("${}=off", kOracleCacheEnv);
    return s;
  }
  if (!location.empty()) {
    s.dir = location;
    s.dir_source = source;
    return s;
  }
  const CacheRoot root = kwb_cache_root();
  s.dir = root.dir / "oracle";
  s.dir_source = root.source;
  // The last resort, the shared temp folder, is not trusted with expected answers: anyone could
  // plant one there that lets a wrong kernel pass. Only a folder named by the user or in $HOME.
  if (root.shared) {
    s.enabled = false;
    s.off_reason = "no $HOME, $XDG_CACHE_HOME or $KWB_CACHE_DIR names a private folder (the shared temp folder is "
                   "not trusted with verification answers); name one with --oracle-cache DIR";
  }
  return s;
}

std::optional<std::string> check_oracle_cache(OracleCacheSettings& s) {
  if (!s.enabled) return std::nullopt;
  const auto problem = check_cache_folder(s.dir);
  if (!problem) return std::nullopt;
  s.enabled = false;
  s.off_reason = *problem;
  return fmt::format("the oracle cache is off for this run: {} (chosen by {}); every oracle is computed. Point it "
                     "at a writable folder (--oracle-cache DIR, or $KWB_CACHE_DIR) or turn it off "
                     "(--oracle-cache off) to silence this",
                     *problem, s.dir_source);
}

std::vector<std::pair<std::string, std::string>> oracle_cache_environment(const OracleCacheSettings& s) {
  return {{kOracleCacheEnv, s.enabled ? s.dir.string() : std::string("off")},
          {kCacheMaxBytesEnv, std::to_string(s.max_bytes)}};
}

std::unique_ptr<OracleCache> oracle_cache_from_environment() {
  OracleCacheSettings s;
  try {
    s = resolve_oracle_cache_settings("", "");
  } catch (const std::invalid_argument& e) {  // `kwb run` refuses these before a worker starts
    std::cerr << "kwb: oracle cache: " << e.what() << "; the cache is off in this worker\n";
    return nullptr;
  }
  if (auto warning = check_oracle_cache(s)) std::cerr << "kwb: " << *warning << "\n";
  if (!s.enabled) return nullptr;
  return std::make_unique<OracleCache>(s.dir, s.max_bytes);
}

}  // namespace kwb
