// Summarising a tuning run (tune_summary.hpp).
#include "reports/tune/tune_summary.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/record/record_json.hpp"

namespace kwb {
namespace {

nlohmann::ordered_json config_json(const TunedConfiguration& c) {
  return {{"tunables", tunables_json(c.tunables)}, {"median_us", c.median_us}, {"p10_us", c.p10_us},
          {"p90_us", c.p90_us}, {"noise", c.noise}, {"case", c.identity}};
}

}  // namespace

std::optional<double> TunedShape::speedup_over_default() const {
  if (!default_config || ranked.empty() || ranked.front().median_us <= 0) return std::nullopt;
  return default_config->median_us / ranked.front().median_us;
}

TuneSummary summarize_tuning(const Report& report, const TunableValues& declared_defaults) {
  return summarize_tuning(report, [&](const Shape&, DType) { return declared_defaults; });
}

TuneSummary summarize_tuning(const Report& report, const DefaultsAt& defaults_at) {
  TuneSummary out;
  out.complete = report.run.complete;
  for (const CaseRecord& c : report.cases) {
    if (out.op.empty()) out.op = c.op, out.variant = c.variant;
    if (c.op != out.op || c.variant != out.variant)
      throw std::invalid_argument(fmt::format("a tuning report holds one variant; found {}:{} beside {}:{}", c.op,
                                              c.variant, out.op, out.variant));
    auto it = std::find_if(out.shapes.begin(), out.shapes.end(),
                           [&](const TunedShape& s) { return s.dtype == c.dtype && s.shape == c.shape; });
    if (it == out.shapes.end()) {
      out.shapes.push_back(TunedShape{c.dtype, c.shape, {}, {}, 0, 0, 0, {}});
      it = std::prev(out.shapes.end());
    }
    TunedShape& s = *it;
    if (c.disposition == Disposition::passed && c.timing && c.timing->span.median > 0) {
      const auto& span = c.timing->span;
      TunedConfiguration config{c.tunables, span.median, span.p10, span.p90, span.noise, c.nvtx_range};
      if (c.tunables == defaults_at(c.shape, c.dtype)) s.default_config = config;
      s.ranked.push_back(std::move(config));
    } else if (c.disposition == Disposition::failed) {
      ++s.failed;
      ++s.reasons[c.reason.empty() ? "failed" : c.reason];
    } else if (c.disposition == Disposition::skipped) {
      ++s.skipped;
      ++s.reasons[c.reason.empty() ? "skipped" : c.reason];
    } else {
      ++s.unverified;  // verified-only runs (--preset verify) time nothing
    }
  }
  for (auto& s : out.shapes)  // fastest first; ties keep the order measured (declaration order)
    std::stable_sort(s.ranked.begin(), s.ranked.end(),
                     [](const auto& a, const auto& b) { return a.median_us < b.median_us; });
  return out;
}

nlohmann::ordered_json tune_json(const TuneSummary& summary, const Report& report, std::size_t top_n) {
  nlohmann::ordered_json j = {{"schema", "kwb.tune/1"}, {"op", summary.op}, {"variant", summary.variant}};
  j["device"] = report.run.device ? report.run.device->name : "";
  j["device_uuid"] = report.run.device ? report.run.device->uuid : "";
  j["driver"] = report.run.device ? report.run.device->driver_release : "";
  j["git_sha"] = report.run.git_sha;
  j["started_at"] = report.run.started_at;
  j["complete"] = summary.complete;
  auto shapes = nlohmann::ordered_json::array();
  for (const TunedShape& s : summary.shapes) {
    nlohmann::ordered_json e = {{"dtype", std::string(to_string(s.dtype))}, {"shape", shape_json(s.shape)},
                                {"shape_compact", s.shape.to_compact()}};
    auto all = nlohmann::ordered_json::array(), top = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < s.ranked.size(); ++i) {
      all.push_back(config_json(s.ranked[i]));
      if (i < top_n) top.push_back(config_json(s.ranked[i]));
    }
    e["best"] = s.ranked.empty() ? nlohmann::ordered_json() : config_json(s.ranked.front());
    e["top"] = std::move(top);
    e["default"] = s.default_config ? config_json(*s.default_config) : nlohmann::ordered_json();
    const auto speedup = s.speedup_over_default();
    e["speedup_over_default"] = speedup ? nlohmann::ordered_json(*speedup) : nlohmann::ordered_json();
    e["configurations"] = std::move(all);
    e["failed"] = s.failed;
    e["skipped"] = s.skipped;
    e["unverified"] = s.unverified;
    auto reasons = nlohmann::ordered_json::object();
    for (const auto& [why, n] : s.reasons) reasons[why] = n;
    e["reasons"] = std::move(reasons);
    shapes.push_back(std::move(e));
  }
  j["shapes"] = std::move(shapes);
  return j;
}

}  // namespace kwb
