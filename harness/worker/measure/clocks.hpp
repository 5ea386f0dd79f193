// SM clock readings around the samples, and the per-case summary of them (ClockSummary in the
// record): min and max SM clock, and how many samples ran throttled.
//
// Read through NVML on the host, outside the measured interval: once after a batch's launches
// are queued (the GPU is running the batch) and once after the batch is synchronised. Each reading
// costs microseconds of host time, so per batch, not per sample. A batch whose reading is throttled
// counts all its samples as throttled: the batch is tens of milliseconds at most, about the time a
// clock change takes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

// NVML clocks-event reason bits that mean the clock was held down by power or heat (nvml.h:
// SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40,
// HwPowerBrakeSlowdown 0x80). Idle, application-clock and sync-boost bits are not throttling.
inline constexpr std::uint64_t kThrottleReasonMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
// A reading under this share of the highest SM clock counts as throttled, whatever the reasons.
inline constexpr double kThrottledClockShare = 0.9;

struct ClockReading {
  double sm_mhz = 0;
  std::optional<std::uint64_t> reasons;  // absent where the driver does not say
};

struct BatchClocks {
  std::int64_t samples = 0;
  std::vector<ClockReading> readings;
};

// Names of the throttle bits set in `reasons` ("sw_power_cap", "hw_thermal_slowdown", ...).
std::vector<std::string> throttle_reason_names(std::uint64_t reasons);

// True when the reading is under kThrottledClockShare of max_sm_mhz or names a throttle reason.
bool reading_throttled(const ClockReading& reading, double max_sm_mhz);

// Min and max over every reading, samples of throttled batches counted, reasons collected.
// nullopt when no batch has a reading (NVML unavailable): absent in the record, never zero.
std::optional<ClockSummary> summarize_clocks(const std::vector<BatchClocks>& batches, double max_sm_mhz);

// The SM clock of the current CUDA device, through NVML; nullopt when NVML is unavailable.
class ClockProbe {
 public:
  static ClockProbe& current();  // for the device current at first call (one per worker)
  bool available() const { return device_ != nullptr; }
  std::optional<ClockReading> read() const;
  double max_sm_mhz() const { return max_sm_mhz_; }

 private:
  ClockProbe();
  void* device_ = nullptr;
  double max_sm_mhz_ = 0;
};

}  // namespace kwb
