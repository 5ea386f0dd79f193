// A Table (review_tables.hpp) as aligned text for a terminal, fitted to a width: where the columns'
// natural widths do not fit, the widest text columns are narrowed and their cells wrap onto more
// lines at natural breaks (after ',' or ' ', before '[' or '(', after '_' as a last resort).
// Numbers never wrap. `kwb select` prints its table through it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "reports/review/review_tables.hpp"

namespace kwb::review {

// The lines of `text` at most `width` columns wide (one line when it fits; a token longer than the
// width is cut). Never empty: an empty cell is one empty line.
std::vector<std::string> wrap_cell(std::string_view text, std::size_t width);

struct FittedTable {
  std::vector<std::size_t> widths;            // per column, as fitted
  std::string header;                         // the header line
  std::vector<std::vector<std::string>> rows; // per row, its lines
  std::size_t width = 0;                      // the widest line
};

// Columns separated by two spaces, text left- and numbers right-aligned, trailing spaces trimmed.
// `max_width` 0: every column at its natural width. A table whose numeric columns and headers alone
// exceed `max_width` comes out as narrow as they allow.
FittedTable fit_text_table(const Table& t, std::size_t max_width);

}  // namespace kwb::review
