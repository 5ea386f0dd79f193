// The memory skip's one wording: written by the worker, recognised by the confirm rounds, and
// told apart from the other skips and from failures.
#include "harness/worker/memory_skip.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

CaseRecord with(Disposition disposition, std::string reason) {
  CaseRecord r;
  r.disposition = disposition;
  r.reason = std::move(reason);
  return r;
}

TEST(MemorySkip, TheWorkersWordingIsRecognisedAndNothingElse) {
  const std::string reason = memory_skip_reason(44.0 * (1 << 30), std::size_t{30} << 30, std::size_t{80} << 30);
  EXPECT_EQ(reason, "needs 44.00 GiB of device memory, 30.00 GiB free of 80.00 GiB");
  EXPECT_TRUE(skipped_for_memory(with(Disposition::skipped, reason)));
  // A reason an older build wrote the same way.
  EXPECT_TRUE(skipped_for_memory(with(Disposition::skipped, "needs 2.50 GiB of device memory, 1.20 GiB free of 79.19 GiB")));
  EXPECT_FALSE(skipped_for_memory(with(Disposition::failed, reason))) << "only a skip";
  EXPECT_FALSE(skipped_for_memory(with(Disposition::skipped, "test-only variant (use --include-test-variants)")));
  EXPECT_FALSE(skipped_for_memory(with(Disposition::skipped, "the op does not define fp16")));
  EXPECT_FALSE(skipped_for_memory(with(Disposition::skipped, "")));
}

}  // namespace
}  // namespace kwb
