// The cache folder from the environment, in the order the XDG base directory convention gives.
#include "harness/record/cache_dir.hpp"

#include <cstdlib>

namespace kwb {

CacheRoot kwb_cache_root() {
  const auto set = [](const char* name) -> const char* {
    const char* value = std::getenv(name);
    return value && *value ? value : nullptr;
  };
  if (const char* dir = set("KWB_CACHE_DIR")) return {dir, "$KWB_CACHE_DIR"};
  if (const char* xdg = set("XDG_CACHE_HOME")) return {std::filesystem::path(xdg) / "kwb", "$XDG_CACHE_HOME/kwb"};
  if (const char* home = set("HOME")) return {std::filesystem::path(home) / ".cache" / "kwb", "$HOME/.cache/kwb"};
  return {std::filesystem::temp_directory_path() / "kwb-cache", "the temp folder (no $HOME)", true};
}

}  // namespace kwb
