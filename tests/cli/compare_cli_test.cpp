// `kwb compare` end to end: two small reports written with the real JSON writer, the real binary,
// its exit codes (0 no regression, 1 slower or failed, 2 bad input) and its files.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::CommandResult;
using test::noisy_samples;
using test::scaled;
using test::shell_quote;
using test::timed_case;

class CompareCli : public ::testing::Test {
 protected:
  // A report with two ops; `slow_factor` scales one variant's samples, `fail` fails the other.
  std::string write(const std::string& name, double slow_factor, bool fail = false,
                    const std::string& gpu = "NVIDIA H100 80GB HBM3") {
    Report r = test::empty_report(gpu);
    const auto a = noisy_samples(name.size() * 7 + 1, 60, 40.0, 0.01);
    const auto b = noisy_samples(name.size() * 7 + 2, 60, 15.0, 0.01);
    r.cases = {timed_case("rmsnorm_fwd", "fused_v2_vec16", 16384, scaled(a, slow_factor)),
               timed_case("softmax_fwd", "online", 4096, b, fail ? Disposition::failed : Disposition::passed)};
    if (fail) r.cases[1].reason = "12 mismatches, first at out[5]";
    const auto path = dir_ / name;
    write_report_json(path, r);
    return path.string();
  }
  CommandResult kwb(const std::string& args) { return test::run_command(shell_quote(KWB_CLI_PATH) + " compare " + args); }
  test::TempDir dir_;
};

bool has(const CommandResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }

TEST_F(CompareCli, SameDistributionsExitZero) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  const CommandResult r = kwb(base + " " + next);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "Result: no regression")) << r.output;
  EXPECT_FALSE(has(r, "\033[")) << "no colour when stdout is a pipe";
}

TEST_F(CompareCli, SlowerCaseExitsOneAndNamesItInJunitAndMarkdown) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06);
  const auto junit = (dir_ / "out" / "junit.xml").string(), md = (dir_ / "out" / "compare.md").string();
  const CommandResult r = kwb(base + " " + next + " --junit " + junit + " --md " + md);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "slower")) << r.output;
  EXPECT_TRUE(has(r, "Result: regression")) << r.output;
  const std::string xml = read_text_file(junit);
  const auto failure = xml.find("<failure");
  ASSERT_NE(failure, std::string::npos) << xml;
  EXPECT_NE(xml.rfind("rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096", failure), std::string::npos) << xml;
  EXPECT_NE(read_text_file(md).find("| slower | `rmsnorm_fwd:fused_v2_vec16"), std::string::npos);
}

TEST_F(CompareCli, FasterCaseIsNoRegression) {
  const auto base = write("base.json", 1.0), next = write("new.json", 0.9);
  const CommandResult r = kwb(base + " " + next);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "faster")) << r.output;
}

TEST_F(CompareCli, VerificationFailureInNewExitsOne) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0, true);
  const CommandResult r = kwb(base + " " + next);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "FAILED")) << r.output;
  EXPECT_TRUE(has(r, "out[5]")) << r.output;
}

TEST_F(CompareCli, ThresholdFlagDecidesWhetherSixPercentCounts) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06);
  EXPECT_EQ(kwb(base + " " + next + " --threshold 10%").exit_code, 0);
  EXPECT_EQ(kwb(base + " " + next + " --threshold 0.1").exit_code, 0);
}

TEST_F(CompareCli, SuiteThresholdsInNewWinPerOpAndAreReadStrictly) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06);
  auto with_suite = [&](const std::string& name, nlohmann::ordered_json thresholds) {
    auto j = nlohmann::ordered_json::parse(read_text_file(next));
    j["run"]["suite"] = {{"name", "nightly"}, {"path", "suites/nightly.yaml"}, {"thresholds", thresholds}};
    atomic_write_file(dir_ / name, j.dump(2));
    return (dir_ / name).string();
  };
  const CommandResult loose = kwb(base + " " + with_suite("loose.json", {{"default", 0.02}, {"rmsnorm_fwd", 0.10}}));
  EXPECT_EQ(loose.exit_code, 0) << loose.output;
  EXPECT_TRUE(has(loose, "10%")) << loose.output;
  const CommandResult bad = kwb(base + " " + with_suite("bad.json", {{"default", 0.02}, {"rmsnorm_fwd", "ten"}}));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(has(bad, "bad.json: run.suite.thresholds.rmsnorm_fwd: expected a number")) << bad.output;
  const CommandResult percent = kwb(base + " " + with_suite("percent.json", {{"default", 3}}));
  EXPECT_EQ(percent.exit_code, 2) << percent.output;
  EXPECT_TRUE(has(percent, "run.suite.thresholds.default: threshold 3 is not a fraction")) << percent.output;
}

TEST_F(CompareCli, EnvironmentDifferenceIsShownAndStrictEnvRefusesIt) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0, false, "NVIDIA H200");
  const CommandResult r = kwb(base + " " + next);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "ENVIRONMENT DIFFERS")) << r.output;
  EXPECT_TRUE(has(r, "NVIDIA H200")) << r.output;
  const CommandResult strict = kwb(base + " " + next + " --strict-env");
  EXPECT_EQ(strict.exit_code, 2) << strict.output;
  EXPECT_TRUE(has(strict, "--strict-env: the reports differ in GPU")) << strict.output;
}

TEST_F(CompareCli, BadInputExitsTwoWithFileAndJsonPath) {
  const auto base = write("base.json", 1.0);
  const CommandResult missing = kwb(base + " " + (dir_ / "nope.json").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(has(missing, "nope.json")) << missing.output;

  std::string text = read_text_file(base);
  const auto at = text.find("\"median\": ");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "\"median\": \"slow\", \"x\": ");
  atomic_write_file(dir_ / "bad.json", text);
  const CommandResult malformed = kwb(base + " " + (dir_ / "bad.json").string());
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
  EXPECT_TRUE(has(malformed, "bad.json: cases[0].timing.span.median: expected a number")) << malformed.output;

  std::string newer = read_text_file(base);
  newer.replace(newer.find("kwb.report/2"), 12, "kwb.report/9");
  atomic_write_file(dir_ / "newer.json", newer);
  const CommandResult schema = kwb((dir_ / "newer.json").string() + " " + base);
  EXPECT_EQ(schema.exit_code, 2) << schema.output;
  EXPECT_TRUE(has(schema, "newer.json: schema: unsupported report schema")) << schema.output;

  atomic_write_file(dir_ / "trunc.json", "{\"schema\": ");
  EXPECT_EQ(kwb(base + " " + (dir_ / "trunc.json").string()).exit_code, 2);
}

TEST_F(CompareCli, BadFlagsExitTwo) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  const CommandResult pct = kwb(base + " " + next + " --threshold 3");
  EXPECT_EQ(pct.exit_code, 2) << pct.output;
  EXPECT_TRUE(has(pct, "would be 300%")) << pct.output;
  EXPECT_EQ(kwb(base + " " + next + " --threshold -1%").exit_code, 2);
  EXPECT_EQ(kwb(base + " " + next + " --min-us nan").exit_code, 2);
  EXPECT_EQ(kwb(base).exit_code, 2);  // NEW missing
  const CommandResult out = kwb(base + " " + next + " --junit /proc/self/junit.xml");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_TRUE(has(out, "--junit")) << out.output;
}

}  // namespace
}  // namespace kwb
