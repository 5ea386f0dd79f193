// The refusal of a launch that cannot be captured reads as a skip reason: what could not be
// captured, the runtime's words, and the setting that times the variant anyway.
#include "harness/worker/measure/graph_launch.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

TEST(GraphCaptureError, SaysWhatFailedAndHowToTimeTheVariantAnyway) {
  const GraphCaptureError e("the launch: cudaErrorStreamCaptureUnsupported: operation not permitted when stream is "
                            "capturing");
  EXPECT_STREQ(e.what(), "cannot be captured in a CUDA graph: the launch: cudaErrorStreamCaptureUnsupported: "
                         "operation not permitted when stream is capturing; time it with --launch stream");
  const std::runtime_error& as_runtime_error = e;  // not a CudaError: the context is fine, the case is skipped
  EXPECT_STREQ(as_runtime_error.what(), e.what());
}

}  // namespace
}  // namespace kwb
