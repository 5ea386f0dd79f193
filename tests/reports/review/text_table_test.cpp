// Fitting a table to a terminal: cells wrap at their natural breaks, numbers never wrap, no line is
// wider than asked where the columns can give, and no character of a cell is lost.
#include "reports/review/text_table.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l;
  return s;
}

TEST(TextTable, CellsWrapAtCommasSpacesAndBracketsBeforeUnderscores) {
  EXPECT_EQ(review::wrap_cell("fused_v3_cluster_row_in_smem[cluster=8,threads=256]", 30),
            (std::vector<std::string>{"fused_v3_cluster_row_in_smem", "[cluster=8,threads=256]"}));
  EXPECT_EQ(review::wrap_cell("1x8192x32x8x128,positions=index", 20),
            (std::vector<std::string>{"1x8192x32x8x128,", "positions=index"}));
  EXPECT_EQ(review::wrap_cell("8.10x (tf32 vs fp32)", 10), (std::vector<std::string>{"8.10x", "(tf32 vs", "fp32)"}));
  // No strong break within the width: after an underscore, else a hard cut.
  EXPECT_EQ(review::wrap_cell("baseline_eager_materialised_logits", 20),
            (std::vector<std::string>{"baseline_eager_", "materialised_logits"}));
  EXPECT_EQ(review::wrap_cell("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  EXPECT_EQ(review::wrap_cell("", 5), std::vector<std::string>{""});
  EXPECT_EQ(review::wrap_cell("fits", 4), std::vector<std::string>{"fits"});
  // Spaces at the ends make no blank lines.
  EXPECT_EQ(review::wrap_cell("abc   ", 3), std::vector<std::string>{"abc"});
  EXPECT_EQ(review::wrap_cell("  abc", 3), std::vector<std::string>{"abc"});
  EXPECT_EQ(review::wrap_cell("    ", 2), std::vector<std::string>{""});
}

TEST(TextTable, AWideTableIsFittedByWrappingTextColumnsAndKeepsEveryCharacter) {
  review::Table t{{"shape", "winner", "us"}, {}, {false, false, true}};
  t.rows = {{"4096x32000", "fused_v3_cluster_row_in_smem[cluster=8,threads=256]", "680.91"},
            {"1x8192x32x8x128,positions=index", "fused_v1_vec16_shared_table[items=1024,unroll=2]", "64.29"},
            {"16384x4096", "fused_v1_row_in_registers", "91.23"}};
  const review::FittedTable natural = review::fit_text_table(t, 0);
  EXPECT_GT(natural.width, 60u);
  for (const auto& lines : natural.rows) EXPECT_EQ(lines.size(), 1u);

  const review::FittedTable fitted = review::fit_text_table(t, 60);
  EXPECT_LE(fitted.width, 60u);
  ASSERT_EQ(fitted.rows.size(), 3u);
  EXPECT_GT(fitted.rows[0].size(), 1u) << "the long winner wraps";
  EXPECT_EQ(fitted.rows[2].size(), 1u) << "a short row stays one line";
  // The time stays whole and right-aligned on the row's first line.
  EXPECT_EQ(fitted.rows[0][0].substr(fitted.rows[0][0].size() - 6), "680.91");
  // Every cell's characters are in its column's lines, in order.
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    std::size_t at = 0;
    for (std::size_t c = 0; c < 2; ++c) {
      std::string column;
      for (const auto& line : fitted.rows[r]) {
        std::string part = line.size() > at ? line.substr(at, fitted.widths[c]) : "";
        while (!part.empty() && part.back() == ' ') part.pop_back();
        column += part;
      }
      EXPECT_EQ(column, t.rows[r][c]) << "row " << r << " column " << c;
      at += fitted.widths[c] + 2;
    }
  }
}

TEST(TextTable, NumbersAndHeadersNeverWrapEvenWhenTheWidthCannotBeMet) {
  review::Table t{{"a long header", "median us"}, {{"x", "123456.78"}}, {false, true}};
  const review::FittedTable fitted = review::fit_text_table(t, 5);
  EXPECT_EQ(fitted.header, "a long header  median us");
  EXPECT_EQ(joined(fitted.rows[0]).find("123456.78") != std::string::npos, true);
}

}  // namespace
}  // namespace kwb
