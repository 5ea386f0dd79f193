// The roofline's shared layout: ranges fitted to the data with the knees in view, one label per
// roof pair with no two overlapping (every committed sample, and a crowded set of roofs), labels
// beside their lines, and marks that do not repeat within forty series.
#include "reports/review/roofline_layout.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "harness/record/json_report.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

namespace fs = std::filesystem;
using review::PixelBox;

// The review's geometry (review_charts.cpp), at 6 px a character.
review::RoofLabelGeometry geometry_for(const review::RooflineRanges& r) {
  auto log_px = [](double v, double lo, double hi, double p0, double p1) {
    return p0 + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (p1 - p0);
  };
  return {[=](double v) { return log_px(v, r.x_lo, r.x_hi, 70, 850); },
          [=](double v) { return log_px(v, r.y_lo, r.y_hi, 500, 16); },
          {70, 16, 850, 500},
          {862, 16, 1195, 500},
          [](const std::string& t) { return 6.0 * static_cast<double>(t.size()); },
          13};
}

void expect_no_overlap(const std::vector<review::RoofLabel>& labels, const std::string& where) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::size_t j = i + 1; j < labels.size(); ++j)
      EXPECT_FALSE(review::labels_overlap(labels[i], labels[j]))
          << where << ": '" << labels[i].text << "' overlaps '" << labels[j].text << "'";
}

std::vector<std::pair<double, double>> points_of(const review::ReviewModel& m) {
  std::vector<std::pair<double, double>> xy;
  for (const auto& p : m.points) xy.emplace_back(p.intensity, p.tflops);
  return xy;
}

TEST(RooflineLayout, NoTwoRoofLabelsOverlapOnAnyCommittedSample) {
  int samples = 0;
  for (const auto& entry : fs::directory_iterator(KWB_SOURCE_DIR "/samples")) {
    const fs::path report = entry.path() / "report.json";
    if (!fs::exists(report)) continue;
    ++samples;
    const Report r = read_report_json(report.string());
    const review::ReviewModel m = review::build_review_model(r.run, r.cases);
    const auto ranges = review::fit_roofline_ranges(m.ceilings, points_of(m));
    const auto segments = review::roof_segments(m.ceilings, ranges);
    const auto labels = review::place_roof_labels(m.ceilings, segments, geometry_for(ranges));
    expect_no_overlap(labels, report.string());
    // Every roof drawn whose text is its own gets its label.
    const auto texts = review::roof_label_texts(m.ceilings);
    std::size_t wanted = 0;
    for (const auto& s : segments) wanted += !texts[s.roof].empty();
    EXPECT_EQ(labels.size(), wanted) << report;
    // Every point is inside the ranges.
    for (const auto& [x, y] : points_of(m)) {
      EXPECT_GE(x, ranges.x_lo) << report;
      EXPECT_LE(x, ranges.x_hi) << report;
      EXPECT_GE(y, ranges.y_lo) << report;
      EXPECT_LE(y, ranges.y_hi) << report;
    }
  }
  EXPECT_GE(samples, 5);
}

// An H100's measured roofs beside its datasheet ones, the tensor roofs within 5% of each other and
// the DRAM roofs within 10%: the crowd the first roofline printed on top of itself.
TEST(RooflineLayout, CrowdedRoofsGetOneLabelEachWithoutOverlapAndBesideTheirLines) {
  RunInfo run = test::sample_run();
  Ceilings measured = *run.ceilings;
  measured.dram_copy_gbps = 3055, measured.dram_read_gbps = 3210, measured.l2_copy_gbps = 6812;
  measured.fp32_tflops = 64.2;
  measured.tensor_tflops = {{"bf16", 821}, {"fp16", 788}, {"tf32", 414}};
  run.ceilings = measured;
  Ceilings sheet = *run.datasheet_ceilings;
  sheet.dram_copy_gbps = 3350, sheet.fp32_tflops = 67;
  sheet.tensor_tflops = {{"bf16", 989}, {"fp16", 989}, {"tf32", 495}};
  run.datasheet_ceilings = sheet;
  std::vector<CaseRecord> cases;
  for (double ai : {0.3, 0.5, 1.0, 2.5}) cases.push_back(test::make_case({.median_us = 5, .intensity = ai}));
  const review::ReviewModel m = review::build_review_model(run, cases);

  const auto ranges = review::fit_roofline_ranges(m.ceilings, points_of(m));
  // The x range ends past the highest ridge (989 TFLOP/s over 3055 GB/s: 324 FLOP/byte), not at a
  // whole decade beyond it; and it starts near the data, not at 0.1.
  EXPECT_GT(ranges.x_hi, 1000 * 989 / 3350.0);
  EXPECT_LT(ranges.x_hi, 1000.0);
  EXPECT_GT(ranges.x_lo, 0.1);
  const auto segments = review::roof_segments(m.ceilings, ranges);
  const auto geometry = geometry_for(ranges);
  const auto labels = review::place_roof_labels(m.ceilings, segments, geometry);
  expect_no_overlap(labels, "crowded");
  std::set<std::string> texts;
  for (const auto& l : labels) texts.insert(l.text);
  for (const char* t : {"bf16 tensor 821 TFLOP/s (datasheet 989)", "fp16 tensor 788 TFLOP/s (datasheet 989)",
                        "tf32 tensor 414 TFLOP/s (datasheet 495)", "fp32 FFMA 64.2 TFLOP/s (datasheet 67.0)",
                        "DRAM copy 3055 GB/s (datasheet 3350)", "DRAM read-only 3210 GB/s", "L2 copy 6812 GB/s"})
    EXPECT_TRUE(texts.count(t)) << t;
  EXPECT_EQ(labels.size(), 7u) << "datasheet roofs with a measured twin carry no label of their own";
  for (const auto& l : labels) {
    const bool flat = m.ceilings[l.roof].kind == review::RooflineCeiling::Kind::compute;
    const PixelBox& area = flat ? geometry.side : geometry.plot;
    EXPECT_GE(l.box.x0, area.x0) << l.text;
    EXPECT_LE(l.box.x1, area.x1 + 200) << l.text;  // a side label may run past the column's nominal edge
    EXPECT_GE(l.box.y0, area.y0) << l.text;
    EXPECT_LE(l.box.y1, area.y1) << l.text;
    // Its baseline within a few lines of the point of the roof it names (a sloped roof's on it).
    EXPECT_LT(std::abs(l.y - l.anchor_y), (flat ? 5 : 0.5) * geometry.line_height) << l.text;
  }
}

// The app's roofline pane at 1280x720 (a plot about 190 px wide, 7 px a character): the DRAM roof's
// label is longer than its line. It still gets a label (in the side column, joined by a leader),
// none overlaps, and a datasheet roof whose measured twin is out of view carries its own label.
TEST(RooflineLayout, ANarrowPlotStillLabelsEveryRoofAndATwinOutOfViewHandsItsLabelBack) {
  RunInfo run = test::sample_run();
  std::vector<CaseRecord> cases;
  for (double ai : {0.3, 1.0, 2.5}) cases.push_back(test::make_case({.median_us = 5, .intensity = ai}));
  const review::ReviewModel m = review::build_review_model(run, cases);
  const auto ranges = review::fit_roofline_ranges(m.ceilings, points_of(m));
  const auto segments = review::roof_segments(m.ceilings, ranges);
  auto log_px = [](double v, double lo, double hi, double p0, double p1) {
    return p0 + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (p1 - p0);
  };
  const review::RoofLabelGeometry narrow{[&](double v) { return log_px(v, ranges.x_lo, ranges.x_hi, 900, 1090); },
                                         [&](double v) { return log_px(v, ranges.y_lo, ranges.y_hi, 360, 80); },
                                         {900, 80, 1090, 360},
                                         {1098, 80, 1280, 360},
                                         [](const std::string& t) { return 7.0 * static_cast<double>(t.size()); },
                                         13};
  const auto labels = review::place_roof_labels(m.ceilings, segments, narrow);
  expect_no_overlap(labels, "narrow");
  const auto texts = review::roof_label_texts(m.ceilings);
  std::size_t wanted = 0;
  for (const auto& sgm : segments) wanted += !texts[sgm.roof].empty();
  EXPECT_EQ(labels.size(), wanted);
  bool dram = false;
  for (const auto& l : labels) dram |= l.text.rfind("DRAM copy 3000 GB/s", 0) == 0;
  EXPECT_TRUE(dram) << "the DRAM roof lost its label";

  // Only the datasheet roofs in view (the measured ones below the range): they label themselves.
  review::RooflineRanges high = ranges;
  high.y_lo = 66;  // above the measured fp32 roof (64), below the datasheet one (67)
  std::vector<bool> drawn(m.ceilings.size(), false);
  for (const auto& sgm : review::roof_segments(m.ceilings, high)) drawn[sgm.roof] = true;
  const auto own = review::roof_label_texts(m.ceilings, drawn);
  for (std::size_t i = 0; i < m.ceilings.size(); ++i)
    if (m.ceilings[i].name == "fp32 FFMA" && !m.ceilings[i].measured) {
      ASSERT_TRUE(drawn[i]);
      EXPECT_EQ(own[i], "fp32 FFMA 67.0 TFLOP/s (datasheet)");
    }
}

TEST(RooflineLayout, SegmentsCrossingBoxesTurnedLabelsAndMarksThatDoNotRepeat) {
  const PixelBox box{10, 10, 20, 20};
  EXPECT_TRUE(review::segment_crosses(box, 0, 15, 30, 15));
  EXPECT_TRUE(review::segment_crosses(box, 0, 0, 30, 30));
  EXPECT_FALSE(review::segment_crosses(box, 0, 25, 30, 25));
  EXPECT_FALSE(review::segment_crosses(box, 0, 0, 5, 5));
  // Two labels turned along parallel lines 20 px apart overlap only in their upright boxes.
  review::RoofLabel a, b;
  const double c = std::cos(-0.4), s = std::sin(-0.4);
  auto rect = [&](review::RoofLabel& l, double x, double y) {
    l.x = x, l.y = y, l.angle = -0.4;
    l.corners = {{{x, y}, {x + 200 * c, y + 200 * s}, {x + 200 * c + 10 * s, y + 200 * s - 10 * c}, {x + 10 * s, y - 10 * c}}};
    l.box = {1e9, 1e9, -1e9, -1e9};
    for (auto [px, py] : l.corners)
      l.box = {std::min(l.box.x0, px), std::min(l.box.y0, py), std::max(l.box.x1, px), std::max(l.box.y1, py)};
  };
  rect(a, 0, 200);
  rect(b, 0, 180);
  EXPECT_TRUE(review::boxes_overlap(a.box, b.box));
  EXPECT_FALSE(review::labels_overlap(a, b));
  rect(b, 50, 178);  // 0.8 px above the first one's baseline at that x: the rectangles overlap
  EXPECT_TRUE(review::labels_overlap(a, b));
  std::set<std::pair<std::size_t, int>> styles;
  for (std::size_t i = 0; i < 40; ++i) {
    const auto s = review::mark_style(i);
    EXPECT_TRUE(styles.insert({s.colour, static_cast<int>(s.shape)}).second) << i;
  }
}

}  // namespace
}  // namespace kwb
