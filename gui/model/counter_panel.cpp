// The Counters panel and the side-by-side of two cases' counters, as data (see counter_panel.hpp).
#include "gui/model/counter_panel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "gui/model/units.hpp"
#include "harness/plan/counter_sets.hpp"

namespace kwb::gui {

namespace {

bool collected(const std::optional<CaseCounters>& c) {
  return c && c->unavailable.empty() && (!c->total.empty() || !c->kernels.empty());
}

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

// The theoretical occupancy a total is judged against: the kernel's, when the sample has one
// kernel; a mix of kernels has no single one.
double sample_theoretical_occupancy(const CaseCounters& c) {
  return c.kernels.size() == 1 && c.kernels[0].launch ? c.kernels[0].launch->theoretical_occupancy
                                                      : 0;
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
  KernelLaunchRow row{fmt::format("k{}", index + 1), k.name, "-", "-", "-", "-", "-", "-"};
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

bool has_value(const CounterFigure& f) { return std::isfinite(f.value); }

}  // namespace

bool has_counter_values(const CaseRecord& c) {
  return collected(c.counters) || collected(c.ncu_counters);
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
  } else if (collected(c.counters)) {
    p.state = CounterPanel::State::collected;
    p.source = source_line(*c.counters);
    total = total_of(*c.counters);
    for (std::size_t k = 0; k < c.counters->kernels.size(); ++k)
      p.kernels.push_back(launch_row(c.counters->kernels[k], static_cast<int>(k)));
  }
  if (p.state != CounterPanel::State::collected) p.how_to_collect = counters_command(c);
  if (c.ncu_counters) {
    p.has_ncu = collected(c.ncu_counters);
    p.ncu_source = source_line(*c.ncu_counters);
    p.ncu_unavailable = c.ncu_counters->unavailable;
    if (p.has_ncu) ncu_total = total_of(*c.ncu_counters);
  }

  // The named figures: total, per kernel, ncu's.
  const CaseCounters* own = p.state == CounterPanel::State::collected ? &*c.counters : nullptr;
  const std::string chip = own ? own->chip : p.has_ncu ? c.ncu_counters->chip : "";
  const auto totals = counter_figures(total, chip, own ? sample_theoretical_occupancy(*own) : 0);
  std::vector<std::vector<CounterFigure>> kernels;
  if (own)
    for (const KernelCounters& k : own->kernels)
      kernels.push_back(
          counter_figures(k.values, chip, k.launch ? k.launch->theoretical_occupancy : 0));
  std::vector<CounterFigure> ncu;
  if (p.has_ncu)
    ncu = counter_figures(ncu_total, c.ncu_counters->chip.empty() ? chip : c.ncu_counters->chip,
                          sample_theoretical_occupancy(*c.ncu_counters));
  for (std::size_t f = 0; f < totals.size(); ++f) {
    FigureRow row{totals[f], {}, std::nullopt, kNoValue};
    bool shown = has_value(totals[f]);
    for (const auto& k : kernels) row.per_kernel.push_back(k[f]), shown |= has_value(k[f]);
    if (p.has_ncu) {
      row.ncu = ncu[f];
      shown |= has_value(ncu[f]);
      row.ratio = ratio_of(totals[f].value, ncu[f].value);
    }
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
  auto pick = [](const CaseRecord& c, std::string& source) -> const CaseCounters* {
    if (collected(c.counters)) return source = "kwb", &*c.counters;
    if (collected(c.ncu_counters)) return source = "ncu (imported)", &*c.ncu_counters;
    if (c.counters && !c.counters->unavailable.empty())
      source = "counters unavailable: " + c.counters->unavailable;
    else
      source = "no counters (" + counters_command(c) + ")";
    return nullptr;
  };
  const CaseCounters* ca = pick(a, out.a_source);
  const CaseCounters* cb = pick(b, out.b_source);
  if (a.timing) out.a_time_us = a.timing->span.median;
  if (b.timing) out.b_time_us = b.timing->span.median;
  if (!ca || !cb) return out;

  const auto ta = total_of(*ca), tb = total_of(*cb);
  const auto fa = counter_figures(ta, ca->chip, sample_theoretical_occupancy(*ca));
  const auto fb = counter_figures(tb, cb->chip.empty() ? ca->chip : cb->chip,
                                  sample_theoretical_occupancy(*cb));
  for (std::size_t f = 0; f < fa.size(); ++f) {
    if (!has_value(fa[f]) && !has_value(fb[f])) continue;
    out.figures.push_back({fa[f].name, fa[f].meaning, fa[f].value, fb[f].value,
                           ratio_of(fb[f].value, fa[f].value), format_figure(fa[f]),
                           format_figure(fb[f])});
  }
  std::vector<std::string> order = metric_order(*ca, ta);
  for (const auto& m : metric_order(*cb, tb))
    if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
  for (const std::string& m : order) {
    const double va = lookup(ta, m), vb = lookup(tb, m);
    out.metrics.push_back({m, metric_explanation(m), va, vb, ratio_of(vb, va),
                           format_metric_value(m, va), format_metric_value(m, vb)});
  }
  return out;
}

}  // namespace kwb::gui
