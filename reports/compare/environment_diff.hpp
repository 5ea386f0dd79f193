// What differs between the environments of two reports: GPU, driver, CUDA runtime, and the
// settings that change what a time means (mode, flush, launch, preset, timer). A comparison across such a
// difference is still made, but every output says so first (and `--strict-env` refuses it): a
// dirty flush costs a kernel 3-8 us, and an H200 is not an H100.
#pragma once

#include <string>
#include <vector>

#include "harness/record/report.hpp"

namespace kwb {

struct EnvDifference {
  std::string what;  // "GPU", "driver", "CUDA runtime", "mode", "flush", "launch", "preset", "timer"
  std::string base, next;
};

// One entry per aspect that differs, in the order above; empty when the environments agree.
// A setting missing from run.settings is taken from the first timed case (hand-made or older
// reports), and written "(not recorded)" when neither has it.
std::vector<EnvDifference> environment_differences(const Report& base, const Report& next);

}  // namespace kwb
