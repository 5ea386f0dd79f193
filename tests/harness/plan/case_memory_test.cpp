// The planner's memory check against the real catalogue: the bytes a case needs on the device
// (its tensors and its variant's workspace) and check_cases_fit's verdict on a plan.
#include "harness/plan/planner.hpp"
#include "tests/harness/plan/rmsnorm_plan_cases.hpp"
#include "tests/support/plan_errors.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kwb {
namespace case_memory_test {
namespace {

using namespace rmsnorm_plan;
using test::Mentions;

TEST(CaseDeviceBytes, HugeShapesGiveHugeBytesNotAWrappedNumber) {
  CaseRequest c;
  c.op = kOp;
  c.variant = kBaseline;  // refuses no shape: check_cases_fit below counts its workspace too
  c.dtype = DType::fp32;
  c.shape = rmsnorm_shape(std::int64_t(1) << 31, std::int64_t(1) << 31);  // 2^62 elements per tensor
  EXPECT_GT(case_device_bytes(c, registry()), 3e19);
  EXPECT_TRUE(check_cases_fit({c}, registry(), 80e9, "GPU").has_value());
}

TEST(CaseDeviceBytes, IsTheTensorsPlusTheVariantsWorkspace) {
  const std::int64_t rows = 16384, cols = 4096;
  for (DType dtype : kAllDTypes) {
    // x and y are rows x cols, weight is cols.
    const double tensors = static_cast<double>(2 * rows * cols + cols) * static_cast<double>(dtype_size(dtype));
    EXPECT_EQ(case_device_bytes(one_case("fused_v2_vec16", dtype, rows, cols), registry()), tensors);
    EXPECT_EQ(case_device_bytes(one_case("fused_v1_row_per_block", dtype, rows, cols), registry()), tensors);

    const CaseRequest base = one_case(kBaseline, dtype, rows, cols);
    const Variant* v = registry().find_variant(kOp, kBaseline);
    ASSERT_TRUE(v->workspace_bytes);
    const double workspace = static_cast<double>(v->workspace_bytes(base.shape, dtype));
    // The eager baseline keeps fp32 intermediates of the whole tensor: at least one rows x cols.
    EXPECT_GE(workspace, static_cast<double>(rows * cols * 4));
    EXPECT_EQ(case_device_bytes(base, registry()), tensors + workspace) << to_string(dtype);
  }
}

TEST(CheckCasesFit, NulloptWhenEveryCaseFits) {
  const auto cases = plan_cases(rmsnorm_request(), registry());
  EXPECT_EQ(check_cases_fit(cases, registry(), 80.0 * (1ull << 30), "Fake 80 GiB GPU"), std::nullopt);
}

TEST(CheckCasesFit, NamesTheLargestCaseThatDoesNotFit) {
  // Prepare: 16384 x 16384 fp32 needs 2 GiB of tensors (fused) and more with the baseline's
  // workspace; a fake 2 GiB device leaves 1.3 GiB usable, so all three are too big.
  PlanRequest r = rmsnorm_request();
  r.variants = kOrdinary;
  r.dtypes = {DType::fp32};
  r.axes = {parse_axis_assignment("cols=16k")};
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 3u);
  // Run.
  const auto message = check_cases_fit(cases, registry(), 2.0 * (1ull << 30), "Fake GPU");
  // Verify.
  ASSERT_TRUE(message.has_value());
  EXPECT_TRUE(Mentions(*message, "3 case(s)"));
  EXPECT_TRUE(Mentions(*message, "Fake GPU"));
  EXPECT_TRUE(Mentions(*message, "rmsnorm_fwd:baseline_eager_8_launches:fp32"));
  EXPECT_TRUE(Mentions(*message, "rows=16384,cols=16384"));
  EXPECT_TRUE(Mentions(*message, "GiB"));
}

TEST(CheckCasesFit, BoundaryFollowsTheUsableFraction) {
  // usable = 0.9 * device - 512 MiB: a device just big enough fits, one a little smaller does not.
  const CaseRequest c = one_case("fused_v2_vec16", DType::bf16, 65536, 8192);
  const double need = case_device_bytes(c, registry());
  const double exact_device = (need + 512.0 * (1 << 20)) / 0.9;
  EXPECT_EQ(check_cases_fit({c}, registry(), exact_device * 1.001, "Fake GPU"), std::nullopt);
  const auto message = check_cases_fit({c}, registry(), exact_device * 0.999, "Fake GPU");
  ASSERT_TRUE(message.has_value());
  EXPECT_TRUE(Mentions(*message, "1 case(s)"));
  EXPECT_TRUE(Mentions(*message, "fused_v2_vec16"));
}

// A case whose variant refuses it (attention_bwd's materialised baseline at 16k tokens: more than
// its 60 GiB of workspace) is skipped when run, so its workspace does not stop the plan; the fused
// variant's case at the same shape is counted as any other.
TEST(CheckCasesFit, ACaseItsVariantRefusesIsCountedWithoutItsWorkspace) {
  CaseRequest c;
  c.op = "attention_bwd";
  c.dtype = DType::bf16;
  c.shape = Shape{{{"batch", 1}, {"seq", 16384}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128},
                   {"causal", "1"}, {"window", 0}, {"softcap", "0"}}};
  c.variant = "baseline_materialised_cublaslt";
  const Variant* baseline = registry().find_variant(c.op, c.variant);
  ASSERT_TRUE(baseline && baseline->refuse && baseline->refuse(c.shape, c.dtype));
  ASSERT_GT(case_device_bytes(c, registry()), 80.0 * (1ull << 30));
  EXPECT_EQ(check_cases_fit({c}, registry(), 80.0 * (1ull << 30), "Fake 80 GiB GPU"), std::nullopt);
  c.variant = "fused_v1_fa2_mma_atomic_dq";
  EXPECT_EQ(check_cases_fit({c}, registry(), 80.0 * (1ull << 30), "Fake 80 GiB GPU"), std::nullopt);
  EXPECT_TRUE(check_cases_fit({c}, registry(), 1.0 * (1ull << 30), "Fake GPU").has_value());  // 0.4 GiB usable
}

// A refusal does not hide a shape whose own tensors cannot fit: rmsnorm_fwd's register-row variant
// refuses 1M columns, yet 1M x 1M fp32 (8 TiB of x and y) is too large for any variant, and the
// message says so in GiB rather than the run skipping the case with the kernel's reason.
TEST(CheckCasesFit, ARefusedCaseWhoseTensorsDoNotFitStillStopsThePlan) {
  const CaseRequest c = one_case("fused_v2_vec16", DType::fp32, 1 << 20, 1 << 20);
  const Variant* v = registry().find_variant(kOp, c.variant);
  ASSERT_TRUE(v && v->refuse && v->refuse(c.shape, c.dtype));
  const auto message = check_cases_fit({c}, registry(), 80.0 * (1ull << 30), "Fake 80 GiB GPU");
  ASSERT_TRUE(message.has_value());
  EXPECT_TRUE(Mentions(*message, "rows=1048576,cols=1048576"));
  EXPECT_TRUE(Mentions(*message, "GiB"));
}

TEST(CaseDeviceBytes, AShapeTheOpRefusesIsPlannedButNeverSized) {
  // An op whose tensors() and work() cost in proportion to a size its invalid() refuses (a block
  // mask walked on the host): the planner plans the case, for the worker to skip with the op's
  // reason, and never calls them; it needs no device memory.
  static int sized = 0;
  Registry local;
  Op op;
  op.name = "probe_refused_shape";
  op.axes = {{"rows", 64, {}, "rows"}};
  op.dtypes = {DType::fp32};
  op.tensors = [](const Shape& s, DType) {
    ++sized;
    return std::vector<TensorSpec>{{.name = "y", .dims = {s.at("rows")}, .is_output = true}};
  };
  op.work = [](const Shape& s, DType) {
    ++sized;
    return WorkModel{4.0 * static_cast<double>(s.at("rows")), 0};
  };
  op.oracle = [](const Shape&, const std::vector<HostTensor>&, std::vector<HostTensor>&) {};
  op.invalid = [](const Shape& s) -> std::optional<std::string> {
    if (s.at("rows") > 1000) return std::string("rows must be at most 1000");
    return std::nullopt;
  };
  local.add(std::move(op));
  Variant v;
  v.op = "probe_refused_shape";
  v.name = "fused_v1";
  v.launch = [](const LaunchArgs&) {};
  local.add(std::move(v));
  PlanRequest r;
  r.ops = {"probe_refused_shape"};
  r.axes = {parse_axis_assignment("rows=100,1000000")};
  sized = 0;
  const auto cases = plan_cases(r, local);
  ASSERT_EQ(cases.size(), 2u);
  const int sized_for_valid = sized;
  EXPECT_GT(sized_for_valid, 0);  // the valid shape is sized
  EXPECT_EQ(case_device_bytes(cases[1], local), 0.0);
  EXPECT_EQ(sized, sized_for_valid);  // the refused one never
  EXPECT_EQ(check_cases_fit(cases, local, 80e9, "GPU"), std::nullopt);
  EXPECT_EQ(sized, sized_for_valid + 1);  // only the valid case's tensors, once, for the check
}

}  // namespace
}  // namespace case_memory_test
}  // namespace kwb
