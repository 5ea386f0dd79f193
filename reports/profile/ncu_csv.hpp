// Nsight Compute's raw page as CSV (`ncu --csv --page raw --print-units base`), read into the
// record's counters (harness/record/counters.hpp, source "ncu").
//
// The table ncu prints: a header row (the result's ID, process, kernel name, launch and device
// columns, then one column per metric, named as the metric: dram__bytes_read.sum), a row of units
// (the info columns empty), then one row per profiled kernel, every field quoted. Numbers may
// carry thousands separators ("1,073,741,824"); a metric ncu could not collect for a kernel reads
// "n/a". What ncu and the profiled program print around the table on the same stream (==PROF==
// lines, kwb's own summary) is skipped: the table starts at the first row whose first field is
// "ID" and that has a "Kernel Name" column.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/record/counters.hpp"

namespace kwb {

// What is wrong with a CSV, with the line it was found at and how to make a good one.
struct NcuCsvError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct NcuKernelRow {
  int line = 0;         // in the text, from 1
  std::string id;       // ncu's result ID ("0", "1", ...)
  std::string name;     // the "Kernel Name" column
  std::map<std::string, double> values;       // metric -> value, in base units
  std::map<std::string, std::string> text;    // metric -> a value that is not a number
  std::vector<std::string> not_available;     // metrics that read "n/a" or nothing for it
};

struct NcuRawTable {
  std::vector<std::string> metrics;            // metric columns, in the file's order
  std::map<std::string, std::string> units;    // metric -> unit as printed ("byte", "nsecond")
  std::vector<NcuKernelRow> kernels;           // in the file's order (ncu's launch order)
};

// One CSV line split into fields (quoted fields may hold commas and "" for a quote). Throws
// NcuCsvError for an unterminated quote or text after a closing quote.
std::vector<std::string> split_csv_line(std::string_view line);

// Reads the table. Throws NcuCsvError (with the line number where there is one) when there is no
// raw-page table, when a metric is in a scaled unit (Mbyte: profiled without --print-units base),
// when a value is not a number, or when the table holds no kernel.
NcuRawTable parse_ncu_raw_csv(std::string_view text);

// The record's counters from the table: per kernel the `wanted` metrics it has (all its metrics
// when `wanted` is empty), totals by total_over_kernels. Throws NcuCsvError when the table holds
// none of `wanted` (the duration alone, which rides along with every request, does not count),
// naming the metrics it has, or when a metric taken is in a scaled unit. Wanted metrics the table lacks, and values that
// read "n/a", are said in `warnings` (and left out, never taken as 0).
CaseCounters counters_from_ncu_table(const NcuRawTable& table, const std::vector<std::string>& wanted,
                                     std::vector<std::string>* warnings);

}  // namespace kwb
