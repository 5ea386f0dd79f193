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
  // `report` with a run.suite holding these thresholds (and compare.fail_on), written as `name`.
  std::string with_suite(const std::string& report, const std::string& name, nlohmann::ordered_json thresholds,
                         std::vector<std::string> fail_on = {}) {
    auto j = nlohmann::ordered_json::parse(read_text_file(report));
    j["run"]["suite"] = {{"name", "nightly"}, {"path", "suites/nightly.yaml"}, {"thresholds", thresholds}};
    if (!fail_on.empty()) j["run"]["suite"]["compare"] = {{"fail_on", fail_on}};
    atomic_write_file(dir_ / name, j.dump(2));
    return (dir_ / name).string();
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

// Two reports with no case in common compare nothing: exit 2 naming both, unless the user accepts
// it (a gate that passed on a wrong file would hide it).
TEST_F(CompareCli, ReportsWithNoCaseInCommonExitTwoUnlessAllowed) {
  const auto base = write("base.json", 1.0);
  Report other = test::empty_report("NVIDIA H100 80GB HBM3");
  other.cases = {timed_case("layernorm_fwd", "fused_v1", 2048, noisy_samples(3, 60, 20.0, 0.01))};
  const auto next = (dir_ / "other.json").string();
  write_report_json(next, other);
  const CommandResult r = kwb(base + " " + next);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "have no case in common")) << r.output;
  EXPECT_TRUE(has(r, "base.json (2 cases)") && has(r, "other.json (1 cases)")) << r.output;
  EXPECT_TRUE(has(r, "--allow-disjoint")) << r.output;
  const CommandResult allowed = kwb(base + " " + next + " --allow-disjoint");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
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

TEST_F(CompareCli, SuiteThresholdsInBaseWinPerOpAndAreReadStrictly) {
  // Changed by issue 25: BASE's suite sets the thresholds (it is the accepted reference), NEW's
  // never does, and an explicit --threshold wins over both.
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06);
  const nlohmann::ordered_json loose_thresholds = {{"default", 0.02}, {"rmsnorm_fwd", 0.10}};
  const CommandResult loose = kwb(with_suite(base, "loose_base.json", loose_thresholds) + " " + next);
  EXPECT_EQ(loose.exit_code, 0) << loose.output;
  EXPECT_TRUE(has(loose, "10%")) << loose.output;
  EXPECT_TRUE(has(loose, "thresholds: 2% by default, 10% for rmsnorm_fwd (from BASE's suite 'nightly'")) << loose.output;
  const CommandResult flag = kwb(with_suite(base, "loose_base.json", loose_thresholds) + " " + next + " --threshold 3%");
  EXPECT_EQ(flag.exit_code, 1) << flag.output;
  EXPECT_TRUE(has(flag, "thresholds: 3% for every op (--threshold)")) << flag.output;
  const CommandResult new_suite = kwb(base + " " + with_suite(next, "loose_new.json", loose_thresholds));
  EXPECT_EQ(new_suite.exit_code, 1) << "NEW's suite must not loosen the gate:\n" << new_suite.output;
  EXPECT_TRUE(has(new_suite, "thresholds: 3% for every op (the default")) << new_suite.output;

  const CommandResult bad = kwb(base + " " + with_suite(next, "bad.json", {{"default", 0.02}, {"rmsnorm_fwd", "ten"}}));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(has(bad, "bad.json: run.suite.thresholds.rmsnorm_fwd: expected a number")) << bad.output;
  const CommandResult percent = kwb(with_suite(base, "percent.json", {{"default", 3}}) + " " + next);
  EXPECT_EQ(percent.exit_code, 2) << percent.output;
  EXPECT_TRUE(has(percent, "run.suite.thresholds.default: threshold 3 is not a fraction")) << percent.output;
}

TEST_F(CompareCli, OtherRunsOfBaseWidenTheBandToTheirSpread) {
  // A 6% slowdown is a regression on its own; BASE's own build landed 7% away in another run.
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06), r2 = write("r2.json", 1.07);
  EXPECT_EQ(kwb(base + " " + next).exit_code, 1);
  const CommandResult r = kwb(base + " " + next + " --base-runs " + r2);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "run-to-run spread: from 1 other run of BASE (--base-runs); it set the band of 1 case")) << r.output;
  // A comma list: the spread is the largest over the runs.
  const auto r3 = write("run3.json", 1.0);
  EXPECT_EQ(kwb(base + " " + next + " --base-runs " + r3 + "," + r2).exit_code, 0);
  EXPECT_EQ(kwb(base + " " + next + " --base-runs " + r3).exit_code, 1) << "a run that agrees with BASE widens nothing";
}

TEST_F(CompareCli, StoredRunsOfBaseBuildInTheHistoryWidenTheBand) {
  // BASE and another run of its build (7% away) stored with `kwb history add`; the run's started_at
  // tells the two apart (BASE's own row is not a second run).
  auto started = [&](const std::string& path, const std::string& name, const std::string& at) {
    auto j = nlohmann::ordered_json::parse(read_text_file(path));
    j["run"]["started_at"] = at;
    atomic_write_file(dir_ / name, j.dump(2));
    return (dir_ / name).string();
  };
  const auto base = started(write("base.json", 1.0), "base_t.json", "2026-11-25T01:00:00Z");
  const auto r2 = started(write("r2.json", 1.07), "r2_t.json", "2026-11-24T01:00:00Z");
  const auto next = write("new.json", 1.06);
  const std::string db = (dir_ / "h.sqlite").string();
  const std::string missing = kwb(base + " " + next + " --history " + db).output;
#ifdef KWB_HAVE_SQLITE3
  EXPECT_NE(missing.find("--history " + db + ": no such file"), std::string::npos) << missing;
  const CommandResult add = test::run_command(shell_quote(KWB_CLI_PATH) + " history add " + base + " " + r2 + " --db " + db);
  ASSERT_EQ(add.exit_code, 0) << add.output;
  const CommandResult r = kwb(base + " " + next + " --history " + db);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "run-to-run spread: from 1 stored run of BASE's build (--history " + db + "); it set the band of 1 case"))
      << r.output;
  EXPECT_EQ(kwb(base + " " + next).exit_code, 1) << "without the history the 6% is a regression";
#else
  EXPECT_NE(missing.find("built without SQLite"), std::string::npos) << missing;
#endif
}

TEST_F(CompareCli, BadBaseRunsExitTwoSayingWhatAndHowToFix) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  const CommandResult missing = kwb(base + " " + next + " --base-runs " + (dir_ / "nope.json").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(has(missing, "kwb compare: --base-runs: " + (dir_ / "nope.json").string())) << missing.output;
  const auto h200 = write("h200.json", 1.0, false, "NVIDIA H200");
  const CommandResult gpu = kwb(base + " " + next + " --base-runs " + h200);
  EXPECT_EQ(gpu.exit_code, 2) << gpu.output;
  EXPECT_TRUE(has(gpu, "h200.json: not measured like BASE: GPU")) << gpu.output;
  EXPECT_TRUE(has(gpu, "--base-runs takes more reports of BASE's build measured alike")) << gpu.output;
  const CommandResult empty = kwb(base + " " + next + " --base-runs " + base + ",");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_TRUE(has(empty, "--base-runs")) << empty.output;
  EXPECT_TRUE(has(empty, "an empty item")) << empty.output;
}

TEST_F(CompareCli, ThrottledCaseIsAmbiguousThrottledAndFailsOnlyUnderFailOnAmbiguous) {
  const auto base = write("base.json", 1.0);
  auto j = nlohmann::ordered_json::parse(read_text_file(write("new.json", 1.06)));
  j["cases"][0]["timing"]["clocks"] = {{"sm_min_mhz", 1410},  {"sm_max_mhz", 1980}, {"sm_rated_max_mhz", 1980},
                                       {"readings", 12},      {"samples", 60},      {"throttled_samples", 30},
                                       {"throttle_reasons", nlohmann::ordered_json::array({"sw_power_cap"})}};
  atomic_write_file(dir_ / "throttled.json", j.dump(2));
  const std::string next = (dir_ / "throttled.json").string();
  const CommandResult r = kwb(base + " " + next);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "ambiguous (throttled)")) << r.output;
  EXPECT_TRUE(has(r, "throttled: NEW had 30 of 60 samples (50%) throttled (sw_power_cap)")) << r.output;
  const CommandResult strict = kwb(base + " " + next + " --fail-on ambiguous");
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_TRUE(has(strict, "Result: fails the gate: 1 ambiguous")) << strict.output;
}

TEST_F(CompareCli, FailOnMissingAndSkippedFromTheFlagOrBaseSuite) {
  const auto base = write("base.json", 1.0);
  auto j = nlohmann::ordered_json::parse(read_text_file(write("new.json", 1.0)));
  j["cases"].erase(1);  // softmax_fwd is missing from NEW
  atomic_write_file(dir_ / "missing.json", j.dump(2));
  const std::string missing = (dir_ / "missing.json").string();
  EXPECT_EQ(kwb(base + " " + missing).exit_code, 0);
  const CommandResult flag = kwb(base + " " + missing + " --fail-on missing,skipped");
  EXPECT_EQ(flag.exit_code, 1) << flag.output;
  EXPECT_TRUE(has(flag, "Result: fails the gate: 1 missing from NEW")) << flag.output;
  const std::string suite_base = with_suite(base, "suite_base.json", {{"default", 0.03}}, {"missing"});
  const CommandResult suite = kwb(suite_base + " " + missing);
  EXPECT_EQ(suite.exit_code, 1) << suite.output;
  EXPECT_TRUE(has(suite, "fails on: slower and failed cases, and missing (from BASE's suite 'nightly'")) << suite.output;
  EXPECT_EQ(kwb(suite_base + " " + missing + " --fail-on none").exit_code, 0) << "the flag wins over the suite";

  auto s = nlohmann::ordered_json::parse(read_text_file(write("new.json", 1.0)));
  s["cases"][1]["disposition"] = "skipped";
  s["cases"][1]["reason"] = "needs compute capability 10.0";
  s["cases"][1].erase("timing");
  atomic_write_file(dir_ / "skipped.json", s.dump(2));
  const std::string skipped = (dir_ / "skipped.json").string();
  EXPECT_EQ(kwb(base + " " + skipped + " --fail-on missing").exit_code, 0);
  const CommandResult sk = kwb(base + " " + skipped + " --fail-on skipped");
  EXPECT_EQ(sk.exit_code, 1) << sk.output;
  EXPECT_TRUE(has(sk, "1 skipped in NEW (timed in BASE)")) << sk.output;
  EXPECT_TRUE(has(sk, "Skipped in NEW, timed in BASE (1)")) << sk.output;
}

TEST_F(CompareCli, BadFailOnExitsTwoWithTheChoices) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  const CommandResult bad = kwb(base + " " + next + " --fail-on ambigous");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(has(bad, "--fail-on: 'ambigous' is not a class compare can fail on; write ambiguous,missing,skipped"))
      << bad.output;
  EXPECT_EQ(kwb(base + " " + next + " --fail-on missing,missing").exit_code, 2);
  EXPECT_EQ(kwb(base + " " + next + " --fail-on missing,").exit_code, 2);
}

TEST_F(CompareCli, ReportWithoutPerSampleTimesExitsTwoWithTheFix) {
  const auto next = write("new.json", 1.0);
  auto j = nlohmann::ordered_json::parse(read_text_file(write("base.json", 1.0)));
  for (auto& c : j["cases"]) c["timing"]["samples_us"] = nlohmann::ordered_json::array();
  atomic_write_file(dir_ / "stripped.json", j.dump(2));
  const std::string stripped = (dir_ / "stripped.json").string();
  const CommandResult r = kwb(stripped + " " + next);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "stripped.json: case rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096: timing.samples_us is empty "
                     "(and in 1 other timed case of that report)"))
      << r.output;
  EXPECT_TRUE(has(r, "samples/")) << r.output;
  EXPECT_TRUE(has(r, "kwb run")) << r.output;
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
  newer.replace(newer.find(kReportSchema), std::string_view(kReportSchema).size(), "kwb.report/9");
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

// The committed pair (samples/h100-compare/): a CPU-only machine gets the gate's verdicts on real
// H100 runs. Two runs of one build: no slower or faster case. A run with a 5% slowdown planted in
// rmsnorm_fwd fused_v2_vec16 and softmax_fwd fused_v1_row_in_registers: both called slower, exit 1.
TEST_F(CompareCli, CommittedPairGivesSameForTheAAPairAndSlowerForThePlantedSlowdown) {
  const std::string dir = KWB_SOURCE_DIR "/samples/h100-compare/";
  const CommandResult aa = kwb(shell_quote(dir + "base.json") + " " + shell_quote(dir + "aa.json"));
  EXPECT_EQ(aa.exit_code, 0) << aa.output;
  EXPECT_TRUE(has(aa, "Result: no regression")) << aa.output;
  EXPECT_FALSE(has(aa, "\nslower ")) << aa.output;
  EXPECT_FALSE(has(aa, "\nfaster ")) << aa.output;
  EXPECT_FALSE(has(aa, "too few samples")) << aa.output;

  const CommandResult slow = kwb(shell_quote(dir + "base.json") + " " + shell_quote(dir + "slower.json"));
  EXPECT_EQ(slow.exit_code, 1) << slow.output;
  for (const char* planted : {"rmsnorm_fwd:fused_v2_vec16:", "softmax_fwd:fused_v1_row_in_registers:"}) {
    const auto at = slow.output.find(planted);
    ASSERT_NE(at, std::string::npos) << planted << "\n" << slow.output;
    const auto line = slow.output.rfind('\n', at) + 1;
    EXPECT_EQ(slow.output.compare(line, 7, "slower "), 0) << slow.output.substr(line, at - line + 40);
  }
}

}  // namespace
}  // namespace kwb
