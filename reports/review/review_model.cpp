// Report -> review model: ceilings, roofline points, per-op rows, sweeps and findings.
#include "reports/review/review_model.hpp"

#include "harness/derive/derive.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/catalogue/math_label.hpp"

namespace kwb::review {

namespace {

std::string case_name(const CaseRecord& c) {
  if (!c.nvtx_range.empty()) return c.nvtx_range;
  return fmt::format("{}:{}:{}:{}", c.op, c.variant, to_string(c.dtype), c.shape.to_compact());
}

bool is_timed(const CaseRecord& c) { return c.timing.has_value() && c.derived.has_value(); }

bool is_noisy(const TimingResult& t) { return t.stop_reason != StopReason::converged; }
bool is_throttled(const TimingResult& t) { return t.clocks && t.clocks->throttled_samples > 0; }

std::string verification_text(const CaseRecord& c) {
  if (!c.verify) return "not verified";
  const VerifyResult& v = *c.verify;
  std::string s = v.sampling.empty() ? "checked" : v.sampling;
  if (!v.passed)
    return fmt::format("{}: {} mismatches, {} non-finite, {} unwritten", s, v.mismatches,
                       v.nonfinite_mismatches, v.unwritten);
  return fmt::format("{}, max rel err {:.2g}", s, v.max_rel_err);
}

CaseRow make_row(const CaseRecord& c) {
  CaseRow row;
  row.variant = c.variant;
  if (!c.tunables.empty()) row.variant += " [" + to_assignments(c.tunables) + "]";
  row.dtype = std::string(to_string(c.dtype));
  row.shape = shown_shape(c);
  row.math = c.math;
  row.uses = uses_text(c.uses);
  row.disposition = std::string(to_string(c.disposition));
  if (!c.reason.empty()) row.disposition += ": " + c.reason;
  row.verification = verification_text(c);
  std::vector<std::string> flags;
  if (c.timing) {
    row.mode = std::string(to_string(c.timing->mode));
    if (c.timing->mode == Mode::hot) flags.push_back("hot");
    if (c.timing->launch == LaunchKind::graph) flags.push_back("graph");  // replays: no host launch gaps
    if (is_throttled(*c.timing)) flags.push_back("throttled");
    if (is_noisy(*c.timing)) flags.push_back("noisy");
  }
  if (is_timed(c)) {
    row.timed = true;
    row.median_us = c.timing->span.median;
    row.gbps = c.derived->bandwidth_gbps;
    row.tflops = c.derived->tflops;
    row.pct_of_roofline = c.derived->pct_of_roofline;
    row.pct_of_copy = c.derived->pct_of_bandwidth_ceiling;
    row.speedup = c.derived->speedup_vs_baseline.value_or(0);
    // Its % of roofline counts what it executes; say so beside it.
    if (const std::string note = executed_work_note(*c.derived); !note.empty()) flags.push_back(note);
    if (row.speedup > 0) row.speedup_math = math_comparison(c.math, c.derived->baseline_math);
  }
  for (const auto& f : flags) row.flags += (row.flags.empty() ? "" : ",") + f;
  return row;
}

void add_findings(const CaseRecord& c, std::vector<Finding>& out) {
  const std::string name = case_name(c);
  if (c.disposition == Disposition::failed) out.push_back({"failed", name, c.reason});
  if (c.disposition == Disposition::skipped) out.push_back({"skipped", name, c.reason});
  if (is_timed(c)) {
    const Derived& d = *c.derived;
    // Above 100% of a ceiling means the model, the ceiling or the timer is wrong: never a win.
    if (d.pct_of_roofline > 100)
      out.push_back({"above ceiling", name, fmt::format("{:.1f}% of the roofline", d.pct_of_roofline)});
    else if (d.pct_of_bandwidth_ceiling > 100 && c.timing->mode == Mode::cold)
      out.push_back({"above ceiling", name,
                     fmt::format("{:.1f}% of the copy bandwidth", d.pct_of_bandwidth_ceiling)});
    if (d.pct_of_l2_ceiling && *d.pct_of_l2_ceiling > 100)
      out.push_back({"above ceiling", name, fmt::format("{:.1f}% of the L2 copy", *d.pct_of_l2_ceiling)});
  }
  if (c.timing && is_throttled(*c.timing)) {
    const ClockSummary& k = *c.timing->clocks;
    std::string reasons;
    for (const auto& r : k.throttle_reasons) reasons += (reasons.empty() ? "" : ", ") + r;
    out.push_back({"throttled", name,
                   fmt::format("{} of {} samples; SM clock {:.0f}-{:.0f} MHz{}", k.throttled_samples,
                               k.samples, k.sm_min_mhz, k.sm_max_mhz,
                               reasons.empty() ? "" : " (" + reasons + ")")});
  }
  if (c.timing && is_noisy(*c.timing))
    out.push_back({"noisy", name,
                   fmt::format("stopped on {}, noise {:.1f}% (relative IQR)",
                               to_string(c.timing->stop_reason), 100 * c.timing->span.noise)});
  if (c.derived && c.derived->measured)
    for (const std::string& flag : c.derived->measured->flags) out.push_back({"measured roofline", name, flag});
}

// The case's row of its op's counters table; nullopt when it has no counter values.
std::optional<CounterRow> counter_row(const CaseRecord& c) {
  const CaseCounters* counters = figure_counters(c);
  if (!counters) return std::nullopt;
  CounterRow row;
  row.case_name = case_name(c);
  row.variant = c.variant;
  if (!c.tunables.empty()) row.variant += " [" + to_assignments(c.tunables) + "]";
  row.dtype = std::string(to_string(c.dtype));
  row.shape = shown_shape(c);
  row.source = counters->source;
  row.figures = case_figures(c);
  return row;
}

void add_counters(const CaseRecord& c, ReviewModel& m) {
  CounterSummary& s = m.counter_summary;
  if (!c.counters && !c.ncu_counters) return;
  ++s.cases_asked;
  if (c.counters) {
    for (const std::string& set : c.counters->sets)
      if (std::find(s.sets.begin(), s.sets.end(), set) == s.sets.end()) s.sets.push_back(set);
    if (!c.counters->unavailable.empty()) {
      auto it = std::find_if(s.unavailable.begin(), s.unavailable.end(),
                             [&](const auto& u) { return u.first == c.counters->unavailable; });
      if (it == s.unavailable.end()) s.unavailable.push_back({c.counters->unavailable, 1});
      else ++it->second;
    } else if (c.counters->passes > 0) {
      s.min_passes = s.min_passes == 0 ? c.counters->passes : std::min(s.min_passes, c.counters->passes);
      s.max_passes = std::max(s.max_passes, c.counters->passes);
    }
  }
  auto row = counter_row(c);
  if (!row) return;
  ++s.cases_read;
  auto group = std::find_if(m.counters.begin(), m.counters.end(), [&](const CounterGroup& g) { return g.op == c.op; });
  if (group == m.counters.end()) group = m.counters.insert(m.counters.end(), CounterGroup{c.op, {}});
  group->rows.push_back(std::move(*row));
}

}  // namespace

std::vector<RooflineCeiling> roofline_ceilings(const Ceilings& c, bool measured) {
  using Kind = RooflineCeiling::Kind;
  const char* tag = measured ? "measured" : "datasheet";
  std::vector<RooflineCeiling> out;
  auto add = [&](Kind kind, const std::string& name, double value, const char* format, const char* unit) {
    const std::string value_text = fmt::format(fmt::runtime(format), value) + " " + unit;
    out.push_back({kind, fmt::format("{} {} ({})", name, value_text, tag), name, value_text, value, measured});
  };
  if (c.dram_copy_gbps > 0) add(Kind::bandwidth, "DRAM copy", c.dram_copy_gbps, "{:.0f}", "GB/s");
  // The roof of a read-only kernel; read-heavy kernels' roofs lie between the two (dram_roof_gbps).
  if (measured && c.dram_read_gbps > c.dram_copy_gbps)
    add(Kind::bandwidth, "DRAM read-only", c.dram_read_gbps, "{:.0f}", "GB/s");
  if (measured && c.dram_write_gbps > c.dram_copy_gbps)
    add(Kind::bandwidth, "DRAM write-only", c.dram_write_gbps, "{:.0f}", "GB/s");
  if (c.l2_copy_gbps > 0) add(Kind::bandwidth, "L2 copy", c.l2_copy_gbps, "{:.0f}", "GB/s");
  if (c.fp32_tflops > 0) add(Kind::compute, "fp32 FFMA", c.fp32_tflops, "{:.1f}", "TFLOP/s");
  for (const auto& [dtype, tflops] : c.tensor_tflops)
    if (tflops > 0) add(Kind::compute, dtype + " tensor", tflops, "{:.0f}", "TFLOP/s");
  return out;
}

std::vector<SweepChart> sweep_charts(const std::vector<CaseRecord>& cases) {
  // Key of a slice: op, dtype, mode, swept axis, and the other axes' values (not the tunables:
  // a variant's tunables would put it in a slice of its own, which the choice below then drops).
  struct Slice {
    std::set<std::int64_t> values;
    std::vector<std::size_t> members;  // indices into `cases`
  };
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, Slice> slices;
  std::vector<std::string> op_order;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseRecord& c = cases[i];
    if (!is_timed(c) || c.disposition == Disposition::failed) continue;
    if (std::find(op_order.begin(), op_order.end(), c.op) == op_order.end()) op_order.push_back(c.op);
    for (const auto& [axis, value] : c.shape.axes) {
      if (value.is_choice()) continue;
      std::string others;
      for (const auto& [name, v] : c.shape.axes)
        if (name != axis) others += (others.empty() ? "" : ",") + name + "=" + v.text();
      Slice& s = slices[{c.op, std::string(to_string(c.dtype)),
                         std::string(to_string(c.timing->mode)), axis, others}];
      s.values.insert(value.integer());
      s.members.push_back(i);
    }
  }
  // Per (op, dtype, mode, axis) keep the slice with the most values (ties: the first in key order).
  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           std::pair<std::string, const Slice*>> best;
  for (const auto& [key, slice] : slices) {
    if (slice.values.size() < 3) continue;  // two points make a segment, not a trend
    auto& [op, dtype, mode, axis, others] = key;
    auto& b = best[{op, dtype, mode, axis}];
    if (!b.second || slice.values.size() > b.second->values.size()) b = {others, &slice};
  }
  std::vector<SweepChart> out;
  for (const std::string& op : op_order)
    for (const auto& [key, chosen] : best) {
      const auto& [kop, dtype, mode, axis] = key;
      if (kop != op) continue;
      SweepChart chart{op, dtype, mode, axis, chosen.first, "GB/s", false, {}, {}, {}};
      int compute = 0;
      for (std::size_t i : chosen.second->members) compute += cases[i].derived->bound == "compute";
      if (2 * compute > static_cast<int>(chosen.second->members.size())) chart.metric = "TFLOP/s";
      const auto& vals = chosen.second->values;
      chart.log_x = *vals.begin() > 0 && *vals.rbegin() > 8 * *vals.begin();
      // Per variant and point, the fastest case.
      std::map<std::pair<std::string, std::int64_t>, std::size_t> fastest;
      std::vector<std::string> variant_order;
      for (std::size_t i : chosen.second->members) {
        const CaseRecord& c = cases[i];
        if (std::find(variant_order.begin(), variant_order.end(), c.variant) == variant_order.end())
          variant_order.push_back(c.variant);
        auto [it, fresh] = fastest.try_emplace({c.variant, c.shape.at(axis)}, i);
        if (!fresh && c.timing->span.median < cases[it->second].timing->span.median) it->second = i;
      }
      for (const std::string& variant : variant_order) {
        SweepSeries series{variant, {}, {}, {}};
        for (const auto& [variant_x, i] : fastest) {  // map order: x ascending within a variant
          if (variant_x.first != variant) continue;
          const CaseRecord& c = cases[i];
          series.points.emplace_back(static_cast<double>(variant_x.second),
                                     chart.metric == "GB/s" ? c.derived->bandwidth_gbps : c.derived->tflops);
          series.cases.push_back(i);
          series.tunables.push_back(c.tunables.empty() ? "" : to_assignments(c.tunables));
        }
        chart.series.push_back(std::move(series));
      }
      // The roof per swept value, from any case of that shape (every variant shares its work model).
      std::map<std::int64_t, double> roof;
      for (std::size_t i : chosen.second->members) {
        const CaseRecord& c = cases[i];
        const Derived& d = *c.derived;
        const bool dram = chart.metric == "GB/s";
        const double value = dram ? (c.timing->mode == Mode::cold && !d.l2_resident ? d.bandwidth_roof_gbps : 0)
                                   : d.compute_roof_tflops;
        if (value > 0) roof.try_emplace(c.shape.at(axis), value);
      }
      for (const auto& [x, value] : roof) chart.roof.emplace_back(static_cast<double>(x), value);
      if (!chart.roof.empty())
        chart.roof_label = chart.metric == "GB/s" ? "DRAM roof at each shape's read/write mix" : "compute roof";
      out.push_back(std::move(chart));
    }
  return out;
}

ReviewModel build_review_model(const RunInfo& run, const std::vector<CaseRecord>& cases) {
  ReviewModel m;
  m.run = run;
  if (run.ceilings) {
    auto roofs = roofline_ceilings(*run.ceilings, run.ceilings->source == "measured");
    m.ceilings.insert(m.ceilings.end(), roofs.begin(), roofs.end());
  }
  // Datasheet roofs are drawn beside measured ones; when the report derived from the datasheet
  // itself they would be drawn twice.
  if (run.datasheet_ceilings && !(run.ceilings && run.ceilings->source == "datasheet")) {
    auto roofs = roofline_ceilings(*run.datasheet_ceilings, false);
    m.ceilings.insert(m.ceilings.end(), roofs.begin(), roofs.end());
  }
  for (const CaseRecord& c : cases) {
    ++m.cases_total;
    m.cases_failed += c.disposition == Disposition::failed;
    m.cases_skipped += c.disposition == Disposition::skipped;
    auto it = std::find(m.ops.begin(), m.ops.end(), c.op);
    if (it == m.ops.end()) {
      m.ops.push_back(c.op);
      m.groups.push_back({c.op, false, {}});
      it = m.ops.end() - 1;
    }
    m.groups[it - m.ops.begin()].rows.push_back(make_row(c));
    if (is_timed(c) && c.derived->intensity > 0 && c.derived->tflops > 0) {
      RooflinePoint p{c.op, case_name(c), c.derived->intensity, c.derived->tflops, measured_point(c), std::nullopt, {}};
      if (p.measured) {
        const MeasuredWork& work = *c.derived->measured;
        if (c.derived->model_bytes > 0) p.traffic_ratio = work.traffic_ratio;
        p.flags = work.flags;
      }
      m.points.push_back(std::move(p));
    }
    add_findings(c, m.findings);
    add_counters(c, m);
  }
  for (OpGroup& g : m.groups) {
    int timed = 0, compute = 0;
    for (const CaseRecord& c : cases)
      if (c.op == g.op && is_timed(c)) ++timed, compute += c.derived->bound == "compute";
    g.compute_bound = timed > 0 && 2 * compute > timed;
  }
  m.speedups = speedup_summary(cases);
  // The same function as `kwb select` (default settings), so the page and the tool agree.
  m.selection = select::select_fastest(run, cases);
  m.sweeps = sweep_charts(cases);
  return m;
}

}  // namespace kwb::review
