// The suites in suites/ parse and plan against this build's catalogue: an op, variant or axis
// renamed or removed in the registry fails here, not in a nightly job. Each also keeps its
// promise: smoke is every op once and small, nightly is broad, roofline-review measures first.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "harness/plan/suite_plan.hpp"

namespace kwb {
namespace shipped_suites_test {
namespace {

const std::filesystem::path kSuites = std::filesystem::path(KWB_SOURCE_DIR) / "suites";

const Registry& registry() { return Registry::instance(); }

std::set<std::string> catalogue_ops() {
  std::set<std::string> out;
  for (const Op& op : registry().ops())
    if (!op.test_only) out.insert(op.name);
  return out;
}

std::vector<CaseRequest> plan_of(const std::string& file, SuiteFile* suite = nullptr) {
  SuiteFile s = load_suite(kSuites / file);
  auto cases = plan_suite(s, registry());
  suite_info(s, registry());  // threshold op names exist too
  if (suite) *suite = std::move(s);
  return cases;
}

TEST(ShippedSuites, EverySuiteInTheFolderParsesAndPlans) {
  int suites = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSuites)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    ++suites;
    SuiteFile s;
    std::vector<CaseRequest> cases;
    try {
      cases = plan_of(entry.path().filename().string(), &s);
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    EXPECT_FALSE(cases.empty());
    EXPECT_EQ(s.name + ".yaml", entry.path().filename().string()) << "a suite is named after its file";
    EXPECT_FALSE(s.description.empty());
  }
  EXPECT_GE(suites, 3);
}

TEST(ShippedSuites, SmokeRunsEveryOpOnceInBf16AndStaysSmall) {
  SuiteFile s;
  const auto cases = plan_of("smoke.yaml", &s);
  std::map<std::string, std::set<std::string>> shapes_of;
  std::map<std::string, std::set<std::string>> variants_of;
  for (const auto& c : cases) {
    EXPECT_EQ(c.dtype, DType::bf16) << case_identity(c);
    shapes_of[c.op].insert(c.shape.to_compact());
    variants_of[c.op].insert(c.variant);
  }
  std::set<std::string> ops;
  for (const auto& [op, shapes] : shapes_of) {
    ops.insert(op);
    EXPECT_EQ(shapes.size(), 1u) << op << " runs at more than one shape";
    // Every ordinary variant, the baseline included (speedups), each once (default tunables).
    std::set<std::string> all;
    for (const Variant* v : registry().variants(op, false)) all.insert(v->name);
    EXPECT_EQ(variants_of[op], all) << op;
  }
  EXPECT_EQ(ops, catalogue_ops()) << "smoke must name every op of the catalogue";
  // One case per variant of every op, so the bound moves with the catalogue: 106 is every variant
  // of 31 ops once (attention_varlen_bwd's two and attention_bwd's fused_v2 took it past 100); raise
  // it by a new variant's case.
  EXPECT_LE(cases.size(), 106u) << "smoke is the few-minutes gate (every variant of 31 ops once)";
  EXPECT_EQ(s.mode, Mode::cold);
  EXPECT_NE(s.preset, "verify") << "smoke is compared run to run: it must be timed";
}

TEST(ShippedSuites, NightlyCoversEveryOpInEveryDtypeAtItsDefaultShapes) {
  const auto cases = plan_of("nightly.yaml");
  std::map<std::string, std::set<DType>> dtypes_of;
  std::map<std::string, std::set<std::string>> shapes_of;
  for (const auto& c : cases) {
    dtypes_of[c.op].insert(c.dtype);
    shapes_of[c.op].insert(c.shape.to_compact());
  }
  for (const Op& op : registry().ops()) {
    if (op.test_only) continue;
    SCOPED_TRACE(op.name);
    EXPECT_EQ(dtypes_of[op.name], std::set<DType>(op.dtypes.begin(), op.dtypes.end()));
    for (const Shape& shape : op.default_shapes) EXPECT_TRUE(shapes_of[op.name].count(shape.to_compact())) << shape.to_compact();
  }
  EXPECT_LE(cases.size(), PlanRequest::kDefaultMaxCases);
}

TEST(ShippedSuites, RooflineReviewMeasuresTheCeilingsAndCoversEveryOp) {
  SuiteFile s;
  const auto cases = plan_of("roofline-review.yaml", &s);
  EXPECT_EQ(s.ceilings, SuiteCeilings::measure);
  std::set<std::string> ops;
  std::set<double> bytes;
  for (const auto& c : cases) {
    ops.insert(c.op);
    bytes.insert(case_device_bytes(c, registry()));
  }
  EXPECT_EQ(ops, catalogue_ops());
  // Spans the roofline's x-axis of sizes: from a few MiB to GiBs of traffic.
  ASSERT_FALSE(bytes.empty());
  EXPECT_LT(*bytes.begin(), 8.0 * (1 << 20));
  EXPECT_GT(*bytes.rbegin(), 1.0 * (1 << 30));
}

// Run once per launch, it leaves the launch to the command line, and holds what a graph changes
// (small shapes, baselines of many launches) beside what it must not (GiB-sized cases).
TEST(ShippedSuites, GraphVsStreamHoldsLaunchBoundAndLongCasesAndLeavesTheLaunchToTheFlag) {
  SuiteFile s;
  const auto cases = plan_of("graph-vs-stream.yaml", &s);
  EXPECT_EQ(s.launch, LaunchKind::stream);
  int baselines = 0, small = 0, large = 0;
  for (const auto& c : cases) {
    EXPECT_EQ(c.dtype, DType::bf16) << case_identity(c);
    baselines += Registry::instance().find_variant(c.op, c.variant)->role == Role::baseline;
    const double bytes = case_device_bytes(c, registry());
    small += bytes < 64.0 * (1 << 20);
    large += bytes > 512.0 * (1 << 20);
  }
  EXPECT_GE(baselines, 10);
  EXPECT_GE(small, 20);
  EXPECT_GE(large, 5);
  SuiteRunFlags graph;
  graph.launch = LaunchKind::graph;
  for (const auto& c : plan_suite(s, registry(), graph)) EXPECT_EQ(c.launch, LaunchKind::graph);
}

TEST(ShippedSuites, ThresholdsAreFractions) {
  SuiteFile s;
  plan_of("smoke.yaml", &s);
  const SuiteInfo info = suite_info(s, registry());
  EXPECT_DOUBLE_EQ(info.default_threshold, 0.03);
  EXPECT_EQ(info.path, (kSuites / "smoke.yaml").string());
}

}  // namespace
}  // namespace shipped_suites_test
}  // namespace kwb
