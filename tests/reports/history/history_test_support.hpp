// Shared by the history tests: small hand-made reports, written with the real JSON writer.
#pragma once

#include <string>
#include <vector>

#include "harness/record/json_report.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb::test {

// A report of one run started at `started_at` at `git_sha` on `gpu`, with one case per op of
// `medians` (rmsnorm_fwd, softmax_fwd, ...) whose samples sit around that median.
inline Report history_report(const std::string& started_at, const std::string& git_sha, double rms_median_us,
                             double softmax_median_us, const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  Report r = empty_report(gpu);
  r.run.started_at = started_at;
  r.run.finished_at = started_at;
  r.run.git_sha = git_sha;
  r.run.host = "node1";
  r.run.device->uuid = "GPU-" + gpu.substr(gpu.size() - 4);
  const auto seed = std::hash<std::string>{}(started_at + gpu);
  r.cases = {timed_case("rmsnorm_fwd", "fused_v2_vec16", 16384, noisy_samples(seed, 40, rms_median_us, 0.002)),
             timed_case("softmax_fwd", "online", 4096, noisy_samples(seed + 1, 40, softmax_median_us, 0.002))};
  Derived d;
  d.bandwidth_gbps = 2500;
  d.pct_of_bandwidth_ceiling = 83.5;
  r.cases[0].derived = d;
  CaseRecord skipped;
  skipped.op = "softmax_fwd";
  skipped.variant = "baseline_eager";
  skipped.disposition = Disposition::skipped;
  skipped.reason = "needs more memory";
  skipped.nvtx_range = "softmax_fwd:baseline_eager:bf16:rows=4096,cols=4096";
  r.cases.push_back(skipped);
  return r;
}

}  // namespace kwb::test
