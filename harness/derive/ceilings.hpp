// The device's ceilings: measured by the tool itself, cached per device and driver, with a
// datasheet table as the labelled fallback.
//
// Efficiencies are quoted against what this GPU can really do (a copy kernel rarely passes
// ~90% of the datasheet bandwidth), so "% of ceiling" means "how much is left to gain".
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "harness/record/record.hpp"

namespace kwb {

// Datasheet figures by device name; source "datasheet", zeros for an unknown device.
Ceilings datasheet_ceilings(const DeviceInfo& device);

// $KWB_CACHE_DIR, else $XDG_CACHE_HOME/kwb, else ~/.cache/kwb; one file per device UUID and driver.
std::filesystem::path ceilings_cache_path(const DeviceInfo& device);
std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device);
void save_cached_ceilings(const DeviceInfo& device, const Ceilings& ceilings);

// A cached copy ceiling is re-checked at the start of each session by a short copy; when that
// reads more than this above the cache, the GPU copies faster than the cache says (it was
// measured throttled, or on an older driver's clocks), every roof derived from it is too low, and
// the ceilings are measured again. The same 3% as the roof rule's margin (derive.hpp kRoofMargin):
// a roof is never more than the margin below what the GPU does now.
inline constexpr double kCeilingRecheckMargin = 0.03;

// What the re-check concluded: whether to measure again, and one line for the console and the
// report's settings ("ceilings_check").
struct CeilingsRecheck {
  bool remeasure = false;
  std::string text;
};
// `short_copy_gbps` is the short copy's figure (nullopt when it could not run: `error` says why;
// the cache is then kept, and the text says it was not re-checked), `method` the copy that gave it.
CeilingsRecheck recheck_cached_ceilings(const Ceilings& cached, std::optional<double> short_copy_gbps,
                                        const std::string& method, const std::string& error);

// The DRAM roof (GB/s, reads + writes) of a kernel of which `write_fraction` of the bytes are
// written. HBM reads stream faster than writes (read-only above copy, measured), so a read-heavy
// kernel such as SwiGLU forward (two inputs, one output) can honestly pass the copy ceiling. Time
// per byte is modelled as additive: 1/roof = (1 - w)/read + w/write, where the write rate follows
// from the copy's (half reads, half writes): 1/write = 2/copy - 1/read. So w = 0.5 gives the copy
// ceiling and w = 0 the read-only one. Without a read-only figure above half the copy: the copy.
// A write-heavy mix (w > 0.5) blends the copy's time per byte into the write-only stream's the same
// way (w = 1: the write-only ceiling); without a write figure above the copy's, the copy: writes
// alone outran copies on an H100 (torch.compile's mean-pooling backward, a gradient spread over a
// sequence, wrote at 106% of the copy roof).
double dram_roof_gbps(const Ceilings& ceilings, double write_fraction);

// The compute roof (TFLOP/s) for an op's compute unit ("fp32", "tensor_bf16", ...); 0 if unknown.
double compute_roof_tflops(const Ceilings& ceilings, const std::string& compute_unit);
// An op's compute unit for a case of `dtype`: "tensor" becomes tensor_bf16, tensor_fp16 or
// tensor_tf32; the others stand as they are.
std::string compute_unit_for(const std::string& op_compute_unit, DType dtype);

}  // namespace kwb
