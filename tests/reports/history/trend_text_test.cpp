// The trend text of `kwb history show`, from hand-made rows (no database).
#include <gtest/gtest.h>

#include <sstream>

#include "reports/history/trend_text.hpp"

namespace kwb::history {
namespace {

TrendRow row(const std::string& identity, const std::string& device, int day, std::optional<double> median,
             const std::string& disposition = "passed") {
  TrendRow r;
  r.identity = identity;
  r.op = identity.substr(0, identity.find(':'));
  r.device_name = device;
  r.driver = "580.95.05";
  r.started_at = "2026-11-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + "T02:00:00Z";
  r.git_sha = "sha" + std::to_string(day) + "0123456789abcdef";
  r.median_us = median;
  r.disposition = disposition;
  return r;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(TrendText, OneBlockPerCaseAndDeviceWithTheStepFlagged) {
  std::vector<TrendRow> rows;
  const double medians[] = {40.0, 40.1, 39.9, 40.0, 40.2, 44.0, 44.1};
  for (int day = 1; day <= 7; ++day) rows.push_back(row("rmsnorm_fwd:v:bf16:rows=8", "H100", day, medians[day - 1]));
  rows.push_back(row("rmsnorm_fwd:v:bf16:rows=8", "H200", 1, 30.0));
  rows.push_back(row("softmax_fwd:online:bf16:rows=8", "H100", 1, std::nullopt, "skipped"));
  std::ostringstream out;
  const TrendSummary s = print_trend(out, rows);
  const std::string text = out.str();
  EXPECT_EQ(s.series, 3);
  EXPECT_EQ(s.runs, 9);
  EXPECT_EQ(s.change_points, 1);
  EXPECT_EQ(count(text, "CHANGE"), 1u) << text;
  EXPECT_NE(text.find("rmsnorm_fwd:v:bf16:rows=8  on H100 (driver 580.95.05)"), std::string::npos) << text;
  EXPECT_NE(text.find("rmsnorm_fwd:v:bf16:rows=8  on H200"), std::string::npos) << text;
  // The step's line: its date, its SHA cut to 12 characters, +9.5% vs the previous run, CHANGE.
  const auto step = text.find("2026-11-06 02:00  sha601234567");
  ASSERT_NE(step, std::string::npos) << text;
  const std::string line = text.substr(step, text.find('\n', step) - step);
  EXPECT_NE(line.find("44.00"), std::string::npos) << line;
  EXPECT_NE(line.find("+9.5%"), std::string::npos) << line;
  EXPECT_NE(line.find("CHANGE +10.0% vs 40.00 us"), std::string::npos) << line;
  EXPECT_NE(text.find("skipped"), std::string::npos) << text;  // an untimed run shows its disposition
}

TEST(TrendText, RunsMeasuredDifferentlyAreSeparateSeries) {
  std::vector<TrendRow> rows = {row("rmsnorm_fwd:v:bf16:rows=8", "H100", 1, 40.0),
                                row("rmsnorm_fwd:v:bf16:rows=8", "H100", 2, 20.0)};
  rows[0].settings = "mode cold, flush dirty, preset default";
  rows[1].settings = "mode hot, flush none, preset default";
  std::ostringstream out;
  EXPECT_EQ(print_trend(out, rows).series, 2);
  EXPECT_NE(out.str().find("on H100 (driver 580.95.05), mode hot, flush none"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("-50.0%"), std::string::npos) << "no change across settings: " << out.str();
}

TEST(TrendText, ALimitPrintsTheCasesWithAChangePointFirstAndCountsThemAll) {
  std::vector<TrendRow> rows;
  const double steady[] = {40.0, 40.1, 39.9, 40.0, 40.2, 40.1};
  const double stepped[] = {40.0, 40.1, 39.9, 40.0, 40.2, 44.0};
  for (int day = 1; day <= 6; ++day) rows.push_back(row("a_op:v:bf16:rows=8", "H100", day, steady[day - 1]));
  for (int day = 1; day <= 6; ++day) rows.push_back(row("b_op:v:bf16:rows=8", "H100", day, stepped[day - 1]));
  for (int day = 1; day <= 6; ++day) rows.push_back(row("c_op:v:bf16:rows=8", "H100", day, steady[day - 1]));
  std::ostringstream out;
  const TrendSummary s = print_trend(out, rows, {}, 2);
  EXPECT_EQ(s.series, 3);
  EXPECT_EQ(s.printed, 2);
  EXPECT_EQ(s.runs, 18);
  EXPECT_EQ(s.change_points, 1);
  const std::string text = out.str();
  const auto b = text.find("b_op:"), a = text.find("a_op:");
  ASSERT_NE(b, std::string::npos) << text;
  ASSERT_NE(a, std::string::npos) << text;
  EXPECT_LT(b, a) << "the case with the change point first";
  EXPECT_EQ(text.find("c_op:"), std::string::npos) << text;
  // Without a limit, the rows' order.
  std::ostringstream every;
  EXPECT_EQ(print_trend(every, rows).printed, 3);
  EXPECT_LT(every.str().find("a_op:"), every.str().find("b_op:"));
}

TEST(TrendText, EmptyRowsPrintNothing) {
  std::ostringstream out;
  EXPECT_EQ(print_trend(out, {}).series, 0);
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace kwb::history
