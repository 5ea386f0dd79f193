// kwb.selection/1 writer (see selection_json.hpp).
#include "reports/select/selection_json.hpp"

#include <fmt/format.h>

#include "harness/record/record_json.hpp"
#include "harness/record/atomic_file.hpp"

namespace kwb {

namespace {

using nlohmann::ordered_json;

// varies_run_to_run: true where the variant's last bits may differ between runs, null where this
// build does not know the variant.
ordered_json candidate_json(const select::Candidate& c) {
  return ordered_json{{"variant", c.variant},
                      {"tunables", tunables_json(c.tunables)},
                      {"median_us", c.median_us},
                      {"p10_us", c.p10_us},
                      {"p90_us", c.p90_us},
                      {"case", c.case_name},
                      {"varies_run_to_run", c.varies_run_to_run ? ordered_json(*c.varies_run_to_run) : ordered_json(nullptr)}};
}

ordered_json counts_json(const std::map<std::string, int>& counts) {
  ordered_json j = ordered_json::object();
  for (const auto& [k, n] : counts) j[k] = n;
  return j;
}

ordered_json entry_json(const select::SelectionEntry& e) {
  const select::Candidate* r = e.runner_up();
  ordered_json j{{"op", e.op},
                 {"dtype", std::string(to_string(e.dtype))},
                 {"mode", std::string(to_string(e.mode))},
                 {"shape", shape_json(e.shape)},
                 {"shape_compact", e.shape.to_compact()},
                 {"winner", candidate_json(e.winner())},
                 {"runner_up", r ? candidate_json(*r) : ordered_json(nullptr)},
                 {"margin_pct", r ? ordered_json(e.margin_pct) : ordered_json(nullptr)},
                 {"clear", e.clear},
                 {"noise_rule", std::string(select::to_string(e.rule))},
                 {"verdict_reason", e.verdict_reason},
                 {"baseline_variant", e.baseline ? ordered_json(select::candidate_label(*e.baseline)) : ordered_json(nullptr)},
                 {"baseline_us", e.baseline ? ordered_json(e.baseline->median_us) : ordered_json(nullptr)},
                 {"speedup_vs_baseline",
                  e.speedup_vs_baseline ? ordered_json(*e.speedup_vs_baseline) : ordered_json(nullptr)},
                 {"candidates", e.ranked.size()},
                 {"excluded", counts_json(e.excluded)},
                 {"excluded_reasons", counts_json(e.excluded_reasons)}};
  return j;
}

std::string version_text(int v) { return v > 0 ? fmt::format("{}.{}", v / 1000, (v % 1000) / 10) : ""; }

}  // namespace

SelectionSource selection_source(const RunInfo& run, const std::string& report_path, double min_margin) {
  SelectionSource s;
  if (run.device) {
    s.device = run.device->name;
    // The release ("580.95.05") identifies a driver; the API version is all older reports have.
    s.driver = !run.device->driver_release.empty() ? run.device->driver_release : version_text(run.device->driver_version);
  }
  s.git_sha = run.git_sha;
  s.source_report = report_path;
  s.min_margin = min_margin;
  return s;
}

ordered_json selection_to_json(const select::Selection& selection, const SelectionSource& source) {
  ordered_json j{{"schema", kSelectionSchema},
                 {"device", source.device},
                 {"driver", source.driver},
                 {"source_report", source.source_report},
                 {"git_sha", source.git_sha},
                 {"min_margin_pct", source.min_margin * 100},
                 {"deterministic_only", source.deterministic_only},
                 {"entries", ordered_json::array()},
                 {"unselected", ordered_json::array()}};
  for (const auto& e : selection.entries) j["entries"].push_back(entry_json(e));
  for (const auto& g : selection.unselected)
    j["unselected"].push_back(ordered_json{{"op", g.op},
                                           {"dtype", std::string(to_string(g.dtype))},
                                           {"mode", std::string(to_string(g.mode))},
                                           {"shape", shape_json(g.shape)},
                                           {"shape_compact", g.shape.to_compact()},
                                           {"excluded", counts_json(g.excluded)},
                                           {"excluded_reasons", counts_json(g.excluded_reasons)}});
  return j;
}

void write_selection_json(const std::filesystem::path& path, const select::Selection& selection,
                          const SelectionSource& source) {
  atomic_write_file(path, selection_to_json(selection, source).dump(2) + "\n");
}

}  // namespace kwb
