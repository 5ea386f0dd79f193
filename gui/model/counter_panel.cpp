// The Counters panel and the side-by-side of two cases' counters, as data (see counter_panel.hpp).
#include "reports/review/kernel_label.hpp"
#include "gui/model/counter_panel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "gui/model/units.hpp"
#include "harness/plan/counter_sets.hpp"

namespace kwb::gui {

namespace {

// The recorded total, or the sum over kernels where a record holds only those.
std::map<std::string, double> total_of(const CaseCounters& c) {
  return c.total.empty() ? total_over_kernels(c.kernels) : c.total;
}

double lookup(const std::map<std::string, double>& values, const std::string& metric) {
  auto it = values.find(metric);
  return it == values.end() ? kNoValue : it->second;
}

double ratio_of(double a, double b) {
  return std::isfinite(a) && std::isfinite(b) && b != 0 ? a / b : kNoValue;
}

std::string source_line(const CaseCounters& c) {
  const std::string who = c.source == "ncu"     ? "Nsight Compute (imported)"
                          : c.source == "cupti" ? "kwb (CUPTI range profiler)"
                                                : c.source;
  std::string line = who;
  if (!c.chip.empty()) line += " on " + c.chip;
  std::string sets;
  for (const auto& s : c.sets) sets += (sets.empty() ? "" : ", ") + s;
  line +=
      fmt::format(": {}{} metrics", sets.empty() ? "" : "sets " + sets + "; ", c.metrics.size());
  if (c.passes > 0)
    line += fmt::format(" in {} replay pass{}", c.passes, c.passes == 1 ? "" : "es");
  line += fmt::format(", {} kernel{}", c.kernels.size(), c.kernels.size() == 1 ? "" : "s");
  if (!c.note.empty()) line += "; " + c.note;
  return line;
}

std::string triple(const std::int64_t v[3]) {
  return fmt::format("({}, {}, {})", v[0], v[1], v[2]);
}

KernelLaunchRow launch_row(const KernelCounters& k, int index) {
  KernelLaunchRow row{fmt::format("k{}", index + 1), review::readable_kernel_name(k.name), k.name, "-", "-", "-", "-",
                      "-", "-"};
  if (!k.launch) return row;
  const KernelLaunch& l = *k.launch;
  row.grid = triple(l.grid);
  row.block = triple(l.block);
  row.registers = std::to_string(l.registers_per_thread);
  row.shared = format_bytes(l.static_shared_bytes + l.dynamic_shared_bytes);
  if (l.theoretical_occupancy > 0)
    row.occupancy =
        l.blocks_per_sm > 0
            ? fmt::format("{:.0f}% ({} blocks/SM)", 100 * l.theoretical_occupancy, l.blocks_per_sm)
            : fmt::format("{:.0f}%", 100 * l.theoretical_occupancy);
  if (l.waves > 0) row.waves = fmt::format("{:.2f}", l.waves);
  row.theoretical_occupancy = l.theoretical_occupancy;
  return row;
}

// The metrics of a counter set in the order shown: the requested order, then any other the
// total holds (a record written by another tool may list fewer).
std::vector<std::string> metric_order(const CaseCounters& c,
                                      const std::map<std::string, double>& total) {
  std::vector<std::string> order;
  auto add = [&](const std::string& m) {
    if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
  };
  for (const auto& m : c.metrics) add(m);
  for (const auto& [m, v] : total) add(m);
  return order;
}

std::optional<CounterFigure> figure_in(const std::vector<CounterFigure>& figures,
                                       const std::string& id) {
  const CounterFigure* f = find_figure(figures, id);
  return f ? std::optional<CounterFigure>(*f) : std::nullopt;
}

double figure_ratio(const std::optional<CounterFigure>& a, const std::optional<CounterFigure>& b) {
  return a && b ? ratio_of(a->value, b->value) : kNoValue;
}

}  // namespace

bool has_counter_values(const CaseRecord& c) { return figure_counters(c) != nullptr; }

std::string figure_text(const std::optional<CounterFigure>& f) {
  return f ? figure_value_text(*f) : "-";
}

std::string figure_meaning(const FigureSpec& spec) {
  return spec.threshold.empty() ? spec.explanation
                                : spec.explanation + "; usual: " + spec.threshold;
}

std::string all_counter_sets() {
  std::string names;
  for (const CounterSet& s : counter_sets()) names += (names.empty() ? "" : ",") + s.name;
  return names;
}

std::string counters_command(const CaseRecord& c) {
  const std::string base =
      c.repro.empty() ? "kwb run --op " + c.op + " --variant " + c.variant : c.repro;
  return base + " --counters " + all_counter_sets();
}

std::string format_metric_value(const std::string& metric, double v) {
  if (!std::isfinite(v)) return "-";
  if (metric.rfind("gpu__time_duration", 0) == 0) return format_time_us(v / 1000);  // ns
  if (metric.ends_with(".pct") || metric.find(".pct_of_peak") != std::string::npos)
    return format_percent(v);
  if (metric.find("bytes") != std::string::npos && metric.ends_with(".sum"))
    return format_bytes(static_cast<std::int64_t>(std::llround(v)));
  if (metric.ends_with(".ratio")) return fmt::format("{:.3g}", v);
  if (metric.ends_with(".per_second")) return format_count(v) + "/s";
  return format_count(v);
}

bool MetricRow::disagrees() const {
  return std::isfinite(ratio) && std::fabs(ratio - 1) > kNcuAgreement;
}

CounterPanel build_counter_panel(const CaseRecord& c) {
  CounterPanel p;
  if (c.derived) {
    p.measured = c.derived->measured;
    p.model_bytes = c.derived->model_bytes;
    p.model_flops = c.derived->model_flops;
    p.executed_flops = c.derived->executed_flops;
  }
  std::map<std::string, double> total, ncu_total;
  if (c.counters && !c.counters->unavailable.empty()) {
    p.state = CounterPanel::State::unavailable;
    p.unavailable = c.counters->unavailable;
  } else if (counters_read(c.counters)) {
    p.state = CounterPanel::State::collected;
    p.source = source_line(*c.counters);
    total = total_of(*c.counters);
    for (std::size_t k = 0; k < c.counters->kernels.size(); ++k)
      p.kernels.push_back(launch_row(c.counters->kernels[k], static_cast<int>(k)));
  }
  if (p.state != CounterPanel::State::collected) p.how_to_collect = counters_command(c);
  if (c.ncu_counters) {
    p.has_ncu = counters_read(c.ncu_counters);
    p.ncu_source = source_line(*c.ncu_counters);
    p.ncu_unavailable = c.ncu_counters->unavailable;
    if (p.has_ncu) ncu_total = total_of(*c.ncu_counters);
  }

  // The named figures, the harness's: the case's (its own counters), each kernel's, ncu's.
  const CaseCounters* own = p.state == CounterPanel::State::collected ? &*c.counters : nullptr;
  const auto totals = own ? case_figures(c, *own) : std::vector<CounterFigure>{};
  std::vector<std::vector<CounterFigure>> kernels;
  if (own)
    for (const KernelCounters& k : own->kernels)
      kernels.push_back(counter_figures(kernel_values(k)));
  const auto ncu = p.has_ncu ? case_figures(c, *c.ncu_counters) : std::vector<CounterFigure>{};
  for (const FigureSpec& spec : figure_specs()) {
    FigureRow row{&spec, figure_in(totals, spec.id), {}, figure_in(ncu, spec.id), kNoValue};
    bool shown = row.total || row.ncu;
    for (const auto& k : kernels) {
      row.per_kernel.push_back(figure_in(k, spec.id));
      shown = shown || row.per_kernel.back();
    }
    row.ratio = figure_ratio(row.total, row.ncu);
    if (shown) p.figures.push_back(std::move(row));
  }

  // Every metric: kwb's first, in the order collected, then those only ncu has.
  std::vector<std::string> order;
  if (own) order = metric_order(*own, total);
  if (p.has_ncu)
    for (const auto& m : metric_order(*c.ncu_counters, ncu_total))
      if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
  for (const std::string& m : order) {
    MetricRow row{m, metric_explanation(m), lookup(total, m), {}, kNoValue, kNoValue};
    if (own)
      for (const KernelCounters& k : own->kernels) row.per_kernel.push_back(lookup(k.values, m));
    if (p.has_ncu) {
      row.ncu = lookup(ncu_total, m);
      row.ratio = ratio_of(row.total, row.ncu);
    }
    p.metrics.push_back(std::move(row));
  }
  return p;
}

CounterSideBySide counters_side_by_side(const CaseRecord& a, const CaseRecord& b) {
  CounterSideBySide out;
  // Each side: its own counters, else Nsight Compute's, else the reason there are none.
  // The same choice as the review report's counters table (figure_counters).
  auto pick = [](const CaseRecord& c, std::string& source) -> const CaseCounters* {
    const CaseCounters* chosen = figure_counters(c);
    if (chosen)
      source = c.counters && chosen == &*c.counters ? "kwb" : "ncu (imported)";
    else if (c.counters && !c.counters->unavailable.empty())
      source = "counters unavailable: " + c.counters->unavailable;
    else
      source = "no counters (" + counters_command(c) + ")";
    return chosen;
  };
  const CaseCounters* ca = pick(a, out.a_source);
  const CaseCounters* cb = pick(b, out.b_source);
  if (a.timing) out.a_time_us = a.timing->span.median;
  if (b.timing) out.b_time_us = b.timing->span.median;
  if (!ca || !cb) return out;

  const auto fa = case_figures(a, *ca), fb = case_figures(b, *cb);
  for (const FigureSpec& spec : figure_specs()) {
    const auto x = figure_in(fa, spec.id), y = figure_in(fb, spec.id);
    if (!x && !y) continue;
    out.figures.push_back({spec.label, figure_meaning(spec), x ? x->value : kNoValue,
                           y ? y->value : kNoValue, figure_ratio(y, x), figure_text(x),
                           figure_text(y), x ? x->verdict : FigureVerdict::none,
                           y ? y->verdict : FigureVerdict::none});
  }
  const auto ta = total_of(*ca), tb = total_of(*cb);
  std::vector<std::string> order = metric_order(*ca, ta);
  for (const auto& m : metric_order(*cb, tb))
    if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
  for (const std::string& m : order) {
    const double va = lookup(ta, m), vb = lookup(tb, m);
    out.metrics.push_back({m, metric_explanation(m), va, vb, ratio_of(vb, va),
                           format_metric_value(m, va), format_metric_value(m, vb),
                           FigureVerdict::none, FigureVerdict::none});
  }
  return out;
}

}  // namespace kwb::gui
