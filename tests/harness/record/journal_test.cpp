// The journal keeps one line per case on disk as it goes, survives a run killed mid-line, and
// refuses a journal damaged anywhere but at its end.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/record/journal.hpp"
#include "harness/record/journal_reader.hpp"
#include "harness/record/json_report.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace {

using test::expect_same;
using test::rich_report;
using test::TempDir;

std::vector<CaseRecord> sample_cases() {
  std::vector<CaseRecord> cases = rich_report().cases;
  CaseRecord skipped = test::bare_report().cases[0];
  skipped.index = 2;
  cases.push_back(skipped);
  return cases;
}

void append_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

void expect_same_cases(const std::vector<CaseRecord>& a, const std::vector<CaseRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i));
    expect_same(a[i], b[i]);
  }
}

TEST(Journal, AppendThenReadGivesBackEveryRecordInOrder) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  {
    Journal journal(path);
    for (const auto& c : cases) journal.append(c);
  }
  std::vector<std::string> warnings;
  expect_same_cases(cases, read_journal(path, &warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST(Journal, EachRecordIsOneCompactLineVisibleBeforeTheJournalCloses) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  Journal journal(path);
  journal.append(sample_cases()[0]);
  journal.append(sample_cases()[1]);
  const std::string text = read_text_file(path);  // journal still open: already on disk
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(read_journal(path).size(), 2u);
}

TEST(Journal, ReopeningAppendsAfterEarlierRecords) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  { Journal(path).append(cases[0]); }
  { Journal(path).append(cases[1]); }
  expect_same_cases({cases[0], cases[1]}, read_journal(path));
}

TEST(Journal, CreatesMissingFolders) {
  TempDir dir;
  const auto path = dir / "a/b/c/journal.jsonl";
  Journal(path).append(sample_cases()[2]);
  EXPECT_EQ(read_journal(path).size(), 1u);
}

TEST(Journal, TruncatedLastLineIsSkippedWithAWarning) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  { Journal(path).append(cases[0]); }
  const std::string full = dump_json(to_json(cases[1]));
  append_text(path, full.substr(0, full.size() / 2));  // killed mid-write: no closing brace
  std::vector<std::string> warnings;
  const auto read = read_journal(path, &warnings);
  expect_same_cases({cases[0]}, read);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path.string() + ":2:"), std::string::npos) << warnings[0];
  EXPECT_NO_THROW(read_journal(path));  // and without a warnings sink it is still tolerated
}

TEST(Journal, GarbledMiddleLineThrowsNamingTheLine) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  { Journal(path).append(cases[0]); }
  append_text(path, "{\"index\": 1, \"op\": \n");
  { Journal(path).append(cases[1]); }
  try {
    read_journal(path);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path.string() + ":2: ", 0), 0u) << message;
  }
}

TEST(Journal, ValidJsonThatIsNotARecordInTheMiddleThrowsWithItsPath) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  nlohmann::ordered_json bad = to_json(cases[0]);
  bad["dtype"] = "fp8";
  append_text(path, dump_json(bad) + "\n");
  { Journal(path).append(cases[1]); }
  try {
    read_journal(path);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(":1: dtype: unknown value \"fp8\""), std::string::npos)
        << e.what();
  }
}

TEST(Journal, ReopeningAfterATornLineCutsItSoNewRecordsStayReadable) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  { Journal(path).append(cases[0]); }
  append_text(path, "{\"index\": 1, \"op\": \"rms");  // torn, no newline
  { Journal(path).append(cases[2]); }  // a resumed run
  std::vector<std::string> warnings;
  expect_same_cases({cases[0], cases[2]}, read_journal(path, &warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST(Journal, BlankLinesAreIgnored) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = sample_cases();
  append_text(path, "\n" + dump_json(to_json(cases[0])) + "\n\n");
  EXPECT_EQ(read_journal(path).size(), 1u);
}

TEST(Journal, ReadingAMissingJournalNamesIt) {
  TempDir dir;
  const auto path = dir / "none.jsonl";
  try {
    read_journal(path);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kwb
