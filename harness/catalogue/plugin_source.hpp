// Where an op or variant came from when a plugin registered it: the shared library's path and a
// hash of its bytes. Records and reports carry it so that a result names the exact build of the
// code that produced it; ops and variants built into kwb have none.
#pragma once

#include <string>

namespace kwb {

struct PluginSource {
  std::string path;    // absolute, as loaded
  std::string sha256;  // of the file's bytes, 64 lowercase hex digits: `sha256sum PATH` prints the same
  bool operator==(const PluginSource&) const = default;
};

}  // namespace kwb
