// Roofline arithmetic. GB/s = bytes / us / 1e3; TFLOP/s = flops / us / 1e6.
#include "harness/derive/derive.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "harness/derive/ceilings.hpp"

namespace kwb {

void derive_metrics(CaseRecord& rec, const Registry& registry, const Ceilings& ceilings) {
  const Op* op = registry.find_op(rec.op);
  if (!op || !rec.timing || rec.timing->span.median <= 0) return;
  const WorkModel work = op->work(rec.shape, rec.dtype);
  const double us = rec.timing->span.median;
  Derived d;
  d.model_bytes = work.bytes;
  d.model_flops = work.flops;
  d.bandwidth_gbps = work.bytes / us / 1e3;
  d.tflops = work.flops / us / 1e6;
  d.intensity = work.bytes > 0 ? work.flops / work.bytes : 0;
  // The share of the bytes written: the outputs' share of the tensors (the work model may count
  // fewer bytes than the tensors, e.g. a broadcast table read once; the mix is taken as theirs).
  double written = 0, all = 0;
  for (const TensorSpec& t : op->tensors(rec.shape, rec.dtype)) {
    const double b = bytes_of(t, rec.dtype);
    all += b;
    if (t.is_output) written += b;
  }
  d.write_fraction = all > 0 ? written / all : 0.5;
  d.bandwidth_roof_gbps = dram_roof_gbps(ceilings, d.write_fraction);
  const double compute_roof = compute_roof_tflops(ceilings, compute_unit_for(op->compute_unit, rec.dtype));
  const double memory_roof = d.intensity * d.bandwidth_roof_gbps / 1e3;  // TFLOP/s at this AI
  if (compute_roof > 0 && d.bandwidth_roof_gbps > 0) {
    d.bound = memory_roof < compute_roof ? "memory" : "compute";
    d.roofline_tflops = std::min(memory_roof, compute_roof);
    d.pct_of_roofline = d.roofline_tflops > 0 ? 100.0 * d.tflops / d.roofline_tflops : 0;
  }
  if (d.bandwidth_roof_gbps > 0) d.pct_of_bandwidth_ceiling = 100.0 * d.bandwidth_gbps / d.bandwidth_roof_gbps;
  // A hot case whose tensors fit in L2 is bound by the L2, not DRAM: give it that roof too.
  if (rec.timing->mode == Mode::hot && ceilings.l2_copy_gbps > 0)
    d.pct_of_l2_ceiling = 100.0 * d.bandwidth_gbps / ceilings.l2_copy_gbps;
  rec.derived = d;
}

void derive_speedups(std::vector<CaseRecord>& records) {
  for (auto& rec : records) {
    if (!rec.derived || !rec.timing) continue;
    rec.derived->speedup_vs_baseline.reset();
    rec.derived->baseline_variant.clear();
    rec.derived->baseline_math.clear();
    for (const auto& base : records) {
      if (base.role != Role::baseline || base.disposition != Disposition::passed || !base.timing) continue;
      if (base.op != rec.op || base.dtype != rec.dtype || !(base.shape == rec.shape)) continue;
      if (base.timing->mode != rec.timing->mode) continue;
      rec.derived->speedup_vs_baseline = base.timing->span.median / rec.timing->span.median;
      rec.derived->baseline_variant = base.variant;
      rec.derived->baseline_math = base.math;  // the tables say "tf32 vs fp32" where they differ
      break;
    }
  }
}

std::vector<std::string> derive_warnings(const std::vector<CaseRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) {
    if (!r.derived) continue;
    if (r.derived->pct_of_bandwidth_ceiling > 100.0 || r.derived->pct_of_roofline > 100.0)
      out.push_back(fmt::format(
          "{}: {:.0f}% of the bandwidth ceiling, {:.0f}% of the roofline: above 100% means the "
          "data sat in L2 ({}) or the work model undercounts",
          r.nvtx_range, r.derived->pct_of_bandwidth_ceiling, r.derived->pct_of_roofline,
          r.timing && r.timing->flush == "clean"
              ? "clean flush: the last L2-sized part of the writes is still in L2 when the kernel "
                "ends; compare efficiencies under the default dirty flush"
              : "hot mode, small tensors"));
  }
  return out;
}

}  // namespace kwb
