// What a terminal would show for the text a progress display wrote: "\r" moves to the line's
// start, ESC[K clears from the cursor to the line's end, "\n" starts the next line, any other
// byte is written at the cursor. Enough of a terminal to prove that a bar drawn in place leaves
// nothing behind and that lines printed above it come out whole, once, in order.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace kwb::test {

inline std::vector<std::string> terminal_screen(const std::string& written) {
  std::vector<std::string> rows(1);
  std::size_t col = 0;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const char c = written[i];
    std::string& row = rows.back();
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      rows.emplace_back();
      col = 0;
    } else if (c == '\x1b' && written.compare(i, 3, "\x1b[K") == 0) {
      row.resize(std::min(row.size(), col));
      i += 2;
    } else {
      if (row.size() <= col) row.resize(col + 1, ' ');
      row[col++] = c;
    }
  }
  return rows;
}

}  // namespace kwb::test
