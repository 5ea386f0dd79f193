// Roofline arithmetic and the roof rule. GB/s = bytes / us / 1e3; TFLOP/s = flops / us / 1e6.
#include "harness/derive/derive.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "harness/derive/ceilings.hpp"
#include "harness/derive/measured_roofline.hpp"

namespace kwb {

void derive_metrics(CaseRecord& rec, const Registry& registry, const Ceilings& ceilings, std::int64_t l2_bytes) {
  const Op* op = registry.find_op(rec.op);
  if (!op || !rec.timing || rec.timing->span.median <= 0) return;
  const WorkModel work = op->work(rec.shape, rec.dtype);
  const Variant* variant = registry.find_variant(rec.op, rec.variant);
  const WorkModel executed = variant && variant->executed_work ? variant->executed_work(rec.shape, rec.dtype) : work;
  const double us = rec.timing->span.median;
  Derived d;
  d.model_bytes = work.bytes;
  d.model_flops = work.flops;
  d.executed_bytes = executed.bytes;
  d.executed_flops = executed.flops;
  d.bandwidth_gbps = work.bytes / us / 1e3;
  d.tflops = work.flops / us / 1e6;
  d.intensity = work.bytes > 0 ? work.flops / work.bytes : 0;
  const double executed_gbps = executed.bytes / us / 1e3;
  const double executed_tflops = executed.flops / us / 1e6;
  const double executed_intensity = executed.bytes > 0 ? executed.flops / executed.bytes : 0;
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
  d.compute_roof_tflops = compute_roof_tflops(ceilings, compute_unit_for(op->compute_unit, rec.dtype));
  if (d.compute_roof_tflops > 0) d.pct_of_compute_roof = 100.0 * executed_tflops / d.compute_roof_tflops;
  const double memory_roof = executed_intensity * d.bandwidth_roof_gbps / 1e3;  // TFLOP/s at this AI
  if (d.compute_roof_tflops > 0 && d.bandwidth_roof_gbps > 0) {
    d.bound = memory_roof < d.compute_roof_tflops ? "memory" : "compute";
    d.roofline_tflops = std::min(memory_roof, d.compute_roof_tflops);
    d.pct_of_roofline = d.roofline_tflops > 0 ? 100.0 * executed_tflops / d.roofline_tflops : 0;
  }
  if (d.bandwidth_roof_gbps > 0) d.pct_of_bandwidth_ceiling = 100.0 * executed_gbps / d.bandwidth_roof_gbps;
  // A cold case whose tensors all fit in the L2 can end with its writes still there (no DRAM
  // write paid inside the timed interval): like a hot case, its bandwidth roof is the L2's.
  d.l2_resident = rec.timing->mode == Mode::cold && l2_bytes > 0 && all <= static_cast<double>(l2_bytes);
  if ((rec.timing->mode == Mode::hot || d.l2_resident) && ceilings.l2_copy_gbps > 0)
    d.pct_of_l2_ceiling = 100.0 * executed_gbps / ceilings.l2_copy_gbps;
  rec.derived = d;
  derive_measured(rec);
}

namespace {

// The DRAM traffic a cold case larger than the L2 is judged by, and its % of the DRAM roof at
// the case's mix: the executed bytes, less under the clean flush the written bytes an L2 can
// still hold when the kernel ends (the flush leaves no dirty line, so up to an L2 of the writes
// need not reach DRAM within the span). The roof rule and the warnings both read this one
// figure, so a warning never says "within the margin" of a figure the rule did not judge.
struct DramReading {
  double bytes = 0;     // the bytes counted
  double held = 0;      // written bytes left out: an L2 can still hold them (clean flush)
  double pct = 0;       // of the DRAM roof
  double all_pct = 0;   // the same counting every executed byte (pct_of_bandwidth_ceiling)
};

std::optional<DramReading> dram_reading(const CaseRecord& rec, std::int64_t l2_bytes) {
  const Derived& d = *rec.derived;
  const double us = rec.timing->span.median;
  if (rec.timing->mode != Mode::cold || d.l2_resident || d.bandwidth_roof_gbps <= 0 || us <= 0) return std::nullopt;
  DramReading r;
  r.bytes = d.executed_bytes;
  if (rec.timing->flush == "clean" && l2_bytes > 0)
    r.held = std::min(d.write_fraction * d.executed_bytes, static_cast<double>(l2_bytes));
  r.bytes -= r.held;
  r.pct = 100.0 * r.bytes / us / 1e3 / d.bandwidth_roof_gbps;
  r.all_pct = d.pct_of_bandwidth_ceiling;
  return r;
}

// One roof a case was judged against: its name and figure for the reason, and the case's % of it.
struct RoofReading {
  std::string what;  // "the DRAM roof (3050 GB/s at this case's read/write mix)"
  double pct = 0;
  std::string means;  // what reading above it likely means
  double margin = kRoofMargin;  // how far above it a figure may read before the case fails
};

std::vector<RoofReading> roof_readings(const CaseRecord& rec, std::int64_t l2_bytes) {
  std::vector<RoofReading> out;
  const Derived& d = *rec.derived;
  const double us = rec.timing->span.median;
  if (d.compute_roof_tflops > 0)
    out.push_back({fmt::format("the compute roof ({:.1f} TFLOP/s; {:.4g} FLOP executed in {:.2f} us)",
                               d.compute_roof_tflops, d.executed_flops, us),
                   d.pct_of_compute_roof,
                   "the variant executes fewer FLOPs than it declares (declare Variant::executed_work), the work "
                   "model over-counts, the timed launches did less than the verified one, or the cached ceiling "
                   "ran at a lower SM clock than this case (`kwb ceilings` shows the clock; `--refresh` measures "
                   "again)"});
  const bool dram = rec.timing->mode == Mode::cold && !d.l2_resident;
  if (const std::optional<DramReading> r = dram_reading(rec, l2_bytes)) {
    const std::string discount =
        r->held > 0 ? fmt::format(", less {:.4g} written bytes an L2 can still hold under the clean flush", r->held) : "";
    out.push_back({fmt::format("the DRAM roof ({:.0f} GB/s at this case's read/write mix, {:.0f}% written; {:.4g} "
                               "bytes{} in {:.2f} us)",
                               d.bandwidth_roof_gbps, 100 * d.write_fraction, r->bytes, discount, us),
                   r->pct,
                   "the timed launches moved less than the work model counts (work skipped after the verified "
                   "launch, or a result computed outside the timed launches), the work model over-counts, or the "
                   "cached ceilings are stale (`kwb ceilings --refresh`)"});
  }
  if (!dram && d.pct_of_l2_ceiling)
    out.push_back({fmt::format("the L2 copy ceiling ({} case{}; {:.4g} bytes in {:.2f} us)",
                               rec.timing->mode == Mode::hot ? "a hot" : "an L2-resident cold",
                               d.l2_resident ? ": its tensors fit in the L2" : "", d.executed_bytes, us),
                   *d.pct_of_l2_ceiling,
                   "the timed launches moved less than the work model counts, or the work model over-counts",
                   kL2RoofMargin});
  return out;
}

}  // namespace

std::optional<std::string> roof_violation(const CaseRecord& rec, std::int64_t l2_bytes) {
  if (rec.disposition != Disposition::passed || !rec.derived || !rec.timing || rec.timing->span.median <= 0)
    return std::nullopt;
  std::string reason;
  for (const RoofReading& r : roof_readings(rec, l2_bytes)) {
    if (!(r.pct > 100.0 * (1 + r.margin))) continue;
    reason += fmt::format("{}{:.1f}% of {}, above it by more than the {:.0f}% margin for measurement spread: {}",
                          reason.empty() ? "above its roof: " : "; and ", r.pct, r.what, 100 * r.margin, r.means);
  }
  if (reason.empty()) return std::nullopt;
  return reason;
}

bool judge_roofs(CaseRecord& rec, std::int64_t l2_bytes) {
  std::optional<std::string> why = roof_violation(rec, l2_bytes);
  if (!why) return false;
  rec.disposition = Disposition::failed;
  rec.reason = std::move(*why);
  return true;
}

std::string executed_work_note(const Derived& d) {
  // 0: not recorded (a record made before executed work was), read as the model's.
  const bool fewer_flops = d.executed_flops > 0 && d.executed_flops < d.model_flops;
  const bool fewer_bytes = d.executed_bytes > 0 && d.executed_bytes < d.model_bytes;
  if (!fewer_flops && !fewer_bytes) return "";
  std::string parts;
  if (fewer_flops) parts = fmt::format("{:.0f}% of the model's FLOPs", 100 * d.executed_flops / d.model_flops);
  if (fewer_bytes)
    parts += fmt::format("{}{:.0f}% of its bytes", parts.empty() ? "" : ", ", 100 * d.executed_bytes / d.model_bytes);
  return "executed " + parts + " (% of roof counts it)";
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
      if (base.timing->mode != rec.timing->mode || base.timing->launch != rec.timing->launch) continue;
      rec.derived->speedup_vs_baseline = base.timing->span.median / rec.timing->span.median;
      rec.derived->baseline_variant = base.variant;
      rec.derived->baseline_math = base.math;  // the tables say "tf32 vs fp32" where they differ
      break;
    }
  }
}

std::vector<std::string> derive_warnings(const std::vector<CaseRecord>& records, std::int64_t l2_bytes) {
  std::vector<std::string> out;
  for (const auto& r : records) {
    if (!r.derived || !r.timing || r.disposition != Disposition::passed) continue;
    const Derived& d = *r.derived;
    const bool dram_roof = r.timing->mode == Mode::cold && !d.l2_resident;
    const std::optional<DramReading> dram = dram_roof ? dram_reading(r, l2_bytes) : std::nullopt;
    // What the roof rule judged and let pass: within the margin, by the figures it judged.
    std::vector<std::string> within;
    if (dram && dram->pct > 100.0)
      within.push_back(dram->held > 0 ? fmt::format("{:.1f}% of the DRAM roof (less the {:.4g} written bytes an L2 "
                                                    "can still hold under the clean flush; {:.1f}% counting them)",
                                                    dram->pct, dram->held, dram->all_pct)
                                      : fmt::format("{:.1f}% of the DRAM roof", dram->pct));
    if (!dram_roof && d.pct_of_l2_ceiling && *d.pct_of_l2_ceiling > 100.0)
      within.push_back(fmt::format("{:.1f}% of the L2 copy ceiling", *d.pct_of_l2_ceiling));
    if (d.pct_of_compute_roof > 100.0)
      within.push_back(fmt::format("{:.1f}% of the compute roof", d.pct_of_compute_roof));
    if (!within.empty()) {
      std::string list;
      for (const auto& w : within) list += (list.empty() ? "" : ", ") + w;
      out.push_back(fmt::format(
          "{}: {}: within the {:.0f}% margin the roof rule allows for measurement spread, but above 100%: "
          "a ceiling measured low (`kwb ceilings --refresh`)",
          r.nvtx_range, list, 100 * kRoofMargin));
      continue;
    }
    // Above the DRAM roof counting every byte, within it less the writes an L2 can still hold:
    // the rule passed it, and the table's figure says more than 100%, so say why.
    if (dram && dram->all_pct > 100.0)
      out.push_back(fmt::format("{}: {:.1f}% of the DRAM roof counting every byte, {:.1f}% less the {:.4g} written "
                                "bytes an L2 can still hold when the kernel ends (clean flush): within its roof",
                                r.nvtx_range, dram->all_pct, dram->pct, dram->held));
    // A hot case above the DRAM roof with no L2 ceiling to judge it by: its data sat in L2.
    if (!dram_roof && !d.pct_of_l2_ceiling && d.pct_of_bandwidth_ceiling > 100.0)
      out.push_back(fmt::format("{}: {:.0f}% of the DRAM roof: its data sat in L2 ({}); no L2 copy ceiling was "
                                "measured to judge it by (`kwb ceilings --refresh`)",
                                r.nvtx_range, d.pct_of_bandwidth_ceiling,
                                r.timing->mode == Mode::hot ? "hot mode" : "its tensors fit in the L2"));
  }
  return out;
}

}  // namespace kwb
