// gui/model/workbench: opening (and failing to), the visible rows under filters and sort, the
// shared selection, the roofline's points and roofs, the comparison of two reports.
#include "gui/model/workbench.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/gui/gui_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

TEST(GuiWorkbench, FailedOpenLeavesAnErrorMessageAndNoReport) {
  test::TempDir dir;
  Workbench wb;
  EXPECT_FALSE(wb.open(test::write_file(dir / "empty.json", "")));
  EXPECT_FALSE(wb.open(
      test::write_file(dir / "newer.json", test::sample_with_schema(test::newer_schema()))));
  EXPECT_FALSE(wb.open(test::write_file(dir / "broken.json", "{ not json")));
  EXPECT_TRUE(wb.reports().empty());
  ASSERT_EQ(wb.messages().size(), 3u);
  for (const Message& m : wb.messages()) EXPECT_EQ(m.level, Message::Level::error) << m.text;
  EXPECT_NE(wb.messages()[0].text.find("empty"), std::string::npos);
  EXPECT_NE(wb.messages()[1].text.find(test::newer_schema()), std::string::npos);
  EXPECT_NE(wb.messages()[2].text.find("invalid JSON"), std::string::npos);
}

TEST(GuiWorkbench, FiltersAndSortShapeTheVisibleRows) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  EXPECT_EQ(wb.visible_rows().size(), 127u);
  wb.set_filters({"softmax_fwd", "", "", ""});
  EXPECT_EQ(wb.visible_rows().size(), 24u);
  wb.set_sort(Column::time_us, true);
  const auto& v = wb.visible_rows();
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!std::isnan(wb.rows()[v[i]].time_us))
      EXPECT_LE(wb.rows()[v[i - 1]].time_us, wb.rows()[v[i]].time_us);
}

TEST(GuiWorkbench, TwoReportsOfOneNameAreToldApartByTheReportFilter) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  ASSERT_TRUE(wb.open(test::kSampleReport));
  ASSERT_EQ(wb.reports().size(), 2u);
  EXPECT_NE(wb.reports()[0].name, wb.reports()[1].name);
  EXPECT_EQ(wb.reports()[1].name, wb.reports()[0].name + " (2)");
  Filters f;
  f.report = wb.reports()[1].name;
  wb.set_filters(f);
  EXPECT_EQ(wb.visible_rows().size(), 127u);  // one report's rows, not both
  for (auto i : wb.visible_rows()) EXPECT_EQ(wb.rows()[i].report, wb.reports()[1].name);
}

TEST(GuiWorkbench, ALiveReportAndTheReportThatReplacesItAreNumberedBesideOneOfTheSameName) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  const std::string name = wb.reports()[0].name;
  LoadedReport live;
  live.name = name;
  const int index = wb.add_live_report(live);
  EXPECT_EQ(wb.reports()[index].name, name + " (2)");
  LoadedReport saved;
  saved.name = name;  // the saved report.json of the run, under its own display name
  wb.replace_report(index, saved);
  EXPECT_EQ(wb.reports()[index].name, name + " (2)") << "never the name of the other open report";
  wb.replace_report(0, wb.reports()[0]);
  EXPECT_EQ(wb.reports()[0].name, name) << "a report keeps its name when replaced by itself";
}

TEST(GuiWorkbench, SelectionIsSharedAndCopiesAsCsv) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  wb.select({0, 3});
  wb.select({0, 5}, true);
  EXPECT_EQ(wb.focus(), (CaseRef{0, 5}));
  EXPECT_EQ(wb.marked().size(), 2u);
  const std::string csv = wb.marked_as_csv();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);  // header + two rows
  wb.mark_range({0, 9});
  EXPECT_EQ(wb.marked().size(), 5u);  // rows 5..9 in the unsorted order
}

TEST(GuiWorkbench, RooflineHasMeasuredAndDatasheetRoofsAndTimedPoints) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  bool measured = false, datasheet = false, l2 = false;
  for (const auto& r : wb.roofline_ceilings()) {
    measured |= r.measured;
    datasheet |= !r.measured;
    l2 |= r.label.rfind("L2", 0) == 0;
  }
  EXPECT_TRUE(measured);
  EXPECT_TRUE(datasheet);
  EXPECT_TRUE(l2);
  const auto dots = wb.roofline_dots();
  EXPECT_GT(dots.size(), 100u);
  for (const auto& d : dots) EXPECT_GT(d.intensity, 0);
  wb.set_filters({"rope_fwd", "", "", ""});
  EXPECT_LE(wb.roofline_dots().size(), 4u);
}

TEST(GuiWorkbench, TwoReportsCompareThroughCompareReports) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  ASSERT_TRUE(wb.open(test::kSampleReport));
  std::string error;
  const CompareReport* cmp = wb.comparison(0, 1, error);
  ASSERT_NE(cmp, nullptr) << error;
  EXPECT_FALSE(cmp->cases.empty());
  EXPECT_EQ(wb.comparison(0, 7, error), nullptr);
  EXPECT_FALSE(error.empty());
}

TEST(GuiWorkbench, SweepsComeFromTheReviewModel) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  EXPECT_FALSE(wb.sweeps(0).empty());
  EXPECT_TRUE(wb.sweeps(4).empty());
}

}  // namespace
}  // namespace kwb::gui

namespace kwb::gui {
namespace {

TEST(GuiWorkbench, BackgroundLoadsJoinInStartOrder) {
  test::TempDir dir;
  Workbench wb;
  // The sample, a bad file, the sample again: taken in in the order they were asked for.
  wb.open_in_background(test::kSampleReport);
  wb.open_in_background(test::write_file(dir / "empty.json", ""));
  wb.open_in_background(test::kSampleReport);
  EXPECT_EQ(wb.loading().size(), 3u);
  wb.wait_for_loads();
  const auto opened = wb.finish_loads();
  EXPECT_EQ(opened.size(), 2u);
  EXPECT_TRUE(wb.loading().empty());
  EXPECT_EQ(wb.reports().size(), 2u);
  EXPECT_EQ(wb.rows().size(), 254u);
  ASSERT_EQ(wb.messages().size(), 3u);
  EXPECT_EQ(wb.messages()[1].level, Message::Level::error);
  EXPECT_NE(wb.messages()[1].text.find("empty"), std::string::npos);
}

}  // namespace
}  // namespace kwb::gui

namespace kwb::gui {
namespace {

TEST(GuiWorkbench, ArrowKeysWalkTheVisibleRowsAndKeysFindCases) {
  Workbench wb;
  ASSERT_TRUE(wb.open(test::kSampleReport));
  ASSERT_TRUE(wb.open(test::kSampleReport));
  wb.set_filters({"rope_fwd", "", "", ""});
  const auto visible = wb.visible_rows();  // a copy: the order walked
  ASSERT_GE(visible.size(), 3u);
  wb.step_focus(1);  // from nothing: the first visible row
  EXPECT_EQ(wb.focus(), wb.rows()[visible[0]].ref);
  wb.step_focus(2);
  EXPECT_EQ(wb.focus(), wb.rows()[visible[2]].ref);
  wb.step_focus(-100);  // clamped
  EXPECT_EQ(wb.focus(), wb.rows()[visible[0]].ref);
  // The same identity in the second report (compare's click).
  const TableRow& first = wb.rows()[visible[0]];
  const CaseRef other = wb.find_key(1, first.key);
  ASSERT_TRUE(other.valid());
  EXPECT_EQ(other.report, 1);
  EXPECT_EQ(other.index, first.ref.index);
  EXPECT_FALSE(wb.find_key(1, "no:such:case").valid());
}

}  // namespace
}  // namespace kwb::gui
