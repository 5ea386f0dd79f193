// The progress line of `kwb run`: the case, its result, the GPU that ran it (with --devices) and
// the estimate of the time left.
#include "cli/run_output.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace kwb::cli {
namespace {

std::string line_for(const CaseRecord& r, std::optional<double> eta) {
  std::ostringstream out;
  print_progress(out, r, 10, eta);
  return out.str();
}

TEST(RunOutput, ProgressLineNamesTheCaseTheGpuAndTheTimeLeft) {
  CaseRecord r;
  r.index = 3;
  r.nvtx_range = "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096";
  r.disposition = Disposition::passed;
  std::string line = line_for(r, std::nullopt);
  EXPECT_EQ(line.rfind("[   4/10] rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096", 0), 0u) << line;
  EXPECT_EQ(line.find("eta"), std::string::npos);
  EXPECT_EQ(line.find("gpu"), std::string::npos) << "one-GPU runs name no GPU";
  r.device = 1;
  line = line_for(r, 125.0);
  EXPECT_NE(line.find("gpu1"), std::string::npos) << line;
  EXPECT_NE(line.find("eta 2m05s"), std::string::npos) << line;
  EXPECT_NE(line_for(r, 7.4).find("eta 7s"), std::string::npos);
  EXPECT_EQ(line_for(r, 0.0).find("eta"), std::string::npos) << "nothing left: no estimate shown";
}

}  // namespace
}  // namespace kwb::cli
