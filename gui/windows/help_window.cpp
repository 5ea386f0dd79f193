// Help > Keyboard and docs: the shortcuts of every view and where the documentation lives (the
// app cannot assume a browser; the paths are shown with a button that copies each).
#include <imgui.h>

#include <filesystem>

#include "gui/app/layout.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

struct Shortcut {
  const char* keys;
  const char* what;
};

constexpr Shortcut kShortcuts[] = {
    {"Ctrl+O", "open a report (or drop report.json files on the window)"},
    {"Ctrl+Q", "quit"},
    {"Up / Down, PgUp / PgDn", "results table: the previous or next case; every view follows"},
    {"Click, Ctrl-click, Shift-click", "results table: select a case, add one, mark a range"},
    {"Ctrl+C", "results table: copy the marked rows as CSV"},
    {"Right-click a column header", "results table: show or hide columns"},
    {"Mouse wheel", "charts: zoom around the pointer"},
    {"Drag", "charts: pan"},
    {"Double-click", "charts: fit the data again"},
    {"Click a point", "charts: select its case in every view"},
};

struct Doc {
  const char* file;
  const char* what;
};

constexpr Doc kDocs[] = {
    {"docs/app.md", "this app: the views, compare, live runs, screenshots"},
    {"docs/guide.md", "the kwb command line: runs, suites and the regression gate, history, outputs"},
    {"docs/catalogue.md", "every op and variant, with formulas and tunables"},
    {"docs/results.md", "what each variant reaches on an H100 or H200"},
    {"docs/architecture.md", "how the numbers are made: timing, verification, ceilings, roofs"},
};

}  // namespace

void draw_help_window(UiState& ui) {
  if (!ui.show_help) return;
  place_centered(640, 520);
  if (!ImGui::Begin("Help: keyboard and docs", &ui.show_help)) {
    ImGui::End();
    return;
  }
  ImGui::TextUnformatted("Keyboard and mouse");
  if (ImGui::BeginTable("shortcuts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    for (const Shortcut& s : kShortcuts) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn(), ImGui::TextUnformatted(s.keys);
      ImGui::TableNextColumn(), ImGui::TextUnformatted(s.what);
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  ImGui::TextUnformatted("Documentation (in the source tree)");
  const std::filesystem::path root = KWB_SOURCE_DIR;
  for (const Doc& d : kDocs) {
    const std::string path = (root / d.file).string();
    ImGui::PushID(d.file);
    if (ImGui::SmallButton("copy path")) ImGui::SetClipboardText(path.c_str());
    ImGui::PopID();
    ImGui::SameLine();
    ImGui::TextUnformatted(d.file);
    ImGui::SameLine();
    ImGui::TextDisabled("%s", d.what);
  }
  ImGui::Spacing();
  ImGui::TextWrapped("Text size: View > Text size (saved; the first start follows the screen's scale).");
  ImGui::End();
}

}  // namespace kwb::gui
