// The device's ceilings: measured by the tool itself, cached per device and driver, with a
// datasheet table as the labelled fallback.
//
// Efficiencies are quoted against what this GPU can really do (a copy kernel rarely passes
// ~90% of the datasheet bandwidth), so "% of ceiling" means "how much is left to gain".
#pragma once

#include <filesystem>
#include <optional>

#include "measure/measure.hpp"
#include "record/record.hpp"

namespace kwb {

// Datasheet figures by device name; source "datasheet", zeros for an unknown device.
Ceilings datasheet_ceilings(const DeviceInfo& device);

// Runs the micro-benchmarks on the current device (in the worker): DRAM copies (cudaMemcpyAsync
// and copy kernels at several launch shapes) and read-only streams over 1 and 2 GiB under both
// flushes (the best kept, with its method), a hot L2 copy, an FFMA-bound kernel, cuBLASLt GEMMs
// (bf16, fp16, tf32) of 8192^3.
Ceilings measure_ceilings(const DeviceInfo& device, TimerKind timer);

// $KWB_CACHE_DIR, else $XDG_CACHE_HOME/kwb, else ~/.cache/kwb; one file per device UUID and driver.
std::filesystem::path ceilings_cache_path(const DeviceInfo& device);
std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device);
void save_cached_ceilings(const DeviceInfo& device, const Ceilings& ceilings);

// The compute roof (TFLOP/s) for an op's compute unit ("fp32", "tensor_bf16", ...); 0 if unknown.
double compute_roof_tflops(const Ceilings& ceilings, const std::string& compute_unit);

}  // namespace kwb
