// NVML, loaded with dlopen: CPU-only machines have no libnvidia-ml.so.1 to link against, and a
// missing library or symbol only means the figures it gives are absent from the record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kwb {

// One process-wide NVML session, opened on first use and kept open (nvmlInit per call costs
// milliseconds). Every call returns nullopt / "" when NVML or the symbol is missing.
class Nvml {
 public:
  static Nvml& instance();
  bool available() const { return initialised_; }

  std::string driver_release();
  // The NVML handle of a device named by its PCI bus id ("0000:19:00.0", as
  // cudaDeviceGetPCIBusId gives it): NVML and CUDA may number devices differently.
  void* device_by_pci_bus_id(const std::string& bus_id);
  std::optional<unsigned> sm_clock_mhz(void* device);       // current SM clock
  std::optional<unsigned> max_sm_clock_mhz(void* device);   // the highest the SM clock may go
  // NVML's clocks-event (throttle) reason bit mask; nullopt where the driver has neither API.
  std::optional<std::uint64_t> clock_event_reasons(void* device);

 private:
  Nvml();
  void* lib_ = nullptr;
  bool initialised_ = false;
  void* get_handle_ = nullptr;
  void* get_clock_ = nullptr;
  void* get_max_clock_ = nullptr;
  void* get_reasons_ = nullptr;
  void* get_version_ = nullptr;
};

}  // namespace kwb
