// ncu's figures into records: written into a report in place (the case's ncu_counters set, every
// other key kept, keys this build does not know included; a /2 report becomes /3), refused
// without touching the file when the case is not there or the file is no report, and the record
// of the run made under ncu written as a report of its own.
#include <gtest/gtest.h>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "reports/profile/ncu_record.hpp"
#include "reports/profile/profile_case.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace {

using Json = nlohmann::ordered_json;

CaseCounters ncu_figures() {
  CaseCounters c;
  c.source = "ncu";
  c.chip = "GH100";
  c.sets = {"memory"};
  c.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  c.note = "Nsight Compute, kernel replay; --cache-control all; --clock-control none";
  KernelCounters k1{"kernel_a", {{"gpu__time_duration.sum", 1234.5}, {"dram__bytes_read.sum", 1073741824.0}}, {}};
  KernelCounters k2{"kernel_b", {{"gpu__time_duration.sum", 10.25}, {"dram__bytes_read.sum", 1.0 / 3.0}}, {}};
  c.kernels = {k1, k2};
  c.total = total_over_kernels(c.kernels);
  return c;
}

// The rich sample report with an identity of its own for each case.
Report two_case_report() {
  Report r = test::rich_report();
  r.cases[1].nvtx_range = "rmsnorm:fused_v2:fp16:4100x4096";
  for (CaseRecord& c : r.cases) c.ncu_counters.reset();  // the import is what puts them there
  return r;
}

TEST(NcuRecord, WrittenIntoTheReportsCaseKeepingEveryOtherKey) {
  test::TempDir dir;
  const auto path = dir / "report.json";
  Report report = two_case_report();
  write_report_json(path, report);
  // A key this build does not know, in the run and in a case: kept as it was.
  Json j = Json::parse(read_text_file(path));
  j["run"]["from_a_newer_build"] = {{"x", 1}};
  j["cases"][1]["also_unknown"] = "kept";
  atomic_write_file(path, dump_json(j, 2) + "\n");

  const std::string identity = report.cases[0].nvtx_range;
  write_ncu_counters_into_report(path, identity, ncu_figures());

  const Json after = Json::parse(read_text_file(path));
  EXPECT_EQ(after["run"]["from_a_newer_build"]["x"], 1);
  EXPECT_EQ(after["cases"][1]["also_unknown"], "kept");
  Json without = after;
  without["cases"][0].erase("ncu_counters");
  EXPECT_EQ(without, j) << "nothing but the case's ncu_counters changed";

  const Report read = read_report_json(path);
  ASSERT_TRUE(read.cases[0].ncu_counters);
  const CaseCounters& c = *read.cases[0].ncu_counters;
  EXPECT_EQ(c.source, "ncu");
  EXPECT_EQ(c.note, ncu_figures().note);
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[1].values.at("dram__bytes_read.sum"), 1.0 / 3.0) << "exact through the file";
  EXPECT_EQ(c.total, ncu_figures().total);
  EXPECT_FALSE(read.cases[1].ncu_counters) << "the other case untouched";
  EXPECT_TRUE(read.cases[0].timing) << "the case keeps what it measured";
}

TEST(NcuRecord, AnOlderReportBecomesSchema3) {
  test::TempDir dir;
  const auto path = dir / "report.json";
  const Report report = two_case_report();
  write_report_json(path, report);
  Json j = Json::parse(read_text_file(path));
  j["schema"] = kOlderReportSchema;
  atomic_write_file(path, dump_json(j, 2) + "\n");
  write_ncu_counters_into_report(path, report.cases[1].nvtx_range, ncu_figures());
  EXPECT_EQ(Json::parse(read_text_file(path))["schema"], kReportSchema);
}

TEST(NcuRecord, NoSuchCaseOrNoReportLeavesTheFileAsItWas) {
  test::TempDir dir;
  const auto path = dir / "report.json";
  write_report_json(path, two_case_report());
  const std::string before = read_text_file(path);
  EXPECT_THROW(write_ncu_counters_into_report(path, "rmsnorm:fused_v2:bf16:1x1", ncu_figures()), ProfileCaseError);
  EXPECT_EQ(read_text_file(path), before);

  const auto not_report = dir / "other.json";
  atomic_write_file(not_report, R"({"schema": "kwb.selection/1", "entries": []})");
  EXPECT_THROW(write_ncu_counters_into_report(not_report, "a:b:fp32:1", ncu_figures()), ReportError);
  EXPECT_EQ(read_text_file(not_report), R"({"schema": "kwb.selection/1", "entries": []})");
  EXPECT_THROW(write_ncu_counters_into_report(dir / "missing.json", "a:b:fp32:1", ncu_figures()), ReportError);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.json"));
}

TEST(NcuRecord, TheRunUnderNcuGivesARecordOfItsOwn) {
  test::TempDir dir;
  const Report inner = two_case_report();
  const auto path = dir / "ncu-case.json";
  write_ncu_record(path, inner, inner.cases[1].nvtx_range, ncu_figures(), "inner/report.json");
  const Report read = read_report_json(path);
  ASSERT_EQ(read.cases.size(), 1u);
  EXPECT_EQ(read.cases[0].index, 1);
  ASSERT_TRUE(read.cases[0].ncu_counters);
  EXPECT_EQ(read.cases[0].ncu_counters->total, ncu_figures().total);
  EXPECT_EQ(read.run.git_sha, inner.run.git_sha) << "the environment of the run under ncu";
  EXPECT_THROW(write_ncu_record(dir / "x.json", inner, "no:such:fp32:1", ncu_figures(), "inner/report.json"),
               ProfileCaseError);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.json"));
}

}  // namespace
}  // namespace kwb
