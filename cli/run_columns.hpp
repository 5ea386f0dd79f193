// `kwb run --columns NAME[,NAME...]`: hardware-counter figures (harness/derive/counter_figures.hpp,
// by id: traffic_ratio, l2_hit_rate, ...) or raw metric totals (dram__bytes_read.sum) as extra
// columns of the summary table. A command-line setting only: it changes what is printed, never
// what is measured, so the plan, the journal and the reports do not hold it.
#pragma once

#include <string>
#include <vector>

#include "harness/derive/counter_figures.hpp"
#include "harness/plan/counter_sets.hpp"

namespace kwb::cli {

struct CounterColumn {
  std::string name;                    // as given: a figure id or a full metric name
  const FigureSpec* figure = nullptr;  // nullptr: the metric's total over the sample's kernels
};

// Checks the names against what the run collects, before it starts. Throws FlagError for a run
// that collects no counters, an unknown name (with a did-you-mean and the names there are), a
// metric the run does not collect, or a figure whose metrics it does not collect (naming the
// --counters set or --metrics that would add them). Repeats count once.
std::vector<CounterColumn> parse_counter_columns(const std::vector<std::string>& names,
                                                 const CounterRequest& collected);

// Every figure --columns takes, for `kwb counters --list`: its name, label and unit, what it
// counts, its usual threshold and the sets that collect it.
std::string figures_listing();

// The column's cell for a case: the figure's value in its unit, or the metric's total; "-" where
// the case has none.
std::string counter_column_cell(const CounterColumn& column, const CaseRecord& record);

}  // namespace kwb::cli
