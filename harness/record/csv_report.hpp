// The CSV report: one flat row per case for spreadsheets and pandas, units in the column names.
//
// Columns: index, op, variant, role, uses, math, dtype, shape, one axis_<name> per axis seen in any case
// (first-seen order), then the timing, derived and verify columns, nvtx_range and repro, and last
// the measured roofline from hardware counters (measured_dram_bytes, traffic_ratio,
// measured_flops, flop_ratio; see csv_report.cpp). New columns are added at the end.
// A cell is empty when the value was not measured: a skipped case has no times, an events-timed
// case no kernel count. Doubles are printed shortest-round-trip, so parsing a cell gives back the
// exact double. Fields are quoted per RFC 4180; rows end with "\n" (parse_csv also takes "\r\n").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "harness/record/json_report.hpp"

namespace kwb {

std::string to_csv(const Report& report);

// RFC 4180 rows of fields. Throws ReportError naming the line on an unterminated quoted field or
// on stray characters around quotes.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);

// Replaced atomically.
void write_report_csv(const std::filesystem::path& path, const Report& report);

}  // namespace kwb
