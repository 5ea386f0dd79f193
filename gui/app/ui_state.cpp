// View names and show flags (see ui_state.hpp).
#include "gui/app/ui_state.hpp"

namespace kwb::gui {

const char* view_name(View v) {
  switch (v) {
    case View::table: return "table";
    case View::roofline: return "roofline";
    case View::sweep: return "sweep";
    case View::detail: return "detail";
    case View::compare: return "compare";
  }
  return "?";
}

std::optional<View> parse_view(const std::string& name) {
  for (View v : kAllViews)
    if (name == view_name(v)) return v;
  return std::nullopt;
}

bool* UiState::show_flag(View v) {
  switch (v) {
    case View::table: return &show_table;
    case View::roofline: return &show_roofline;
    case View::sweep: return &show_sweep;
    case View::detail: return &show_detail;
    case View::compare: return &show_compare;
  }
  return &show_table;
}

bool UiState::shown(View v) const {
  if (solo) return *solo == v;
  return *show_flag(v);
}

}  // namespace kwb::gui
