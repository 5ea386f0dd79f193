// The hardware-counter sets `kwb run --counters` names, and the request they make with
// `--metrics`: which metrics the worker's counter passes collect (harness/worker/counters/).
//
// Each set is a handful of raw counts (.sum), chosen so that its replay passes stay few (1-5 on
// GH100) and every rate is computed on the host from counts and cycles: a percentage metric
// costs extra passes of its own and cannot be summed over a sample's kernels. The duration
// (gpu__time_duration.sum) rides along in every request: it weights the per-kernel averages and
// cross-checks the timing pass, never replaces it.
#pragma once

#include <string>
#include <vector>

#include "harness/record/counters.hpp"  // kDurationMetric

namespace kwb {

struct CounterSet {
  std::string name;                  // "memory"
  std::string what;                  // one line for `kwb counters --list`
  std::vector<std::string> metrics;  // full metric names
};

// Every set, in the order `kwb counters --list` shows them.
const std::vector<CounterSet>& counter_sets();


// What a run asked for: the sets by name, the extra metrics, and the union of both as the
// metrics to collect (duration first, then each set's in order, then the extra ones; each once).
struct CounterRequest {
  std::vector<std::string> sets;
  std::vector<std::string> extra_metrics;
  std::vector<std::string> metrics;
  bool empty() const { return metrics.empty(); }
};

// Checks the names given to --counters and --metrics (either may be empty; repeats count once). Throws
// SettingError (Setting::counters / Setting::metrics) for an unknown set, with a did-you-mean,
// and for a metric that is not written as a full name ("base.rollup", e.g. dram__bytes_read.sum).
// Whether the GPU's chip has a metric is checked later, against the chip (metric_host.hpp).
CounterRequest parse_counter_request(const std::vector<std::string>& sets, const std::vector<std::string>& metrics);

// How the worker collects a request: most metrics per kernel (a range per kernel, auto range);
// the SASS-instruction metrics ("__sass_" in the name: FMA counts, bytes per global access)
// only over the whole launch, in a user range of their own, since CUPTI reads them as zero in
// auto ranges. Their passes add up.
struct MetricsByRange {
  std::vector<std::string> per_kernel;
  std::vector<std::string> whole_launch;
};
MetricsByRange split_by_range(const std::vector<std::string>& metrics);

// A short explanation of a metric for people (the app's Counters panel, `kwb counters --list`),
// with the usual threshold where there is one; empty for a metric without one.
std::string metric_explanation(const std::string& metric);

}  // namespace kwb
