// Where kwb keeps what it can measure or compute again: the ceilings of each GPU and the oracle
// cache's entries live under one folder, so one variable moves them and one command shows them.
#pragma once

#include <filesystem>
#include <string>

namespace kwb {

struct CacheRoot {
  std::filesystem::path dir;
  std::string source;  // what chose it, for people: "$KWB_CACHE_DIR", "$XDG_CACHE_HOME/kwb", ...
  bool shared = false;  // the temp folder's kwb-cache: anyone on the machine may write there
};

// $KWB_CACHE_DIR, else $XDG_CACHE_HOME/kwb, else $HOME/.cache/kwb, else <temp folder>/kwb-cache
// (empty variables count as unset). Nothing is created.
CacheRoot kwb_cache_root();

}  // namespace kwb
