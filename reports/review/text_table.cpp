// Wrapping cells and fitting columns (see text_table.hpp).
#include "reports/review/text_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kwb::review {
namespace {

constexpr std::size_t kSeparator = 2;     // spaces between columns
// A text column is never narrowed below this, its header, or its longest cell's longest unbreakable run.
constexpr std::size_t kNarrowestText = 12;

bool strong_break_after(std::string_view text, std::size_t i) {  // may a line end after text[i]?
  return text[i] == ',' || text[i] == ' ' || (i + 1 < text.size() && (text[i + 1] == '[' || text[i + 1] == '('));
}

// The longest run of `text` with no strong break in it: a column narrower than that would cut it.
std::size_t longest_token(std::string_view text) {
  std::size_t longest = 0, start = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (strong_break_after(text, i)) {
      longest = std::max(longest, i + 1 - start);
      start = i + 1;
    }
  return std::max(longest, text.size() - start);
}

}  // namespace

std::vector<std::string> wrap_cell(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  width = std::max<std::size_t>(width, 1);
  // Spaces at either end would only make blank lines.
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t at = 0;
  while (text.size() - at > width) {
    // The last strong break within the width, else the last '_', else a hard cut.
    std::size_t end = 0;
    for (std::size_t i = at; i < at + width; ++i)
      if (strong_break_after(text, i)) end = i + 1;
    if (end == 0)
      for (std::size_t i = at; i < at + width; ++i)
        if (text[i] == '_') end = i + 1;
    if (end == 0) end = at + width;
    std::string_view line = text.substr(at, end - at);
    while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
    lines.emplace_back(line);
    at = end;
    while (at < text.size() && text[at] == ' ') ++at;
  }
  lines.emplace_back(text.substr(at));
  return lines;
}

FittedTable fit_text_table(const Table& t, std::size_t max_width) {
  const std::size_t columns = t.headers.size();
  auto numeric = [&](std::size_t c) { return c < t.numeric.size() && t.numeric[c]; };
  FittedTable out;
  out.widths.assign(columns, 0);
  for (std::size_t c = 0; c < columns; ++c) out.widths[c] = t.headers[c].size();
  for (const auto& row : t.rows)
    for (std::size_t c = 0; c < columns && c < row.size(); ++c) out.widths[c] = std::max(out.widths[c], row[c].size());

  // Narrow one text column a step at a time until the line fits or nothing can give: the one where
  // the fewest cells would wrap (a column made wide by a few long cells gives first), the widest of
  // those on a tie.
  auto total = [&] {
    std::size_t sum = columns > 0 ? kSeparator * (columns - 1) : 0;
    for (std::size_t w : out.widths) sum += w;
    return sum;
  };
  if (max_width > 0) {
    std::vector<std::size_t> floors(columns);
    for (std::size_t c = 0; c < columns; ++c) {
      floors[c] = std::max(kNarrowestText, t.headers[c].size());
      for (const auto& row : t.rows)
        if (c < row.size()) floors[c] = std::max(floors[c], longest_token(row[c]));
    }
    while (total() > max_width) {
      std::size_t best = columns, best_wrapped = 0;
      for (std::size_t c = 0; c < columns; ++c) {
        if (numeric(c) || out.widths[c] <= floors[c]) continue;
        std::size_t wrapped = 0;  // cells longer than the narrowed width
        for (const auto& row : t.rows) wrapped += c < row.size() && row[c].size() >= out.widths[c];
        if (best == columns || wrapped < best_wrapped ||
            (wrapped == best_wrapped && out.widths[c] > out.widths[best])) {
          best = c;
          best_wrapped = wrapped;
        }
      }
      if (best == columns) break;
      --out.widths[best];
    }
  }

  auto line_of = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      s += numeric(c) ? fmt::format("{:>{}}", cell, out.widths[c]) : fmt::format("{:<{}}", cell, out.widths[c]);
      if (c + 1 < columns) s.append(kSeparator, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out.width = std::max(out.width, s.size());
    return s;
  };
  out.header = line_of(t.headers);
  for (const auto& row : t.rows) {
    std::vector<std::vector<std::string>> wrapped(columns);
    std::size_t height = 1;
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string cell = c < row.size() ? row[c] : std::string();
      wrapped[c] = numeric(c) ? std::vector<std::string>{cell} : wrap_cell(cell, out.widths[c]);
      height = std::max(height, wrapped[c].size());
    }
    std::vector<std::string>& lines = out.rows.emplace_back();
    for (std::size_t l = 0; l < height; ++l) {
      std::vector<std::string> cells(columns);
      for (std::size_t c = 0; c < columns; ++c) cells[c] = l < wrapped[c].size() ? wrapped[c][l] : "";
      lines.push_back(line_of(cells));
    }
  }
  return out;
}

}  // namespace kwb::review
