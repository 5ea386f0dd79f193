// kwb's own counters of a case beside Nsight Compute's, metric by metric: what `kwb profile`
// prints after an import, and what the agreement check of scripts/device.sh reads.
//
// Counts that do not depend on timing or on what the caches held (bytes, sectors and requests
// at each level, instructions, tensor operations, blocks and warps launched) must agree: both
// tools read the same hardware counters of the same launch from the same start. Cycles,
// durations and hit or miss counts vary from replay to replay and are shown, not checked; so are
// DRAM bytes written, which the two tools count over different spans (kwb's includes the
// write-back of the lines the kernel leaves dirty in the L2, ncu's does not:
// docs/notebook/2026-11-26-sweep-time.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/record/counters.hpp"

namespace kwb {

// The agreement asked of the checked counts: within 2%.
inline constexpr double kCounterAgreement = 0.02;

struct CounterComparisonRow {
  std::string metric;
  std::optional<double> kwb, ncu;  // totals over the sample's kernels; absent where not collected
  std::optional<double> ratio;     // ncu / kwb (both 0: 1)
  bool checked = false;            // a count held to the agreement
  std::optional<bool> agrees;      // checked rows with both values
};

// Whether a metric is a count that both tools must agree on (see above).
bool is_agreement_count(const std::string& metric);

// One row per metric of ncu's, then those only kwb has; kwb may be null (no counters of its own).
std::vector<CounterComparisonRow> compare_counters(const CaseCounters* kwb, const CaseCounters& ncu,
                                                   double tolerance = kCounterAgreement);

// The rows as a text table: metric, kwb, ncu, ncu/kwb, and "ok" or "off by X%" for checked rows.
std::string comparison_table(const std::vector<CounterComparisonRow>& rows, double tolerance = kCounterAgreement);

}  // namespace kwb
