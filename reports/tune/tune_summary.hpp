// What `kwb tune` found: a run over every combination of one variant's tunables, summarised per
// (dtype, shape) as the mHC-lite stack's one-shot grid search wrote it: every configuration's
// median and noise, the best, the top N, the declared default's time and the best's speedup over
// it, and the configurations that failed or were skipped (refused), counted by reason. Pure: the
// report is read and the JSON written by cli/tune_command.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record/report.hpp"

namespace kwb {

struct TunedConfiguration {
  TunableValues tunables;
  double median_us = 0, p10_us = 0, p90_us = 0;
  double noise = 0;  // relative IQR of the samples
  std::string identity;
};

struct TunedShape {
  DType dtype = DType::fp32;
  Shape shape;
  std::vector<TunedConfiguration> ranked;       // passed and timed, fastest first
  std::optional<TunedConfiguration> default_config;  // the variant's declared defaults, when timed
  int failed = 0, skipped = 0, unverified = 0;  // configurations that are not ranked
  std::map<std::string, int> reasons;           // why, counted (failed and skipped)
  // Best median against the default's: above 1 when the search beat the hand-picked values.
  std::optional<double> speedup_over_default() const;
};

struct TuneSummary {
  std::string op, variant;
  std::vector<TunedShape> shapes;  // in the order the report first holds them
  bool complete = false;           // false: the search was interrupted; these are the cases measured
};

// The variant's default tunables at a shape (default_tunables for a registered variant: a
// default may depend on the shape).
using DefaultsAt = std::function<TunableValues(const Shape&, DType)>;

// Refused (std::invalid_argument): a report holding cases of more than one op or variant.
TuneSummary summarize_tuning(const Report& report, const DefaultsAt& defaults_at);
// The same with one set of defaults for every shape.
TuneSummary summarize_tuning(const Report& report, const TunableValues& declared_defaults);

// {"schema": "kwb.tune/1", "op", "variant", "device", "driver", "git_sha", "complete", "shapes":
// [{"dtype", "shape", "shape_compact", "configurations": [...all ranked...], "best", "top",
// "default", "speedup_over_default", "failed", "skipped", "unverified", "reasons"}]}.
nlohmann::ordered_json tune_json(const TuneSummary& summary, const Report& report, std::size_t top_n);

}  // namespace kwb
