// Device properties through the runtime API; the driver's release string through NVML
// (harness/worker/measure/nvml.hpp: loaded with dlopen, absent on CPU-only machines).
#include "harness/worker/measure/device_info.hpp"

#include <cupti.h>
#include <cuda_runtime_api.h>

#include <cstdio>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/record/version.hpp"
#include "harness/worker/measure/nvml.hpp"

namespace kwb {
namespace {

std::string format_uuid(const cudaUUID_t& uuid) {
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

}  // namespace

int cuda_device_count(std::string* why) {
  if (kCompileCheckBuild) {
    if (why)
      *why = "this kwb is a compile-check build (configured with -DKWB_COMPILE_CHECK=ON: device code at -O1, "
             "built to check that it compiles), so its kernels are not the ones to measure; configure "
             "without it (cmake -S . -B build -DKWB_COMPILE_CHECK=OFF) to run them";
    return 0;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why)
      *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status) +
             (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice
                  ? " (no NVIDIA driver or GPU on this machine)"
                  : "");
    return 0;
  }
  if (count == 0 && why) *why = "the CUDA runtime sees no device";
  return count;
}

DeviceInfo query_device(int index) {
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.uuid = format_uuid(prop.uuid);
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.global_mem_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  int value = 0;
  // CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp: ask the attributes.
  if (cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, index) == cudaSuccess)
    info.sm_clock_mhz = value / 1000.0;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, index) == cudaSuccess)
    info.mem_clock_mhz = value / 1000.0;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrGlobalMemoryBusWidth, index) == cudaSuccess)
    info.mem_bus_width_bits = value;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, index) == cudaSuccess)
    info.l2_bytes = value;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  cuptiGetVersion(&info.cupti_version);
  info.driver_release = Nvml::instance().driver_release();
  return info;
}

}  // namespace kwb
