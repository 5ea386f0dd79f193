// The KWB_ORACLE_GPU switch (harness/catalogue/oracle_device.hpp).
#include "harness/catalogue/oracle_device.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace kwb {

std::optional<bool> read_oracle_gpu_switch(const char* value) {
  const auto is = [&](const char* word) { return std::strcmp(value, word) == 0; };
  if (value == nullptr || *value == '\0' || is("1") || is("on")) return true;
  if (is("0") || is("off")) return false;
  return std::nullopt;
}

bool oracle_gpu_allowed() {
  const char* value = std::getenv("KWB_ORACLE_GPU");
  if (const auto allowed = read_oracle_gpu_switch(value)) return *allowed;
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "kwb: KWB_ORACLE_GPU='%s' is neither 0/off nor 1/on: the oracles use the GPU where one is "
                 "usable (set KWB_ORACLE_GPU=0 to keep them on the CPU)\n",
                 value);
  });
  return true;
}

bool oracle_step_on_gpu(double multiply_adds, const char* what) {
  if (multiply_adds < kGpuMinMultiplyAdds || !oracle_gpu_allowed()) return false;
  if (oracle_in_background())
    throw OracleNeedsDevice(std::string(what) + ", which the worker's thread computes on the GPU");
  return oracle_gpu_device() >= 0;
}

}  // namespace kwb
