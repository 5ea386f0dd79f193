// LaunchKind names (see launch_kind.hpp).
#include "harness/catalogue/launch_kind.hpp"

namespace kwb {

std::string_view to_string(LaunchKind kind) { return kind == LaunchKind::graph ? "graph" : "stream"; }

std::optional<LaunchKind> parse_launch_kind(std::string_view text) {
  if (text == "stream") return LaunchKind::stream;
  if (text == "graph") return LaunchKind::graph;
  return std::nullopt;
}

std::string launch_note(LaunchKind kind) {
  return kind == LaunchKind::stream ? "" : ", launch " + std::string(to_string(kind));
}

}  // namespace kwb
