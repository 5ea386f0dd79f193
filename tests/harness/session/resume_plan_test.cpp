// Resuming from a journal: a journal cut at any byte (by a kill) resumes to the full plan with no
// case twice; a different plan, flags or device is refused; a damaged middle line names file:line;
// a journal of an older version (no header) is refused clearly.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>

#include "harness/session/resume_plan.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/journal.hpp"
#include "harness/record/journal_reader.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace {

using test::TempDir;

// A plan of `n` distinct cases (variants "v0".."v{n-1}") and the header a fresh run writes.
std::vector<CaseRecord> synthetic_cases(int n) {
  std::vector<CaseRecord> cases;
  for (int i = 0; i < n; ++i) {
    CaseRecord c = test::bare_report().cases[0];
    c.index = i;
    c.variant = "v" + std::to_string(i);
    c.reason = "case " + std::to_string(i);
    cases.push_back(c);
  }
  return cases;
}

JournalHeader header_for(const std::vector<CaseRecord>& cases) {
  JournalHeader h;
  h.plan_flags = {{"op", {"softmax"}}, {"preset", "quick"}};
  for (const auto& c : cases) h.plan.push_back(record_identity(c));
  h.run = test::rich_report().run;
  return h;
}

std::vector<std::string> identities(const std::vector<CaseRecord>& records) {
  std::vector<std::string> ids;
  for (const auto& r : records) ids.push_back(record_identity(r));
  return ids;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

const auto kNoFlags = nlohmann::ordered_json::object();

TEST(ResumePlan, JournalCutAtEveryByteResumesToTheFullPlanWithNoCaseTwice) {
  TempDir dir;
  const auto cases = synthetic_cases(5);
  const JournalHeader header = header_for(cases);
  const auto full_path = dir / "full.jsonl";
  {
    Journal journal(full_path);
    journal.write_header(header);
    for (const auto& c : cases) journal.append(c);
  }
  const std::string full = read_text_file(full_path);
  const std::size_t header_end = full.find('\n');  // a header missing only its newline still reads
  std::size_t resumed = 0;
  for (std::size_t cut = 0; cut <= full.size(); ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut) + " of " + std::to_string(full.size()));
    const auto path = dir / "journal.jsonl";
    write_text(path, full.substr(0, cut));
    const JournalContents before = read_journal_contents(path);
    if (cut < header_end) {  // killed before the first case: nothing to resume, said so
      EXPECT_THROW(plan_resume(before, path.string(), kNoFlags, header.plan), ResumeError);
      continue;
    }
    const ResumePlan plan = plan_resume(before, path.string(), kNoFlags, header.plan);
    EXPECT_EQ(plan.recorded.size() + plan.remaining.size(), cases.size());
    // The resumed run appends the remaining cases to the same journal, as the session does.
    {
      Journal journal(path);
      for (std::size_t i : plan.remaining) journal.append(cases[i]);
    }
    const JournalContents after = read_journal_contents(path);
    EXPECT_TRUE(after.warnings.empty());
    const auto ids = identities(after.records);
    EXPECT_EQ(std::multiset<std::string>(header.plan.begin(), header.plan.end()),
              std::multiset<std::string>(ids.begin(), ids.end()))
        << "every case exactly once";
    const ResumePlan done = plan_resume(after, path.string(), kNoFlags, header.plan);
    EXPECT_TRUE(done.remaining.empty());
    EXPECT_EQ(identities(recorded_in_plan_order(*after.header, done)), header.plan) << "plan order";
    ++resumed;
  }
  EXPECT_EQ(resumed, full.size() + 1 - header_end);
}

TEST(ResumePlan, RemainingCasesAreThoseNotRecordedInPlanOrder) {
  std::mt19937 rng(7);
  const auto cases = synthetic_cases(12);
  JournalContents contents{header_for(cases), {}, {}};
  std::vector<std::size_t> expected;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (rng() % 2) contents.records.push_back(cases[i]);  // recorded, out of order below
    else expected.push_back(i);
  }
  std::shuffle(contents.records.begin(), contents.records.end(), rng);
  const ResumePlan plan = plan_resume(contents, "j", kNoFlags, contents.header->plan);
  EXPECT_EQ(plan.remaining, expected);
  EXPECT_EQ(plan.recorded.size(), cases.size() - expected.size());
}

TEST(ResumePlan, RefusesADifferentPlan) {
  const auto cases = synthetic_cases(4);
  JournalContents contents{header_for(cases), {cases[0]}, {}};
  auto plan = contents.header->plan;
  plan[2] = "softmax:other:fp32:7";
  try {
    plan_resume(contents, "dir/journal.jsonl", kNoFlags, plan);
    FAIL() << "a different plan was accepted";
  } catch (const ResumeError& e) {
    EXPECT_NE(std::string(e.what()).find("first difference at case 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dir/journal.jsonl"), std::string::npos) << e.what();
  }
  plan = contents.header->plan;
  plan.pop_back();
  EXPECT_THROW(plan_resume(contents, "j", kNoFlags, plan), ResumeError) << "a shorter plan";
}

TEST(ResumePlan, RefusesFlagsThatDifferFromTheJournalsAndAcceptsTheSameOnes) {
  const auto cases = synthetic_cases(3);
  JournalContents contents{header_for(cases), {}, {}};
  const auto& plan = contents.header->plan;
  EXPECT_NO_THROW(plan_resume(contents, "j", {{"preset", "quick"}}, plan));
  try {
    plan_resume(contents, "j", {{"preset", "precise"}}, plan);
    FAIL() << "another preset was accepted";
  } catch (const ResumeError& e) {
    EXPECT_NE(std::string(e.what()).find("--preset \"precise\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"quick\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_resume(contents, "j", {{"seed", "2"}}, plan), ResumeError) << "a flag the run did not have";
}

TEST(ResumePlan, RefusesAnotherDevice) {
  DeviceInfo a;
  a.name = "NVIDIA H100 80GB HBM3";
  a.uuid = "GPU-1111";
  DeviceInfo b = a;
  EXPECT_EQ(resume_device_mismatch(a, b), std::nullopt);
  b.uuid = "GPU-2222";
  const auto problem = resume_device_mismatch(a, b);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("GPU-1111"), std::string::npos);
  EXPECT_NE(problem->find("GPU-2222"), std::string::npos);
}

TEST(ResumePlan, RefusesRecordsOutsideThePlanOrRecordedTwice) {
  const auto cases = synthetic_cases(3);
  JournalContents twice{header_for(cases), {cases[1], cases[1]}, {}};
  EXPECT_THROW(plan_resume(twice, "j", kNoFlags, twice.header->plan), ResumeError);
  JournalContents outside{header_for(cases), {synthetic_cases(4)[3]}, {}};
  EXPECT_THROW(plan_resume(outside, "j", kNoFlags, outside.header->plan), ResumeError);
}

TEST(ResumePlan, OldJournalWithoutHeaderReadsButIsRefusedClearly) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = synthetic_cases(2);
  {
    Journal journal(path);  // as older versions wrote it: records only
    for (const auto& c : cases) journal.append(c);
  }
  EXPECT_EQ(read_journal(path).size(), 2u);
  const JournalContents contents = read_journal_contents(path);
  EXPECT_FALSE(contents.header.has_value());
  try {
    plan_resume(contents, path.string(), kNoFlags, identities(cases));
    FAIL() << "an old journal was resumed";
  } catch (const ResumeError& e) {
    EXPECT_NE(std::string(e.what()).find("older kwb"), std::string::npos) << e.what();
  }
}

TEST(ResumePlan, MalformedMiddleLineNamesFileAndLineAndHeaderRoundTrips) {
  TempDir dir;
  const auto path = dir / "journal.jsonl";
  const auto cases = synthetic_cases(3);
  const JournalHeader header = header_for(cases);
  {
    Journal journal(path);
    journal.write_header(header);
    journal.append(cases[0]);
  }
  const JournalContents good = read_journal_contents(path);
  ASSERT_TRUE(good.header.has_value());
  EXPECT_EQ(good.header->plan, header.plan);
  EXPECT_EQ(good.header->plan_flags, header.plan_flags);
  EXPECT_EQ(good.header->run.device->uuid, header.run.device->uuid);
  std::string text = read_text_file(path);
  write_text(path, text + "{\"op\": oops\n" + dump_json(to_json(cases[1])) + "\n");
  try {
    read_journal_contents(path);
    FAIL() << "a garbled middle line was accepted";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":3"), std::string::npos) << e.what();
  }
  write_text(path, "{\"schema\":\"kwb.journal/9\"}\n");
  EXPECT_THROW(read_journal_contents(path), ReportError) << "a newer journal schema";
}

}  // namespace
}  // namespace kwb
