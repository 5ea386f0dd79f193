// Named figures from raw counters (see counter_figures.hpp).
#include "gui/model/counter_figures.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace kwb::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<double> get(const std::map<std::string, double>& values, const char* metric) {
  auto it = values.find(metric);
  if (it == values.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

// a / b, NaN unless both were collected and b is not 0.
double quotient(const std::map<std::string, double>& values, const char* a, const char* b) {
  const auto x = get(values, a), y = get(values, b);
  return x && y && *y != 0 ? *x / *y : kNaN;
}

CounterFigure make_figure(std::string name, std::string formula, std::string meaning,
                          FigureUnit unit, double value = kNaN) {
  CounterFigure f;
  f.name = std::move(name), f.formula = std::move(formula), f.meaning = std::move(meaning);
  f.unit = unit, f.value = value;
  return f;
}

void judge(CounterFigure& f, Verdict v, std::string text) {
  f.verdict = v;
  f.verdict_text = std::move(text);
}

// Bytes a thread asked for per 32-byte sector fetched: 32 when every fetched byte is used.
CounterFigure bytes_per_sector(const std::map<std::string, double>& values, const char* what,
                               const char* bytes, const char* sectors) {
  CounterFigure f = make_figure(
      fmt::format("useful bytes per {} sector", what), fmt::format("{} / {}", bytes, sectors),
      fmt::format("of the 32 bytes each sector moves, those the threads' {}s used: 32 "
                  "is ideal, under 16 means most of every fetch is wasted (strided, "
                  "misaligned or scattered accesses)",
                  what),
      FigureUnit::bytes_per_unit, quotient(values, bytes, sectors));
  if (std::isfinite(f.value)) {
    if (f.value >= 28)
      judge(f, Verdict::good, "coalesced");
    else if (f.value >= 16)
      judge(f, Verdict::warn, "partly wasted sectors");
    else
      judge(f, Verdict::bad, "scattered or strided accesses");
  }
  return f;
}

CounterFigure sectors_per_request(const std::map<std::string, double>& values, const char* what,
                                  const char* sectors, const char* requests) {
  return make_figure(
      fmt::format("sectors per {} request", what), fmt::format("{} / {}", sectors, requests),
      fmt::format("32-byte sectors per warp {} instruction: 4 when the 32 threads touch "
                  "consecutive 4-byte words, 8 for 8-byte and 16 for 16-byte vectors; more "
                  "than the access width needs means uncoalesced accesses (useful bytes per "
                  "sector says which)",
                  what),
      FigureUnit::per_request, quotient(values, sectors, requests));
}

CounterFigure percent_of(const std::map<std::string, double>& values, std::string name,
                         const char* part, const char* whole, std::string meaning) {
  return make_figure(std::move(name), fmt::format("{} / {}", part, whole), std::move(meaning),
                     FigureUnit::percent, 100 * quotient(values, part, whole));
}

}  // namespace

int max_warps_per_sm(const std::string& chip) {
  // Consumer Ampere and Ada (GA102-GA107, AD102-AD107) hold 48; Turing 32; the data-centre
  // chips (GV100, GA100, GH100, GB100) 64.
  if (chip.rfind("GA10", 0) == 0 && chip != "GA100") return 48;
  if (chip.rfind("AD10", 0) == 0) return 48;
  if (chip.rfind("TU1", 0) == 0) return 32;
  return 64;
}

std::vector<CounterFigure> counter_figures(const std::map<std::string, double>& values,
                                           const std::string& chip, double theoretical) {
  std::vector<CounterFigure> out;
  out.push_back(sectors_per_request(values, "load",
                                    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
  out.push_back(bytes_per_sector(values, "load", "smsp__sass_data_bytes_mem_global_op_ld.sum",
                                 "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
  out.push_back(sectors_per_request(values, "store",
                                    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
  out.push_back(bytes_per_sector(values, "store", "smsp__sass_data_bytes_mem_global_op_st.sum",
                                 "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"));
  out.push_back(percent_of(
      values, "L1 hit rate (global loads)",
      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
      "global-load sectors served by L1: a streaming kernel reads each byte once and hits "
      "rarely; a high rate means re-reads that L1 absorbed"));
  {
    CounterFigure f =
        make_figure("L2 hit rate",
                    "lts__t_sectors_lookup_hit.sum / (lts__t_sectors_lookup_hit.sum + "
                    "lts__t_sectors_lookup_miss.sum)",
                    "L2 sector lookups that hit: a cold streaming kernel misses on every first "
                    "read, so it reads low; a kernel that re-reads its data (GEMM tiles, a row "
                    "read twice) should hit above 80%, or its re-reads go to DRAM (see the "
                    "traffic ratio)",
                    FigureUnit::percent);
    const auto hit = get(values, "lts__t_sectors_lookup_hit.sum");
    const auto miss = get(values, "lts__t_sectors_lookup_miss.sum");
    if (hit && miss && *hit + *miss > 0) f.value = 100 * *hit / (*hit + *miss);
    out.push_back(f);
  }
  {
    const int warps = max_warps_per_sm(chip);
    CounterFigure f = make_figure(
        "achieved occupancy",
        fmt::format("sm__warps_active.sum / sm__cycles_active.sum / {}", warps),
        fmt::format("resident warps per active cycle over the SM's {}: well below the launch's "
                    "theoretical occupancy means load imbalance, a partial last wave or "
                    "short-lived blocks",
                    warps),
        FigureUnit::percent,
        100 * quotient(values, "sm__warps_active.sum", "sm__cycles_active.sum") / warps);
    if (std::isfinite(f.value) && theoretical > 0) {
      const double share = f.value / (100 * theoretical);
      const std::string theo = fmt::format("{:.0f}%", 100 * theoretical);
      if (share >= 0.8)
        judge(f, Verdict::good, "near the theoretical " + theo);
      else if (share >= 0.5)
        judge(f, Verdict::warn, "below the theoretical " + theo);
      else
        judge(f, Verdict::bad, "under half the theoretical " + theo);
    }
    out.push_back(f);
  }
  {
    CounterFigure f = percent_of(
        values, "issue active", "smsp__issue_active.sum", "smsp__cycles_active.sum",
        "scheduler cycles that issued an instruction: above 80% the kernel is issue-bound (too "
        "many instructions for the work); low is expected of a memory-bound kernel");
    if (std::isfinite(f.value) && f.value > 80) judge(f, Verdict::warn, "issue-bound");
    out.push_back(f);
  }
  {
    CounterFigure f = percent_of(
        values, "tensor pipe active", "sm__pipe_tensor_cycles_active.sum", "sm__cycles_elapsed.sum",
        "cycles the tensor pipe was busy: a GEMM near its peak reads above 80%; a tensor-core "
        "kernel under 40% waits on memory, synchronisation or its epilogue");
    if (std::isfinite(f.value) && f.value >= 80)
      judge(f, Verdict::good, "near the tensor peak");
    else if (std::isfinite(f.value) && f.value > 0 && f.value < 40)
      judge(f, Verdict::warn, "tensor pipe mostly idle");
    out.push_back(f);
  }
  {
    CounterFigure f = percent_of(
        values, "SM busy", "sm__cycles_active.sum", "sm__cycles_elapsed.sum",
        "SM cycles with at least one warp resident: under 70% SMs sit idle part of the time (a "
        "grid smaller than the GPU, a long tail, or gaps between a sample's kernels)");
    if (std::isfinite(f.value) && f.value < 70) judge(f, Verdict::warn, "SMs idle");
    out.push_back(f);
  }
  return out;
}

std::string format_figure(const CounterFigure& f) {
  if (!std::isfinite(f.value)) return "-";
  switch (f.unit) {
    case FigureUnit::percent: return fmt::format("{:.1f}%", f.value);
    case FigureUnit::per_request: return fmt::format("{:.2f}", f.value);
    case FigureUnit::bytes_per_unit: return fmt::format("{:.1f} B", f.value);
  }
  return "-";
}

}  // namespace kwb::gui
