// Plans over the hidden test_seq_sum op: choice axes and a variant tunable expand like axes, are
// hidden unless asked for, and reach the identity, the NVTX name and the repro command.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "harness/plan/planner.hpp"
#include "tests/support/plan_errors.hpp"
#include "reference/testing/seq_sum.hpp"
#include "harness/worker/case_runner.hpp"

namespace kwb {
namespace choice_and_tunable_plan_test {
namespace {

const Registry& registry() { return Registry::instance(); }

PlanRequest seq_sum_request(std::vector<std::string> axes) {
  PlanRequest r;
  r.ops = {seq_sum::kOp};
  r.include_test_variants = true;
  for (const auto& a : axes) r.axes.push_back(parse_axis_for(a, registry()));
  return r;
}

using test::Mentions;
using test::plan_error;

TEST(PlanTestOnlyOp, IsLeftOutOfTheDefaultSweepAndRefusedWhenNamedWithoutTheFlag) {
  PlanRequest all;
  for (const auto& c : plan_cases(all, registry())) EXPECT_NE(c.op, seq_sum::kOp);
  PlanRequest named;
  named.ops = {seq_sum::kOp};
  EXPECT_TRUE(Mentions(plan_error(named), "--include-test-variants"));
  all.include_test_variants = true;
  std::set<std::string> ops;
  for (const auto& c : plan_cases(all, registry())) ops.insert(c.op);
  EXPECT_TRUE(ops.count(seq_sum::kOp));
}

TEST(PlanChoices, DefaultIsTheFirstChoiceAndTheFirstTunableValue) {
  const auto cases = plan_cases(seq_sum_request({}), registry());
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].shape.choice("layout"), "bshd");
  EXPECT_EQ(cases[0].shape.choice("causal"), "0");
  EXPECT_EQ(cases[0].tunables, (TunableValues{{"block", 128}}));
  EXPECT_TRUE(cases[0].include_test_variants);
}

TEST(PlanChoices, ChoicesAndTunablesExpandInOrderTunablesFastest) {
  const auto cases =
      plan_cases(seq_sum_request({"layout=bhsd,bshd", "causal=1", "block=512,256", "seq=64"}), registry());
  ASSERT_EQ(cases.size(), 4u);
  const std::vector<std::pair<std::string, std::int64_t>> expected = {
      {"bhsd", 512}, {"bhsd", 256}, {"bshd", 512}, {"bshd", 256}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].shape.choice("layout"), expected[i].first) << i;
    EXPECT_EQ(cases[i].tunables, (TunableValues{{"block", expected[i].second}})) << i;
    EXPECT_EQ(cases[i].shape.choice("causal"), "1");
    EXPECT_EQ(cases[i].shape.at("seq"), 64);
    EXPECT_EQ(cases[i].index, static_cast<int>(i));
  }
}

TEST(PlanChoices, ChoiceReadWithTheIntegerGrammarStillMatchesANumericName) {
  PlanRequest r = seq_sum_request({});
  r.axes = {parse_axis_assignment("causal=1")};  // as a caller without the registry would parse it
  const auto cases = plan_cases(r, registry());
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].shape.choice("causal"), "1");
  r.axes = {parse_axis_assignment("causal=3")};
  EXPECT_TRUE(Mentions(plan_error(r), "unknown choice '3'"));
}

TEST(PlanTunables, UndeclaredValueIsRefusedWithTheDeclaredOnes) {
  const std::string m = plan_error(seq_sum_request({"block=300"}));
  EXPECT_TRUE(Mentions(m, "tunable 'block'"));
  EXPECT_TRUE(Mentions(m, "128,256,512"));
}

TEST(PlanTunables, TunableOfAnUnselectedOpIsAnUnknownAxis) {
  PlanRequest r;
  r.ops = {"rmsnorm_fwd"};
  r.axes = {parse_axis_assignment("block=128")};
  EXPECT_TRUE(Mentions(plan_error(r), "unknown axis 'block'"));
}

TEST(CaseIdentity, HoldsChoicesAndTunablesAndIsTheNvtxNameAndTheRecordName) {
  const auto cases = plan_cases(seq_sum_request({"layout=bhsd", "causal=1", "block=256"}), registry());
  ASSERT_EQ(cases.size(), 1u);
  const std::string id = case_identity(cases[0]);
  EXPECT_EQ(id, "test_seq_sum:test_atomic_scatter:fp32:2x96x3x40,layout=bhsd,causal=1:block=256");
  EXPECT_EQ(nvtx_case_name(cases[0]), id);
  const CaseRecord rec = record_for(cases[0]);
  EXPECT_EQ(rec.nvtx_range, id);
  EXPECT_EQ(rec.tunables, cases[0].tunables);
  EXPECT_EQ(id.find('/'), std::string::npos);
  EXPECT_EQ(id.find(' '), std::string::npos);
}

TEST(CaseIdentity, DiffersForEachTunableValueAndEachChoice) {
  const auto cases = plan_cases(
      seq_sum_request({"layout=bshd,bhsd", "causal=0,1", "block=128,256,512"}), registry());
  ASSERT_EQ(cases.size(), 12u);
  std::set<std::string> ids;
  for (const auto& c : cases) ids.insert(case_identity(c));
  EXPECT_EQ(ids.size(), cases.size());
}

TEST(ReproCommand, ReplansExactlyTheSameCaseWithChoicesAndTunables) {
  const auto cases = plan_cases(seq_sum_request({"layout=bhsd", "causal=1", "block=512", "dim=24"}), registry());
  ASSERT_EQ(cases.size(), 1u);
  const std::string cmd = repro_command(cases[0]);
  EXPECT_TRUE(Mentions(cmd, "--axis layout=bhsd"));
  EXPECT_TRUE(Mentions(cmd, "--axis causal=1"));
  EXPECT_TRUE(Mentions(cmd, "--axis block=512"));
  EXPECT_TRUE(Mentions(cmd, "--include-test-variants"));
  // Read the flags back the way `kwb run` does and plan again.
  PlanRequest again;
  std::istringstream in(cmd);
  std::string word, value;
  while (in >> word) {
    if (word == "--op" && in >> value) again.ops.push_back(value);
    if (word == "--variant" && in >> value) again.variants.push_back(value);
    if (word == "--axis" && in >> value) again.axes.push_back(parse_axis_for(value, registry()));
    if (word == "--include-test-variants") again.include_test_variants = true;
  }
  again.dtypes = {cases[0].dtype};
  const auto replanned = plan_cases(again, registry());
  ASSERT_EQ(replanned.size(), 1u);
  EXPECT_EQ(case_identity(replanned[0]), case_identity(cases[0]));
}

// A tunable whose default depends on the shape (norm backward's `stages`: 2 up to 32 KB of x and
// dy per row, else 3, for the static schedule; 2 everywhere for rows by demand) is planned at the
// default of each shape, and a value named with --axis replaces it at every shape.
TEST(PlanTunables, AShapeDependentDefaultIsPlannedPerShapeUnlessNamed) {
  PlanRequest r;
  r.ops = {"layernorm_bwd"};
  r.variants = {"fused_v4_cp_async_row_groups", "fused_v5_cp_async_dynamic_rows"};
  r.dtypes = {DType::bf16};
  r.axes = {parse_axis_for("rows=4096", registry()), parse_axis_for("cols=4096,16384", registry())};
  std::map<std::string, std::int64_t> stages;
  for (const CaseRequest& c : plan_cases(r, registry()))
    for (const auto& [name, value] : c.tunables)
      if (name == "stages") stages[c.variant + "@" + std::to_string(c.shape.at("cols"))] = value;
  EXPECT_EQ(stages, (std::map<std::string, std::int64_t>{{"fused_v4_cp_async_row_groups@4096", 2},
                                                          {"fused_v4_cp_async_row_groups@16384", 3},
                                                          {"fused_v5_cp_async_dynamic_rows@4096", 2},
                                                          {"fused_v5_cp_async_dynamic_rows@16384", 2}}));
  r.axes.push_back(parse_axis_for("stages=4", registry()));
  for (const CaseRequest& c : plan_cases(r, registry()))
    EXPECT_EQ(c.tunables.back(), (std::pair<std::string, std::int64_t>{"stages", 4})) << c.variant;
}

}  // namespace
}  // namespace choice_and_tunable_plan_test
}  // namespace kwb
