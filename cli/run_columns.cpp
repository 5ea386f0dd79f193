// The --columns of `kwb run` (see run_columns.hpp).
#include "cli/run_columns.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/flag_values.hpp"
#include "harness/plan/suggest.hpp"

namespace kwb::cli {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The fewest sets that hold every metric of `all` (each step takes the set holding most of what
// is left); empty when some metric is in no set.
std::vector<std::string> sets_holding(std::vector<std::string> all) {
  std::vector<std::string> chosen;
  while (!all.empty()) {
    const CounterSet* best = nullptr;
    std::size_t best_count = 0;
    for (const CounterSet& s : counter_sets()) {
      const auto n = static_cast<std::size_t>(
          std::count_if(all.begin(), all.end(), [&](const std::string& m) { return contains(s.metrics, m); }));
      if (n > best_count) best = &s, best_count = n;
    }
    if (!best) return {};
    chosen.push_back(best->name);
    std::erase_if(all, [&](const std::string& m) { return contains(best->metrics, m); });
  }
  return chosen;
}

// How to collect every metric of `all` and one of `any`: "--counters memory", "--counters
// compute or tensor", "--counters memory,compute or memory,tensor", else "--metrics A,B".
std::string how_to_collect(const std::vector<std::string>& all, const std::vector<std::string>& any = {}) {
  std::vector<std::string> options;
  auto add = [&](std::vector<std::string> sets) {
    std::sort(sets.begin(), sets.end(), [](const std::string& a, const std::string& b) {
      auto at = [](const std::string& n) {  // in the order `kwb counters --list` shows the sets
        return std::find_if(counter_sets().begin(), counter_sets().end(), [&](const CounterSet& s) { return s.name == n; });
      };
      return at(a) < at(b);
    });
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
    const std::string option = fmt::format("{}", fmt::join(sets, ","));
    if (!sets.empty() && !contains(options, option)) options.push_back(option);
  };
  if (any.empty()) {
    add(sets_holding(all));
  } else {
    // One option per set holding an alternative, with the sets that hold what it leaves of `all`.
    for (const CounterSet& s : counter_sets()) {
      if (std::none_of(any.begin(), any.end(), [&](const std::string& m) { return contains(s.metrics, m); })) continue;
      std::vector<std::string> rest;
      for (const std::string& m : all)
        if (!contains(s.metrics, m)) rest.push_back(m);
      auto sets = sets_holding(rest);
      if (sets.empty() && !rest.empty()) continue;  // a metric of `all` in no set
      sets.push_back(s.name);
      add(sets);
    }
  }
  if (!options.empty()) return "--counters " + fmt::format("{}", fmt::join(options, " or "));
  std::vector<std::string> metrics = all;
  if (!any.empty()) metrics.push_back(any.front());
  return fmt::format("--metrics {}", fmt::join(metrics, ","));
}

CounterColumn check_column(const std::string& name, const CounterRequest& collected) {
  if (const FigureSpec* spec = find_figure_spec(name)) {
    if (!figure_collectable(*spec, collected.metrics)) {
      std::vector<std::string> missing, missing_any;
      for (const std::string& m : spec->all)
        if (!contains(collected.metrics, m)) missing.push_back(m);
      if (std::none_of(spec->any.begin(), spec->any.end(), [&](const std::string& m) { return contains(collected.metrics, m); }))
        missing_any = spec->any;
      std::string needs = fmt::format("{}", fmt::join(missing, ", "));
      if (!missing_any.empty())
        needs += fmt::format("{}one of {}", needs.empty() ? "" : " and ", fmt::join(missing_any, ", "));
      throw FlagError(fmt::format("--columns: {} ({}) needs {}, which this run does not collect; add {}", name,
                                  spec->label, needs, how_to_collect(missing, missing_any)));
    }
    return {name, spec};
  }
  if (contains(collected.metrics, name)) return {name, nullptr};
  if (name.find('.') != std::string::npos) {
    // Written as a full metric name: say how to collect it rather than guess at a typo, unless
    // one of the collected metrics is a plausible one.
    if (auto close = closest_match(name, collected.metrics); close && edit_distance(name, *close) <= 2)
      throw FlagError(fmt::format("--columns: this run does not collect '{}' (did you mean '{}'?)", name, *close));
    throw FlagError(fmt::format("--columns: this run does not collect the metric '{}'; add {} (`kwb counters "
                                "--list` shows the sets and their metrics)",
                                name, how_to_collect({name})));
  }
  std::vector<std::string> known = figure_ids();
  known.insert(known.end(), collected.metrics.begin(), collected.metrics.end());
  throw FlagError("--columns: " + unknown_name_message("column", name, known) +
                  " (figure names, or the full name of a metric this run collects)");
}

}  // namespace

std::vector<CounterColumn> parse_counter_columns(const std::vector<std::string>& names,
                                                 const CounterRequest& collected) {
  std::vector<CounterColumn> columns;
  if (names.empty()) return columns;
  if (collected.empty()) {
    std::vector<std::string> sets;
    for (const CounterSet& s : counter_sets()) sets.push_back(s.name);
    throw FlagError(fmt::format("--columns: the columns show hardware counters, and this run collects none; add "
                                "--counters SET ({}) or --metrics NAME",
                                fmt::join(sets, ", ")));
  }
  for (const std::string& name : names) {
    if (name.empty()) throw FlagError("--columns: an empty name; give figure or metric names separated by commas");
    if (std::any_of(columns.begin(), columns.end(), [&](const CounterColumn& c) { return c.name == name; })) continue;
    columns.push_back(check_column(name, collected));
  }
  return columns;
}

std::string figures_listing() {
  std::string out = "Figures (`kwb run --columns NAME`, the review report's counters tables), from the counters above:\n";
  for (const FigureSpec& spec : figure_specs()) {
    const std::string from = spec.all.empty() && spec.any.empty() ? "any set" : how_to_collect(spec.all, spec.any);
    out += fmt::format("  {:<24} {}{}: {}{}  [{}]\n", spec.id, spec.label, spec.unit.empty() ? "" : " (" + spec.unit + ")",
                       spec.explanation, spec.threshold.empty() ? "" : "; " + spec.threshold, from);
  }
  return out + "Or a metric's total over the sample's kernels by its full name (dram__bytes_read.sum).\n";
}

std::string counter_column_cell(const CounterColumn& column, const CaseRecord& record) {
  if (column.figure) {
    const auto figures = case_figures(record);
    const CounterFigure* f = find_figure(figures, column.name);
    return f ? figure_value_text(*f) : "-";
  }
  const CaseCounters* counters = figure_counters(record);
  if (!counters) return "-";
  const auto it = counters->total.find(column.name);
  return it == counters->total.end() ? "-" : metric_value_text(it->second);
}

}  // namespace kwb::cli
