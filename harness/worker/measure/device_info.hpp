// What the CUDA runtime says about a device, and a plain answer when there is none.
#pragma once

#include <optional>
#include <string>

#include "harness/record/record.hpp"

namespace kwb {

// Number of usable devices, or an explanation (no driver, no device) in *why.
int cuda_device_count(std::string* why);

// Properties of device `index` (the runtime must be able to see it).
DeviceInfo query_device(int index);

}  // namespace kwb
