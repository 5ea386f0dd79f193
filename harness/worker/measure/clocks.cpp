// Clock readings and their summary (see clocks.hpp).
#include "harness/worker/measure/clocks.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "harness/worker/measure/nvml.hpp"

namespace kwb {

std::vector<std::string> throttle_reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {0x4, "sw_power_cap"},          {0x8, "hw_slowdown"},           {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},  {0x80, "hw_power_brake_slowdown"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames)
    if (reasons & bit) out.push_back(name);
  return out;
}

bool reading_throttled(const ClockReading& r, double max_sm_mhz) {
  if (r.reasons && (*r.reasons & kThrottleReasonMask)) return true;
  return max_sm_mhz > 0 && r.sm_mhz < kThrottledClockShare * max_sm_mhz;
}

std::optional<ClockSummary> summarize_clocks(const std::vector<BatchClocks>& batches, double max_sm_mhz) {
  std::optional<ClockSummary> s;
  double weighted_mhz = 0;
  std::int64_t weighted_samples = 0;
  for (const BatchClocks& b : batches) {
    bool throttled = false;
    if (!b.readings.empty()) {
      double sum = 0;
      for (const ClockReading& r : b.readings) sum += r.sm_mhz;
      weighted_mhz += sum / static_cast<double>(b.readings.size()) * static_cast<double>(b.samples);
      weighted_samples += b.samples;
    }
    for (const ClockReading& r : b.readings) {
      if (!s) {
        s = ClockSummary{};
        s->sm_min_mhz = s->sm_max_mhz = r.sm_mhz;
        s->sm_rated_max_mhz = max_sm_mhz;
      }
      s->sm_min_mhz = std::min(s->sm_min_mhz, r.sm_mhz);
      s->sm_max_mhz = std::max(s->sm_max_mhz, r.sm_mhz);
      ++s->readings;
      throttled = throttled || reading_throttled(r, max_sm_mhz);
      if (r.reasons)
        for (auto& name : throttle_reason_names(*r.reasons))
          if (std::find(s->throttle_reasons.begin(), s->throttle_reasons.end(), name) == s->throttle_reasons.end())
            s->throttle_reasons.push_back(name);
    }
    if (s) s->samples += b.samples;
    if (throttled) s->throttled_samples += b.samples;
  }
  if (s && weighted_samples > 0) s->sm_mean_mhz = weighted_mhz / static_cast<double>(weighted_samples);
  return s;
}

ClockProbe& ClockProbe::current() {
  static ClockProbe probe;
  return probe;
}

ClockProbe::ClockProbe() {
  auto& nvml = Nvml::instance();
  if (!nvml.available()) return;
  int device = 0;
  char bus_id[32] = {};
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess)
    return;
  device_ = nvml.device_by_pci_bus_id(bus_id);
  if (!device_) return;
  if (auto max = nvml.max_sm_clock_mhz(device_)) max_sm_mhz_ = *max;
  if (!nvml.sm_clock_mhz(device_)) device_ = nullptr;  // the handle answers nothing: treat as absent
}

std::optional<ClockReading> ClockProbe::read() const {
  if (!device_) return std::nullopt;
  auto& nvml = Nvml::instance();
  auto mhz = nvml.sm_clock_mhz(device_);
  if (!mhz) return std::nullopt;
  return ClockReading{double(*mhz), nvml.clock_event_reasons(device_)};
}

}  // namespace kwb
