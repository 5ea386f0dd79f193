// `kwb history` end to end: reports written with the real JSON writer, the real binary, its exit
// codes and what it prints. In a build without SQLite: the message that says how to get it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/record/json_report.hpp"
#include "tests/reports/history/history_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace history_cli_test {
namespace {

using test::CommandResult;
using test::shell_quote;

bool has(const CommandResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }

class HistoryCli : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& started_at, const std::string& sha, double rms_us) {
    const auto path = dir_ / name;
    write_report_json(path, test::history_report(started_at, sha, rms_us, 15.0));
    return shell_quote(path.string());
  }
  CommandResult kwb(const std::string& args) {
    return test::run_command(shell_quote(KWB_CLI_PATH) + " history " + args);
  }
  std::string db() const { return " --db " + shell_quote((dir_ / "h.sqlite").string()); }
  test::TempDir dir_;
};

#ifdef KWB_HAVE_SQLITE3

TEST_F(HistoryCli, AddTwiceAddsNothingTheSecondTime) {
  const std::string reports = write("a.json", "2026-11-01T02:00:00Z", "aaa", 40) + " " +
                              write("b.json", "2026-11-02T02:00:00Z", "bbb", 40.1);
  const CommandResult first = kwb("add " + reports + db());
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(has(first, "2 report(s) added (6 case(s)), 0 already in the database")) << first.output;
  const CommandResult second = kwb("add " + reports + db());
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(has(second, "0 report(s) added (0 case(s)), 2 already in the database")) << second.output;
  EXPECT_TRUE(has(second, "a.json: already in the database, skipped")) << second.output;
  EXPECT_TRUE(has(second, "holds 2 report(s)")) << second.output;
}

TEST_F(HistoryCli, ShowPrintsTheTrendAndFlagsTheStep) {
  const double medians[] = {40.0, 40.1, 39.9, 40.0, 40.1, 44.0};
  std::string reports;
  for (int day = 1; day <= 6; ++day)
    reports += write("r" + std::to_string(day) + ".json", "2026-11-0" + std::to_string(day) + "T02:00:00Z",
                     "sha" + std::to_string(day), medians[day - 1]) + " ";
  ASSERT_EQ(kwb("add " + reports + db()).exit_code, 0);
  const CommandResult r = kwb("show --op rmsnorm_fwd" + db());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "rmsnorm_fwd:fused_v2_vec16:bf16:")) << r.output;
  EXPECT_FALSE(has(r, "softmax_fwd")) << r.output;
  const auto day1 = r.output.find("2026-11-01 02:00  sha1"), day6 = r.output.find("2026-11-06 02:00  sha6");
  ASSERT_NE(day1, std::string::npos) << r.output;
  ASSERT_NE(day6, std::string::npos) << r.output;
  EXPECT_LT(day1, day6);
  EXPECT_NE(r.output.find("CHANGE", day6), std::string::npos) << r.output;
  EXPECT_TRUE(has(r, "1 case(s), 6 stored result(s), 1 change point(s)")) << r.output;

  // A filter that matches nothing is an error, not an empty trend.
  const CommandResult none = kwb("show --case no_such_case" + db());
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(has(none, "no stored results match --op / --case / --device")) << none.output;

  // --limit: the case with the change point comes first, and the rest are counted, not printed.
  const CommandResult all = kwb("show --limit 0" + db());
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(has(all, "3 case(s), 18 stored result(s), 1 change point(s)")) << all.output;
  EXPECT_FALSE(has(all, "shown:")) << all.output;
  const CommandResult one = kwb("show --limit 1" + db());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_TRUE(has(one, "rmsnorm_fwd:fused_v2_vec16:bf16:")) << one.output;
  EXPECT_FALSE(has(one, "softmax_fwd")) << one.output;
  EXPECT_TRUE(has(one, "3 case(s), 18 stored result(s), 1 change point(s)")) << one.output;
  EXPECT_TRUE(has(one, "shown: 1 of the 3 cases (those with a change point first)")) << one.output;
}

// An --op the store holds no result of is a typo until shown otherwise: exit 2, the closest op
// suggested and the stored ones listed, never an empty trend with exit 0.
TEST_F(HistoryCli, ShowOfAnOpTheStoreNeverSawIsAnErrorThatSuggestsTheClosest) {
  ASSERT_EQ(kwb("add " + write("r1.json", "2026-11-01T02:00:00Z", "sha1", 40.0) + db()).exit_code, 0);
  const CommandResult r = kwb("show --op rmsnorm_fw" + db());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "unknown op 'rmsnorm_fw' (did you mean 'rmsnorm_fwd'?)")) << r.output;
  EXPECT_TRUE(has(r, "known: rmsnorm_fwd")) << r.output;
  EXPECT_EQ(kwb("show --op rmsnorm_fwd" + db()).exit_code, 0);
}

TEST_F(HistoryCli, BadReportAddsNothing) {
  const std::string good = write("a.json", "2026-11-01T02:00:00Z", "aaa", 40);
  const auto bad = dir_ / "bad.json";
  { std::ofstream(bad) << R"({"schema": "kwb.report/2", "run": {}, "cases": []})"; }
  const CommandResult r = kwb("add " + good + " " + shell_quote(bad.string()) + db());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "bad.json")) << r.output;
  EXPECT_TRUE(has(r, "nothing was added")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "h.sqlite")) << "the database is not even created";
}

TEST_F(HistoryCli, DefaultDatabaseFollowsXdgDataHome) {
  const std::string report = write("a.json", "2026-11-01T02:00:00Z", "aaa", 40);
  const CommandResult r = test::run_command("XDG_DATA_HOME=" + shell_quote((dir_ / "xdg").string()) + " " +
                                            shell_quote(KWB_CLI_PATH) + " history add " + report);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "xdg" / "kwb" / "history.sqlite")) << r.output;
}

TEST_F(HistoryCli, ShowWithoutADatabaseCreatesNone) {
  const CommandResult r = kwb("show" + db());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "no history database at")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "h.sqlite"));
}

TEST_F(HistoryCli, ShowOfAnEmptyFileRefusesItAndLeavesItEmpty) {
  { std::ofstream(dir_ / "h.sqlite"); }
  const CommandResult r = kwb("show" + db());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "an empty file, not a history database")) << r.output;
  EXPECT_EQ(std::filesystem::file_size(dir_ / "h.sqlite"), 0u) << "show never writes a schema into it";
}

TEST_F(HistoryCli, NotADatabaseIsBadInput) {
  { std::ofstream(dir_ / "h.sqlite") << "plain text, not SQLite, long enough to fill a header of a database file\n"; }
  const CommandResult r = kwb("show" + db());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "h.sqlite")) << r.output;
}

#else

TEST_F(HistoryCli, WithoutSqliteSaysHowToGetIt) {
  const CommandResult r = kwb("show" + db());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "built without SQLite")) << r.output;
  EXPECT_TRUE(has(r, "apt-get install libsqlite3-dev")) << r.output;
}

#endif

TEST_F(HistoryCli, MissingVerbIsAUsageError) {
  const CommandResult r = kwb("");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace history_cli_test
}  // namespace kwb
