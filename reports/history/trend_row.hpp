// One case of one stored run, as the history query returns it (reports/history/history_store.hpp).
#pragma once

#include <optional>
#include <string>

namespace kwb::history {

struct TrendRow {
  std::string identity, op, variant, disposition;
  std::string started_at, git_sha, device_name, driver;
  std::string settings;  // "mode cold, flush dirty, preset default": runs measured alike form one series
  std::optional<double> median_us, p10_us, p90_us, gbps, pct_of_copy;  // absent without timing
};

}  // namespace kwb::history
