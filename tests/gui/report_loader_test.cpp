// gui/model/report_loader: every file the app may be given opens or says why, never throws.
#include "gui/model/report_loader.hpp"

#include <gtest/gtest.h>

#include "tests/gui/gui_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

TEST(GuiReportLoader, SampleReportLoadsWithItsCases) {
  const LoadOutcome out = load_report(test::kSampleReport);
  ASSERT_TRUE(out.loaded.has_value()) << out.error;
  EXPECT_TRUE(out.error.empty());
  EXPECT_EQ(out.loaded->report.cases.size(), 127u);
  EXPECT_EQ(out.loaded->name, "h100-roofline-review/report.json");
}

TEST(GuiReportLoader, EmptyFileSaysItIsEmpty) {
  test::TempDir dir;
  const LoadOutcome out = load_report(test::write_file(dir / "report.json", ""));
  EXPECT_FALSE(out.loaded.has_value());
  EXPECT_NE(out.error.find("is empty"), std::string::npos) << out.error;
}

TEST(GuiReportLoader, MalformedJsonNamesTheFileAndThePlace) {
  test::TempDir dir;
  const LoadOutcome out = load_report(
      test::write_file(dir / "report.json", "{\"schema\": \"kwb.report/2\", \"run\": "));
  EXPECT_FALSE(out.loaded.has_value());
  EXPECT_NE(out.error.find("report.json"), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("invalid JSON"), std::string::npos) << out.error;
}

TEST(GuiReportLoader, WrongShapeNamesTheJsonPath) {
  test::TempDir dir;
  const LoadOutcome out = load_report(
      test::write_file(dir / "report.json", "{\"schema\": \"kwb.report/2\", \"run\": 3}"));
  EXPECT_FALSE(out.loaded.has_value());
  EXPECT_NE(out.error.find("run"), std::string::npos) << out.error;
}

TEST(GuiReportLoader, NewerSchemaSaysWhichAndWhatToDo) {
  test::TempDir dir;
  const LoadOutcome out = load_report(
      test::write_file(dir / "report.json", test::sample_with_schema(test::newer_schema())));
  EXPECT_FALSE(out.loaded.has_value());
  EXPECT_NE(out.error.find(test::newer_schema()), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("newer"), std::string::npos) << out.error;
}

TEST(GuiReportLoader, MissingFileAndFolderAreRefusedByName) {
  test::TempDir dir;
  EXPECT_NE(load_report(dir / "nope.json").error.find("no such file"), std::string::npos);
  EXPECT_NE(load_report(dir.path()).error.find("folder"), std::string::npos);
}

TEST(GuiReportLoader, ReportWithoutCasesLoadsWithANote) {
  test::TempDir dir;
  std::string text = test::sample_with_schema("kwb.report/2");
  // Keep the envelope and the run, drop every case.
  const auto cases = text.find("\"cases\"");
  const auto speedups = text.find("\"speedups\"");
  ASSERT_NE(cases, std::string::npos);
  ASSERT_NE(speedups, std::string::npos);
  text = text.substr(0, cases) + "\"cases\": [],\n  " + text.substr(speedups);
  const LoadOutcome out = load_report(test::write_file(dir / "report.json", text));
  ASSERT_TRUE(out.loaded.has_value()) << out.error;
  EXPECT_NE(out.note.find("no cases"), std::string::npos);
}

}  // namespace
}  // namespace kwb::gui
