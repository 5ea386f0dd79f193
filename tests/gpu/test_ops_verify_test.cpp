// The contract features that only the hidden test ops use: fixed element types, integer and
// boolean inputs, an output not aligned with the sample axis, a sample axis that is not the
// outermost dim, and the device scan that fails a NaN the sample never sees.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/prepare/device_fill.hpp"
#include "harness/worker/prepare/draws.hpp"
#include "harness/worker/prepare/host_generators.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "harness/worker/case_runner.hpp"

namespace kwb {
namespace {

CaseRunner& runner() {
  static int device = (cudaSetDevice(0), 0);
  (void)device;
  static CaseRunner r(TimerKind::events, std::size_t{64} << 20);
  return r;
}

CaseRecord run_case(const std::string& op, const std::string& variant, DType dtype, Shape shape,
                    std::uint64_t seed) {
  CaseRequest req;
  req.op = op;
  req.variant = variant;
  req.dtype = dtype;
  req.shape = std::move(shape);
  req.mode = Mode::hot;
  req.preset = "quick";
  req.seed = seed;
  req.include_test_variants = true;
  return runner().run(req);
}

const OutputCheck& output(const CaseRecord& rec, const std::string& name) {
  for (const auto& o : rec.verify->outputs)
    if (o.name == name) return o;
  throw std::runtime_error("no output " + name);
}

// Every output was scanned on the device and holds no NaN/Inf or poison.
void expect_clean_scan(const CaseRecord& rec) {
  for (const auto& o : rec.verify->outputs) {
    EXPECT_TRUE(o.device_scanned) << o.name;
    EXPECT_EQ(o.nonfinite, 0) << o.name;
    EXPECT_EQ(o.unwritten, 0) << o.name;
    EXPECT_TRUE(o.passed) << o.name;
  }
}

TEST(TestOps, ColsumPassesAtSmallAndLargeShapesAndIsNeverSampled) {
  KWB_REQUIRE_GPU();
  int seed = 100;
  for (DType dtype : kAllDTypes)
    for (Shape shape : {Shape{{{"rows", 37}, {"cols", 129}}}, Shape{{{"rows", 65536}, {"cols", 384}}}}) {
      const CaseRecord rec = run_case("test_colsum", "test_simple", dtype, shape, ++seed);
      ASSERT_EQ(rec.disposition, Disposition::passed) << rec.nvtx_range << ": " << rec.reason;
      ASSERT_TRUE(rec.verify.has_value());
      expect_clean_scan(rec);
      // colsum needs every row: nothing is sampled, and the record says why.
      EXPECT_EQ(rec.verify->rows_checked, rec.verify->rows_total);
      EXPECT_NE(rec.verify->sampling.find("'colsum' is not aligned"), std::string::npos) << rec.verify->sampling;
      const auto& colsum = output(rec, "colsum");
      EXPECT_EQ(colsum.elem, ElemType::fp32);
      EXPECT_FALSE(colsum.sampled);
      EXPECT_EQ(colsum.elements_checked, colsum.elements_total);
      EXPECT_EQ(colsum.elements_total, shape.at("cols"));
      // Each sum's tolerance grows with its own length: colsum sums rows, rowsum sums cols.
      EXPECT_EQ(colsum.atol > output(rec, "rowsum").atol, shape.at("rows") > shape.at("cols"));
    }
}

TEST(TestOps, LabelNllPassesAndIsSampledAtALargeShape) {
  KWB_REQUIRE_GPU();
  int seed = 200;
  for (DType dtype : kAllDTypes)
    for (Shape shape : {Shape{{{"rows", 301}, {"vocab", 1000}}}, Shape{{{"rows", 65536}, {"vocab", 1024}}}}) {
      const CaseRecord rec = run_case("test_label_nll", "test_simple", dtype, shape, ++seed);
      ASSERT_EQ(rec.disposition, Disposition::passed) << rec.nvtx_range << ": " << rec.reason;
      expect_clean_scan(rec);
      const auto& loss = output(rec, "loss");
      EXPECT_EQ(loss.elem, ElemType::fp32);
      EXPECT_EQ(loss.elements_total, shape.at("rows"));
      const bool large = shape.at("rows") == 65536;
      EXPECT_EQ(loss.sampled, large);
      if (large) EXPECT_LT(loss.elements_checked, loss.elements_total);
      else EXPECT_EQ(loss.elements_checked, loss.elements_total);
    }
}

TEST(TestOps, BhsdScaleIsSampledOnSeqWithStridedGathersAndPasses) {
  KWB_REQUIRE_GPU();
  int seed = 300;
  for (DType dtype : kAllDTypes)
    for (Shape shape : {Shape{{{"batch", 2}, {"heads", 3}, {"seq", 77}, {"dim", 40}}},
                        Shape{{{"batch", 4}, {"heads", 8}, {"seq", 4096}, {"dim", 136}}}}) {
      const CaseRecord rec = run_case("test_bhsd_scale", "test_simple", dtype, shape, ++seed);
      ASSERT_EQ(rec.disposition, Disposition::passed) << rec.nvtx_range << ": " << rec.reason;
      expect_clean_scan(rec);
      const bool large = shape.at("seq") == 4096;
      EXPECT_EQ(rec.verify->rows_total, shape.at("seq"));
      EXPECT_EQ(rec.verify->rows_checked < rec.verify->rows_total, large) << rec.verify->sampling;
      const auto& y = output(rec, "y");
      EXPECT_EQ(y.sampled, large);
      EXPECT_EQ(y.elements_checked,
                shape.at("batch") * shape.at("heads") * rec.verify->rows_checked * shape.at("dim"));
    }
}

TEST(TestOps, NanOutsideTheSampleFailsThroughTheDeviceScan) {
  KWB_REQUIRE_GPU();
  const CaseRecord rec = run_case("rmsnorm_fwd", "test_nan_outside_sample", DType::bf16,
                                  Shape{{{"rows", 16384}, {"cols", 4096}}}, 7);
  ASSERT_TRUE(rec.verify.has_value()) << rec.reason;
  EXPECT_EQ(rec.disposition, Disposition::failed);
  EXPECT_LT(rec.verify->rows_checked, rec.verify->rows_total) << "the shape must be sampled";
  const auto& y = output(rec, "y");
  EXPECT_TRUE(y.sampled);
  EXPECT_EQ(y.mismatches, 0) << "the sampled rows are correct";
  EXPECT_EQ(y.nonfinite, 1);
  EXPECT_EQ(y.nonfinite_mismatches, 1);
  EXPECT_NE(rec.reason.find("1 non-finite in the device scan"), std::string::npos) << rec.reason;
  EXPECT_FALSE(rec.timing.has_value());
}

// The generators as the device draws them: labels match the shared host formula, offsets and
// permutations (host-drawn, copied) arrive intact in int32.
TEST(TestOps, DeviceGeneratorsMatchTheirHostDefinitions) {
  KWB_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  const std::int64_t n = 100003;
  void* buf = nullptr;
  cuda_check(cudaMalloc(&buf, n * 8), "cudaMalloc");
  std::vector<std::int32_t> got32(n);
  const auto labels = Distribution::integers(0, 5000, 0.25, -100);
  cuda_check(fill_tensor(buf, n, ElemType::int32, labels, 42, 3, stream), "fill labels");
  cuda_check(cudaMemcpy(got32.data(), buf, n * 4, cudaMemcpyDeviceToHost), "copy");
  const std::uint64_t key = draws::fill_key(42, 3);
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got32[i], draws::integer(key, i, 0, 5000, 0.25, -100)) << i;

  cuda_check(fill_tensor(buf, 1025, ElemType::int32, Distribution::offsets(n), 42, 4, stream), "fill offsets");
  cuda_check(cudaMemcpy(got32.data(), buf, 1025 * 4, cudaMemcpyDeviceToHost), "copy");
  const auto offsets = random_offsets(1025, n, draws::fill_key(42, 4));
  for (int i = 0; i < 1025; ++i) ASSERT_EQ(got32[i], offsets[i]) << i;

  cuda_check(fill_tensor(buf, n, ElemType::int64, Distribution::permutation(), 42, 5, stream), "fill perm");
  std::vector<std::int64_t> got64(n);
  cuda_check(cudaMemcpy(got64.data(), buf, n * 8, cudaMemcpyDeviceToHost), "copy");
  std::sort(got64.begin(), got64.end());
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got64[i], i);
  cudaFree(buf);
}

}  // namespace
}  // namespace kwb
