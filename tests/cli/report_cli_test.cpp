// `kwb report` through the real binary: the committed H100 sample renders to HTML and Markdown;
// a malformed, newer or missing report and a call without outputs are refused with exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/record/atomic_file.hpp"
#include "tests/reports/review/review_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::Mentions;
using test::shell_quote;

const std::string kSample = KWB_SOURCE_DIR "/samples/h100-smoke/report.json";

test::CommandResult kwb_report(const std::string& args) {
  return test::run_command(shell_quote(KWB_CLI_PATH) + " report " + args);
}

TEST(ReportCli, RendersTheCommittedSampleToHtmlAndMarkdown) {
  test::TempDir dir;
  const auto html = dir / "review.html", md = dir / "review.md";
  const auto r = kwb_report(shell_quote(kSample) + " --html " + shell_quote(html.string()) + " --md " +
                            shell_quote(md.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = read_text_file(html), text = read_text_file(md);
  EXPECT_NE(page.find("NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(page.find("1e293a637d14"), std::string::npos);  // the sample's git SHA
  EXPECT_NE(page.find("DRAM copy 3032 GB/s (datasheet 3350)"), std::string::npos);
  EXPECT_EQ(test::tag_balance_problem(page), "");
  // The sample holds 120 timed rmsnorm_fwd cases: one roofline point each.
  const auto start = page.find("<svg"), end = page.find("</svg>", start);
  std::size_t points = 0;
  const std::string mark = "<circle class=\"pt\"";
  for (auto p = page.find(mark, start); p != std::string::npos && p < end; p = page.find(mark, p + 1)) ++points;
  EXPECT_EQ(points, 120u);
  EXPECT_NE(text.find("### rmsnorm_fwd"), std::string::npos);
  EXPECT_NE(text.find("baseline_eager_8_launches"), std::string::npos);
}

// Every committed sample is a report this version reads (a sample trimmed by hand, e.g. its
// per-sample arrays dropped rather than emptied, would be refused): each renders to Markdown.
TEST(ReportCli, EveryCommittedSampleRenders) {
  test::TempDir dir;
  int samples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(KWB_SOURCE_DIR "/samples")) {
    const auto report = entry.path() / "report.json";
    if (!std::filesystem::exists(report)) continue;
    ++samples;
    const auto md = dir / (entry.path().filename().string() + ".md");
    const auto r = kwb_report(shell_quote(report.string()) + " --md " + shell_quote(md.string()));
    EXPECT_EQ(r.exit_code, 0) << report << ": " << r.output;
  }
  EXPECT_GE(samples, 10) << "the samples folder holds a report per committed sample";
}

// Outputs are checked before the report is read, as compare and select check theirs: a folder, a
// path under a file, an unwritable place or a symbolic link (which the write would replace rather
// than write through) is exit 2 naming the flag, and the link is left as it was.
TEST(ReportCli, AnOutputThatCannotBeWrittenIsRefusedBeforeAnythingIsRead) {
  test::TempDir dir;
  std::ofstream(dir / "file.txt") << "x";
  const auto target = dir / "target.md";
  std::ofstream(target) << "kept";
  std::filesystem::create_symlink(target, dir / "link.md");
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"--md", dir.path().string()},
      {"--html", (dir / "file.txt" / "review.html").string()},
      {"--md", "/proc/kwb-review.md"},
      {"--md", (dir / "link.md").string()},
  };
  for (const auto& [flag, path] : outputs) {
    const auto r = kwb_report(shell_quote(kSample) + " " + flag + " " + shell_quote(path));
    EXPECT_EQ(r.exit_code, 2) << flag << " " << path << ": " << r.output;
    EXPECT_TRUE(Mentions(r, "kwb report: " + flag)) << r.output;
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.md"));
  EXPECT_EQ(read_text_file(target), "kept");
}

TEST(ReportCli, EitherOutputAlone) {
  test::TempDir dir;
  const auto md = dir / "only.md";
  const auto r = kwb_report(shell_quote(kSample) + " --md " + shell_quote(md.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(md));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(ReportCli, MalformedReportNamesTheJsonPathAndExits2) {
  test::TempDir dir;
  std::string text = read_text_file(kSample);
  const std::string key = "\"median\": ";
  const auto pos = text.find(key);  // the first case's span median becomes a string
  ASSERT_NE(pos, std::string::npos);
  text.insert(pos + key.size(), "\"fast\", \"was\": ");
  atomic_write_file(dir / "bad.json", text);
  const auto r = kwb_report(shell_quote((dir / "bad.json").string()) + " --html " +
                            shell_quote((dir / "out.html").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "cases[0].timing.span.median"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.html"));
}

TEST(ReportCli, NewerSchemaAndBrokenJsonAreRefused) {
  test::TempDir dir;
  std::string text = read_text_file(kSample);
  text.replace(text.find("kwb.report/2"), 12, "kwb.report/9");
  atomic_write_file(dir / "newer.json", text);
  auto r = kwb_report(shell_quote((dir / "newer.json").string()) + " --md " + shell_quote((dir / "o.md").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "unsupported report schema \"kwb.report/9\""));
  atomic_write_file(dir / "cut.json", text.substr(0, text.size() / 2));
  r = kwb_report(shell_quote((dir / "cut.json").string()) + " --md " + shell_quote((dir / "o.md").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "invalid JSON"));
}

TEST(ReportCli, MissingFileOrNoOutputIsAUsageError) {
  test::TempDir dir;
  auto r = kwb_report(shell_quote((dir / "nope.json").string()) + " --md x.md");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "nope.json"));
  r = kwb_report(shell_quote(kSample));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--html OUT.html, --md OUT.md or both"));
}

// An empty file is said to be empty (as the app says), not "invalid JSON (byte 1)".
TEST(ReportCli, AnEmptyReportIsCalledEmpty) {
  test::TempDir dir;
  const auto empty = dir / "report.json";
  { std::ofstream touch(empty); }
  const auto r = kwb_report(shell_quote(empty.string()) + " --md " + shell_quote((dir / "r.md").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the file is empty (0 bytes)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("byte 1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kwb
