// Suite YAML -> SuiteFile: every key read into the struct, and every malformed file refused with
// its file, line, column and key, before the registry is consulted.
#include "harness/plan/suite_file.hpp"

#include <gtest/gtest.h>

#include "tests/harness/plan/suite_test_support.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::At;
using test::Mentions;
using test::suite_error;
using test::yaml_lines;

TEST(SuiteFile, ReadsEveryKeyIntoThePlainStruct) {
  const SuiteFile s = parse_suite(yaml_lines({
                                      "name: review",
                                      "description: a bit of everything",
                                      "mode: hot",
                                      "launch: graph",
                                      "preset: quick",
                                      "seed: 18446744073709551615",
                                      "ceilings: measure",
                                      "thresholds: {default: 4%, rmsnorm_fwd: 2%, softmax_fwd: 0.025}",
                                      "entries:",
                                      "  - ops: rmsnorm_fwd",
                                      "    variants: [fused_v2_vec16, baseline_eager_8_launches]",
                                      "    dtypes: [bf16, fp32]",
                                      "    shapes: {rows: 16384, cols: \"1024:16384:x2\"}",
                                      "  - ops: [softmax_fwd, layernorm_fwd]",
                                      "    shapes:",
                                      "      - {rows: 4096, cols: [512, 4100]}",
                                      "      - {rows: 8k}",
                                      "  - ops: rope_fwd",
                                      "    shapes: edge",
                                  }),
                                  "suites/review.yaml");
  EXPECT_EQ(s.path, "suites/review.yaml");
  EXPECT_EQ(s.name, "review");
  EXPECT_EQ(s.description, "a bit of everything");
  EXPECT_EQ(s.mode, Mode::hot);
  EXPECT_EQ(s.flush, FlushKind::dirty);
  EXPECT_EQ(s.launch, LaunchKind::graph);
  EXPECT_EQ(s.preset, "quick");
  EXPECT_EQ(s.seed, 18446744073709551615ull);
  EXPECT_EQ(s.ceilings, SuiteCeilings::measure);
  EXPECT_DOUBLE_EQ(s.default_threshold, 0.04);
  ASSERT_EQ(s.op_thresholds.size(), 2u);
  EXPECT_EQ(s.op_thresholds[0].first.value, "rmsnorm_fwd");
  EXPECT_DOUBLE_EQ(s.op_thresholds[0].second, 0.02);
  EXPECT_EQ(s.op_thresholds[1].first.value, "softmax_fwd");
  EXPECT_DOUBLE_EQ(s.op_thresholds[1].second, 0.025);
  ASSERT_EQ(s.entries.size(), 3u);

  const SuiteEntry& first = s.entries[0];
  ASSERT_EQ(first.ops.size(), 1u);
  EXPECT_EQ(first.ops[0].value, "rmsnorm_fwd");
  EXPECT_EQ(first.ops[0].at.line, 10);
  EXPECT_EQ(first.ops[0].at.column, 10);
  ASSERT_EQ(first.variants.size(), 2u);
  EXPECT_EQ(first.variants[1].value, "baseline_eager_8_launches");
  EXPECT_EQ(first.variants[1].at.key, "entries[0].variants[1]");
  EXPECT_EQ(first.dtypes, (std::vector<DType>{DType::bf16, DType::fp32}));
  ASSERT_EQ(first.grids.size(), 1u);
  ASSERT_EQ(first.grids[0].size(), 2u);
  EXPECT_EQ(first.grids[0][0].assignment(), "rows=16384");
  EXPECT_EQ(first.grids[0][1].assignment(), "cols=1024:16384:x2");
  EXPECT_EQ(first.grids[0][1].values.at.line, 13);

  const SuiteEntry& second = s.entries[1];
  ASSERT_EQ(second.ops.size(), 2u);
  EXPECT_EQ(second.ops[1].value, "layernorm_fwd");
  ASSERT_EQ(second.grids.size(), 2u);
  EXPECT_EQ(second.grids[0][1].assignment(), "cols=512,4100");  // a YAML list is a comma list
  EXPECT_EQ(second.grids[1][0].assignment(), "rows=8k");
  EXPECT_TRUE(second.dtypes.empty());
  EXPECT_TRUE(second.variants.empty());

  EXPECT_TRUE(s.entries[2].grids.empty());
  EXPECT_EQ(s.entries[2].shape_set, ShapeSet::edge);
}

TEST(SuiteFile, LeftOutSettingsTakeTheRunDefaults) {
  const SuiteFile s = parse_suite(yaml_lines({"name: tiny", "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml");
  EXPECT_EQ(s.mode, Mode::cold);
  EXPECT_EQ(s.flush, FlushKind::dirty);
  EXPECT_EQ(s.launch, LaunchKind::stream);
  EXPECT_EQ(s.preset, "default");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.ceilings, SuiteCeilings::cached);
  EXPECT_DOUBLE_EQ(s.default_threshold, SuiteFile::kDefaultThreshold);
  EXPECT_TRUE(s.op_thresholds.empty());
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].shape_set, ShapeSet::standard);
  EXPECT_TRUE(s.entries[0].grids.empty());
}

TEST(SuiteFile, AScalarThresholdIsTheDefault) {
  const SuiteFile s = parse_suite(yaml_lines({"name: t", "thresholds: 2%", "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml");
  EXPECT_DOUBLE_EQ(s.default_threshold, 0.02);
}

// ---- refusals: each names the file, line, column and key ------------------------------------

TEST(SuiteFileErrors, UnknownTopLevelKeySuggestsTheKnownOne) {
  const auto e = suite_error(yaml_lines({"names: smoke", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 1, 1, "names"));
  EXPECT_TRUE(Mentions(e->what(), "unknown key 'names' (did you mean 'name'?)"));
}

// yaml-cpp gives up on deep flow nesting with "bad file": refused before it, saying where and why.
// Brackets in quotes and comments are text, not nesting.
TEST(SuiteFileErrors, FlowCollectionsNestedTooDeepAreRefusedWithWhere) {
  const std::string deep = "entries: " + std::string(100000, '[') + std::string(100000, ']');
  const auto e = suite_error(yaml_lines({"name: t", deep}));
  EXPECT_TRUE(At(e, 2, 10 + 256, "(nesting)"));
  EXPECT_TRUE(Mentions(e->what(), "nested deeper than 256 levels"));
  const std::string quoted = "description: '" + std::string(300, '[') + "' # " + std::string(300, '{');
  EXPECT_NO_THROW(parse_suite(yaml_lines({"name: t", quoted, "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml"));
}

TEST(SuiteFileErrors, ANameLongerThanALineIsRefusedQuotingItsStart) {
  const auto e = suite_error(yaml_lines({"name: " + std::string(100000, 'n'), "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 1, 7, "name"));
  EXPECT_TRUE(Mentions(e->what(), "(100000 bytes)' is longer than 200 bytes"));
  EXPECT_LT(std::string(e->what()).size(), 300u);
  EXPECT_NO_THROW(parse_suite(yaml_lines({"name: " + std::string(200, 'n'), "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml"));
}

TEST(SuiteFileErrors, UnknownEntryKeySuggestsTheKnownOne) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    dtpyes: bf16"}));
  EXPECT_TRUE(At(e, 4, 5, "entries[0].dtpyes"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'dtypes'?"));
}

TEST(SuiteFileErrors, BadDtypeIsPointedAtInItsList) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    dtypes: [bf16, bfl6]"}));
  EXPECT_TRUE(At(e, 4, 20, "entries[0].dtypes[1]"));
  EXPECT_TRUE(Mentions(e->what(), "unknown dtype 'bfl6' (did you mean 'bf16'?)"));
  EXPECT_TRUE(Mentions(e->what(), "fp32, fp16, bf16"));
}

TEST(SuiteFileErrors, YamlSyntaxErrorNamesItsPlace) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: [rmsnorm_fwd, softmax_fwd", "  - ops: x"}));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->at.key, "(syntax)");
  EXPECT_GE(e->at.line, 3);
  EXPECT_GE(e->at.column, 1);
  EXPECT_TRUE(Mentions(e->what(), "suites/t.yaml:" + std::to_string(e->at.line) + ":"));
  EXPECT_TRUE(Mentions(e->what(), "YAML syntax error"));
}

TEST(SuiteFileErrors, WrongTypesSayWhatWasExpected) {
  auto e = suite_error(yaml_lines({"name: t", "entries: {ops: rmsnorm_fwd}"}));
  EXPECT_TRUE(At(e, 2, 10, "entries"));
  EXPECT_TRUE(Mentions(e->what(), "expected a list of entries"));
  EXPECT_TRUE(Mentions(e->what(), "got a map"));

  e = suite_error(yaml_lines({"name: [a, b]", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 1, 7, "name"));
  EXPECT_TRUE(Mentions(e->what(), "got a list"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: {rmsnorm_fwd: 1}"}));
  EXPECT_TRUE(At(e, 3, 10, "entries[0].ops"));
  EXPECT_TRUE(Mentions(e->what(), "expected an op name or a list of them, got a map"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    shapes: {cols: {a: 1}}"}));
  EXPECT_TRUE(At(e, 4, 20, "entries[0].shapes.cols"));
  EXPECT_TRUE(Mentions(e->what(), "expected axis values"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops:"}));
  EXPECT_TRUE(At(e, 3, 5, "entries[0].ops"));
  EXPECT_TRUE(Mentions(e->what(), "the value is empty"));
}

TEST(SuiteFileErrors, ThresholdsMustBeFractionsOrPercentages) {
  auto e = suite_error(yaml_lines({"name: t", "thresholds: {default: 3%, rmsnorm_fwd: 3}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 40, "thresholds.rmsnorm_fwd"));
  EXPECT_TRUE(Mentions(e->what(), "ambiguous"));
  EXPECT_TRUE(Mentions(e->what(), "3%"));

  e = suite_error(yaml_lines({"name: t", "thresholds: {default: fast}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 23, "thresholds.default"));
  EXPECT_TRUE(Mentions(e->what(), "not a threshold"));
}

TEST(SuiteFileErrors, RunSettingsInsideAnEntryAreSuiteLevel) {
  const auto e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    preset: precise"}));
  EXPECT_TRUE(At(e, 4, 5, "entries[0].preset"));
  EXPECT_TRUE(Mentions(e->what(), "suite-level setting"));
  EXPECT_TRUE(Mentions(e->what(), "top level"));
}

TEST(SuiteFileErrors, RepeatedKeyIsRefused) {
  const auto e = suite_error(yaml_lines({"name: t", "mode: cold", "mode: hot", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 3, 1, "mode"));
  EXPECT_TRUE(Mentions(e->what(), "given twice"));
}

TEST(SuiteFileErrors, MissingRequiredKeysAndEmptyFiles) {
  auto e = suite_error(yaml_lines({"entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 1, 1, ""));
  EXPECT_TRUE(Mentions(e->what(), "missing required key 'name'"));

  e = suite_error(yaml_lines({"name: t"}));
  EXPECT_TRUE(Mentions(e->what(), "missing required key 'entries'"));

  e = suite_error(yaml_lines({"name: t", "entries: []"}));
  EXPECT_TRUE(At(e, 2, 10, "entries"));
  EXPECT_TRUE(Mentions(e->what(), "an empty list"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - variants: fused_v2_vec16"}));
  EXPECT_TRUE(At(e, 3, 5, "entries[0]"));
  EXPECT_TRUE(Mentions(e->what(), "has no 'ops'"));

  e = suite_error("# only a comment\n");
  EXPECT_TRUE(Mentions(e->what(), "holds no suite"));

  e = suite_error("- just\n- a list\n");
  EXPECT_TRUE(At(e, 1, 1, ""));
  EXPECT_TRUE(Mentions(e->what(), "got a list"));
}

TEST(SuiteFileErrors, SettingsAreCheckedByName) {
  auto e = suite_error(yaml_lines({"name: t", "mode: col", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 7, "mode"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'cold'?"));

  e = suite_error(yaml_lines({"name: t", "mode: hot", "flush: clean", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 3, 8, "flush"));
  EXPECT_TRUE(Mentions(e->what(), "hot mode flushes nothing"));

  e = suite_error(yaml_lines({"name: t", "launch: grap", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 9, "launch"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'graph'?"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    launch: graph"}));
  EXPECT_TRUE(At(e, 4, 5, "entries[0].launch"));
  EXPECT_TRUE(Mentions(e->what(), "suite-level setting"));

  e = suite_error(yaml_lines({"name: t", "preset: precize", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'precise'?"));

  e = suite_error(yaml_lines({"name: t", "seed: -1", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 7, "seed"));
  EXPECT_TRUE(Mentions(e->what(), "0 to 2^64-1"));

  e = suite_error(yaml_lines({"name: t", "ceilings: refresh", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(Mentions(e->what(), "cached, measure, datasheet"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    shapes: edgy"}));
  EXPECT_TRUE(At(e, 4, 13, "entries[0].shapes"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'edge'?"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    shapes: {}"}));
  EXPECT_TRUE(Mentions(e->what(), "names no axis"));
}

TEST(SuiteFileErrors, UnreadableFilesAreNamed) {
  try {
    load_suite("/nonexistent/kwb/suite.yaml");
    FAIL() << "expected a SuiteError";
  } catch (const SuiteError& e) {
    EXPECT_TRUE(Mentions(e.what(), "/nonexistent/kwb/suite.yaml: no such file"));
  }
}

}  // namespace
}  // namespace kwb
