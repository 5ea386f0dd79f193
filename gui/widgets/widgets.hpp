// The small widgets every window shares, so that a help marker, a label/value pair, a copy
// button, a badge or a "good/bad" colour look the same everywhere.
#pragma once

#include <imgui.h>

#include <string>

#include "gui/model/case_table.hpp"
#include "harness/derive/counter_figures.hpp"

namespace kwb::gui::widgets {

// A greyed "(?)" that shows `text` in a tooltip.
void help_marker(const char* text);
// A small heading inside a section: the title (with a help marker when `help` is given), then a
// rule under it.
void subheading(const char* title, const char* help = nullptr);
// "label: value" on one line, the label greyed.
void label_value(const char* label, const std::string& value);
// A small button that copies `text` to the clipboard; says "copied" for a moment after.
bool copy_button(const char* id, const std::string& text);
// The badges of a case as small coloured tags on the current line; nothing when none.
void badges(const Badges& b);
// Colours for figures: a speedup (red below 1, green above), an efficiency % (red low, green high).
ImU32 speedup_colour(double speedup);
ImU32 efficiency_colour(double pct);
// A counter figure against its usual threshold (the harness's verdict, which the review report
// highlights): green within it, orange worth a look, else the text's colour.
ImU32 verdict_colour(FigureVerdict v);
// A hover tooltip on the last item, wrapped at a readable width; nothing when `text` is empty.
void item_tooltip(const std::string& text);
// Text in a colour, or the default colour for NaN ("-").
void coloured_text(ImU32 colour, const std::string& text);

}  // namespace kwb::gui::widgets
