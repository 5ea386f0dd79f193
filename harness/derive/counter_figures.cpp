// The counter figures and their thresholds (see counter_figures.hpp).
#include "harness/derive/counter_figures.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/derive/measured_roofline.hpp"
#include "harness/plan/counter_sets.hpp"

namespace kwb {
namespace {

// Metric names, once.
constexpr const char* kL2Hit = "lts__t_sectors_lookup_hit.sum";
constexpr const char* kL2Miss = "lts__t_sectors_lookup_miss.sum";
constexpr const char* kLdSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kLdHitSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum";
constexpr const char* kLdRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kStSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kStRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kLdBytes = "smsp__sass_data_bytes_mem_global_op_ld.sum";
constexpr const char* kStBytes = "smsp__sass_data_bytes_mem_global_op_st.sum";
constexpr const char* kIssueActive = "smsp__issue_active.sum";
constexpr const char* kSmspActive = "smsp__cycles_active.sum";
constexpr const char* kTensorActive = "sm__pipe_tensor_cycles_active.sum";
constexpr const char* kSmElapsed = "sm__cycles_elapsed.sum";
constexpr const char* kWarpsActive = "sm__warps_active.sum";
constexpr const char* kSmActive = "sm__cycles_active.sum";
// Launch figures under Nsight Compute's names, so that imported values read the same.
constexpr const char* kRegisters = "launch__registers_per_thread";
constexpr const char* kWaves = "launch__waves_per_multiprocessor";
constexpr const char* kTheoretical = "sm__maximum_warps_per_active_cycle_pct";

// Warps one SM holds at once on the chips the counters are read on (GH100, GA100: 64). Achieved
// occupancy is the average resident warps over this.
constexpr double kMaxWarpsPerSm = 64;
// Useful bytes per 32-byte sector below which a global access pattern wastes over a quarter of
// what it fetches.
constexpr double kUsefulBytesFloor = 24;
// Issue active above this: the schedulers issue nearly every cycle, so fewer instructions (not
// more parallelism) make the kernel faster.
constexpr double kIssueBoundPct = 80;
// SMs holding a warp in fewer of their cycles than this: part of the GPU sits idle (a grid
// smaller than the GPU, a long tail).
constexpr double kSmBusyFloorPct = 70;
// Achieved occupancy under this fraction of the theoretical: warps sit idle (load imbalance, a
// partial last wave, a kernel too short to fill the SMs).
constexpr double kAchievedFloor = 0.5;

std::vector<std::string> flop_metric_names() {
  std::vector<std::string> names;
  for (const FlopCounter& c : flop_counters()) names.push_back(c.metric);
  return names;
}

std::optional<double> get(const std::map<std::string, double>& values, const char* metric) {
  auto it = values.find(metric);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

// a / b, absent when either is missing or b is 0.
std::optional<double> ratio(const std::map<std::string, double>& values, const char* a, const char* b) {
  const auto x = get(values, a), y = get(values, b);
  if (!x || !y || *y == 0) return std::nullopt;
  return *x / *y;
}

CounterFigure figure_of(const std::string& id, double value) {
  const FigureSpec* spec = find_figure_spec(id);
  return {spec->id, spec->label, value, spec->unit, spec->explanation, spec->threshold, FigureVerdict::none, ""};
}

void judge_bytes_per_sector(CounterFigure& f) {
  if (f.value < kUsefulBytesFloor) {
    f.verdict = FigureVerdict::attention;
    f.verdict_text = fmt::format("{:.1f} of each sector's 32 bytes are used: {:.0f}% of what is fetched is wasted "
                                 "(strided or misaligned accesses)",
                                 f.value, 100 * (1 - f.value / 32));
  } else {
    f.verdict = FigureVerdict::fine;
  }
}

void judge_waves(CounterFigure& f) {
  f.verdict = FigureVerdict::fine;
  if (f.value <= 0) return;
  const double whole = std::floor(f.value), last = f.value - whole;
  if (f.value < 1) {
    f.verdict = FigureVerdict::attention;
    f.verdict_text = fmt::format("the grid fills {:.0f}% of one wave: the rest of the SMs' block slots stay idle",
                                 100 * f.value);
  } else if (f.value < 4 && last > 1e-9 && last <= 0.5) {
    f.verdict = FigureVerdict::attention;
    f.verdict_text = fmt::format("the last of {:.0f} waves is {:.0f}% full: a tail in which most SMs wait",
                                 whole + 1, 100 * last);
  }
}

}  // namespace

const std::vector<FigureSpec>& figure_specs() {
  static const std::vector<FigureSpec> specs = {
      {"kernels", "kernels", "", "kernels the sample launched (each one a counter range)", "", {}, {}, true},
      {"dram_read", "DRAM read", "B", "bytes read from DRAM (dram__bytes_read.sum)",
       "a streaming kernel reads each input byte once", {kDramBytesReadMetric}, {}},
      {"dram_write", "DRAM written", "B", "bytes written to DRAM (dram__bytes_write.sum)",
       "each output byte once, counted with the write-back of the lines left dirty in the L2 (Nsight Compute "
       "leaves those out)",
       {kDramBytesWriteMetric}, {}},
      {"traffic_ratio", "traffic ratio", "x",
       "DRAM bytes read + written over the work model's bytes: 2 for a kernel that reads its input twice",
       fmt::format("1.00 ideal; above {:.2f} or below {:.2f} flagged (cold cases beyond the L2)", kTrafficRatioThreshold,
                   kTrafficRatioFloor),
       {kDramBytesReadMetric, kDramBytesWriteMetric}, {}, true},
      {"measured_flops", "measured FLOPs", "FLOP",
       "FLOPs the pipes executed: tensor-path operations plus FP32/FP64/FP16 instructions (an FMA counts 2)", "", {},
       flop_metric_names(), true},
      {"flop_ratio", "FLOP ratio", "x", "measured FLOPs over the work model's FLOPs",
       "1.00 where the tensor pipes do the arithmetic (CUDA-core counts include the kernel's own bookkeeping)", {},
       flop_metric_names(), true},
      {"measured_intensity", "measured intensity", "FLOP/B", "measured FLOPs over measured DRAM bytes", "",
       {kDramBytesReadMetric, kDramBytesWriteMetric}, flop_metric_names(), true},
      {"l2_hit_rate", "L2 hit rate", "%", "L2 sector lookups that hit: hits / (hits + misses)",
       "high where blocks share data; a cold streaming kernel's reads miss", {kL2Hit, kL2Miss}, {}},
      {"l1_hit_rate", "L1 hit rate (global loads)", "%", "global-load sectors that hit in L1",
       "high where a block re-reads its data", {kLdSectors, kLdHitSectors}, {}},
      {"ld_sectors_per_request", "sectors per load request", "sectors/request",
       "32-byte L1 sectors per global load request (one request per warp instruction)",
       "4 ideal for 4-byte words (8 for 8-byte, 16 for 16-byte vectors); more means scattered accesses",
       {kLdSectors, kLdRequests}, {}},
      {"st_sectors_per_request", "sectors per store request", "sectors/request",
       "32-byte L1 sectors per global store request",
       "4 ideal for 4-byte words (8 for 8-byte, 16 for 16-byte vectors); more means scattered accesses",
       {kStSectors, kStRequests}, {}},
      {"ld_bytes_per_sector", "useful bytes per load sector", "B/sector",
       "bytes the threads asked for in global loads per L1 sector fetched",
       fmt::format("32 ideal; under {:.0f} flagged", kUsefulBytesFloor), {kLdBytes, kLdSectors}, {}},
      {"st_bytes_per_sector", "useful bytes per store sector", "B/sector",
       "bytes the threads stored per L1 sector written", fmt::format("32 ideal; under {:.0f} flagged", kUsefulBytesFloor),
       {kStBytes, kStSectors}, {}},
      {"issue_active", "issue active", "%", "cycles in which a scheduler issued an instruction, of its active cycles",
       fmt::format("above {:.0f}%: issue-bound (fewer instructions make it faster)", kIssueBoundPct),
       {kIssueActive, kSmspActive}, {}},
      {"tensor_active", "tensor pipe active", "%", "cycles the tensor pipe was busy, of the SMs' elapsed cycles",
       "a GEMM near its peak reads above 80%", {kTensorActive, kSmElapsed}, {}},
      {"sm_busy", "SM busy", "%", "SM cycles with at least one warp resident, of the SMs' elapsed cycles",
       fmt::format("under {:.0f}% flagged (idle SMs: a grid smaller than the GPU, a long tail)", kSmBusyFloorPct),
       {kSmActive, kSmElapsed}, {}},
      {"achieved_occupancy", "achieved occupancy", "%",
       fmt::format("resident warps per active cycle over the SM's {:.0f} (sm__warps_active.sum / sm__cycles_active.sum "
                   "/ {:.0f})",
                   kMaxWarpsPerSm, kMaxWarpsPerSm),
       fmt::format("under {:.0f}% of the theoretical flagged (idle warps: imbalance, a tail, a short kernel)",
                   100 * kAchievedFloor),
       {kWarpsActive, kSmActive}, {}},
      {"theoretical_occupancy", "theoretical occupancy", "%",
       "warps the launch's blocks allow one SM to hold (registers, shared memory, block size), of its maximum", "", {},
       {}},
      {"waves", "waves", "waves", "blocks over what the SMs hold at once: the grid in full-GPU waves",
       "under 1, or a last wave at most half full under 4, flagged (idle SMs)", {}, {}},
      {"registers", "registers", "per thread", "registers per thread (the most any kernel of the sample uses)",
       "65536 per SM: at 32 per thread a full 2048 threads fit; each doubling halves them", {}, {}},
  };
  return specs;
}

const FigureSpec* find_figure_spec(const std::string& id) {
  for (const FigureSpec& s : figure_specs())
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<std::string> figure_ids() {
  std::vector<std::string> ids;
  for (const FigureSpec& s : figure_specs()) ids.push_back(s.id);
  return ids;
}

bool figure_collectable(const FigureSpec& spec, const std::vector<std::string>& collected) {
  auto has = [&](const std::string& m) { return std::find(collected.begin(), collected.end(), m) != collected.end(); };
  return std::all_of(spec.all.begin(), spec.all.end(), has) &&
         (spec.any.empty() || std::any_of(spec.any.begin(), spec.any.end(), has));
}

std::vector<CounterFigure> counter_figures(const std::map<std::string, double>& v) {
  std::vector<CounterFigure> out;
  if (auto x = get(v, kDramBytesReadMetric)) out.push_back(figure_of("dram_read", *x));
  if (auto x = get(v, kDramBytesWriteMetric)) out.push_back(figure_of("dram_write", *x));
  if (auto hit = get(v, kL2Hit), miss = get(v, kL2Miss); hit && miss && *hit + *miss > 0)
    out.push_back(figure_of("l2_hit_rate", 100 * *hit / (*hit + *miss)));
  if (auto x = ratio(v, kLdHitSectors, kLdSectors)) out.push_back(figure_of("l1_hit_rate", 100 * *x));
  if (auto x = ratio(v, kLdSectors, kLdRequests)) out.push_back(figure_of("ld_sectors_per_request", *x));
  if (auto x = ratio(v, kStSectors, kStRequests)) out.push_back(figure_of("st_sectors_per_request", *x));
  if (auto x = ratio(v, kLdBytes, kLdSectors)) {
    out.push_back(figure_of("ld_bytes_per_sector", *x));
    judge_bytes_per_sector(out.back());
  }
  if (auto x = ratio(v, kStBytes, kStSectors)) {
    out.push_back(figure_of("st_bytes_per_sector", *x));
    judge_bytes_per_sector(out.back());
  }
  if (auto x = ratio(v, kIssueActive, kSmspActive)) {
    CounterFigure f = figure_of("issue_active", 100 * *x);
    f.verdict = f.value > kIssueBoundPct ? FigureVerdict::attention : FigureVerdict::fine;
    if (f.verdict == FigureVerdict::attention)
      f.verdict_text = fmt::format("the schedulers issue in {:.0f}% of their cycles: issue-bound", f.value);
    out.push_back(f);
  }
  if (auto x = ratio(v, kTensorActive, kSmElapsed)) out.push_back(figure_of("tensor_active", 100 * *x));
  if (auto x = ratio(v, kSmActive, kSmElapsed)) {
    CounterFigure f = figure_of("sm_busy", 100 * *x);
    f.verdict = f.value < kSmBusyFloorPct ? FigureVerdict::attention : FigureVerdict::fine;
    if (f.verdict == FigureVerdict::attention)
      f.verdict_text = fmt::format("the SMs hold a warp in {:.0f}% of their cycles: the rest of the time they idle "
                                   "(a grid smaller than the GPU, a long tail)",
                                   f.value);
    out.push_back(f);
  }
  const auto theoretical = get(v, kTheoretical);
  if (auto x = ratio(v, kWarpsActive, kSmActive)) {
    CounterFigure f = figure_of("achieved_occupancy", 100 * *x / kMaxWarpsPerSm);
    if (theoretical && *theoretical > 0) {
      f.verdict = f.value < kAchievedFloor * *theoretical ? FigureVerdict::attention : FigureVerdict::fine;
      if (f.verdict == FigureVerdict::attention)
        f.verdict_text = fmt::format("{:.0f}% achieved of {:.0f}% theoretical: warps sit idle (imbalance, a tail "
                                     "wave, or a kernel too short to fill the SMs)",
                                     f.value, *theoretical);
    }
    out.push_back(f);
  }
  if (theoretical && *theoretical > 0) out.push_back(figure_of("theoretical_occupancy", *theoretical));
  if (auto x = get(v, kWaves); x && *x > 0) {
    out.push_back(figure_of("waves", *x));
    judge_waves(out.back());
  }
  if (auto x = get(v, kRegisters); x && *x > 0) out.push_back(figure_of("registers", *x));
  return out;
}

std::map<std::string, double> launch_values(const KernelLaunch& launch) {
  std::map<std::string, double> v;
  if (launch.registers_per_thread > 0) v[kRegisters] = static_cast<double>(launch.registers_per_thread);
  if (launch.waves > 0) v[kWaves] = launch.waves;
  if (launch.theoretical_occupancy > 0) v[kTheoretical] = 100 * launch.theoretical_occupancy;
  return v;
}

std::map<std::string, double> kernel_values(const KernelCounters& k) {
  std::map<std::string, double> values = k.values;
  if (k.launch) values.merge(launch_values(*k.launch));  // merge keeps the kernel's own
  return values;
}

bool counters_read(const std::optional<CaseCounters>& c) {
  return c && c->unavailable.empty() && !c->kernels.empty();
}

const CaseCounters* figure_counters(const CaseRecord& rec) {
  for (const std::optional<CaseCounters>* c : {&rec.counters, &rec.ncu_counters})
    if (counters_read(*c)) return &**c;
  return nullptr;
}

std::map<std::string, double> case_values(const CaseCounters& counters) {
  std::map<std::string, double> values =
      counters.total.empty() ? total_over_kernels(counters.kernels) : counters.total;
  // Each kernel's launch values beside its duration, totalled by the counters' own rule.
  std::vector<KernelCounters> launches;
  std::optional<double> registers;
  for (const KernelCounters& k : counters.kernels) {
    const auto all = kernel_values(k);
    KernelCounters l;
    for (const char* metric : {kRegisters, kWaves, kTheoretical, kDurationMetric})
      if (auto x = get(all, metric)) l.values[metric] = *x;
    if (auto r = get(l.values, kRegisters)) registers = std::max(registers.value_or(0), *r);
    launches.push_back(std::move(l));
  }
  const auto launch_total = total_over_kernels(launches);
  for (const char* metric : {kWaves, kTheoretical})
    if (auto x = get(launch_total, metric)) values[metric] = *x;
  if (registers) values[kRegisters] = *registers;  // the most any kernel uses, not an average
  return values;
}

std::vector<CounterFigure> case_figures(const CaseRecord& rec) {
  const CaseCounters* counters = figure_counters(rec);
  return counters ? case_figures(rec, *counters) : std::vector<CounterFigure>{};
}

std::vector<CounterFigure> case_figures(const CaseRecord& rec, const CaseCounters& counters) {
  const auto values = case_values(counters);
  std::vector<CounterFigure> out;
  out.push_back(figure_of("kernels", static_cast<double>(counters.kernels.size())));
  const bool own = rec.counters && &counters == &*rec.counters;
  if (own && rec.derived && rec.derived->measured) {
    const Derived& d = *rec.derived;
    const MeasuredWork& m = *d.measured;
    if (measured_dram_bytes(values) && d.model_bytes > 0) {
      CounterFigure f = figure_of("traffic_ratio", m.traffic_ratio);
      if (traffic_ratio_judged(rec)) {
        const bool over = m.traffic_ratio > kTrafficRatioThreshold, under = m.traffic_ratio < kTrafficRatioFloor;
        f.verdict = over || under ? FigureVerdict::attention : FigureVerdict::fine;
        if (over) f.verdict_text = fmt::format("moves {:.0f}% more DRAM traffic than the work model", 100 * (m.traffic_ratio - 1));
        if (under) f.verdict_text = fmt::format("moves only {:.0f}% of the work model's DRAM bytes", 100 * m.traffic_ratio);
      }
      out.push_back(f);
    }
    if (m.flops) out.push_back(figure_of("measured_flops", *m.flops));
    if (m.flop_ratio) out.push_back(figure_of("flop_ratio", *m.flop_ratio));
    if (m.intensity) out.push_back(figure_of("measured_intensity", *m.intensity));
  }
  for (CounterFigure& f : counter_figures(values)) out.push_back(std::move(f));
  return out;
}

const CounterFigure* find_figure(const std::vector<CounterFigure>& figures, const std::string& id) {
  for (const CounterFigure& f : figures)
    if (f.id == id) return &f;
  return nullptr;
}

namespace {

std::string scaled(double v, double base, std::initializer_list<const char*> units) {
  double x = v;
  const char* unit = *units.begin();
  for (auto it = units.begin() + 1; it != units.end() && std::abs(x) >= base; ++it) x /= base, unit = *it;
  return unit == *units.begin() ? fmt::format("{:.0f}{}", x, unit) : fmt::format("{:.3g}{}", x, unit);
}

}  // namespace

std::string figure_value_text(const CounterFigure& f) {
  if (f.unit == "B") return scaled(f.value, 1024, {" B", " KiB", " MiB", " GiB", " TiB"});
  if (f.unit == "FLOP") return scaled(f.value, 1000, {" FLOP", " kFLOP", " MFLOP", " GFLOP", " TFLOP", " PFLOP"});
  if (f.unit == "%") return fmt::format("{:.1f}%", f.value);
  if (f.unit == "x") return fmt::format("{:.2f}x", f.value);
  if (f.unit == "FLOP/B") return fmt::format("{:.3g}", f.value);
  if (f.id == "kernels" || f.id == "registers") return fmt::format("{:.0f}", f.value);
  return fmt::format("{:.2f}", f.value);
}

std::string metric_value_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

}  // namespace kwb
