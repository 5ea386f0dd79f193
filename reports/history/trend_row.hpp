// One case of one stored run, as the history query returns it (reports/history/history_store.hpp).
#pragma once

#include <optional>
#include <string>

#include "harness/record/record.hpp"

namespace kwb::history {

struct TrendRow {
  std::string identity, op, variant, disposition;
  std::string started_at, git_sha, device_name, driver;
  std::string settings;  // "mode cold, flush dirty, preset default": runs measured alike form one series
  std::optional<double> median_us, p10_us, p90_us, gbps, pct_of_copy;  // absent without timing
};

// The driver as the history stores it: the release ("580.159.04") where known, else the CUDA
// driver version ("13000"), else empty. Runs measured alike share it.
inline std::string driver_label(const DeviceInfo& device) {
  if (!device.driver_release.empty()) return device.driver_release;
  return device.driver_version ? std::to_string(device.driver_version) : "";
}

}  // namespace kwb::history
