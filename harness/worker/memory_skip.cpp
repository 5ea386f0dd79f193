// The memory skip's wording, written and recognised (see memory_skip.hpp).
#include "harness/worker/memory_skip.hpp"

#include <fmt/format.h>

namespace kwb {
namespace {

constexpr const char* kMiddle = " of device memory, ";

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

std::string memory_skip_reason(double needed_bytes, std::size_t free_bytes, std::size_t total_bytes) {
  return fmt::format("needs {}{}{} free of {}", gib(needed_bytes), kMiddle, gib(static_cast<double>(free_bytes)),
                     gib(static_cast<double>(total_bytes)));
}

bool skipped_for_memory(const CaseRecord& record) {
  return record.disposition == Disposition::skipped && record.reason.rfind("needs ", 0) == 0 &&
         record.reason.find(kMiddle) != std::string::npos && record.reason.find(" free of ") != std::string::npos;
}

}  // namespace kwb
