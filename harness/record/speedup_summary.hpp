// Per op, dtype and shape: the unfused baseline against the fastest fused variant, with the
// kernel launches of each. The story a fused kernel tells ("8 launches -> 1, 16x faster") in one
// row, for the run's summary and the reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

struct SpeedupRow {
  std::string op;
  DType dtype = DType::fp32;
  Shape shape;
  Mode mode = Mode::cold;
  std::string baseline_variant;
  double baseline_us = 0;
  std::int64_t baseline_kernels = -1;  // -1: the timer cannot count kernels (CUDA events)
  std::string best_variant;            // the fastest passed non-baseline variant
  double best_us = 0;
  std::int64_t best_kernels = -1;
  double best_pct_of_copy = 0;         // of the bandwidth ceiling
  double speedup = 0;                  // baseline_us / best_us
  std::int64_t best_workspace_bytes = 0;
  std::int64_t baseline_workspace_bytes = 0;
  // extra_memory_bytes() of each: measured device memory beyond inputs and outputs.
  std::int64_t best_memory_bytes = 0;
  std::int64_t baseline_memory_bytes = 0;
};

// One row per (op, dtype, shape, mode) that has both a passed, timed baseline and a passed,
// timed fused variant, in the order the records first name them.
std::vector<SpeedupRow> speedup_summary(const std::vector<CaseRecord>& records);

}  // namespace kwb
