#include "harness/session/worker_memory.hpp"

#include <cstdlib>
#include <string_view>

namespace kwb {

std::string worker_glibc_tunables(const char* parent_value) {
  constexpr std::string_view kHugePages = "glibc.malloc.hugetlb=1";
  const std::string parent = parent_value ? parent_value : "";
  if (parent.empty()) return std::string(kHugePages);
  if (parent.find("glibc.malloc.hugetlb=") != std::string::npos) return parent;  // the user's choice
  return parent + ":" + std::string(kHugePages);
}

std::pair<std::string, std::string> worker_memory_environment() {
  return {"GLIBC_TUNABLES", worker_glibc_tunables(std::getenv("GLIBC_TUNABLES"))};
}

}  // namespace kwb
