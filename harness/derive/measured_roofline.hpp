// The measured roofline: where a case really sits, from its hardware counters, beside where the
// work model puts it. DRAM bytes are what the memory moved (read + written), FLOPs what the
// pipes executed (tensor-pipe operations, and FP32/FP64/FP16 instructions with an FMA counted
// as 2). The traffic ratio (measured bytes over the model's) says whether a kernel moves what it
// must: 1 for a streaming kernel that reads each input once, 2 for one that reads it twice.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

// A cold, memory-bound case beyond the L2 whose DRAM traffic is above this many times the work
// model's is flagged ("moves 37% more than it needs"); compute-bound cases show the ratio only. Why 10%: streaming kernels read 1.00-1.02 of their
// model (the L2 flush's dirty lines and the reduction's partials are the rest).
inline constexpr double kTrafficRatioThreshold = 1.10;
// Below this, a cold case beyond the L2 moves less than its model says it must: the model over-
// counts or the kernel skips work.
inline constexpr double kTrafficRatioFloor = 0.90;
// Executed tensor FLOPs further than this from the model's (or from the variant's declared
// executed work) are flagged.
inline constexpr double kFlopRatioTolerance = 0.05;

// FLOPs from a counter total: nullopt when no FLOP counter was collected.
std::optional<double> measured_flops(const std::map<std::string, double>& total);
// Tensor-pipe FLOPs alone (the sm__ops_path_tensor_* counts); nullopt when none collected.
std::optional<double> measured_tensor_flops(const std::map<std::string, double>& total);
// DRAM bytes read + written; nullopt unless both were collected.
std::optional<double> measured_dram_bytes(const std::map<std::string, double>& total);

// The counters measured_flops adds up, each with the FLOPs one count stands for (an FMA 2, a
// tensor-path operation 1): what a FLOP figure needs at least one of.
struct FlopCounter {
  const char* metric;
  double flops;
  bool tensor;  // a tensor-pipe count (measured_tensor_flops)
};
const std::vector<FlopCounter>& flop_counters();

// Whether a case's traffic ratio is judged against kTrafficRatioThreshold and kTrafficRatioFloor:
// a cold, memory-bound case beyond the L2, whose every byte must come from and go to DRAM. A hot
// or L2-resident case reads from the L2, so its DRAM bytes say nothing about its access pattern;
// a compute-bound one (a GEMM) re-reads its tiles by design.
bool traffic_ratio_judged(const CaseRecord& record);

// Where a case's counters put it on the roofline, beside its model point: the FLOPs the pipes
// executed over the DRAM bytes really moved, at the executed FLOPs' rate over the median span.
// Without FLOP counters the model's FLOPs stand in (flops_measured false), so the point moves
// along the intensity axis by the traffic ratio alone, at the model point's height. Either way
// its rate over its intensity is the measured DRAM bandwidth: the point sits on the line of the
// bandwidth the kernel really drew. The review report and the app draw this one point.
struct MeasuredPoint {
  double intensity = 0;  // FLOP per measured DRAM byte
  double tflops = 0;
  bool flops_measured = false;
  bool flagged = false;  // the measured work has flags (MeasuredWork::flags)
};
// Absent without measured DRAM bytes (Derived::measured), a timed median, or a place on log axes.
std::optional<MeasuredPoint> measured_point(const CaseRecord& record);

// Fills record.derived->measured from record.counters (when both exist and the counters were
// read), with the flags of the rules above; leaves it absent otherwise.
void derive_measured(CaseRecord& record, double traffic_threshold = kTrafficRatioThreshold);

}  // namespace kwb
