// Filters -> cases against the real catalogue (rmsnorm_fwd and its variants) and the repro
// command line (the memory check: case_memory_test.cpp).
#include "harness/plan/planner.hpp"
#include "harness/plan/counter_sets.hpp"
#include "tests/harness/plan/rmsnorm_plan_cases.hpp"
#include "tests/support/plan_errors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {
namespace planner_test {
namespace {

using namespace rmsnorm_plan;

std::set<std::string> variant_names(const std::vector<CaseRequest>& cases) {
  std::set<std::string> out;
  for (const auto& c : cases) out.insert(c.variant);
  return out;
}

bool contains_all(const std::set<std::string>& set, const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(), [&](const auto& n) { return set.count(n) > 0; });
}

using test::Mentions;
using test::plan_error;

// ---- the default plan -------------------------------------------------------------------

TEST(PlanCases, DefaultPlanIsEveryDtypeTimesEveryDefaultShapeTimesEveryOrdinaryVariant) {
  // Prepare the reference from the op's own declaration.
  const Op* op = registry().find_op(kOp);
  ASSERT_NE(op, nullptr);
  ASSERT_EQ(op->dtypes.size(), 3u);
  ASSERT_EQ(op->default_shapes.size(), 10u);
  std::vector<std::string> ordinary;
  for (const Variant* v : registry().variants(kOp, false)) ordinary.push_back(v->name);
  ASSERT_TRUE(contains_all(std::set<std::string>(ordinary.begin(), ordinary.end()), kOrdinary));

  // Run.
  const auto cases = plan_cases(rmsnorm_request(), registry());

  // Verify: count, then the order op -> dtype -> shape -> variants with the baseline first.
  ASSERT_EQ(cases.size(), 3 * 10 * ordinary.size());
  const std::size_t group = ordinary.size();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseRequest& c = cases[i];
    EXPECT_EQ(c.index, static_cast<int>(i));
    EXPECT_EQ(c.op, kOp);
    EXPECT_EQ(c.dtype, op->dtypes[i / (10 * group)]) << i;
    EXPECT_EQ(c.shape, op->default_shapes[(i / group) % 10]) << i;
    EXPECT_FALSE(c.include_test_variants);
    if (i % group == 0) {
      EXPECT_EQ(c.variant, kBaseline) << "group starting at case " << i;
    } else {
      EXPECT_NE(c.variant, kBaseline) << i;
    }
  }
  // Every group holds each ordinary variant once, and no test-only one anywhere.
  for (std::size_t g = 0; g < cases.size(); g += group) {
    std::set<std::string> names;
    for (std::size_t i = g; i < g + group; ++i) names.insert(cases[i].variant);
    EXPECT_EQ(names, std::set<std::string>(ordinary.begin(), ordinary.end()));
  }
  for (const auto& c : cases) {
    EXPECT_FALSE(registry().find_variant(kOp, c.variant)->test_only) << c.variant;
    EXPECT_NE(c.variant.rfind("test_", 0), 0u) << c.variant;
  }
}

TEST(PlanCases, TheThreeKnownVariantsGiveNinetyCases) {
  PlanRequest r = rmsnorm_request();
  r.variants = kOrdinary;
  const auto cases = plan_cases(r, registry());
  EXPECT_EQ(cases.size(), 90u);  // 3 dtypes x 10 default shapes x 3 variants
  EXPECT_EQ(variant_names(cases), std::set<std::string>(kOrdinary.begin(), kOrdinary.end()));
  for (std::size_t i = 0; i < cases.size(); i += 3) EXPECT_EQ(cases[i].variant, kBaseline) << i;
}

TEST(PlanCases, EdgeSetRunsTheOpsEdgeShapesAndAnOpWithoutOneAtCappedDefaults) {
  PlanRequest r = rmsnorm_request();
  r.dtypes = {DType::bf16};
  r.variants = {kBaseline};
  r.shape_set = ShapeSet::edge;
  const auto cases = plan_cases(r, registry());
  const Op& op = *registry().find_op(kOp);
  ASSERT_FALSE(op.edge_shapes.empty());
  ASSERT_EQ(cases.size(), op.edge_shapes.size());
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(cases[i].shape, op.edge_shapes[i]);

  Op bare{.name = "bare", .axes = {{"rows", 100000, {}, ""}, {"cols", 64, {}, ""}}};
  const auto shapes = named_shape_set(bare, ShapeSet::edge);
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0].at("rows"), 256) << "an edge shape stays small";
  EXPECT_EQ(shapes[0].at("cols"), 64);
  EXPECT_EQ(named_shape_set(bare, ShapeSet::standard)[0].at("rows"), 100000);
}

TEST(PlanCases, CarriesModePresetAndSeed) {
  PlanRequest r = rmsnorm_request();
  r.mode = Mode::hot;
  r.preset = "precise";
  r.seed = 1234567;
  for (const auto& c : plan_cases(r, registry())) {
    EXPECT_EQ(c.mode, Mode::hot);
    EXPECT_EQ(c.preset, "precise");
    EXPECT_EQ(c.seed, 1234567u);
  }
}

// ---- variant filters and test-only variants ---------------------------------------------

TEST(PlanCases, VariantFilterKeepsOnlyTheNamedVariants) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v2_vec16"};
  const auto cases = plan_cases(r, registry());
  EXPECT_EQ(cases.size(), 30u);
  EXPECT_EQ(variant_names(cases), std::set<std::string>{"fused_v2_vec16"});

  r.variants = {"fused_v2_vec16", kBaseline};  // order on the command line does not matter
  const auto two = plan_cases(r, registry());
  ASSERT_EQ(two.size(), 60u);
  for (std::size_t i = 0; i < two.size(); i += 2) {
    EXPECT_EQ(two[i].variant, kBaseline);
    EXPECT_EQ(two[i + 1].variant, "fused_v2_vec16");
  }
}

TEST(PlanCases, IncludeTestVariantsAddsThemAfterTheBaseline) {
  PlanRequest r = rmsnorm_request();
  r.include_test_variants = true;
  const auto cases = plan_cases(r, registry());
  const auto names = variant_names(cases);
  EXPECT_TRUE(contains_all(names, kOrdinary));
  EXPECT_TRUE(contains_all(names, kTestOnly));
  const std::size_t group = registry().variants(kOp, true).size();
  ASSERT_EQ(cases.size(), 30 * group);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bool test_only = registry().find_variant(kOp, cases[i].variant)->test_only;
    EXPECT_EQ(cases[i].include_test_variants, test_only) << cases[i].variant;
    if (i % group == 0) {
      EXPECT_EQ(cases[i].variant, kBaseline) << i;
    }
  }
}

TEST(PlanCases, NamingATestVariantWithoutTheFlagThrows) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"test_hang"};
  const std::string message = plan_error(r);
  EXPECT_TRUE(Mentions(message, "--include-test-variants"));
  EXPECT_TRUE(Mentions(message, "test_hang"));

  r.include_test_variants = true;
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 30u);
  for (const auto& c : cases) {
    EXPECT_EQ(c.variant, "test_hang");
    EXPECT_TRUE(c.include_test_variants);
  }
}

// ---- unknown names ----------------------------------------------------------------------

TEST(PlanCases, UnknownOpSuggestsTheClosest) {
  PlanRequest r;
  r.ops = {"rmsnrom_fwd"};
  const std::string message = plan_error(r);
  EXPECT_TRUE(Mentions(message, "unknown op 'rmsnrom_fwd'"));
  EXPECT_TRUE(Mentions(message, "did you mean 'rmsnorm_fwd'"));
}

TEST(PlanCases, UnknownVariantSuggestsTheClosestAndListsNoTestVariant) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v2_vec61"};
  const std::string message = plan_error(r);
  EXPECT_TRUE(Mentions(message, "unknown variant 'fused_v2_vec61'"));
  EXPECT_TRUE(Mentions(message, "did you mean 'fused_v2_vec16'"));
  EXPECT_FALSE(Mentions(message, "test_hang"));
}

TEST(PlanCases, UnknownAxisSuggestsTheClosest) {
  PlanRequest r = rmsnorm_request();
  r.axes = {parse_axis_assignment("colz=4096")};
  const std::string message = plan_error(r);
  EXPECT_TRUE(Mentions(message, "unknown axis 'colz'"));
  EXPECT_TRUE(Mentions(message, "did you mean 'cols'"));
}

// ---- axes and dtypes --------------------------------------------------------------------

TEST(PlanCases, AxisRangeSweepsThatAxisWithTheOthersAtTheirDefault) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v1_row_per_block"};
  r.dtypes = {DType::bf16};
  r.axes = {parse_axis_assignment("cols=1024:4096:x2")};
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].shape, rmsnorm_shape(16384, 1024));
  EXPECT_EQ(cases[1].shape, rmsnorm_shape(16384, 2048));
  EXPECT_EQ(cases[2].shape, rmsnorm_shape(16384, 4096));
}

TEST(PlanCases, TwoAxesGiveTheCartesianProductFirstAxisSlowest) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v2_vec16"};
  r.dtypes = {DType::fp16};
  r.axes = {parse_axis_assignment("cols=512,4100"), parse_axis_assignment("rows=1k,2k")};
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].shape, rmsnorm_shape(1024, 512));
  EXPECT_EQ(cases[1].shape, rmsnorm_shape(1024, 4100));
  EXPECT_EQ(cases[2].shape, rmsnorm_shape(2048, 512));
  EXPECT_EQ(cases[3].shape, rmsnorm_shape(2048, 4100));
}

TEST(PlanCases, DtypeFilterKeepsOnlyThoseDtypesInTheOpsOrder) {
  PlanRequest r = rmsnorm_request();
  r.variants = kOrdinary;
  r.dtypes = {DType::bf16};
  auto cases = plan_cases(r, registry());
  EXPECT_EQ(cases.size(), 30u);
  for (const auto& c : cases) EXPECT_EQ(c.dtype, DType::bf16);

  r.dtypes = {DType::bf16, DType::fp32};
  cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 60u);
  EXPECT_EQ(cases.front().dtype, DType::fp32);
  EXPECT_EQ(cases.back().dtype, DType::bf16);
}

// ---- repeated names and the plan's limits ------------------------------------------------

TEST(PlanCases, RepeatedOpVariantAndDtypeCountOnce) {
  PlanRequest once = rmsnorm_request();
  once.variants = {"fused_v2_vec16", kBaseline};
  once.dtypes = {DType::bf16, DType::fp32};
  once.axes = {parse_axis_assignment("rows=37,911"), parse_axis_assignment("cols=4100")};
  PlanRequest repeated = once;
  repeated.ops = {kOp, kOp, kOp};
  repeated.variants = {"fused_v2_vec16", kBaseline, "fused_v2_vec16"};
  repeated.dtypes = {DType::bf16, DType::fp32, DType::bf16};
  const auto a = plan_cases(once, registry());
  const auto b = plan_cases(repeated, registry());
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(repro_command(a[i]), repro_command(b[i]));
}

TEST(PlanCases, AxisNamedTwiceThrowsInsteadOfDroppingOne) {
  PlanRequest r = rmsnorm_request();
  r.axes = {parse_axis_assignment("cols=512"), parse_axis_assignment("rows=64"), parse_axis_assignment("cols=4096")};
  try {
    plan_cases(r, registry());
    FAIL() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("'cols' is given twice"), std::string::npos) << e.what();
  }
}

TEST(PlanCases, MoreCasesThanTheLimitAreRefusedBeforeBuildingAndTheLimitIsExact) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v1_row_per_block"};
  r.dtypes = {DType::fp16};
  r.axes = {parse_axis_assignment("rows=1:73"), parse_axis_assignment("cols=64:1024:+64")};  // 73 x 16
  r.max_cases = 73 * 16;
  EXPECT_EQ(plan_cases(r, registry()).size(), 73u * 16u);
  r.max_cases = 73 * 16 - 1;
  try {
    plan_cases(r, registry());
    FAIL() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("1168 cases"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("73 rows x 16 cols"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--max-cases"), std::string::npos) << e.what();
  }
  // 4096 x 4096 x 3 x 4 would be 201M cases: refused by counting, at once.
  r.variants.clear();
  r.dtypes.clear();
  r.max_cases = PlanRequest::kDefaultMaxCases;
  r.axes = {parse_axis_assignment("rows=1:4096:+1"), parse_axis_assignment("cols=1:4096:+1")};
  EXPECT_THROW(plan_cases(r, registry()), PlanError);
}

TEST(PlanCases, TensorsTooLargeFor64BitSizesAreRefused) {
  PlanRequest r = rmsnorm_request();
  r.axes = {parse_axis_assignment("rows=3037000500"), parse_axis_assignment("cols=3037000500")};
  try {
    plan_cases(r, registry());
    FAIL() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("64-bit"), std::string::npos) << e.what();
  }
}

// ---- repro ------------------------------------------------------------------------------

// The flags of a `kwb run ...` command line (values containing no spaces), in order.
std::vector<std::pair<std::string, std::string>> parse_flags(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<std::pair<std::string, std::string>> out;
  EXPECT_GE(words.size(), 2u);
  EXPECT_EQ(words[0], "kwb");
  EXPECT_EQ(words[1], "run");
  for (std::size_t i = 2; i < words.size(); ++i) {
    const bool takes_value = words[i] != "--include-test-variants" && i + 1 < words.size() &&
                             words[i + 1].rfind("--", 0) != 0;
    out.push_back({words[i], takes_value ? words[i + 1] : ""});
    if (takes_value) ++i;
  }
  return out;
}

std::string flag(const std::vector<std::pair<std::string, std::string>>& flags, const std::string& name) {
  for (const auto& [f, v] : flags)
    if (f == name) return v;
  return "<absent>";
}

TEST(ReproCommand, NamesEveryChoiceAndReplansToTheSameCase) {
  // Prepare an unusual case: hot, quick, a non-default seed and shape.
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v1_row_per_block"};
  r.dtypes = {DType::fp16};
  r.axes = {parse_axis_assignment("rows=3000"), parse_axis_assignment("cols=4100")};
  r.mode = Mode::hot;
  r.preset = "quick";
  r.seed = 987654321;
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 1u);
  const CaseRequest& original = cases[0];

  // Run.
  const std::string cmd = repro_command(original);

  // Verify: each flag is there, and planning from the flags gives back exactly this case.
  const auto flags = parse_flags(cmd);
  EXPECT_EQ(flag(flags, "--op"), kOp) << cmd;
  EXPECT_EQ(flag(flags, "--variant"), "fused_v1_row_per_block") << cmd;
  EXPECT_EQ(flag(flags, "--dtype"), "fp16") << cmd;
  EXPECT_EQ(flag(flags, "--mode"), "hot") << cmd;
  EXPECT_EQ(flag(flags, "--preset"), "quick") << cmd;
  EXPECT_EQ(flag(flags, "--seed"), "987654321") << cmd;
  EXPECT_EQ(flag(flags, "--include-test-variants"), "<absent>") << cmd;

  PlanRequest again;
  for (const auto& [f, v] : flags) {
    if (f == "--op") again.ops.push_back(v);
    if (f == "--variant") again.variants.push_back(v);
    if (f == "--dtype") again.dtypes.push_back(*parse_dtype(v));
    if (f == "--axis") again.axes.push_back(parse_axis_assignment(v));
    if (f == "--mode") again.mode = *parse_mode(v);
    if (f == "--preset") again.preset = v;
    if (f == "--seed") again.seed = std::stoull(v);
    if (f == "--include-test-variants") again.include_test_variants = true;
  }
  ASSERT_EQ(again.axes.size(), 2u) << cmd;
  const auto replanned = plan_cases(again, registry());
  ASSERT_EQ(replanned.size(), 1u) << cmd;
  EXPECT_EQ(replanned[0].shape, original.shape);
  EXPECT_EQ(replanned[0].variant, original.variant);
  EXPECT_EQ(replanned[0].dtype, original.dtype);
  EXPECT_EQ(replanned[0].mode, original.mode);
  EXPECT_EQ(replanned[0].preset, original.preset);
  EXPECT_EQ(replanned[0].seed, original.seed);
}

TEST(ReproCommand, TestVariantsCarryTheFlagTheyNeed) {
  const CaseRequest c = one_case("test_hang", DType::fp32, 64, 64);
  const std::string cmd = repro_command(c);
  EXPECT_TRUE(Mentions(cmd, "--variant test_hang"));
  EXPECT_TRUE(Mentions(cmd, "--include-test-variants"));
  EXPECT_TRUE(Mentions(cmd, "--axis rows=64"));
  EXPECT_TRUE(Mentions(cmd, "--axis cols=64"));
}

TEST(ReproCommand, CleanFlushIsNamedAndReplansToTheSameFlush) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v2_vec16"};
  r.dtypes = {DType::bf16};
  r.axes = {parse_axis_assignment("rows=2048"), parse_axis_assignment("cols=4096")};
  r.flush = FlushKind::clean;
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].flush, FlushKind::clean) << "the plan carries the flush into every case";
  const std::string cmd = repro_command(cases[0]);
  EXPECT_EQ(flag(parse_flags(cmd), "--flush"), "clean") << cmd;
  EXPECT_EQ(parse_flush_flag(flag(parse_flags(cmd), "--flush"), Mode::cold), FlushKind::clean);
}

TEST(ReproCommand, DefaultDirtyFlushAddsNoFlag) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v2_vec16"};
  r.dtypes = {DType::bf16};
  r.axes = {parse_axis_assignment("rows=2048"), parse_axis_assignment("cols=4096")};
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(flag(parse_flags(repro_command(cases[0])), "--flush"), "<absent>");
}

// A case of rmsnorm_fwd's fused_v2_vec16 with the counters of these sets and extra metrics.
CaseRequest counted_case(const std::vector<std::string>& sets, const std::vector<std::string>& metrics) {
  PlanRequest r = rmsnorm_request();
  r.variants = {"fused_v2_vec16"};
  r.dtypes = {DType::bf16};
  r.axes = {parse_axis_assignment("rows=2048"), parse_axis_assignment("cols=4096")};
  auto cases = plan_cases(r, registry());
  EXPECT_EQ(cases.size(), 1u);
  const CounterRequest counters = parse_counter_request(sets, metrics);
  cases[0].counter_sets = counters.sets;
  cases[0].counter_metrics = counters.metrics;
  return cases[0];
}

TEST(ReproCommand, CountersNameTheSetsAndOnlyTheMetricsNoSetHolds) {
  const CaseRequest c = counted_case({"memory", "tensor"}, {"dram__bytes_read.sum", "l1tex__t_bytes.sum",
                                                            "sm__cycles_elapsed.sum", "lts__t_sector_hit_rate.pct"});
  const std::string cmd = repro_command(c);
  const auto flags = parse_flags(cmd);
  EXPECT_EQ(flag(flags, "--counters"), "memory,tensor") << cmd;
  // dram__bytes_read.sum is memory's and sm__cycles_elapsed.sum tensor's; the duration rides along.
  EXPECT_EQ(flag(flags, "--metrics"), "l1tex__t_bytes.sum,lts__t_sector_hit_rate.pct") << cmd;
  // Replanned from the line: the same metrics in the same order.
  const CounterRequest again = parse_counter_request({"memory", "tensor"}, {"l1tex__t_bytes.sum", "lts__t_sector_hit_rate.pct"});
  EXPECT_EQ(again.metrics, c.counter_metrics);
}

TEST(ReproCommand, MetricsAloneAreNamedWithoutTheDuration) {
  const std::string cmd = repro_command(counted_case({}, {"dram__bytes_read.sum"}));
  EXPECT_EQ(flag(parse_flags(cmd), "--counters"), "<absent>") << cmd;
  EXPECT_EQ(flag(parse_flags(cmd), "--metrics"), "dram__bytes_read.sum") << cmd;
  // The duration rides along with any request, but asked for alone it is the request.
  const std::string duration = repro_command(counted_case({}, {kDurationMetric}));
  EXPECT_EQ(flag(parse_flags(duration), "--metrics"), kDurationMetric) << duration;
}

TEST(ReproCommand, NoCountersNoFlags) {
  const std::string cmd = repro_command(counted_case({}, {}));
  EXPECT_EQ(flag(parse_flags(cmd), "--counters"), "<absent>") << cmd;
  EXPECT_EQ(flag(parse_flags(cmd), "--metrics"), "<absent>") << cmd;
}

TEST(FlushFlag, DirtyAndCleanAreAcceptedInColdMode) {
  EXPECT_EQ(parse_flush_flag("dirty", Mode::cold), FlushKind::dirty);
  EXPECT_EQ(parse_flush_flag("clean", Mode::cold), FlushKind::clean);
}

TEST(FlushFlag, UnknownNameIsRefusedListingBoth) {
  try {
    parse_flush_flag("Clean ", Mode::cold);
    ADD_FAILURE() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_TRUE(Mentions(e.what(), "--flush")) << e.what();
    EXPECT_TRUE(Mentions(e.what(), "'Clean '")) << e.what();
    EXPECT_TRUE(Mentions(e.what(), "dirty")) << e.what();
    EXPECT_TRUE(Mentions(e.what(), "clean")) << e.what();
  }
}

TEST(FlushFlag, CleanInHotModeIsRefusedBecauseHotFlushesNothing) {
  try {
    parse_flush_flag("clean", Mode::hot);
    ADD_FAILURE() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_TRUE(Mentions(e.what(), "--mode cold")) << e.what();
  }
}

}  // namespace
}  // namespace planner_test
}  // namespace kwb
