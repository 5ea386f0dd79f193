// Per op, dtype and shape: the unfused baseline against the fastest fused variant, with the
// kernel launches of each. The story a fused kernel tells ("8 launches -> 1, 16x faster") in one
// row, for the run's summary and the reports. Like is compared with like: where the fastest
// variant's arithmetic differs from the baseline's (a tf32 GEMM against a full-fp32 one), its row
// says so ("tf32 vs fp32") and a second row gives the fastest variant of the baseline's math.
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
  std::string shape_label;  // as tables show it (shown_shape of the baseline's record)
  Mode mode = Mode::cold;
  std::string baseline_variant;
  double baseline_us = 0;
  std::int64_t baseline_kernels = -1;  // -1: the timer cannot count kernels (CUDA events)
  std::string best_variant;            // the fastest passed non-baseline variant (of its math)
  double best_us = 0;
  std::int64_t best_kernels = -1;
  double best_pct_of_copy = 0;         // of the bandwidth ceiling
  double best_pct_of_roofline = 0;     // of the roof of its bound (DRAM or the compute unit's)
  double speedup = 0;                  // baseline_us / best_us
  std::int64_t best_workspace_bytes = 0;
  std::int64_t baseline_workspace_bytes = 0;
  // extra_memory_bytes() of each: measured device memory beyond inputs and outputs.
  std::int64_t best_memory_bytes = 0;
  std::int64_t baseline_memory_bytes = 0;
  // What ran each side (CaseRecord::uses, ::math; empty math: a report that did not record it).
  std::vector<std::string> baseline_uses, best_uses;
  std::string baseline_math, best_math;
  // "tf32 vs fp32" where the two maths differ (math_comparison); empty when like is set
  // against like, or a label is unknown.
  std::string math_note;
};

// One row per (op, dtype, shape, mode) that has both a passed, timed baseline and a passed,
// timed fused variant, in the order the records first name them; where the fastest of them runs
// other math than the baseline, its row (math_note set) is followed by the fastest of the
// baseline's own math, when there is one.
std::vector<SpeedupRow> speedup_summary(const std::vector<CaseRecord>& records);

}  // namespace kwb
