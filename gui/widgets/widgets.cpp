// Shared widgets (see widgets.hpp).
#include "gui/widgets/widgets.hpp"

#include <algorithm>
#include <cmath>

namespace kwb::gui::widgets {

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void subheading(const char* title, const char* help) {
  ImGui::Spacing();
  ImGui::TextUnformatted(title);
  if (help) help_marker(help);
  ImGui::Separator();
}

void label_value(const char* label, const std::string& value) {
  ImGui::TextDisabled("%s:", label);
  ImGui::SameLine();
  ImGui::TextUnformatted(value.c_str());
}

bool copy_button(const char* id, const std::string& text) {
  ImGui::PushID(id);
  const ImGuiID key = ImGui::GetID("copied_at");
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const float copied_at = storage->GetFloat(key, -10.0f);
  const bool recent = ImGui::GetTime() - copied_at < 1.5;
  const bool pressed = ImGui::SmallButton(recent ? "copied" : "copy");
  if (pressed) {
    ImGui::SetClipboardText(text.c_str());
    storage->SetFloat(key, static_cast<float>(ImGui::GetTime()));
  }
  ImGui::PopID();
  return pressed;
}

namespace {
void tag(const char* text, ImU32 colour) {
  ImGui::SameLine(0, 4);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 size = ImGui::CalcTextSize(text);
  ImGui::GetWindowDrawList()->AddRectFilled({p.x - 1, p.y}, {p.x + size.x + 3, p.y + size.y},
                                            colour, 3.0f);
  ImGui::SetCursorScreenPos({p.x + 1, p.y});
  ImGui::TextColored(ImVec4(1, 1, 1, 1), "%s", text);
}
}  // namespace

void badges(const Badges& b) {
  // The first tag is drawn after a zero-width item so SameLine has something to follow.
  ImGui::Dummy({0, 0});
  if (b.hot) tag("hot", IM_COL32(214, 96, 40, 255));
  if (b.throttled) tag("throttled", IM_COL32(190, 40, 40, 255));
  if (b.noisy) tag("noisy", IM_COL32(150, 110, 20, 255));
  if (b.unverified) tag("unverified", IM_COL32(110, 110, 110, 255));
}

ImU32 speedup_colour(double s) {
  if (!std::isfinite(s)) return ImGui::GetColorU32(ImGuiCol_TextDisabled);
  if (s < 0.97) return IM_COL32(200, 40, 40, 255);
  if (s <= 1.03) return ImGui::GetColorU32(ImGuiCol_Text);
  const float t =
      static_cast<float>(std::clamp((s - 1.0) / 2.0, 0.0, 1.0));  // 3x and above: full green
  return IM_COL32(static_cast<int>(60 - 40 * t), static_cast<int>(130 + 40 * t), 60, 255);
}

ImU32 efficiency_colour(double pct) {
  if (!std::isfinite(pct)) return ImGui::GetColorU32(ImGuiCol_TextDisabled);
  if (pct > 100) return IM_COL32(170, 60, 200, 255);  // above a roof: the model or ceiling is wrong
  const float t = static_cast<float>(std::clamp(pct / 100.0, 0.0, 1.0));
  return IM_COL32(static_cast<int>(210 - 170 * t), static_cast<int>(70 + 90 * t), 50, 255);
}

ImU32 verdict_colour(FigureVerdict v) {
  switch (v) {
    case FigureVerdict::fine: return IM_COL32(40, 140, 60, 255);
    case FigureVerdict::attention: return IM_COL32(190, 120, 10, 255);
    case FigureVerdict::none: break;
  }
  return ImGui::GetColorU32(ImGuiCol_Text);
}

void item_tooltip(const std::string& text) {
  if (text.empty() || !ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void coloured_text(ImU32 colour, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopStyleColor();
}

}  // namespace kwb::gui::widgets
