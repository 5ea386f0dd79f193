// SuiteFile -> plan: each entry is planned exactly as the equivalent `kwb run` flags, the union
// keeps a case once, run flags narrow and override, and every name the registry does not know is
// refused at its line and column.
#include "harness/plan/suite_plan.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/harness/plan/suite_test_support.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::At;
using test::Mentions;
using test::suite_error;
using test::yaml_lines;

const Registry& registry() { return Registry::instance(); }

std::vector<CaseRequest> plan_text(const std::string& text, const SuiteRunFlags& flags = {}) {
  return plan_suite(parse_suite(text, "suites/t.yaml"), registry(), flags);
}

PlanRequest flags_request(std::vector<std::string> ops, std::vector<std::string> variants, std::vector<DType> dtypes,
                          std::vector<std::string> axes) {
  PlanRequest r;
  r.ops = std::move(ops);
  r.variants = std::move(variants);
  r.dtypes = std::move(dtypes);
  for (const auto& a : axes) r.axes.push_back(parse_axis_for(a, registry()));
  return r;
}

// Same cases in the same order, field by field.
void expect_same_plan(const std::vector<CaseRequest>& a, const std::vector<CaseRequest>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i) + ": " + case_identity(b[i]));
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(case_identity(a[i]), case_identity(b[i]));
    EXPECT_EQ(a[i].shape, b[i].shape);
    EXPECT_EQ(a[i].tunables, b[i].tunables);
    EXPECT_EQ(a[i].mode, b[i].mode);
    EXPECT_EQ(a[i].flush, b[i].flush);
    EXPECT_EQ(a[i].preset, b[i].preset);
    EXPECT_EQ(a[i].seed, b[i].seed);
    EXPECT_EQ(a[i].include_test_variants, b[i].include_test_variants);
  }
}

std::vector<CaseRequest> concatenated(std::vector<std::vector<CaseRequest>> plans) {
  std::vector<CaseRequest> out;
  for (auto& p : plans)
    for (auto& c : p) {
      c.index = static_cast<int>(out.size());
      out.push_back(std::move(c));
    }
  return out;
}

TEST(SuitePlan, OneEntryPlansExactlyWhatTheEquivalentRunFlagsPlan) {
  const auto suite = plan_text(yaml_lines({
      "name: t",
      "preset: quick",
      "flush: clean",
      "seed: 7",
      "entries:",
      "  - ops: rmsnorm_fwd",
      "    variants: [fused_v2_vec16, baseline_eager_8_launches]",
      "    dtypes: bf16",
      "    shapes: {rows: 4096, cols: \"1024:8192:x2\"}",
  }));
  // kwb run --op rmsnorm_fwd --variant fused_v2_vec16,baseline_eager_8_launches --dtype bf16
  //         --axis rows=4096 --axis cols=1024:8192:x2 --preset quick --flush clean --seed 7
  PlanRequest flags = flags_request({"rmsnorm_fwd"}, {"fused_v2_vec16", "baseline_eager_8_launches"}, {DType::bf16},
                                    {"rows=4096", "cols=1024:8192:x2"});
  flags.preset = "quick";
  flags.flush = FlushKind::clean;
  flags.seed = 7;
  const auto expected = plan_cases(flags, registry());
  EXPECT_EQ(expected.size(), 8u);  // 4 cols x 2 variants
  expect_same_plan(suite, expected);
}

TEST(SuitePlan, RandomSuitesPlanTheUnionOfTheirEntriesFlagPlans) {
  // Seeded: random ops, dtypes and hidden sizes, each entry written as YAML and as flags.
  std::mt19937 rng(20261122);
  const std::vector<std::string> ops = {"rmsnorm_fwd", "softmax_fwd", "layernorm_fwd", "rmsnorm_bwd"};
  const std::vector<std::string> dtypes = {"fp32", "fp16", "bf16"};
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> lines = {"name: random", "entries:"};
    std::vector<std::vector<CaseRequest>> expected;
    const int entries = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < entries; ++e) {
      const std::string op = ops[rng() % ops.size()];
      const std::string dtype = dtypes[rng() % dtypes.size()];
      const std::int64_t cols = 256 * (1 + static_cast<std::int64_t>(rng() % 64));
      const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 5000);
      lines.push_back("  - ops: " + op);
      lines.push_back("    dtypes: [" + dtype + "]");
      lines.push_back("    shapes: {rows: " + std::to_string(rows) + ", cols: [" + std::to_string(cols) + ", 4100]}");
      expected.push_back(plan_cases(flags_request({op}, {}, {*parse_dtype(dtype)},
                                                  {"rows=" + std::to_string(rows), "cols=" + std::to_string(cols) + ",4100"}),
                                    registry()));
    }
    // The union keeps the first of a case two entries plan.
    std::vector<CaseRequest> union_cases;
    std::set<std::string> seen;
    for (auto& c : concatenated(expected))
      if (seen.insert(case_identity(c)).second) union_cases.push_back(c);
    for (std::size_t i = 0; i < union_cases.size(); ++i) union_cases[i].index = static_cast<int>(i);
    SCOPED_TRACE("round " + std::to_string(round));
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    expect_same_plan(plan_text(text), union_cases);
  }
}

TEST(SuitePlan, ACasePlannedByTwoEntriesRunsOnce) {
  const auto cases = plan_text(yaml_lines({
      "name: t",
      "entries:",
      "  - {ops: rmsnorm_fwd, dtypes: bf16, shapes: {rows: 4096, cols: [1024, 2048]}}",
      "  - {ops: rmsnorm_fwd, dtypes: bf16, shapes: [{rows: 4096, cols: 2048}, {rows: 4096, cols: 4096}]}",
  }));
  const auto expected = plan_cases(flags_request({"rmsnorm_fwd"}, {}, {DType::bf16}, {"rows=4096", "cols=1024,2048,4096"}), registry());
  std::set<std::string> a, b;
  for (const auto& c : cases) a.insert(case_identity(c));
  for (const auto& c : expected) b.insert(case_identity(c));
  EXPECT_EQ(cases.size(), expected.size());
  EXPECT_EQ(a, b);
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(cases[i].index, static_cast<int>(i));
}

// 20,000 YAML aliases of one entry, and copies that differ only in how they are written, plan what
// the entry alone plans (each request is planned once).
TEST(SuitePlan, AliasedAndCopiedEntriesPlanWhatOneDoes) {
  std::string text = "name: t\nentries:\n  - &e {ops: rmsnorm_fwd, dtypes: bf16, shapes: {rows: 64, cols: 1024}}\n";
  for (int i = 0; i < 20000; ++i) text += "  - *e\n";
  text += "  - {ops: [rmsnorm_fwd], dtypes: [bf16], shapes: {rows: [64], cols: [1024]}}\n";
  const auto cases = plan_text(text);
  const auto alone = plan_text(yaml_lines({"name: t", "entries:", "  - {ops: rmsnorm_fwd, dtypes: bf16, shapes: {rows: 64, cols: 1024}}"}));
  ASSERT_FALSE(alone.empty());
  ASSERT_EQ(cases.size(), alone.size());
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(case_identity(cases[i]), case_identity(alone[i]));
}

TEST(SuitePlan, NamedShapeSetsAreTheOpsOwn) {
  const auto edge = plan_text(yaml_lines({"name: t", "entries: [{ops: softmax_fwd, dtypes: fp32, shapes: edge}]"}));
  PlanRequest flags = flags_request({"softmax_fwd"}, {}, {DType::fp32}, {});
  flags.shape_set = ShapeSet::edge;
  expect_same_plan(edge, plan_cases(flags, registry()));
}

TEST(SuitePlan, RunFlagsNarrowTheSuiteAndOverrideItsSettings) {
  const std::string text = yaml_lines({"name: t", "mode: cold", "flush: clean", "preset: quick",
                                       "entries: [{ops: [rmsnorm_fwd, softmax_fwd], dtypes: [bf16, fp32], "
                                       "shapes: {rows: 1024, cols: 4096}}]"});
  SuiteRunFlags flags;
  flags.dtypes = {DType::fp32};
  flags.ops = {"softmax_fwd"};
  const auto narrowed = plan_text(text, flags);
  ASSERT_FALSE(narrowed.empty());
  for (std::size_t i = 0; i < narrowed.size(); ++i) {
    EXPECT_EQ(narrowed[i].op, "softmax_fwd");
    EXPECT_EQ(narrowed[i].dtype, DType::fp32);
    EXPECT_EQ(narrowed[i].index, static_cast<int>(i));
    EXPECT_EQ(narrowed[i].preset, "quick");
    EXPECT_EQ(narrowed[i].flush, FlushKind::clean);
  }
  SuiteRunFlags hot;
  hot.mode = Mode::hot;
  hot.preset = "precise";
  for (const auto& c : plan_text(text, hot)) {
    EXPECT_EQ(c.mode, Mode::hot);
    EXPECT_EQ(c.flush, FlushKind::dirty);  // the suite's clean flush means nothing hot
    EXPECT_EQ(c.preset, "precise");
  }
  SuiteRunFlags clean_hot = hot;
  clean_hot.flush = FlushKind::clean;
  EXPECT_THROW(plan_text(text, clean_hot), PlanError);
}

TEST(SuitePlan, FiltersThatLeaveNothingOrNameNothingAreRefused) {
  const std::string text = yaml_lines({"name: t", "entries: [{ops: rmsnorm_fwd, dtypes: bf16, shapes: {cols: 4096}}]"});
  SuiteRunFlags other_op;
  other_op.ops = {"softmax_fwd"};
  try {
    plan_text(text, other_op);
    FAIL() << "expected a PlanError";
  } catch (const PlanError& e) {
    EXPECT_TRUE(Mentions(e.what(), "leave none of the"));
    EXPECT_TRUE(Mentions(e.what(), "cannot add"));
  }
  SuiteRunFlags typo;
  typo.ops = {"rmsnrom_fwd"};
  try {
    plan_text(text, typo);
    FAIL() << "expected a PlanError";
  } catch (const PlanError& e) {
    EXPECT_TRUE(Mentions(e.what(), "did you mean 'rmsnorm_fwd'?"));
  }
}

TEST(SuitePlan, TheWholeSuiteCountsAgainstMaxCases) {
  SuiteRunFlags flags;
  flags.max_cases = 10;
  // Each entry alone has 8 cases (under the limit), together 16.
  const std::string text = yaml_lines({"name: big", "entries:",
                                       "  - {ops: rmsnorm_fwd, variants: fused_v2_vec16, dtypes: bf16, shapes: {cols: \"512:64k:x2\"}}",
                                       "  - {ops: softmax_fwd, variants: fused_v4_warp_per_row, dtypes: bf16, shapes: {cols: \"512:64k:x2\"}}"});
  try {
    plan_text(text, flags);
    FAIL() << "expected a PlanError";
  } catch (const PlanError& e) {
    EXPECT_TRUE(Mentions(e.what(), "more than 10 cases"));
    EXPECT_TRUE(Mentions(e.what(), "--max-cases"));
  }
}

// ---- names the registry does not know: file, line, column, key, "did you mean" --------------

TEST(SuitePlanErrors, UnknownOpSuggestsTheClosest) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: [softmax_fwd, rmsnrom_fwd]"}), true);
  EXPECT_TRUE(At(e, 3, 24, "entries[0].ops[1]"));
  EXPECT_TRUE(Mentions(e->what(), "unknown op 'rmsnrom_fwd' (did you mean 'rmsnorm_fwd'?)"));
}

TEST(SuitePlanErrors, UnknownVariantNamesTheOpsVariants) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    variants: fused_v2_vec61"}), true);
  EXPECT_TRUE(At(e, 4, 15, "entries[0].variants"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'fused_v2_vec16'?"));
  EXPECT_TRUE(Mentions(e->what(), "baseline_eager_8_launches"));
}

TEST(SuitePlanErrors, UnknownAxisSuggestsTheClosest) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    shapes: {rows: 1024, colls: 4096}"}), true);
  EXPECT_TRUE(At(e, 4, 26, "entries[0].shapes.colls"));
  EXPECT_TRUE(Mentions(e->what(), "unknown axis 'colls' (did you mean 'cols'?)"));
}

TEST(SuitePlanErrors, MalformedRangeIsPointedAtItsValue) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    shapes:", "      - {cols: \"512:16384:x1\"}"}), true);
  EXPECT_TRUE(At(e, 5, 16, "entries[0].shapes[0].cols"));
  EXPECT_TRUE(Mentions(e->what(), "x1"));
}

TEST(SuitePlanErrors, WhatThePlannerRefusesPointsAtTheShapes) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rope_fwd", "    shapes: {positions: [index, idz]}"}), true);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->at.line, 4);
  EXPECT_TRUE(Mentions(e->what(), "idz"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'ids'?"));
}

TEST(SuitePlanErrors, ThresholdForAnUnknownOpSuggestsTheClosest) {
  const auto e = suite_error(yaml_lines({"name: t", "thresholds: {default: 3%, sofmax_fwd: 2%}", "entries: [{ops: softmax_fwd}]"}), true);
  EXPECT_TRUE(At(e, 2, 27, "thresholds.sofmax_fwd"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'softmax_fwd'?"));
}

TEST(SuitePlanErrors, TestOnlyOpsNeedTheFlag) {
  const auto e = suite_error(yaml_lines({"name: t", "entries: [{ops: test_seq_sum}]"}), true);
  EXPECT_TRUE(At(e, 2, 17, "entries[0].ops"));
  EXPECT_TRUE(Mentions(e->what(), "--include-test-variants"));
}

TEST(SuitePlanErrors, TunableValueNoVariantDeclaresPointsAtTheShapes) {
  // Found by the planner, not by the suite's own checks: the error points at the entry's shapes.
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: softmax_fwd", "    variants: fused_v2_online_two_pass",
                                         "    shapes: {block: 333}"}), true);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->at.key, "entries[0].shapes");
  EXPECT_TRUE(Mentions(e->what(), "declared values"));
}

TEST(SuiteInfoOfASuite, CarriesNamePathAndThresholdsAsFractions) {
  const SuiteFile s = parse_suite(yaml_lines({"name: nightly", "thresholds: {default: 3%, rmsnorm_fwd: 0.02}",
                                              "entries: [{ops: rmsnorm_fwd}]"}),
                                  "suites/nightly.yaml");
  const SuiteInfo info = suite_info(s, registry());
  EXPECT_EQ(info.name, "nightly");
  EXPECT_EQ(info.path, "suites/nightly.yaml");
  EXPECT_DOUBLE_EQ(info.default_threshold, 0.03);
  EXPECT_DOUBLE_EQ(info.threshold_for("rmsnorm_fwd"), 0.02);
  EXPECT_DOUBLE_EQ(info.threshold_for("softmax_fwd"), 0.03);
}

}  // namespace
}  // namespace kwb
