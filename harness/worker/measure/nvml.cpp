// NVML through dlopen (see nvml.hpp). Signatures from nvml.h; return 0 is NVML_SUCCESS.
#include "harness/worker/measure/nvml.hpp"

#include <dlfcn.h>

namespace kwb {
namespace {

constexpr unsigned kNvmlClockSm = 1;  // NVML_CLOCK_SM
using InitFn = int (*)();
using VersionFn = int (*)(char*, unsigned);
using HandleByBusFn = int (*)(const char*, void**);
using ClockFn = int (*)(void*, unsigned, unsigned*);
using ReasonsFn = int (*)(void*, unsigned long long*);

}  // namespace

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib_) return;
  auto init = reinterpret_cast<InitFn>(dlsym(lib_, "nvmlInit_v2"));
  if (!init || init() != 0) return;
  initialised_ = true;
  get_version_ = dlsym(lib_, "nvmlSystemGetDriverVersion");
  get_handle_ = dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  get_clock_ = dlsym(lib_, "nvmlDeviceGetClockInfo");
  get_max_clock_ = dlsym(lib_, "nvmlDeviceGetMaxClockInfo");
  // Renamed in driver 535 ("throttle" became "clocks event"); either gives the same bits.
  get_reasons_ = dlsym(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!get_reasons_) get_reasons_ = dlsym(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
}

std::string Nvml::driver_release() {
  if (!initialised_ || !get_version_) return "";
  char buf[96] = {};
  return reinterpret_cast<VersionFn>(get_version_)(buf, sizeof buf) == 0 ? std::string(buf) : "";
}

void* Nvml::device_by_pci_bus_id(const std::string& bus_id) {
  if (!initialised_ || !get_handle_) return nullptr;
  void* device = nullptr;
  return reinterpret_cast<HandleByBusFn>(get_handle_)(bus_id.c_str(), &device) == 0 ? device : nullptr;
}

std::optional<unsigned> Nvml::sm_clock_mhz(void* device) {
  unsigned mhz = 0;
  if (!device || !get_clock_ || reinterpret_cast<ClockFn>(get_clock_)(device, kNvmlClockSm, &mhz) != 0)
    return std::nullopt;
  return mhz;
}

std::optional<unsigned> Nvml::max_sm_clock_mhz(void* device) {
  unsigned mhz = 0;
  if (!device || !get_max_clock_ ||
      reinterpret_cast<ClockFn>(get_max_clock_)(device, kNvmlClockSm, &mhz) != 0)
    return std::nullopt;
  return mhz;
}

std::optional<std::uint64_t> Nvml::clock_event_reasons(void* device) {
  unsigned long long reasons = 0;
  if (!device || !get_reasons_ || reinterpret_cast<ReasonsFn>(get_reasons_)(device, &reasons) != 0)
    return std::nullopt;
  return reasons;
}

}  // namespace kwb
