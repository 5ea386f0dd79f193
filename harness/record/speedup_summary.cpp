#include "harness/record/speedup_summary.hpp"

#include "harness/catalogue/math_label.hpp"

namespace kwb {
namespace {

bool timed_pass(const CaseRecord& r) { return r.disposition == Disposition::passed && r.timing.has_value(); }

bool same_case(const CaseRecord& a, const CaseRecord& b) {
  return a.op == b.op && a.dtype == b.dtype && a.shape == b.shape && a.timing->mode == b.timing->mode &&
         a.timing->launch == b.timing->launch;
}

SpeedupRow make_row(const CaseRecord& base, const CaseRecord& best) {
  SpeedupRow row;
  row.op = base.op;
  row.dtype = base.dtype;
  row.shape = base.shape;
  row.shape_label = shown_shape(base);
  row.mode = base.timing->mode;
  row.baseline_variant = base.variant;
  row.baseline_us = base.timing->span.median;
  row.baseline_kernels = base.timing->kernels_per_sample;
  row.baseline_workspace_bytes = base.workspace_bytes;
  row.baseline_memory_bytes = extra_memory_bytes(base);
  row.baseline_uses = base.uses;
  row.baseline_math = base.math;
  row.best_variant = best.variant;
  row.best_us = best.timing->span.median;
  row.best_kernels = best.timing->kernels_per_sample;
  row.best_workspace_bytes = best.workspace_bytes;
  row.best_memory_bytes = extra_memory_bytes(best);
  row.best_pct_of_copy = best.derived ? best.derived->pct_of_bandwidth_ceiling : 0;
  row.best_pct_of_roofline = best.derived ? best.derived->pct_of_roofline : 0;
  row.best_uses = best.uses;
  row.best_math = best.math;
  row.math_note = math_comparison(best.math, base.math);
  row.speedup = row.baseline_us / row.best_us;
  return row;
}

}  // namespace

std::vector<SpeedupRow> speedup_summary(const std::vector<CaseRecord>& records) {
  std::vector<SpeedupRow> rows;
  for (const CaseRecord& base : records) {
    if (base.role != Role::baseline || !timed_pass(base)) continue;
    bool seen = false;
    for (const auto& row : rows)
      seen = seen || (row.op == base.op && row.dtype == base.dtype && row.shape == base.shape &&
                      row.mode == base.timing->mode);
    if (seen) continue;  // a second baseline of the same case: the first one speaks
    // The fastest candidate; with `math` set, the fastest of that math.
    auto fastest = [&](const std::string* math) {
      const CaseRecord* best = nullptr;
      for (const CaseRecord& r : records)
        if (r.role != Role::baseline && timed_pass(r) && same_case(r, base) && (!math || r.math == *math) &&
            (!best || r.timing->span.median < best->timing->span.median))
          best = &r;
      return best;
    };
    const CaseRecord* best = fastest(nullptr);
    if (!best) continue;
    rows.push_back(make_row(base, *best));
    if (rows.back().math_note.empty()) continue;
    if (const CaseRecord* like = fastest(&base.math)) rows.push_back(make_row(base, *like));
  }
  return rows;
}

}  // namespace kwb
