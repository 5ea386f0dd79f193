// The "fastest variant per shape" table, formatted once: `kwb select` prints it, writes it as
// Markdown, and the review report (HTML and Markdown) shows it, all from these cells.
#pragma once

#include <string>
#include <vector>

#include "reports/review/review_tables.hpp"
#include "reports/select/selection.hpp"

namespace kwb::review {

// op, dtype, shape (", hot" for hot mode), winner, us, runner-up, margin, verdict, vs baseline.
Table selection_table(const select::Selection& s);

// One line per op: "rmsnorm_fwd: fused_v2_vec16 wins 7 of 10 shapes, fused_v4_rows_per_block 3".
std::vector<std::string> selection_summary_lines(const select::Selection& s);

// What the verdict column means and which noise rule applied, for under the table.
std::string selection_note(const select::Selection& s);

// One line per group with nothing to select: "softmax_fwd bf16 1x3: 2 failed (reason: ...)".
std::vector<std::string> unselected_lines(const select::Selection& s);

}  // namespace kwb::review
