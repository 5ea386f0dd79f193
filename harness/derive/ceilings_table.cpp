// Datasheet ceilings, the cache of measured ones, and the roof for a compute unit.
#include <algorithm>
#include <fmt/format.h>
#include <fstream>

#include "harness/derive/ceilings.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/cache_dir.hpp"
#include "harness/record/record_json.hpp"

namespace kwb {

Ceilings datasheet_ceilings(const DeviceInfo& d) {
  Ceilings c;
  c.source = "datasheet";
  auto has = [&](const char* s) { return d.name.find(s) != std::string::npos; };
  struct Row { double gbps, fp32, bf16, tf32; };
  std::optional<Row> row;
  // Dense (no sparsity) SXM figures from NVIDIA's datasheets; bandwidth is HBM peak.
  if (has("H200")) row = Row{4800, 67, 989, 495};
  else if (has("H100") && has("PCIe")) row = Row{2000, 51, 756, 378};
  else if (has("H100")) row = Row{3350, 67, 989, 495};
  else if (has("A100")) row = Row{d.global_mem_bytes > (48ll << 30) ? 2039.0 : 1555.0, 19.5, 312, 156};
  else if (has("L40S")) row = Row{864, 91.6, 362, 183};
  if (!row) {
    c.source = "datasheet (unknown device: no figures)";
    return c;
  }
  c.dram_copy_gbps = row->gbps;
  c.dram_copy_method = "datasheet HBM peak";
  c.dram_read_gbps = row->gbps;
  c.fp32_tflops = row->fp32;
  c.tensor_tflops = {{"bf16", row->bf16}, {"fp16", row->bf16}, {"tf32", row->tf32}};
  return c;
}

std::filesystem::path ceilings_cache_path(const DeviceInfo& d) {
  const std::filesystem::path dir = kwb_cache_root().dir;
  // v2: the copy ceiling is the best of several methods and flushes, with an L2 figure; v3: copies
  // launched one block per chunk join the methods (a v2 file's copy figure may be too low); v4:
  // the tensor-core figures are the best of three shapes and algorithms timed cold (v3's single
  // hot GEMM was power-throttled below what cases reached); v5: the read-only figure is the best
  // of several read kernels (v4's came from one, and may be too low); v6: the tensor figures are
  // timed first, after a rest, and rated by their best sample, with the clock they ran at (v5's
  // medians after a minute of other ceilings sat under cold cases at full clock); v7: a write-only
  // figure (a write-heavy peer, a gradient spread over a sequence, wrote above the copy's roof).
  // Older files stay where they are, unread.
  return dir / ("ceilings-v7-" + d.uuid + "-driver" + std::to_string(d.driver_version) +
                (d.driver_release.empty() ? "" : "-" + d.driver_release) + ".json");
}

std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& d) {
  const auto path = ceilings_cache_path(d);
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    const std::string text = read_text_file(path);
    check_json_text(text, path);
    return ceilings_from_json(nlohmann::ordered_json::parse(text));
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache is remeasured, never trusted
  }
}

void save_cached_ceilings(const DeviceInfo& d, const Ceilings& c) {
  atomic_write_file(ceilings_cache_path(d), dump_json(to_json(c), 2) + "\n");
}

CeilingsRecheck recheck_cached_ceilings(const Ceilings& cached, std::optional<double> short_copy_gbps,
                                        const std::string& method, const std::string& error) {
  const std::string what = fmt::format("cached copy ceiling {:.0f} GB/s (measured {})", cached.dram_copy_gbps,
                                       cached.measured_at.empty() ? "at an unknown time" : cached.measured_at);
  if (!short_copy_gbps || *short_copy_gbps <= 0)
    return {false, what + " not re-checked: the short copy could not run (" +
                       (error.empty() ? std::string("no figure") : error) +
                       "); kept (`kwb ceilings --refresh` measures them again)"};
  const double ratio = cached.dram_copy_gbps > 0 ? *short_copy_gbps / cached.dram_copy_gbps : 0;
  const std::string reading = fmt::format("a short copy read {:.0f} GB/s ({:+.1f}%, {})", *short_copy_gbps,
                                          100 * (ratio - 1), method);
  if (cached.dram_copy_gbps <= 0 || ratio > 1 + kCeilingRecheckMargin)
    return {true, fmt::format("{} re-checked: {}, more than {:.0f}% above it: the cached ceilings are stale "
                              "(every roof from them too low), measured again",
                              what, reading, 100 * kCeilingRecheckMargin)};
  return {false, fmt::format("{} re-checked: {}: kept", what, reading)};
}

double dram_roof_gbps(const Ceilings& c, double write_fraction) {
  const double copy = c.dram_copy_gbps, read = c.dram_read_gbps, write = c.dram_write_gbps;
  if (copy <= 0 || !(write_fraction >= 0 && write_fraction <= 1)) return copy;
  if (write_fraction < 0.5) {
    if (read <= copy / 2) return copy;
    const double write_seconds_per_byte = 2 / copy - 1 / read;
    return std::max(copy, 1 / ((1 - write_fraction) / read + write_fraction * write_seconds_per_byte));
  }
  // From the copy (half written) to the write-only stream, time per byte blended linearly in the
  // written share: the same harmonic rule as the read side. No write figure: the copy's.
  if (write <= copy) return copy;
  const double toward_write = (write_fraction - 0.5) / 0.5;
  return 1 / ((1 - toward_write) / copy + toward_write / write);
}

double compute_roof_tflops(const Ceilings& c, const std::string& unit) {
  if (unit == "fp32") return c.fp32_tflops;
  if (unit.rfind("tensor_", 0) == 0) {
    auto it = c.tensor_tflops.find(unit.substr(7));
    return it == c.tensor_tflops.end() ? 0 : it->second;
  }
  return 0;
}

std::string compute_unit_for(const std::string& op_compute_unit, DType dtype) {
  if (op_compute_unit != "tensor") return op_compute_unit;
  return dtype == DType::fp32 ? "tensor_tf32" : "tensor_" + std::string(to_string(dtype));
}

}  // namespace kwb
