// `kwb cache show` and `kwb cache clear`: where the oracle cache is, what it holds, and emptying it.
// Both read the location as `kwb run` does (--oracle-cache, $KWB_ORACLE_CACHE, $KWB_CACHE_DIR,
// $XDG_CACHE_HOME, ~/.cache), so what `show` names is what a run would use.
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "harness/record/cache_dir.hpp"
#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "harness/worker/oracle_cache/oracle_cache_settings.hpp"

namespace kwb::cli {
namespace {

namespace fs = std::filesystem;

struct CacheFlags {
  std::string oracle_cache;  // --oracle-cache DIR ("" : as kwb run finds it)
};

std::string local_time(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", tm);
}

// The settings, or an exit code after saying what is wrong with them.
std::optional<OracleCacheSettings> settings_for(const std::string& verb, const CacheFlags& f, int& exit_code) {
  if (f.oracle_cache == "off") {
    std::cerr << "kwb cache " << verb << ": --oracle-cache: 'off' names no folder; give the folder to "
              << verb << ", or leave the flag out for the one `kwb run` uses\n";
    exit_code = kExitBadInput;
    return std::nullopt;
  }
  try {
    return resolve_oracle_cache_settings(f.oracle_cache, "");
  } catch (const std::invalid_argument& e) {  // a malformed $KWB_CACHE_MAX_BYTES
    std::cerr << "kwb cache " << verb << ": " << e.what() << "\n";
    exit_code = kExitBadInput;
    return std::nullopt;
  }
}

// Whether the folder can be listed; the error when it exists and cannot.
std::optional<std::string> unreadable(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  fs::directory_iterator it(dir, ec);
  if (ec) return fmt::format("cannot read {}: {}", dir.string(), ec.message());
  return std::nullopt;
}

// The ceilings files beside the oracle folder, which `clear` leaves alone.
std::size_t ceilings_files(const fs::path& root) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    n += name.starts_with("ceilings-") && name.ends_with(".json");
  }
  return n;
}

int show(const CacheFlags& f) {
  int exit_code = kExitOk;
  auto s = settings_for("show", f, exit_code);
  if (!s) return exit_code;
  if (!s->enabled) {
    std::cout << "oracle cache: off (" << s->off_reason << "): `kwb run` computes every oracle; unset "
              << kOracleCacheEnv << " to use the cache\n";
    return kExitOk;
  }
  if (auto why = unreadable(s->dir)) {
    std::cerr << "kwb cache show: " << *why << "; fix the folder's permissions, or point the cache elsewhere "
              << "(--oracle-cache DIR, $KWB_CACHE_DIR)\n";
    return kExitCaseFailed;
  }
  const OracleCache cache(s->dir, s->max_bytes);
  const OracleCacheContents c = cache.contents();
  std::error_code ec;
  const bool exists = fs::is_directory(s->dir, ec);
  const auto problem = check_cache_folder(s->dir);
  std::cout << "oracle cache: " << s->dir.string() << "\n";
  std::cout << "  chosen by:  " << s->dir_source
            << " (--oracle-cache DIR or $KWB_ORACLE_CACHE move it; $KWB_CACHE_DIR moves the whole cache)\n";
  std::cout << fmt::format("  entries:    {} ({} of a {} bound, {})\n", c.entries, format_bytes(c.bytes),
                           format_bytes(s->max_bytes),
                           s->max_source == "default" ? std::string("the default; $KWB_CACHE_MAX_BYTES sets it")
                                                      : "from " + s->max_source);
  if (c.entries > 0)
    std::cout << fmt::format("  saves:      {:.1f} s of oracle time to a run that meets them all; when space is "
                             "short, entries unused for a week go first, then those saving the least per byte\n",
                             c.saved_ms / 1000.0);
  if (c.oldest_use && c.newest_use)
    std::cout << fmt::format("  last used:  oldest {}, newest {}\n", local_time(*c.oldest_use), local_time(*c.newest_use));
  if (c.temp_files > 0)
    std::cout << fmt::format("  temp files: {} ({}): writes in flight, or left by a run that was killed\n",
                             c.temp_files, format_bytes(c.temp_bytes));
  std::cout << "  writable:   "
            << (problem ? "no: " + *problem + " (runs go on without the cache, with one warning)"
                        : exists ? std::string("yes")
                                 : std::string("yes (the folder is made by the first run that stores an answer)"))
            << "\n";
  const CacheRoot root = kwb_cache_root();
  if (const std::size_t n = ceilings_files(root.dir))
    std::cout << fmt::format("measured ceilings: {} file(s) in {} (kept by `kwb cache clear`; `kwb ceilings "
                             "--refresh` measures them again)\n", n, root.dir.string());
  if (c.entries + c.temp_files > 0) std::cout << "clear it with `kwb cache clear`\n";
  return kExitOk;
}

int clear(const CacheFlags& f) {
  int exit_code = kExitOk;
  auto s = settings_for("clear", f, exit_code);
  if (!s) return exit_code;
  if (!s->enabled) {
    std::cout << "kwb cache clear: nothing cleared: the oracle cache is off (" << s->off_reason << "); unset "
              << kOracleCacheEnv << " to clear the folder `kwb run` would otherwise use\n";
    return kExitOk;
  }
  std::error_code ec;
  if (!fs::exists(s->dir, ec)) {
    std::cout << "kwb cache clear: nothing to clear: " << s->dir.string() << " does not exist\n";
    return kExitOk;
  }
  if (auto why = unreadable(s->dir)) {
    std::cerr << "kwb cache clear: " << *why << "; fix the folder's permissions, or remove it by hand\n";
    return kExitCaseFailed;
  }
  const OracleCacheClearOutcome out = OracleCache(s->dir, s->max_bytes).clear();
  std::cout << fmt::format("kwb cache clear: removed {} oracle cache file(s) ({}) from {}\n", out.removed,
                           format_bytes(out.bytes), s->dir.string());
  if (out.errors.empty()) return kExitOk;
  std::cerr << fmt::format("kwb cache clear: {} file(s) could not be removed:\n", out.errors.size());
  for (std::size_t i = 0; i < out.errors.size() && i < 10; ++i) std::cerr << "  " << out.errors[i] << "\n";
  if (out.errors.size() > 10) std::cerr << fmt::format("  ... and {} more\n", out.errors.size() - 10);
  std::cerr << "check the folder's permissions (ls -l " << s->dir.string()
            << "): the files are owned by whoever ran kwb there\n";
  return kExitCaseFailed;
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("cache", "The oracle cache: where it is and what it holds (show), emptying it (clear)");
  cmd->require_subcommand(1);
  static CacheFlags f;
  const std::string dir_help =
      "The oracle cache folder (default: as `kwb run` finds it: $KWB_ORACLE_CACHE, else the oracle folder of "
      "$KWB_CACHE_DIR, $XDG_CACHE_HOME/kwb or ~/.cache/kwb)";
  auto* show_cmd = cmd->add_subcommand("show", "Where the oracle cache is, its entries and bytes, its bound, when "
                                               "its entries were last used, whether it can be written");
  show_cmd->add_option("--oracle-cache", f.oracle_cache, dir_help)->type_name("DIR");
  show_cmd->callback([&exit_code] { exit_code = show(f); });
  auto* clear_cmd = cmd->add_subcommand("clear", "Remove every oracle cache entry (the measured ceilings stay)");
  clear_cmd->add_option("--oracle-cache", f.oracle_cache, dir_help)->type_name("DIR");
  clear_cmd->callback([&exit_code] { exit_code = clear(f); });
}

}  // namespace kwb::cli
