// The measured roofline point and its flags (see measured_roofline.hpp).
#include "harness/derive/measured_roofline.hpp"

#include <cmath>
#include <fmt/format.h>

namespace kwb {
namespace {

std::optional<double> value(const std::map<std::string, double>& total, const char* metric) {
  auto it = total.find(metric);
  if (it == total.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<double> measured_dram_bytes(const std::map<std::string, double>& total) {
  auto read = value(total, kDramBytesReadMetric);
  auto write = value(total, kDramBytesWriteMetric);
  if (!read || !write) return std::nullopt;
  return *read + *write;
}

const std::vector<FlopCounter>& flop_counters() {
  // Tensor-path operations count FLOPs already; the rest are per-thread instruction counts.
  static const std::vector<FlopCounter> counters = {
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1, true},
      {"sm__ops_path_tensor_src_fp16.sum", 1, true},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 1, true},
      {"sm__ops_path_tensor_src_fp8.sum", 1, true},
      {"sm__ops_path_tensor_src_fp64.sum", 1, true},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2, false},
      {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1, false},
      {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 1, false},
      {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum", 2, false},
      {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", 1, false},
      {"sm__sass_thread_inst_executed_op_dmul_pred_on.sum", 1, false},
      {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", 2, false},
      {"sm__sass_thread_inst_executed_op_hadd_pred_on.sum", 1, false},
      {"sm__sass_thread_inst_executed_op_hmul_pred_on.sum", 1, false},
  };
  return counters;
}

std::optional<double> measured_tensor_flops(const std::map<std::string, double>& total) {
  std::optional<double> sum;
  for (const FlopCounter& c : flop_counters())
    if (c.tensor)
      if (auto v = value(total, c.metric)) sum = sum.value_or(0) + c.flops * *v;
  return sum;
}

std::optional<double> measured_flops(const std::map<std::string, double>& total) {
  std::optional<double> sum;
  for (const FlopCounter& c : flop_counters())
    if (auto v = value(total, c.metric)) sum = sum.value_or(0) + c.flops * *v;
  return sum;
}

bool traffic_ratio_judged(const CaseRecord& rec) {
  // Extra DRAM traffic is a finding where DRAM is the limit: a cold, memory-bound case larger
  // than the L2. A compute-bound GEMM re-reads its tiles from DRAM by design; its ratio is shown,
  // not flagged.
  return rec.derived && rec.timing && rec.timing->mode == Mode::cold && !rec.derived->l2_resident &&
         rec.derived->bound == "memory";
}

std::optional<MeasuredPoint> measured_point(const CaseRecord& rec) {
  if (!rec.derived || !rec.derived->measured || !rec.timing) return std::nullopt;
  const MeasuredWork& m = *rec.derived->measured;
  const double us = rec.timing->span.median;
  if (!(m.dram_bytes > 0) || !(us > 0)) return std::nullopt;
  // A count of 0 measured nothing of the op's arithmetic (tensor counters on an op of the CUDA
  // cores; reports before derive_measured dropped such counts keep them): the model's FLOPs stand in.
  const bool counted = m.flops.has_value() && *m.flops > 0;
  const double flops = counted ? *m.flops : rec.derived->model_flops;
  MeasuredPoint p{flops / m.dram_bytes, flops / us / 1e6, counted, !m.flags.empty()};
  const bool on_log_axes = p.intensity > 0 && p.tflops > 0 && std::isfinite(p.intensity) && std::isfinite(p.tflops);
  if (!on_log_axes) return std::nullopt;
  return p;
}

void derive_measured(CaseRecord& rec, double traffic_threshold) {
  if (!rec.derived || !rec.counters || !rec.counters->unavailable.empty() || rec.counters->kernels.empty()) return;
  Derived& d = *rec.derived;
  const auto& total = rec.counters->total;
  const auto bytes = measured_dram_bytes(total);
  const auto flops = measured_flops(total);
  if (!bytes && !flops) return;
  MeasuredWork m;
  const bool beyond_l2 = traffic_ratio_judged(rec);
  if (bytes) {
    m.dram_bytes = *bytes;
    m.traffic_ratio = d.model_bytes > 0 ? *bytes / d.model_bytes : 0;
    if (beyond_l2 && d.model_bytes > 0) {
      if (m.traffic_ratio > traffic_threshold)
        m.flags.push_back(fmt::format("moves {:.0f}% more DRAM traffic than the work model ({:.3g} of {:.3g} bytes, "
                                      "ratio {:.2f}): inputs read more than once, spills, or a write-back the model "
                                      "does not count",
                                      100 * (m.traffic_ratio - 1), *bytes, d.model_bytes, m.traffic_ratio));
      else if (m.traffic_ratio < kTrafficRatioFloor)
        m.flags.push_back(fmt::format("moves only {:.0f}% of the work model's DRAM bytes ({:.3g} of {:.3g}): the "
                                      "model over-counts, data stayed in L2, or the kernel skips work",
                                      100 * m.traffic_ratio, *bytes, d.model_bytes));
    }
  }
  // FLOP counters that counted nothing (the tensor pipes of an op on the CUDA cores) did not see
  // the op's arithmetic: no measured FLOPs rather than 0 of them.
  if (flops && *flops > 0) {
    m.flops = *flops;
    if (d.model_flops > 0) m.flop_ratio = *flops / d.model_flops;
    if (bytes && *bytes > 0) m.intensity = *flops / *bytes;
    // Only where the tensor pipes do most of the arithmetic is the FLOP count comparable with
    // the model: CUDA-core instruction counts hold the kernel's own bookkeeping (scales,
    // exponent polynomials), which no work model counts.
    const auto tensor = measured_tensor_flops(total);
    if (tensor && *tensor > 0.5 * *flops && d.model_flops > 0) {
      const double ratio = *tensor / d.model_flops;
      const double declared = d.executed_flops > 0 ? d.executed_flops / d.model_flops : 1.0;
      if (std::abs(ratio - declared) > kFlopRatioTolerance * declared)
        m.flags.push_back(fmt::format("executes {:.3g}x the work model's FLOPs on the tensor pipes ({:.4g} of {:.4g}){}",
                                      ratio, *tensor, d.model_flops,
                                      declared != 1.0 ? fmt::format("; the variant declares {:.3g}x", declared) : ""));
      else if (declared != 1.0)
        m.flags.push_back(fmt::format("executes {:.3g}x the work model's FLOPs on the tensor pipes, as the variant "
                                      "declares ({:.3g}x)",
                                      ratio, declared));
    }
  }
  d.measured = std::move(m);
}

}  // namespace kwb
