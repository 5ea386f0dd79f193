// The record codec's hardware counters (kwb.report/3): a case's counters, those imported from
// Nsight Compute, the measured roofline and the GPU's chip go out and come back exactly, through
// text and through a file; a kwb.report/2 report (none of them) still reads; malformed counters
// are refused with the JSON path of the fault.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/record/json_report.hpp"
#include "harness/record/record_json.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace counters_json_test {
namespace {

using Json = nlohmann::ordered_json;
using test::expect_same;
using test::rich_report;
using test::TempDir;

Report through_text(const Report& report) { return report_from_json(Json::parse(report_to_json(report).dump())); }

std::string read_error(const Json& j) {
  try {
    report_from_json(j);
  } catch (const ReportError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ReportError";
  return "";
}

TEST(CountersJson, CountersNcuCountersMeasuredAndChipAreWrittenWhereTheyBelong) {
  const Report report = rich_report();
  ASSERT_TRUE(report.cases[0].counters && report.cases[0].ncu_counters && report.cases[0].derived->measured);
  const Json j = report_to_json(report);
  EXPECT_EQ(j["schema"], "kwb.report/3");
  EXPECT_EQ(j["run"]["device"]["chip"], "GH100");
  const Json& c = j["cases"][0]["counters"];
  EXPECT_EQ(c["source"], "cupti");
  EXPECT_EQ(c["passes"], 4);
  EXPECT_EQ(c["sets"], Json::array({"memory", "occupancy"}));
  EXPECT_FALSE(c.contains("unavailable")) << "counters that were read say nothing about unavailability";
  ASSERT_EQ(c["kernels"].size(), 2u);
  EXPECT_EQ(c["kernels"][0]["launch"]["grid"], Json::array({16384, 3, 1}));
  EXPECT_EQ(c["kernels"][0]["launch"]["registers_per_thread"], 40);
  EXPECT_FALSE(c["kernels"][1].contains("launch"));
  EXPECT_TRUE(c["kernels"][0]["values"]["dram__bytes_read.sum"].is_number());
  EXPECT_TRUE(c["total"]["gpu__time_duration.sum"].is_number());
  EXPECT_EQ(j["cases"][0]["ncu_counters"]["source"], "ncu");
  const Json& m = j["cases"][0]["derived"]["measured"];
  EXPECT_TRUE(m["dram_bytes"].is_number());
  EXPECT_EQ(m["flags"].size(), 2u);
}

TEST(CountersJson, AReportWithCountersReadsBackEqualThroughTextAndThroughAFile) {
  const Report original = rich_report();
  {
    SCOPED_TRACE("text");
    expect_same(original, through_text(original));
  }
  TempDir dir;
  write_report_json(dir / "report.json", original);
  SCOPED_TRACE("file");
  expect_same(original, read_report_json(dir / "report.json"));
}

TEST(CountersJson, UnavailableCountersRoundTripWithoutKernels) {
  Report report = rich_report();
  CaseCounters& c = *report.cases[1].counters;
  c.unavailable = "ERR_NVGPUCTRPERM: the driver allows counters to admin users only (NVreg_RestrictProfilingToAdminUsers=0)";
  c.kernels.clear();
  c.total.clear();
  c.passes = 0;
  const Json j = report_to_json(report);
  EXPECT_EQ(j["cases"][1]["counters"]["unavailable"], c.unavailable);
  const Report back = report_from_json(j);
  expect_same(report, back);
  EXPECT_EQ(back.cases[1].counters->unavailable, c.unavailable);
}

TEST(CountersJson, NonFiniteCounterValuesRoundTrip) {
  // A ratio over zero cycles evaluates to NaN; a rate over zero time to infinity.
  Report report = rich_report();
  auto& values = report.cases[0].counters->kernels[1].values;
  values["lts__t_sector_hit_rate.pct"] = std::numeric_limits<double>::quiet_NaN();
  values["dram__bytes_read.sum.per_second"] = std::numeric_limits<double>::infinity();
  const Json j = report_to_json(report);
  EXPECT_EQ(j["cases"][0]["counters"]["kernels"][1]["values"]["lts__t_sector_hit_rate.pct"], "nan");
  const Report back = report_from_json(Json::parse(j.dump()));
  const auto& got = back.cases[0].counters->kernels[1].values;
  EXPECT_TRUE(std::isnan(got.at("lts__t_sector_hit_rate.pct")));
  EXPECT_EQ(got.at("dram__bytes_read.sum.per_second"), std::numeric_limits<double>::infinity());
}

TEST(CountersJson, MeasuredWithoutFlopsKeepsThemAbsent) {
  Report report = rich_report();
  MeasuredWork& m = *report.cases[0].derived->measured;
  m.flops.reset();
  m.flop_ratio.reset();
  m.intensity.reset();
  m.flags.clear();
  const Json j = report_to_json(report);
  EXPECT_FALSE(j["cases"][0]["derived"]["measured"].contains("flops"));
  EXPECT_FALSE(j["cases"][0]["derived"]["measured"].contains("intensity"));
  expect_same(report, through_text(report));
}

TEST(CountersJson, AVersionTwoReportWithoutCountersStillReads) {
  Json j = report_to_json(rich_report());
  j["schema"] = "kwb.report/2";
  j["run"]["device"].erase("chip");
  for (auto& c : j["cases"]) {
    c.erase("counters");
    c.erase("ncu_counters");
    c["derived"].erase("measured");
  }
  const Report back = report_from_json(j);
  EXPECT_EQ(back.run.device->chip, "");
  ASSERT_EQ(back.cases.size(), 2u);
  for (const CaseRecord& c : back.cases) {
    EXPECT_FALSE(c.counters);
    EXPECT_FALSE(c.ncu_counters);
    ASSERT_TRUE(c.derived);
    EXPECT_FALSE(c.derived->measured);
  }
}

TEST(CountersJson, AGridOfTwoDimensionsIsRefusedWithItsPath) {
  Json j = report_to_json(rich_report());
  j["cases"][0]["counters"]["kernels"][0]["launch"]["grid"] = Json::array({16384, 3});
  EXPECT_EQ(read_error(j), "cases[0].counters.kernels[0].launch.grid: expected 3 dimensions (x, y, z), got 2");
}

TEST(CountersJson, ABlockOfFourDimensionsIsRefusedWithTheBlocksPathNotTheGrids) {
  Json j = report_to_json(rich_report());
  j["cases"][0]["ncu_counters"]["kernels"][0]["launch"] = report_to_json(rich_report())["cases"][0]["counters"]["kernels"][0]["launch"];
  j["cases"][0]["ncu_counters"]["kernels"][0]["launch"]["block"] = Json::array({256, 2, 1, 1});
  EXPECT_EQ(read_error(j), "cases[0].ncu_counters.kernels[0].launch.block: expected 3 dimensions (x, y, z), got 4");
}

TEST(CountersJson, MalformedCountersNameTheirPath) {
  const Json good = report_to_json(rich_report());
  Json j = good;
  j["cases"][0]["counters"]["total"]["dram__bytes_read.sum"] = "lots";
  EXPECT_EQ(read_error(j), "cases[0].counters.total.dram__bytes_read.sum: expected a number, got string");
  j = good;
  j["cases"][1]["counters"].erase("passes");
  EXPECT_EQ(read_error(j), "cases[1].counters.passes: missing required key");
  j = good;
  j["cases"][0]["counters"]["kernels"][1]["values"] = Json::array();
  EXPECT_EQ(read_error(j), "cases[0].counters.kernels[1].values: expected an object, got array");
  j = good;
  j["cases"][0]["counters"]["kernels"][0]["launch"]["grid"][2] = 1.5;
  EXPECT_EQ(read_error(j), "cases[0].counters.kernels[0].launch.grid[2]: expected an integer, got 1.5");
  j = good;
  j["cases"][0]["derived"]["measured"]["flags"] = "none";
  EXPECT_EQ(read_error(j), "cases[0].derived.measured.flags: expected an array, got string");
  j = good;
  j["run"]["device"]["chip"] = 100;
  EXPECT_EQ(read_error(j), "run.device.chip: expected a string, got number");
}

TEST(CountersJson, ACaseRecordAloneCarriesItsCounters) {
  const CaseRecord c = rich_report().cases[0];
  const CaseRecord back = case_from_json(Json::parse(to_json(c).dump()));
  expect_same(c, back);
}

}  // namespace
}  // namespace counters_json_test
}  // namespace kwb
