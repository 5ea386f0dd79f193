// The review tables, formatted once: units, precision and the empty cells of untimed cases.
#include "reports/review/review_tables.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "harness/catalogue/math_label.hpp"

namespace kwb::review {

namespace {

std::string version_text(int v) {  // 13000 -> "13.0"
  return v > 0 ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : "unknown";
}

std::string or_dash(bool present, const std::string& text) { return present ? text : "-"; }

// "2.10x", or "2.10x (tf32 vs fp32)" where the two sides ran different math.
std::string speedup_text(double speedup, const std::string& math_note) {
  return fmt::format("{:.2f}x", speedup) + (math_note.empty() ? "" : " (" + math_note + ")");
}

}  // namespace

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, units[u]);
}

std::vector<std::pair<std::string, std::string>> title_facts(const ReviewModel& m) {
  const RunInfo& r = m.run;
  std::vector<std::pair<std::string, std::string>> facts;
  facts.push_back({"What", fmt::format("{} cases of {} op(s): {} failed, {} skipped{}", m.cases_total,
                                       m.ops.size(), m.cases_failed, m.cases_skipped,
                                       r.complete ? "" : " (run interrupted: partial)")});
  facts.push_back({"When", r.started_at + (r.finished_at.empty() ? "" : " to " + r.finished_at)});
  if (r.devices.size() > 1) {  // `kwb run --devices`: the cases were spread over these GPUs
    std::string which;
    for (const auto& d : r.devices) which += fmt::format("{}{} {}", which.empty() ? "" : ", ", d.index, d.uuid);
    facts.push_back({"GPUs", fmt::format("{} x {} ({}), one worker each", r.devices.size(), r.devices[0].name, which)});
  } else {
    facts.push_back({"GPU", r.device ? r.device->name + " (" + r.device->uuid + ")" : "unknown"});
  }
  facts.push_back({"Host", r.host});
  facts.push_back({"kwb", r.tool_version + ", git " + r.git_sha});
  facts.push_back({"Command", r.command_line});
  return facts;
}

Table environment_table(const ReviewModel& m) {
  Table t{{"Setting", "Value"}, {}, {false, false}};
  if (const auto& d = m.run.device) {
    t.rows.push_back({"device", fmt::format("{} (sm_{}{}, {} SMs)", d->name, d->cc_major, d->cc_minor, d->sm_count)});
    t.rows.push_back({"driver", (d->driver_release.empty() ? "" : d->driver_release + ", ") +
                                    "CUDA driver API " + version_text(d->driver_version)});
    t.rows.push_back({"CUDA runtime", version_text(d->runtime_version)});
    t.rows.push_back({"CUPTI", d->cupti_version ? std::to_string(d->cupti_version) : "unknown"});
    t.rows.push_back({"clocks", fmt::format("SM {:.0f} MHz, memory {:.0f} MHz, {}-bit bus", d->sm_clock_mhz,
                                            d->mem_clock_mhz, d->mem_bus_width_bits)});
    t.rows.push_back({"memory", fmt::format("{} global, {} L2", format_bytes(static_cast<double>(d->global_mem_bytes)),
                                            format_bytes(static_cast<double>(d->l2_bytes)))});
  }
  for (const auto& [key, value] : m.run.settings) t.rows.push_back({key, value});
  return t;
}

Table ceilings_table(const ReviewModel& m) {
  Table t{{"Ceiling", "Used for derived figures", "Method / source", "Datasheet"}, {}, {false, true, false, true}};
  const std::optional<Ceilings>& used = m.run.ceilings;
  const std::optional<Ceilings>& sheet = m.run.datasheet_ceilings;
  auto cell = [](const std::optional<Ceilings>& c, double Ceilings::*f, const char* unit) {
    return c && (*c).*f > 0 ? fmt::format("{:.1f} {}", (*c).*f, unit) : std::string("-");
  };
  const std::string source = used ? used->source + (used->measured_at.empty() ? "" : " " + used->measured_at) : "none";
  t.rows.push_back({"DRAM copy (read+write)", cell(used, &Ceilings::dram_copy_gbps, "GB/s"),
                    used ? used->dram_copy_method + " (" + source + ")" : "-",
                    cell(sheet, &Ceilings::dram_copy_gbps, "GB/s")});
  t.rows.push_back({"DRAM read", cell(used, &Ceilings::dram_read_gbps, "GB/s"), source,
                    cell(sheet, &Ceilings::dram_read_gbps, "GB/s")});
  if (used && used->dram_write_gbps > 0)
    t.rows.push_back({"DRAM write", cell(used, &Ceilings::dram_write_gbps, "GB/s"),
                      used->dram_write_method + " (" + source + ")", "-"});
  t.rows.push_back({"L2 copy (hot)", cell(used, &Ceilings::l2_copy_gbps, "GB/s"),
                    used && used->l2_copy_gbps > 0
                        ? fmt::format("working set {}", format_bytes(static_cast<double>(used->l2_working_set_bytes)))
                        : "not measured",
                    cell(sheet, &Ceilings::l2_copy_gbps, "GB/s")});
  t.rows.push_back({"fp32 FFMA", cell(used, &Ceilings::fp32_tflops, "TFLOP/s"), source,
                    cell(sheet, &Ceilings::fp32_tflops, "TFLOP/s")});
  std::map<std::string, std::pair<double, double>> tensor;
  if (used) for (const auto& [k, v] : used->tensor_tflops) tensor[k].first = v;
  if (sheet) for (const auto& [k, v] : sheet->tensor_tflops) tensor[k].second = v;
  for (const auto& [dtype, v] : tensor)
    t.rows.push_back({dtype + " tensor core", v.first > 0 ? fmt::format("{:.1f} TFLOP/s", v.first) : "-", source,
                      v.second > 0 ? fmt::format("{:.1f} TFLOP/s", v.second) : "-"});
  return t;
}

Table op_table(const OpGroup& g) {
  Table t{{"variant", "math", "uses", "dtype", "shape", "median us", "GB/s", "TFLOP/s", "% of roofline",
           "% of DRAM roof", "speedup", "disposition", "verification", "flags"},
          {},
          {false, false, false, false, false, true, true, true, true, true, true, false, false, false}};
  for (const CaseRow& r : g.rows)
    t.rows.push_back({r.variant, or_dash(!r.math.empty(), r.math), or_dash(!r.uses.empty(), r.uses), r.dtype,
                      r.shape, or_dash(r.timed, fmt::format("{:.2f}", r.median_us)),
                      or_dash(r.timed, fmt::format("{:.1f}", r.gbps)),
                      or_dash(r.timed, fmt::format("{:.3g}", r.tflops)),
                      or_dash(r.timed, fmt::format("{:.1f}", r.pct_of_roofline)),
                      or_dash(r.timed, fmt::format("{:.1f}", r.pct_of_copy)),
                      or_dash(r.speedup > 0, speedup_text(r.speedup, r.speedup_math)), r.disposition,
                      r.verification, r.flags});
  return t;
}

Table speedup_table(const ReviewModel& m) {
  Table t{{"op", "dtype", "shape", "mode", "baseline", "math", "uses", "us", "kernels", "device memory",
           "best fused", "math", "uses", "us", "kernels", "device memory", "% of roof", "speedup"},
          {},
          {false, false, false, false, false, false, false, true, true, true, false, false, false, true, true, true,
           true, true}};
  auto kernels = [](std::int64_t k) { return k < 0 ? std::string("-") : std::to_string(k); };
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const SpeedupRow& r : m.speedups)
    t.rows.push_back({r.op, std::string(to_string(r.dtype)), r.shape_label, std::string(to_string(r.mode)),
                      r.baseline_variant, dash(r.baseline_math), dash(uses_text(r.baseline_uses)),
                      fmt::format("{:.2f}", r.baseline_us), kernels(r.baseline_kernels),
                      format_bytes(static_cast<double>(r.baseline_memory_bytes)), r.best_variant, dash(r.best_math),
                      dash(uses_text(r.best_uses)), fmt::format("{:.2f}", r.best_us), kernels(r.best_kernels),
                      format_bytes(static_cast<double>(r.best_memory_bytes)),
                      fmt::format("{:.1f}", r.best_pct_of_roofline), speedup_text(r.speedup, r.math_note)});
  return t;
}

Table findings_table(const ReviewModel& m) {
  Table t{{"kind", "case", "detail"}, {}, {false, false, false}};
  for (const Finding& f : m.findings) t.rows.push_back({f.kind, f.case_name, f.detail});
  return t;
}

namespace {

// The figure columns a group shows: those any of its rows has, in figure_specs() order.
std::vector<const FigureSpec*> shown_figures(const CounterGroup& g) {
  std::vector<const FigureSpec*> shown;
  for (const FigureSpec& spec : figure_specs())
    for (const CounterRow& r : g.rows)
      if (find_figure(r.figures, spec.id)) {
        shown.push_back(&spec);
        break;
      }
  return shown;
}

// "DRAM read", "L2 hit rate %", "sectors per load request": the unit where the cell does not say it.
std::string figure_header(const FigureSpec& spec) {
  const bool unit_in_cell = spec.unit == "B" || spec.unit == "%" || spec.unit == "x" || spec.unit == "FLOP" ||
                            spec.unit.empty() || spec.unit == "sectors/request" || spec.unit == "waves";
  return unit_in_cell ? spec.label : spec.label + " (" + spec.unit + ")";
}

bool mixed_sources(const CounterGroup& g) {
  for (const CounterRow& r : g.rows)
    if (r.source != g.rows.front().source) return true;
  return false;
}

}  // namespace

Table counters_table(const CounterGroup& g) {
  const auto shown = shown_figures(g);
  const bool sources = mixed_sources(g);
  Table t{{"variant", "dtype", "shape"}, {}, {false, false, false}};
  if (sources) t.headers.push_back("source"), t.numeric.push_back(false);
  for (const FigureSpec* spec : shown) t.headers.push_back(figure_header(*spec)), t.numeric.push_back(true);
  bool any_flag = false;
  std::vector<std::vector<bool>> flagged;
  for (const CounterRow& r : g.rows) {
    std::vector<std::string> row = {r.variant, r.dtype, r.shape};
    std::vector<bool> flags(row.size() + (sources ? 1 : 0), false);
    if (sources) row.push_back(r.source == "ncu" ? "Nsight Compute" : "kwb (CUPTI)");
    for (const FigureSpec* spec : shown) {
      const CounterFigure* f = find_figure(r.figures, spec->id);
      row.push_back(f ? figure_value_text(*f) : "-");
      flags.push_back(f && f->verdict == FigureVerdict::attention);
      any_flag = any_flag || flags.back();
    }
    t.rows.push_back(std::move(row));
    flagged.push_back(std::move(flags));
  }
  if (any_flag) t.flagged = std::move(flagged);
  return t;
}

std::vector<std::string> counters_column_notes(const std::vector<CounterGroup>& groups) {
  std::vector<const FigureSpec*> shown;
  for (const CounterGroup& g : groups)
    for (const FigureSpec* spec : shown_figures(g))
      if (std::find(shown.begin(), shown.end(), spec) == shown.end()) shown.push_back(spec);
  std::vector<std::string> notes;
  for (const FigureSpec& spec : figure_specs())  // in table order
    if (std::find(shown.begin(), shown.end(), &spec) != shown.end())
      notes.push_back(fmt::format("{}: {}{}", spec.label, spec.explanation,
                                  spec.threshold.empty() ? "" : " (" + spec.threshold + ")"));
  return notes;
}

std::vector<std::string> counters_attention_lines(const CounterGroup& g) {
  std::vector<std::string> lines;
  for (const CounterRow& r : g.rows)
    for (const CounterFigure& f : r.figures)
      if (f.verdict == FigureVerdict::attention)
        lines.push_back(fmt::format("{} {} {}: {} {}: {}", r.variant, r.dtype, r.shape, f.label, figure_value_text(f),
                                    f.verdict_text));
  return lines;
}

std::string counters_summary_text(const CounterSummary& s) {
  std::string text = fmt::format("Hardware counters of {} case(s), read in replay passes of their own after timing "
                                 "(times never come from them)",
                                 s.cases_read);
  if (!s.sets.empty()) {
    std::string sets;
    for (const std::string& set : s.sets) sets += (sets.empty() ? "" : ", ") + set;
    text += "; sets: " + sets;
  }
  if (s.max_passes > 0)
    text += s.min_passes == s.max_passes ? fmt::format("; {} replay pass(es) per case", s.max_passes)
                                         : fmt::format("; {} to {} replay passes per case", s.min_passes, s.max_passes);
  text += ". Each figure is over the sample's kernels: counts summed, rates from the summed counts.";
  for (const auto& [why, cases] : s.unavailable)
    text += fmt::format(" No counters for {} case(s): {}{}", cases, why, why.ends_with('.') ? "" : ".");
  return text;
}

std::string sweep_summary(const SweepChart& c) {
  std::string s = fmt::format("{} {} {}, {} against {}{}:", c.op, c.dtype, c.mode, c.metric, c.axis,
                              c.fixed.empty() ? "" : " (" + c.fixed + ")");
  for (const SweepSeries& series : c.series) {
    if (series.points.empty()) continue;
    auto best = series.points.front();
    for (const auto& p : series.points) if (p.second > best.second) best = p;
    s += fmt::format(" {} {:.4g} to {:.4g} {} (best {:.4g} at {}={});", series.variant,
                     series.points.front().second, series.points.back().second, c.metric, best.second,
                     c.axis, best.first);
  }
  if (s.ends_with(';')) s.back() = '.';
  return s;
}

}  // namespace kwb::review
