// `kwb select` end to end with the real binary: the committed H100 roofline-review report (a
// winner for every group that has a passed, timed fused or baseline case, counted from the report
// here, never a constant), its JSON and Markdown files, and the exit codes of bad input (2) and of a
// report with nothing to select from (1).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "tests/reports/select/select_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace select_cli_test {
namespace {

using test::CommandResult;
using test::shell_quote;

const std::string kSample = KWB_SOURCE_DIR "/samples/h100-roofline-review/report.json";

CommandResult kwb_select(const std::string& args) {
  return test::run_command(shell_quote(KWB_CLI_PATH) + " select " + args);
}

bool has(const CommandResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }

std::string group_of(const std::string& op, const std::string& dtype, const std::string& mode, const std::string& shape) {
  return op + " " + dtype + " " + mode + " " + shape;
}

TEST(SelectCli, CommittedSampleNamesTheFastestPassedVariantOfEveryGroup) {
  // Expected from the report itself: per group, the smallest median among passed, timed fused or
  // baseline cases.
  const Report report = read_report_json(kSample);
  std::map<std::string, double> fastest;
  std::set<std::string> all_groups;
  for (const CaseRecord& c : report.cases) {
    const std::string mode = c.timing ? std::string(to_string(c.timing->mode)) : "cold";
    const std::string key = group_of(c.op, std::string(to_string(c.dtype)), mode, c.shape.to_compact());
    all_groups.insert(key);
    const bool candidate = c.disposition == Disposition::passed && c.timing && c.timing->span.count > 0 &&
                           (c.role == Role::fused || c.role == Role::baseline);
    if (!candidate) continue;
    auto [it, fresh] = fastest.try_emplace(key, c.timing->span.median);
    if (!fresh) it->second = std::min(it->second, c.timing->span.median);
  }
  ASSERT_FALSE(fastest.empty());

  test::TempDir dir;
  const auto json_path = dir / "selection.json", md_path = dir / "selection.md";
  const CommandResult r = kwb_select(shell_quote(kSample) + " --out " + shell_quote(json_path.string()) + " --md " +
                                     shell_quote(md_path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "no per-sample arrays")) << "the committed sample has none: the fallback is said";

  const auto j = nlohmann::json::parse(read_text_file(json_path));
  EXPECT_EQ(j.at("schema"), "kwb.selection/1");
  EXPECT_EQ(j.at("device"), report.run.device->name);
  ASSERT_EQ(j.at("entries").size(), fastest.size());
  EXPECT_EQ(j.at("entries").size() + j.at("unselected").size(), all_groups.size());
  std::set<std::string> seen;
  for (const auto& e : j.at("entries")) {
    const std::string key = group_of(e.at("op"), e.at("dtype"), e.at("mode"), e.at("shape_compact"));
    ASSERT_TRUE(fastest.count(key)) << key;
    EXPECT_TRUE(seen.insert(key).second) << "one entry per group: " << key;
    EXPECT_DOUBLE_EQ(e.at("winner").at("median_us").get<double>(), fastest.at(key)) << key;
    EXPECT_FALSE(e.at("winner").at("variant").get<std::string>().empty());
    // The winner's row is printed (op, winner, its time with two decimals).
    EXPECT_TRUE(has(r, e.at("winner").at("variant").get<std::string>())) << key;
  }
  // A summary line per op that has a winner.
  std::set<std::string> ops;
  for (const auto& e : j.at("entries")) ops.insert(e.at("op"));
  for (const auto& op : ops) EXPECT_TRUE(has(r, op + ": ")) << op;

  const std::string md = read_text_file(md_path);
  EXPECT_NE(md.find("| op | dtype | shape | winner |"), std::string::npos) << md;
  EXPECT_EQ(static_cast<std::size_t>(std::count(md.begin(), md.end(), '\n')) >= fastest.size(), true);
}

// The table fits a 120-column terminal by default (the default sweep's winners with their tunables
// are up to 90 characters); --wide prints every column, the runner-up's too, one line per shape.
TEST(SelectCli, DefaultTableFitsATerminalAndWideKeepsEveryColumn) {
  const std::string sweep = KWB_SOURCE_DIR "/samples/h100-default-sweep/report.json";
  const CommandResult r = kwb_select(shell_quote(sweep));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t widest = 0, lines = 0;
  for (std::size_t at = 0; at < r.output.size(); ++lines) {
    const std::size_t end = std::min(r.output.find('\n', at), r.output.size());
    widest = std::max(widest, end - at);
    at = end + 1;
  }
  EXPECT_LE(widest, 120u) << r.output;
  EXPECT_FALSE(has(r, "runner-up")) << "the runner-up is --wide's";

  const CommandResult wide = kwb_select(shell_quote(sweep) + " --wide");
  ASSERT_EQ(wide.exit_code, 0) << wide.output;
  EXPECT_TRUE(has(wide, "runner-up")) << wide.output;
  // Every winner's full label (tunables included) is on one line of --wide and, wrapped or not, in
  // the default table.
  const auto j = nlohmann::json::parse(read_text_file(KWB_SOURCE_DIR "/samples/h100-default-sweep/selection.json"));
  for (const auto& e : j.at("entries")) {
    const std::string variant = e.at("winner").at("variant");
    EXPECT_TRUE(has(wide, variant)) << variant;
    EXPECT_TRUE(has(r, variant)) << variant;
  }
}

// The committed selection.json beside the sample is what this build writes (a change to the rule
// or the schema must regenerate it: `kwb select samples/h100-roofline-review/report.json --out ...`).
TEST(SelectCli, CommittedSampleSelectionIsCurrent) {
  test::TempDir dir;
  const auto fresh = dir / "selection.json";
  ASSERT_EQ(kwb_select(shell_quote(kSample) + " --out " + shell_quote(fresh.string())).exit_code, 0);
  const auto committed =
      nlohmann::json::parse(read_text_file(KWB_SOURCE_DIR "/samples/h100-roofline-review/selection.json"));
  const auto now = nlohmann::json::parse(read_text_file(fresh));
  EXPECT_EQ(committed.at("schema"), now.at("schema"));
  EXPECT_EQ(committed.at("entries"), now.at("entries"));
  EXPECT_EQ(committed.at("unselected"), now.at("unselected"));
}

// --deterministic on the committed mean pooling sample, whose fused_v3_dynamic_tail_rows (rows
// handed out by demand: its last bits vary) wins the large shapes: with the flag no winner varies,
// every group still has a winner (fused_v2 and fused_v1 are deterministic), the left-out cases are
// counted, and the JSON says the table was filtered; without it, the JSON marks the varying winners.
TEST(SelectCli, DeterministicLeavesOutVariantsWhoseBitsVaryRunToRun) {
  const std::string sample = KWB_SOURCE_DIR "/samples/h100-mean-pooling/report.json";
  test::TempDir dir;
  const auto all = dir / "all.json", same_bits = dir / "same_bits.json";
  ASSERT_EQ(kwb_select(shell_quote(sample) + " --out " + shell_quote(all.string())).exit_code, 0);
  const CommandResult r =
      kwb_select(shell_quote(sample) + " --deterministic --out " + shell_quote(same_bits.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "only variants that write the same bits every run")) << r.output;

  const auto j_all = nlohmann::json::parse(read_text_file(all));
  const auto j_same = nlohmann::json::parse(read_text_file(same_bits));
  EXPECT_EQ(j_all.at("deterministic_only"), false);
  EXPECT_EQ(j_same.at("deterministic_only"), true);
  int varying_winners = 0;
  for (const auto& e : j_all.at("entries")) varying_winners += e.at("winner").at("varies_run_to_run") == true;
  EXPECT_GT(varying_winners, 0) << "the sample's large shapes are won by a variant that varies run to run";
  EXPECT_EQ(j_same.at("entries").size(), j_all.at("entries").size());
  int left_out = 0;
  for (const auto& e : j_same.at("entries")) {
    EXPECT_EQ(e.at("winner").at("varies_run_to_run"), false) << e.at("shape_compact");
    if (e.at("excluded").contains("varies run to run")) left_out += e.at("excluded").at("varies run to run").get<int>();
  }
  // Every passed, timed case of the varying variant is left out, winner or not: counted from the
  // report.
  int varying_cases = 0;
  for (const CaseRecord& c : read_report_json(sample).cases)
    varying_cases += c.variant == "fused_v3_dynamic_tail_rows" && c.disposition == Disposition::passed && c.timing;
  EXPECT_GT(varying_cases, varying_winners);
  EXPECT_EQ(left_out, varying_cases);
  EXPECT_TRUE(has(r, std::to_string(varying_cases) + " passed case(s) left out as varying run to run")) << r.output;
}

// A report whose only passed cases vary run to run: --deterministic leaves nothing, exit 1, and
// the message says why (not "run the cases again"); an unknown variant is named with the
// --plugin hint; a --plugin that cannot be loaded is bad input.
TEST(SelectCli, DeterministicWithNothingLeftExitsOneAndSaysWhy) {
  Report r = test::empty_report();
  r.cases = {test::summary_case("mean_pooling_fwd", "fused_v3_dynamic_tail_rows", 1024, 50.0, 49.0, 51.0),
             test::summary_case("mean_pooling_fwd", "fused_v9_not_in_this_build", 1024, 40.0, 39.0, 41.0)};
  test::TempDir dir;
  const auto path = dir / "report.json";
  write_report_json(path, r);
  const CommandResult c = kwb_select(shell_quote(path.string()) + " --deterministic");
  EXPECT_EQ(c.exit_code, 1) << c.output;
  EXPECT_TRUE(has(c, "writes the same bits every run; nothing to select from")) << c.output;
  EXPECT_FALSE(has(c, "run the cases again")) << c.output;
  EXPECT_TRUE(has(c, "1 passed case(s) left out as varying run to run")) << c.output;
  EXPECT_TRUE(has(c, "1 as not in this build's catalogue (load their plugins with --plugin)")) << c.output;
  // Without the flag the same report selects (the unknown variant is fastest).
  EXPECT_EQ(kwb_select(shell_quote(path.string())).exit_code, 0);
  const CommandResult bad = kwb_select(shell_quote(path.string()) + " --deterministic --plugin " +
                                       shell_quote((dir / "missing.so").string()));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(has(bad, "kwb select: --plugin")) << bad.output;
}

TEST(SelectCli, ReviewReportOfTheSampleHasTheSection) {
  test::TempDir dir;
  const auto html = dir / "review.html";
  const CommandResult r = test::run_command(shell_quote(KWB_CLI_PATH) + " report " + shell_quote(kSample) + " --html " +
                                            shell_quote(html.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = read_text_file(html);
  EXPECT_NE(page.find("<h2 id=\"selection\">Fastest variant per shape</h2>"), std::string::npos);
  EXPECT_NE(page.find("within noise"), std::string::npos) << "the sample has near-equal fused variants";
}

// A JSON output's name taken by a file kwb did not write is refused and left as it was; one kwb
// wrote (a selection of an earlier run) and an empty file are replaced.
TEST(SelectCli, AnOutputNameTakenByAFileKwbDidNotWriteIsRefusedAndKept) {
  test::TempDir dir;
  const auto notes = dir / "selection.json";
  std::ofstream(notes) << "{\"my\": \"notes\", \"schema\": \"mine/1\"}";
  const CommandResult r = kwb_select(shell_quote(kSample) + " --out " + shell_quote(notes.string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a file kwb wrote"), std::string::npos) << r.output;
  EXPECT_EQ(read_text_file(notes), "{\"my\": \"notes\", \"schema\": \"mine/1\"}");
  const auto empty = dir / "empty.json";
  { std::ofstream create(empty); }
  ASSERT_EQ(kwb_select(shell_quote(kSample) + " --out " + shell_quote(empty.string())).exit_code, 0);
  EXPECT_EQ(kwb_select(shell_quote(kSample) + " --out " + shell_quote(empty.string())).exit_code, 0)
      << "its own selection of an earlier run is replaced";
}

TEST(SelectCli, MissingOrGarbledReportIsBadInputNamingFileAndPath) {
  test::TempDir dir;
  EXPECT_EQ(kwb_select(shell_quote((dir / "absent.json").string())).exit_code, 2);

  const auto garbled = dir / "garbled.json";
  atomic_write_file(garbled, "{\"schema\": \"kwb.report/2\", \"run\": ");
  const CommandResult g = kwb_select(shell_quote(garbled.string()));
  EXPECT_EQ(g.exit_code, 2) << g.output;
  EXPECT_TRUE(has(g, "garbled.json")) << g.output;

  Report bad = test::empty_report();
  bad.cases = {test::summary_case("rmsnorm_fwd", "v", 1024, 5, 4.9, 5.1)};
  auto j = report_to_json(bad);
  j["cases"][0]["timing"]["span"]["median"] = "fast";
  const auto wrong_type = dir / "wrong_type.json";
  atomic_write_file(wrong_type, j.dump());
  const CommandResult w = kwb_select(shell_quote(wrong_type.string()));
  EXPECT_EQ(w.exit_code, 2) << w.output;
  EXPECT_TRUE(has(w, "cases[0].timing.span.median")) << w.output;
}

TEST(SelectCli, BadFlagsAreBadInput) {
  test::TempDir dir;
  const CommandResult margin = kwb_select(shell_quote(kSample) + " --min-margin 5");
  EXPECT_EQ(margin.exit_code, 2) << margin.output;
  EXPECT_TRUE(has(margin, "--min-margin")) << margin.output;
  EXPECT_EQ(kwb_select(shell_quote(kSample) + " --out /proc/nope/selection.json").exit_code, 2);
  EXPECT_EQ(kwb_select("").exit_code, 2);
  EXPECT_EQ(kwb_select(shell_quote(kSample) + " --min-margin 0").exit_code, 0);
}

TEST(SelectCli, HostileValuesAreRefusedWithAMessageNeverACrash) {
  test::TempDir dir;
  // Refused as a report or as a margin; the unwritable ones also as an output file (the others
  // are fine file names in the temporary working folder).
  const std::vector<std::string> hostile = {" ", "-1", "nan", "inf", "1e999", "'", "", "/dev/null", "/proc/self",
                                            "/proc/self/x", "..", std::string(3000, 'x')};
  const std::size_t first_unwritable = 6;
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    const std::string v = shell_quote(hostile[i]);
    std::vector<std::string> calls = {v, shell_quote(kSample) + " --min-margin " + v};
    if (i >= first_unwritable) {
      calls.push_back(shell_quote(kSample) + " --out " + v);
      calls.push_back(shell_quote(kSample) + " --md " + v);
    }
    for (const std::string& args : calls) {
      // The table (stdout) is dropped; stderr, where refusals go, is kept.
      const CommandResult r = test::run_command("cd " + shell_quote(dir.path().string()) + " && (" +
                                                shell_quote(KWB_CLI_PATH) + " select " + args + " >/dev/null)");
      EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
      EXPECT_NE(r.output.find("kwb"), std::string::npos) << args << ": a refusal says why";
    }
  }
  EXPECT_TRUE(std::filesystem::exists("/dev/null") && !std::filesystem::is_regular_file("/dev/null"));
}

TEST(SelectCli, ReportWithNoVerifiedTimedCaseExitsOneAndSaysWhy) {
  Report r = test::empty_report();
  r.cases = {test::excluded_case("rmsnorm_fwd", "v", 1024, Disposition::failed, "12 mismatches"),
             test::excluded_case("rmsnorm_fwd", "w", 1024, Disposition::skipped, "cols above 8192")};
  test::TempDir dir;
  const auto path = dir / "report.json";
  write_report_json(path, r);
  const auto out = dir / "selection.json";
  const CommandResult c = kwb_select(shell_quote(path.string()) + " --out " + shell_quote(out.string()));
  EXPECT_EQ(c.exit_code, 1) << c.output;
  EXPECT_TRUE(has(c, "nothing to select from")) << c.output;
  EXPECT_TRUE(has(c, "12 mismatches")) << c.output;
  EXPECT_FALSE(std::filesystem::exists(out)) << "no selection file for an empty selection";
}

}  // namespace
}  // namespace select_cli_test
}  // namespace kwb
