// complete_record, what a session's lanes and the confirm rounds both do to a worker's record:
// labels from the registry, the repro command, the figures, and the roof rule.
#include "harness/session/record_completion.hpp"

#include <gtest/gtest.h>

#include "harness/worker/case_runner.hpp"

namespace kwb {
namespace {

CaseRequest rmsnorm_request() {
  CaseRequest r;
  r.op = "rmsnorm_fwd";
  r.variant = "fused_v2_vec16";
  r.dtype = DType::bf16;
  r.shape = Shape{{{"rows", 16384}, {"cols", 4096}}};
  return r;
}

Ceilings h100_ceilings() {
  Ceilings c;
  c.source = "measured";
  c.dram_copy_gbps = 3000;
  c.dram_read_gbps = 3200;
  c.fp32_tflops = 60;
  return c;
}

CaseRecord timed(const CaseRequest& request, double median_us) {
  CaseRecord rec = record_for(request);
  rec.disposition = Disposition::passed;
  rec.timing = TimingResult{};
  rec.timing->span.median = median_us;
  rec.timing->span.count = 10;
  return rec;
}

TEST(RecordCompletion, LabelsDerivesAndPassesAPossibleResult) {
  const CaseRequest request = rmsnorm_request();
  CaseRecord rec = timed(request, 120.0);  // 268 MB in 120 us: 2237 GB/s
  complete_record(rec, request, h100_ceilings(), 50 << 20);
  EXPECT_EQ(rec.disposition, Disposition::passed) << rec.reason;
  EXPECT_EQ(rec.role, Role::fused);
  EXPECT_FALSE(rec.math.empty());
  EXPECT_NE(rec.repro.find("kwb run --op rmsnorm_fwd --variant fused_v2_vec16"), std::string::npos) << rec.repro;
  ASSERT_TRUE(rec.derived.has_value());
  EXPECT_NEAR(rec.derived->bandwidth_gbps, 268443648.0 / 120 / 1e3, 1e-9);
}

TEST(RecordCompletion, AnImpossibleResultFailsOnTheRoofRuleKeepingItsTiming) {
  const CaseRequest request = rmsnorm_request();
  CaseRecord rec = timed(request, 2.0);  // 134 TB/s
  complete_record(rec, request, h100_ceilings(), 50 << 20);
  EXPECT_EQ(rec.disposition, Disposition::failed);
  EXPECT_NE(rec.reason.find("above its roof"), std::string::npos) << rec.reason;
  ASSERT_TRUE(rec.timing.has_value());
  EXPECT_DOUBLE_EQ(rec.timing->span.median, 2.0);
}

TEST(RecordCompletion, ASkippedCaseClaimsNoMath) {
  const CaseRequest request = rmsnorm_request();
  CaseRecord rec = record_for(request);
  rec.disposition = Disposition::skipped;
  rec.reason = "needs 2.00 GiB of device memory, 1.00 GiB free of 80.00 GiB";
  complete_record(rec, request, h100_ceilings(), 50 << 20);
  EXPECT_EQ(rec.disposition, Disposition::skipped);
  EXPECT_TRUE(rec.math.empty());
  EXPECT_FALSE(rec.derived.has_value());
}

}  // namespace
}  // namespace kwb
