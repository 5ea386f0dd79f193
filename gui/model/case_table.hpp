// The results table as data: one row per case of every loaded report, the filters, the sort
// and the CSV a selection is copied as. The ImGui table (gui/windows/results_table.cpp) only
// draws these rows, so sorting and filtering are tested without a window.
#pragma once

#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb::gui {

// A case by position: which loaded report, which of its cases. -1: none.
struct CaseRef {
  int report = -1;
  int index = -1;
  bool valid() const { return report >= 0 && index >= 0; }
  bool operator==(const CaseRef&) const = default;
  auto operator<=>(const CaseRef&) const = default;
};

// What the badges warn of: a result a reader must not take at face value.
struct Badges {
  bool hot = false;         // measured with warm caches
  bool throttled = false;   // some samples under a throttled SM clock
  bool noisy = false;       // stopped by a cap before the noise or precision target
  bool unverified = false;  // no verification ran, or it could not pass
  bool any() const { return hot || throttled || noisy || unverified; }
  std::string text() const;  // "hot,noisy"; empty when none
};
Badges badges_of(const CaseRecord& c);

// The table's columns, in display order.
// The report column is last: it is hidden while one report is open, and the first column holds
// the row's click target, which must never be hidden.
enum class Column {
  op,
  variant,
  math,  // the arithmetic the case ran in ("tf32", "bf16, fp32 acc")
  uses,  // the libraries its variant called ("cuBLASLt")
  dtype,
  shape,
  mode,
  disposition,
  time_us,
  gbps,
  tflops,
  pct_roof,
  speedup,
  badges,
  report,
  count
};
const char* column_name(Column c);

struct TableRow {
  CaseRef ref;
  std::string report;  // the report's display name
  std::string op, variant, math, uses, dtype, shape, mode, disposition;
  std::string shape_compact;  // the identity's form ("4x4096x32x8x128x0,causal=1,..."): CSV and pairing
  std::string key;  // the case identity, for the text filter and hover text
  // NaN when the case was not timed (skipped, failed, verify-only) or has no baseline.
  double time_us = 0, gbps = 0, tflops = 0, pct_roof = 0, speedup = 0;
  // "tf32 vs fp32" when the speedup sets the case against a baseline of other math; else empty.
  std::string speedup_math;
  Badges badges;
  std::string search_text;  // lower-case key + disposition + reason, for the free-text filter
};
TableRow make_row(CaseRef ref, const std::string& report_name, const CaseRecord& c);
// The speedup cell: "2.10x", "2.10x (tf32 vs fp32)" where the maths differ, "-" when none.
std::string speedup_text(const TableRow& row);

// Empty strings match everything; `text` is matched case-insensitively anywhere in the row.
struct Filters {
  std::string op, variant, dtype, text;
  std::string report;  // a report's display name (TableRow::report); empty: every open report
  bool matches(const TableRow& row) const;
  bool operator==(const Filters&) const = default;
};

// Stable sort of row indices by one column; unmeasured (NaN) values sort last either way.
void sort_rows(std::vector<int>& order, const std::vector<TableRow>& rows, Column column,
               bool ascending);

// RFC 4180 CSV with a header: the rows given, every column, plain numbers (no units), the
// speedup's math comparison in its own column (speedup_math).
std::string rows_to_csv(const std::vector<const TableRow*>& rows);

}  // namespace kwb::gui
