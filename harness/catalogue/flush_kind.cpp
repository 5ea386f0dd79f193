// FlushKind names (see flush_kind.hpp).
#include "harness/catalogue/flush_kind.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kwb {

std::string_view to_string(FlushKind kind) { return kind == FlushKind::clean ? "clean" : "dirty"; }

std::optional<FlushKind> parse_flush_kind(std::string_view text) {
  if (text == "dirty") return FlushKind::dirty;
  if (text == "clean") return FlushKind::clean;
  return std::nullopt;
}

std::string describe_flush(FlushKind kind, std::int64_t l2_bytes) {
  const std::int64_t mib = std::max<std::int64_t>(2 * l2_bytes, 64 << 20) >> 20;
  if (kind == FlushKind::clean)
    return fmt::format("clean: memset of {0} MiB (2x L2), then a read sweep of another {0} MiB, before "
                       "every sample (no dirty line left, as ncu --cache-control all)", mib);
  return fmt::format("dirty: memset of {} MiB (2x L2) before every sample (L2 left dirty)", mib);
}

}  // namespace kwb
