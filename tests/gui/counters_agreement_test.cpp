// The app and the review report say the same of a recorded case's hardware counters. The counters
// report (tests/gui/counters_report.hpp: H100 sample records with synthetic counters) is written
// to a file; the app opens it (Workbench) and the review reads it (build_review_model), and for
// every case: the Counters panel's figures are the review's counters-table row (same ids, values,
// printed text, verdicts and highlighted cells), the measured roofline's flags are the review's
// findings, the roofline's measured point is the review's, and the compare view's side by side
// shows each side's review row.
#include <gtest/gtest.h>

#include <algorithm>

#include "gui/model/counter_panel.hpp"
#include "gui/model/workbench.hpp"
#include "reports/review/review_model.hpp"
#include "reports/review/review_tables.hpp"
#include "tests/gui/counters_report.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

// The report as a file, opened by the app and read by the review report.
struct BothSides {
  Workbench app;
  review::ReviewModel review;
  explicit BothSides(const Report& report) {
    const test::TempDir dir;
    const auto path = dir / "counters-report.json";
    write_report_json(path, report);
    EXPECT_TRUE(app.open(path));
    const Report read = read_report_json(path);
    review = review::build_review_model(read.run, read.cases);
  }
  const std::vector<CaseRecord>& cases() const { return app.reports().at(0).report.cases; }
  const CaseRecord& case_named(const std::string& name) const {
    for (const CaseRecord& c : cases())
      if (c.nvtx_range == name) return c;
    throw std::runtime_error("the app has no case " + name);
  }
};

// The panel's cell of the case's own figure: kwb's total, or Nsight Compute's where the case has
// only the import (the counters the review's row comes from).
const std::optional<CounterFigure>& case_cell(const FigureRow& row, const CaseRecord& c) {
  return counters_read(c.counters) ? row.total : row.ncu;
}

// The review table's column of a figure ("useful bytes per load sector (B/sector)").
std::size_t column_of(const review::Table& t, const FigureSpec& spec) {
  for (std::size_t i = 0; i < t.headers.size(); ++i)
    if (t.headers[i] == spec.label || t.headers[i] == spec.label + " (" + spec.unit + ")") return i;
  return t.headers.size();
}

// 1-3: the panel of every case in the review's counters tables against its row and cells;
// `rows` counts the rows compared.
void expect_panels_show_the_review_rows(const BothSides& both, int& rows) {
  rows = 0;
  for (const review::CounterGroup& group : both.review.counters) {
    const review::Table table = review::counters_table(group);
    for (std::size_t r = 0; r < group.rows.size(); ++r, ++rows) {
      const review::CounterRow& row = group.rows[r];
      const CaseRecord& c = both.case_named(row.case_name);
      const CounterPanel panel = build_counter_panel(c);
      // Every figure of the panel's case column is in the review's row, and the other way round.
      std::size_t cells = 0;
      for (const FigureRow& fr : panel.figures) {
        const auto& cell = case_cell(fr, c);
        const CounterFigure* reviewed = find_figure(row.figures, fr.spec->id);
        ASSERT_EQ(cell.has_value(), reviewed != nullptr) << row.case_name << " " << fr.spec->id;
        if (!cell) continue;
        ++cells;
        EXPECT_EQ(cell->value, reviewed->value) << row.case_name << " " << fr.spec->id;
        EXPECT_EQ(cell->verdict, reviewed->verdict) << row.case_name << " " << fr.spec->id;
        EXPECT_EQ(cell->verdict_text, reviewed->verdict_text)
            << row.case_name << " " << fr.spec->id;
        // The same text in the same cell, highlighted where the app colours it "worth a look".
        const std::size_t col = column_of(table, *fr.spec);
        ASSERT_LT(col, table.headers.size()) << fr.spec->id;
        EXPECT_EQ(figure_text(cell), table.rows[r][col]) << row.case_name << " " << fr.spec->id;
        const bool highlighted = !table.flagged.empty() && table.flagged[r][col];
        EXPECT_EQ(highlighted, cell->verdict == FigureVerdict::attention)
            << row.case_name << " " << fr.spec->id;
      }
      EXPECT_EQ(cells, row.figures.size()) << row.case_name;
    }
  }
}

// 4-5: the measured roofline's flags and points; `flagged` counts the cases with flags.
void expect_measured_work_is_the_reviews(BothSides& both, int& flagged) {
  flagged = 0;
  for (const CaseRecord& c : both.cases()) {
    const CounterPanel panel = build_counter_panel(c);
    std::vector<std::string> findings;
    for (const review::Finding& f : both.review.findings)
      if (f.kind == "measured roofline" && f.case_name == c.nvtx_range)
        findings.push_back(f.detail);
    EXPECT_EQ(panel.measured ? panel.measured->flags : std::vector<std::string>{}, findings)
        << c.nvtx_range;
    flagged += !findings.empty();
  }
  const auto dots = both.app.roofline_dots();
  for (const review::RooflinePoint& p : both.review.points) {
    const auto dot = std::find_if(dots.begin(), dots.end(), [&](const RooflineDot& d) {
      return both.app.find(d.ref)->nvtx_range == p.case_name;
    });
    ASSERT_NE(dot, dots.end()) << p.case_name << ": on the review's roofline, not the app's";
    EXPECT_EQ(dot->intensity, p.intensity) << p.case_name;
    EXPECT_EQ(dot->tflops, p.tflops) << p.case_name;
    ASSERT_EQ(dot->measured.has_value(), p.measured.has_value()) << p.case_name;
    if (!p.measured) continue;
    EXPECT_EQ(dot->measured->intensity, p.measured->intensity) << p.case_name;
    EXPECT_EQ(dot->measured->tflops, p.measured->tflops) << p.case_name;
    EXPECT_EQ(dot->measured->flops_measured, p.measured->flops_measured) << p.case_name;
    EXPECT_EQ(dot->measured->flagged, p.measured->flagged) << p.case_name;
    EXPECT_EQ(dot->measured->flagged, !p.flags.empty()) << p.case_name;
  }
  EXPECT_EQ(dots.size(), both.review.points.size());
}

// Both of the above on one report: `rows` review rows compared, `flagged` cases with flags.
void expect_app_and_review_agree(const Report& report, int& rows, int& flagged) {
  BothSides both(report);
  expect_panels_show_the_review_rows(both, rows);
  expect_measured_work_is_the_reviews(both, flagged);
}

TEST(GuiCountersAgreement, TheAppShowsTheReviewsFiguresFlagsAndMeasuredPoints) {
  // 1. Prepare: the counters report.
  const Report report = test::counters_report();
  // 2. Run and verify, opened by both: every case with counters (five) against its review row;
  // the flags and the roofline points, measured ones included.
  int rows = 0, flagged = 0;
  expect_app_and_review_agree(report, rows, flagged);
  EXPECT_EQ(rows, 5);
  // 3. What was compared holds flags: the 4x eager baseline's and the 1.45x softmax's (the GEMM's
  // 1.25x is compute-bound: shown, not flagged).
  EXPECT_EQ(flagged, 2);
  for (int i : {1, 3}) EXPECT_FALSE(report.cases[i].derived->measured->flags.empty()) << i;
}

TEST(GuiCountersAgreement, AnImportAloneIsTheReviewsRowInTheNcuColumn) {
  Report report = test::counters_report();
  report.cases[0].counters.reset();  // only Nsight Compute's values on the fused case
  report.cases[0].derived->measured.reset();
  int rows = 0, flagged = 0;
  expect_app_and_review_agree(report, rows, flagged);
  EXPECT_EQ(rows, 5);
}

TEST(GuiCountersAgreement, TheSideBySideShowsEachSidesReviewRow) {
  BothSides both(test::counters_report());
  const auto& cases = both.cases();
  for (auto [a, b] : {std::pair{0, 1}, {1, 2}, {0, 2}, {3, 4}}) {
    const CounterSideBySide s = counters_side_by_side(cases[a], cases[b]);
    const auto fa = case_figures(cases[a]), fb = case_figures(cases[b]);
    std::size_t seen_a = 0, seen_b = 0;
    for (const SideBySideRow& row : s.figures) {
      const auto spec = std::find_if(figure_specs().begin(), figure_specs().end(),
                                     [&](const FigureSpec& f) { return f.label == row.name; });
      ASSERT_NE(spec, figure_specs().end()) << row.name;
      const CounterFigure* x = find_figure(fa, spec->id);
      const CounterFigure* y = find_figure(fb, spec->id);
      EXPECT_EQ(row.a_text, x ? figure_value_text(*x) : "-") << a << " " << row.name;
      EXPECT_EQ(row.b_text, y ? figure_value_text(*y) : "-") << b << " " << row.name;
      EXPECT_EQ(row.a_verdict, x ? x->verdict : FigureVerdict::none) << a << " " << row.name;
      EXPECT_EQ(row.b_verdict, y ? y->verdict : FigureVerdict::none) << b << " " << row.name;
      seen_a += x != nullptr, seen_b += y != nullptr;
    }
    EXPECT_EQ(seen_a, fa.size()) << "every figure of A's review row";
    EXPECT_EQ(seen_b, fb.size()) << "every figure of B's review row";
  }
}

}  // namespace
}  // namespace kwb::gui
