// The JSON report round-trips every field exactly and rejects malformed input with a message that
// names the JSON path (and the file) of the problem.
#include <gtest/gtest.h>

#include <filesystem>

#include <fstream>
#include <limits>

#include "harness/record/json_report.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace json_report_test {
namespace {

using Json = nlohmann::ordered_json;
using test::bare_report;
using test::expect_same;
using test::rich_report;
using test::TempDir;

// Through text, as a file would carry it, not just through the in-memory tree.
Report through_text(const Report& report) {
  return report_from_json(Json::parse(report_to_json(report).dump()));
}

// The message of the ReportError that reading `j` throws; fails the test when none is thrown.
std::string read_error(const Json& j) {
  try {
    report_from_json(j);
  } catch (const ReportError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ReportError";
  return "";
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(JsonReport, RichReportRoundTripsFieldByField) {
  const Report original = rich_report();
  expect_same(original, through_text(original));
}

TEST(JsonReport, NonRoundDoublesRoundTripBitForBit) {
  Report report = rich_report();
  report.cases[0].timing->span.median = 0.1 + 0.2;
  report.cases[0].derived->intensity = std::nextafter(1.0, 2.0);
  report.cases[0].verify->rel_l2_err = std::numeric_limits<double>::denorm_min();
  const Report back = through_text(report);
  EXPECT_EQ(back.cases[0].timing->span.median, 0.1 + 0.2);
  EXPECT_EQ(back.cases[0].derived->intensity, std::nextafter(1.0, 2.0));
  EXPECT_EQ(back.cases[0].verify->rel_l2_err, std::numeric_limits<double>::denorm_min());
}

TEST(JsonReport, NonFiniteDoublesRoundTripAsStrings) {
  Report report = rich_report();
  report.cases[0].verify->max_abs_err = std::numeric_limits<double>::quiet_NaN();
  report.cases[0].verify->max_rel_err = std::numeric_limits<double>::infinity();
  report.cases[0].derived->speedup_vs_baseline = -std::numeric_limits<double>::infinity();
  const Json j = report_to_json(report);
  EXPECT_EQ(j["cases"][0]["verify"]["max_abs_err"], "nan");
  EXPECT_EQ(j["cases"][0]["verify"]["max_rel_err"], "inf");
  EXPECT_EQ(j["cases"][0]["derived"]["speedup_vs_baseline"], "-inf");
  expect_same(report, through_text(report));
}

TEST(JsonReport, ShapeAxisOrderIsPreservedRowsThenColsAndColsThenRows) {
  const Report report = rich_report();
  const std::string text = report_to_json(report).dump();
  const Json j = Json::parse(text);
  EXPECT_EQ(j["cases"][0]["shape"].dump(), R"({"rows":4096,"cols":4100})");
  EXPECT_EQ(j["cases"][1]["shape"].dump(), R"({"cols":4100,"rows":4096})");
  const Report back = report_from_json(j);
  using Axes = decltype(Shape::axes);
  EXPECT_EQ(back.cases[0].shape.axes, (Axes{{"rows", 4096}, {"cols", 4100}}));
  EXPECT_EQ(back.cases[1].shape.axes, (Axes{{"cols", 4100}, {"rows", 4096}}));
}

TEST(JsonReport, TopLevelKeysAreSchemaRunCasesSpeedupsInOrder) {
  const Json j = report_to_json(rich_report());
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "run", "cases", "speedups"}));
  EXPECT_EQ(j["schema"], "kwb.report/3");
}

TEST(JsonReport, SpeedupsNameBaselineAndFastestFusedWithKernelCountsAndAreNotReadBack) {
  Report report = rich_report();
  report.cases.resize(1);
  CaseRecord base = report.cases[0];
  base.role = Role::baseline;
  base.variant = "baseline_eager";
  base.disposition = Disposition::passed;
  base.timing->span.median = 4 * report.cases[0].timing->span.median;
  base.timing->kernels_per_sample = 8;
  report.cases[0].role = Role::fused;
  report.cases[0].disposition = Disposition::passed;
  report.cases[0].timing->kernels_per_sample = 1;
  report.cases.push_back(base);
  const Json j = report_to_json(report);
  ASSERT_EQ(j["speedups"].size(), 1u);
  EXPECT_EQ(j["speedups"][0]["baseline_variant"], "baseline_eager");
  EXPECT_EQ(j["speedups"][0]["baseline_kernels"], 8);
  EXPECT_EQ(j["speedups"][0]["best_kernels"], 1);
  EXPECT_DOUBLE_EQ(j["speedups"][0]["speedup"].get<double>(), 4.0);
  EXPECT_EQ(report_from_json(j).cases.size(), 2u);
}

TEST(JsonReport, NumbersAreNumbersAndEnumsAreNames) {
  const Json c = report_to_json(rich_report())["cases"][0];
  EXPECT_TRUE(c["index"].is_number_integer());
  EXPECT_TRUE(c["timing"]["span"]["median"].is_number_float());
  EXPECT_EQ(c["role"], "baseline");
  EXPECT_EQ(c["dtype"], "bf16");
  EXPECT_EQ(c["disposition"], "failed");
  EXPECT_EQ(c["timing"]["mode"], "hot");
  EXPECT_EQ(c["timing"]["stop_reason"], "time_limit");
}

TEST(JsonReport, ShapeCompactIsWrittenForPeopleAndIgnoredOnRead) {
  Json j = report_to_json(rich_report());
  EXPECT_EQ(j["cases"][0]["shape_compact"], "4096x4100");
  j["cases"][0]["shape_compact"] = "not a shape";
  j["cases"][0]["some_future_key"] = 1;
  EXPECT_EQ(report_from_json(j).cases[0].shape.to_compact(), "4096x4100");
}

TEST(JsonReport, AllOptionalsAbsentRoundTripAsAbsentKeys) {
  Report report = bare_report();
  CaseRecord no_speedup = test::rich_case(1, Shape{{{"n", 3}}});
  no_speedup.derived->speedup_vs_baseline.reset();
  report.cases.push_back(no_speedup);

  const Json j = report_to_json(report);
  for (const char* key : {"device", "ceilings", "datasheet_ceilings"})
    EXPECT_FALSE(j["run"].contains(key)) << key;
  for (const char* key : {"verify", "timing", "derived"})
    EXPECT_FALSE(j["cases"][0].contains(key)) << key;
  EXPECT_FALSE(j["cases"][1]["derived"].contains("speedup_vs_baseline"));

  const Report back = through_text(report);
  expect_same(report, back);
  EXPECT_FALSE(back.run.device.has_value());
  EXPECT_FALSE(back.cases[0].timing.has_value());
  EXPECT_FALSE(back.cases[1].derived->speedup_vs_baseline.has_value());
}

TEST(JsonReport, NullIsNotAcceptedForAnAbsentOptional) {
  Json j = report_to_json(bare_report());
  j["cases"][0]["timing"] = nullptr;
  EXPECT_EQ(read_error(j), "cases[0].timing: expected an object, got null");
}

TEST(JsonReport, WrongSchemaSaysWhichWasFoundAndWhichIsSupported) {
  Json j = report_to_json(rich_report());
  j["schema"] = "kwb.report/1";
  const std::string message = read_error(j);
  EXPECT_NE(message.find("\"kwb.report/1\""), std::string::npos) << message;
  EXPECT_NE(message.find("\"kwb.report/3\""), std::string::npos) << message;
  EXPECT_NE(message.find("\"kwb.report/2\""), std::string::npos) << message;
}

TEST(JsonReport, MissingSchemaIsAnError) {
  Json j = report_to_json(rich_report());
  j.erase("schema");
  EXPECT_EQ(read_error(j), "schema: missing required key");
}

TEST(JsonReport, MissingKeyMessageNamesTheFullPath) {
  Json j = report_to_json(rich_report());
  j["cases"][1]["timing"]["span"].erase("median");
  EXPECT_EQ(read_error(j), "cases[1].timing.span.median: missing required key");
}

TEST(JsonReport, MissingRunKeyMessageNamesThePath) {
  Json j = report_to_json(rich_report());
  j["run"]["device"].erase("uuid");
  EXPECT_EQ(read_error(j), "run.device.uuid: missing required key");
}

TEST(JsonReport, WrongTypeMessageNamesPathExpectedAndActualType) {
  Json j = report_to_json(rich_report());
  j["cases"][0]["timing"]["span"]["median"] = "fast";
  EXPECT_EQ(read_error(j), "cases[0].timing.span.median: expected a number, got string");
}

TEST(JsonReport, FractionalValueForIntegerFieldIsRejected) {
  Json j = report_to_json(rich_report());
  j["cases"][0]["shape"]["cols"] = 4100.5;
  EXPECT_EQ(read_error(j), "cases[0].shape.cols: expected an integer, got 4100.5");
}

TEST(JsonReport, IntegerOutOfRangeForItsFieldIsRejected) {
  Json j = report_to_json(rich_report());
  j["cases"][0]["index"] = std::int64_t{1} << 40;
  const std::string message = read_error(j);
  EXPECT_EQ(message.rfind("cases[0].index: integer 1099511627776 out of range", 0), 0u) << message;
}

TEST(JsonReport, UnknownEnumNameIsRejectedListingTheKnownOnes) {
  Json j = report_to_json(rich_report());
  j["cases"][0]["dtype"] = "fp64";
  EXPECT_EQ(read_error(j),
            "cases[0].dtype: unknown value \"fp64\" (expected one of: fp32, fp16, bf16)");
  j = report_to_json(rich_report());
  j["cases"][1]["timing"]["stop_reason"] = "bored";
  EXPECT_NE(read_error(j).find("cases[1].timing.stop_reason: unknown value \"bored\""),
            std::string::npos);
}

TEST(JsonReport, UnknownFlushIsRejectedListingTheKnownOnes) {
  Json j = report_to_json(rich_report());
  j["cases"][1]["timing"]["flush"] = "lukewarm";
  EXPECT_EQ(read_error(j), "cases[1].timing.flush: unknown flush \"lukewarm\" (expected one of: dirty, clean, none)");
}

TEST(JsonReport, LaunchKindAndLaunchOverheadAreWrittenAndReadBack) {
  const Json j = report_to_json(rich_report());
  EXPECT_EQ(j["cases"][0]["timing"]["launch"], "stream");
  EXPECT_EQ(j["cases"][1]["timing"]["launch"], "graph");
  EXPECT_DOUBLE_EQ(j["cases"][0]["timing"]["launch_overhead_us"].get<double>(), 2.0 / 3.0 + 1e-9);
  EXPECT_FALSE(j["cases"][1]["timing"].contains("launch_overhead_us"));  // not measured: absent
  const Report back = through_text(rich_report());
  EXPECT_EQ(back.cases[1].timing->launch, LaunchKind::graph);
  EXPECT_FALSE(back.cases[1].timing->launch_overhead_us.has_value());
}

// A report written before graph launches and the launch overhead existed reads as stream
// launches with no overhead measured, and is otherwise the same report.
TEST(JsonReport, OlderReportWithoutLaunchFieldsReadsAsStreamLaunches) {
  Report original = rich_report();
  for (auto& c : original.cases) {
    c.timing->launch = LaunchKind::stream;
    c.timing->launch_overhead_us.reset();
  }
  Json j = report_to_json(original);
  for (auto& c : j["cases"]) {
    c["timing"].erase("launch");
    c["timing"].erase("launch_overhead_us");
  }
  const Report back = report_from_json(j);
  expect_same(original, back);
  for (const auto& c : back.cases) EXPECT_EQ(c.timing->launch, LaunchKind::stream);
}

TEST(JsonReport, UnknownLaunchIsRejectedListingTheKnownOnes) {
  Json j = report_to_json(rich_report());
  j["cases"][1]["timing"]["launch"] = "warp";
  EXPECT_EQ(read_error(j), "cases[1].timing.launch: unknown value \"warp\" (expected one of: stream, graph)");
}

TEST(JsonReport, ClocksAreAbsentNotZeroWithoutNvml) {
  const Json j = report_to_json(rich_report());
  EXPECT_TRUE(j["cases"][0]["timing"].contains("clocks"));
  EXPECT_EQ(j["cases"][0]["timing"]["clocks"]["throttled_samples"], 9);
  EXPECT_FALSE(j["cases"][1]["timing"].contains("clocks"));
  EXPECT_FALSE(through_text(rich_report()).cases[1].timing->clocks.has_value());
}

TEST(JsonReport, CeilingsWithoutTheCopyMethodAreRejected) {
  Json j = report_to_json(rich_report());
  j["run"]["ceilings"].erase("dram_copy_method");
  EXPECT_EQ(read_error(j), "run.ceilings.dram_copy_method: missing required key");
}

TEST(JsonReport, CaseFromJsonAloneNamesPathsFromTheCase) {
  Json c = to_json(rich_report().cases[0]);
  c.erase("op");
  try {
    case_from_json(c);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_STREQ(e.what(), "op: missing required key");
  }
}

TEST(JsonReport, RunInfoRoundTripsOnItsOwn) {
  const RunInfo run = rich_report().run;
  expect_same(run, run_info_from_json(Json::parse(to_json(run).dump())));
}

TEST(JsonReport, NonObjectDocumentIsRejected) {
  EXPECT_EQ(read_error(Json::array()), "(top level): expected an object, got array");
}

TEST(JsonReportFile, WriteThenReadRoundTrips) {
  TempDir dir;
  const auto path = dir / "nested/run/report.json";
  const Report original = rich_report();
  write_report_json(path, original);
  expect_same(original, read_report_json(path));
}

TEST(JsonReportFile, InvalidJsonNamesFileLineAndByte) {
  TempDir dir;
  const auto path = dir / "broken.json";
  write_text(path, "{\n  \"schema\": \"kwb.report/2\",\n  \"run\": ,\n}\n");
  try {
    read_report_json(path);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path.string() + ": invalid JSON (byte ", 0), 0u) << message;
    EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  }
}

TEST(JsonReportFile, ContentErrorsNameTheFileAndThePath) {
  TempDir dir;
  const auto path = dir / "old.json";
  Json j = report_to_json(rich_report());
  j["cases"][0]["timing"]["span"]["median"] = "fast";
  write_text(path, j.dump(2));
  try {
    read_report_json(path);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": cases[0].timing.span.median: expected a number, got string");
  }
}

TEST(JsonReportFile, MissingFileNamesIt) {
  TempDir dir;
  const auto path = dir / "absent.json";
  try {
    read_report_json(path);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace json_report_test
}  // namespace kwb

namespace kwb {
namespace json_report_test {
namespace {

TEST(JsonReport, PerOutputChecksRoundTripAndAreReadStrictly) {
  const Report report = rich_report();
  ASSERT_EQ(report.cases[0].verify->outputs.size(), 2u);
  const Report back = report_from_json(Json::parse(report_to_json(report).dump()));
  EXPECT_EQ(back.cases[0].verify->outputs[1].elem, ElemType::fp32);
  EXPECT_EQ(back.cases[0].verify->sampling, "sampled 512 of 4096 along rows");

  Json j = report_to_json(report);
  j["cases"][0]["verify"]["outputs"][1].erase("elements_total");
  EXPECT_EQ(read_error(j), "cases[0].verify.outputs[1].elements_total: missing required key");
  j = report_to_json(report);
  j["cases"][0]["verify"]["outputs"][0]["elem"] = "case_dtype";
  EXPECT_NE(read_error(j).find("cases[0].verify.outputs[0].elem: unknown value \"case_dtype\""),
            std::string::npos) << read_error(j);
  j = report_to_json(report);
  j["cases"][0]["verify"].erase("outputs");
  EXPECT_EQ(read_error(j), "cases[0].verify.outputs: missing required key");
}

// The committed sample reports are what a new user opens first: they must read with this build
// (a schema or codec change that breaks them fails here, not in someone's hands).
TEST(JsonReport, CommittedSampleReportsReadBack) {
  int reports = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(KWB_SOURCE_DIR "/samples")) {
    if (entry.path().filename() != "report.json") continue;
    ++reports;
    const Report report = read_report_json(entry.path());
    EXPECT_FALSE(report.cases.empty()) << entry.path();
    for (const auto& c : report.cases)
      if (c.disposition == Disposition::passed) EXPECT_TRUE(c.timing.has_value()) << entry.path() << " " << c.nvtx_range;
  }
  EXPECT_GT(reports, 0) << "no samples/**/report.json found";
}

}  // namespace
}  // namespace json_report_test
}  // namespace kwb
