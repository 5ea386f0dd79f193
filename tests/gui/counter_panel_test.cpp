// gui/model/counter_panel: what the Counters panel and the counters side by side say, from the
// synthetic counters report (tests/gui/counters_report.hpp): each kernel's launch, figures and
// metrics per kernel and in total with their explanations, Nsight Compute's values beside kwb's
// with the ratio, the reason counters are unavailable, how to collect them, the measured work's
// flags; and that the report file carries all of it.
#include "gui/model/counter_panel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/gui/counters_report.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

const Report& report() {
  static const Report r = test::counters_report();
  return r;
}

const MetricRow& metric(const CounterPanel& p, const std::string& name) {
  for (const auto& m : p.metrics)
    if (m.metric == name) return m;
  throw std::runtime_error("no metric row " + name);
}

const FigureRow* figure(const CounterPanel& p, const std::string& id) {
  for (const auto& f : p.figures)
    if (f.spec->id == id) return &f;
  return nullptr;
}

TEST(GuiCounterPanel, CollectedCaseShowsEveryKernelItsLaunchAndTheMetricsInOrder) {
  const CaseRecord& c = report().cases[1];  // eight launches
  const CounterPanel p = build_counter_panel(c);
  ASSERT_EQ(p.state, CounterPanel::State::collected);
  EXPECT_TRUE(p.how_to_collect.empty());
  EXPECT_NE(p.source.find("GH100"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("memory, occupancy"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("8 kernels"), std::string::npos) << p.source;
  ASSERT_EQ(p.kernels.size(), 8u);
  EXPECT_EQ(p.kernels[0].label, "k1");
  EXPECT_EQ(p.kernels[3].grid, "(65536, 1, 1)");
  EXPECT_EQ(p.kernels[3].block, "(1024, 1, 1)");
  EXPECT_EQ(p.kernels[3].registers, "40");
  EXPECT_EQ(p.kernels[3].shared, "4 KiB");
  EXPECT_EQ(p.kernels[3].occupancy, "100% (2 blocks/SM)");
  EXPECT_EQ(p.kernels[3].waves, fmt::format("{:.2f}", 65536 / (132.0 * 2)));
  // The metrics in the order they were collected, each with its explanation, per kernel.
  ASSERT_EQ(p.metrics.size(), c.counters->metrics.size());
  for (std::size_t i = 0; i < p.metrics.size(); ++i) {
    const MetricRow& row = p.metrics[i];
    EXPECT_EQ(row.metric, c.counters->metrics[i]);
    EXPECT_FALSE(row.explanation.empty()) << row.metric;
    ASSERT_EQ(row.per_kernel.size(), 8u);
    EXPECT_DOUBLE_EQ(row.total, c.counters->total.at(row.metric));
    EXPECT_TRUE(std::isnan(row.ncu)) << "no ncu import on this case";
  }
  const MetricRow& read = metric(p, "dram__bytes_read.sum");
  double sum = 0;
  for (double v : read.per_kernel) sum += v;
  EXPECT_NEAR(read.total, sum, 1e-6 * sum);
}

TEST(GuiCounterPanel, FiguresAreComputedPerKernelAndJudgedAgainstTheLaunch) {
  const CaseRecord& c = report().cases[1];
  const CounterPanel p = build_counter_panel(c);
  const FigureRow* bytes = figure(p, "ld_bytes_per_sector");
  ASSERT_NE(bytes, nullptr);
  ASSERT_EQ(bytes->per_kernel.size(), 8u);
  // The strided reduction (kernel 4) wastes 40% of every sector, under the harness's floor; the
  // others use all of it.
  ASSERT_TRUE(bytes->per_kernel[3] && bytes->per_kernel[0]);
  EXPECT_NEAR(bytes->per_kernel[3]->value, 0.6 * 32, 0.5);
  EXPECT_EQ(bytes->per_kernel[3]->verdict, FigureVerdict::attention);
  EXPECT_NE(bytes->per_kernel[3]->verdict_text.find("wasted"), std::string::npos);
  EXPECT_NEAR(bytes->per_kernel[0]->value, 32, 0.5);
  EXPECT_EQ(bytes->per_kernel[0]->verdict, FigureVerdict::fine);
  EXPECT_EQ(figure_text(bytes->per_kernel[3]), figure_value_text(*bytes->per_kernel[3]));
  // Occupancy per kernel against each launch's theoretical one, the total against theirs
  // weighted by duration (all 100% here).
  const FigureRow* occupancy = figure(p, "achieved_occupancy");
  ASSERT_NE(occupancy, nullptr);
  ASSERT_TRUE(occupancy->per_kernel[0] && occupancy->total);
  EXPECT_NEAR(occupancy->per_kernel[0]->value, 100 * 56.0 / 64, 1);
  EXPECT_EQ(occupancy->per_kernel[0]->verdict, FigureVerdict::fine);
  EXPECT_EQ(occupancy->total->verdict, FigureVerdict::fine);
  // The case's figures are the harness's case_figures, the measured roofline's among them: the
  // traffic ratio judged against its threshold, in total only.
  const FigureRow* traffic = figure(p, "traffic_ratio");
  ASSERT_NE(traffic, nullptr);
  ASSERT_TRUE(traffic->total.has_value());
  EXPECT_DOUBLE_EQ(traffic->total->value, c.derived->measured->traffic_ratio);
  EXPECT_EQ(traffic->total->verdict, FigureVerdict::attention);
  for (const auto& k : traffic->per_kernel) EXPECT_FALSE(k.has_value());
  // Figures whose metrics no set collected are left out (no compute or tensor set here).
  EXPECT_EQ(figure(p, "issue_active"), nullptr);
  EXPECT_EQ(figure(p, "tensor_active"), nullptr);
  EXPECT_EQ(figure(p, "sm_busy"), nullptr);
  EXPECT_NE(figure(p, "l2_hit_rate"), nullptr);
  // In the harness's order.
  std::vector<std::string> order;
  for (const FigureRow& row : p.figures) order.push_back(row.spec->id);
  std::vector<std::string> expected;
  for (const std::string& id : figure_ids())
    if (std::find(order.begin(), order.end(), id) != order.end()) expected.push_back(id);
  EXPECT_EQ(order, expected);
}

TEST(GuiCounterPanel, NsightComputeValuesStandBesideKwbsWithTheRatio) {
  const CaseRecord& c = report().cases[0];
  const CounterPanel p = build_counter_panel(c);
  ASSERT_TRUE(p.has_ncu);
  EXPECT_NE(p.ncu_source.find("Nsight Compute"), std::string::npos) << p.ncu_source;
  for (const MetricRow& row : p.metrics) {
    ASSERT_TRUE(std::isfinite(row.ncu)) << row.metric;
    if (row.ncu == 0) {  // a pipe this kernel never used: no ratio to take
      EXPECT_TRUE(std::isnan(row.ratio)) << row.metric;
      continue;
    }
    EXPECT_DOUBLE_EQ(row.ratio, row.total / row.ncu) << row.metric;
    // The import was made 3% off on one metric and within 1% on the rest.
    EXPECT_EQ(row.disagrees(), row.metric == "lts__t_sectors_op_write.sum") << row.metric;
  }
  // Every figure of kwb's has ncu's beside it, but the measured roofline's: it is derived from
  // kwb's own counters alone.
  for (const FigureRow& f : p.figures) {
    const std::string& id = f.spec->id;
    ASSERT_TRUE(f.total.has_value()) << id;
    const bool measured_roofline = id == "traffic_ratio" || id == "measured_flops" ||
                                   id == "flop_ratio" || id == "measured_intensity";
    EXPECT_EQ(f.ncu.has_value(), !measured_roofline) << id;
    if (f.ncu && f.ncu->value != 0)
      EXPECT_NEAR(f.ratio, f.total->value / f.ncu->value, 1e-12) << id;
    else
      EXPECT_TRUE(std::isnan(f.ratio)) << id;
  }
  // One kernel: its figures are the total's.
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].occupancy, "100% (8 blocks/SM)");
}

TEST(GuiCounterPanel, AnNsightComputeImportAloneFillsTheNcuColumns) {
  CaseRecord c = report().cases[0];
  c.counters.reset();
  const CounterPanel p = build_counter_panel(c);
  EXPECT_EQ(p.state, CounterPanel::State::none);
  EXPECT_FALSE(p.how_to_collect.empty());
  ASSERT_TRUE(p.has_ncu);
  EXPECT_TRUE(p.any());
  ASSERT_EQ(p.metrics.size(), c.ncu_counters->metrics.size());
  for (const MetricRow& row : p.metrics) {
    EXPECT_TRUE(std::isnan(row.total)) << row.metric;
    EXPECT_DOUBLE_EQ(row.ncu, c.ncu_counters->total.at(row.metric)) << row.metric;
    EXPECT_FALSE(row.disagrees()) << "no ratio without kwb's own value";
  }
  // The ncu column holds the case's figures as the review report shows them (from the import).
  const auto review_row = case_figures(c);
  ASSERT_FALSE(review_row.empty());
  ASSERT_EQ(p.figures.size(), review_row.size());
  for (std::size_t i = 0; i < review_row.size(); ++i) {
    EXPECT_FALSE(p.figures[i].total.has_value());
    ASSERT_TRUE(p.figures[i].ncu.has_value()) << review_row[i].id;
    EXPECT_EQ(p.figures[i].ncu->id, review_row[i].id);
    EXPECT_DOUBLE_EQ(p.figures[i].ncu->value, review_row[i].value);
  }
}

TEST(GuiCounterPanel, UnavailableCountersSayWhyAndHowToCollect) {
  const CaseRecord& c = report().cases[5];
  const CounterPanel p = build_counter_panel(c);
  EXPECT_EQ(p.state, CounterPanel::State::unavailable);
  EXPECT_NE(p.unavailable.find("ERR_NVGPUCTRPERM"), std::string::npos) << p.unavailable;
  EXPECT_NE(p.unavailable.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_EQ(p.how_to_collect, c.repro + " --counters memory,compute,tensor,occupancy");
  EXPECT_TRUE(p.metrics.empty());
  EXPECT_FALSE(p.any());
}

TEST(GuiCounterPanel, CaseWithoutCountersSaysHowToGetThem) {
  const CaseRecord& c = report().cases[6];
  const CounterPanel p = build_counter_panel(c);
  EXPECT_EQ(p.state, CounterPanel::State::none);
  EXPECT_EQ(p.how_to_collect.rfind("kwb run --op swiglu_fwd", 0), 0u) << p.how_to_collect;
  EXPECT_NE(p.how_to_collect.find(" --counters memory,compute,tensor,occupancy"),
            std::string::npos);
  EXPECT_FALSE(p.measured.has_value());
  EXPECT_TRUE(p.kernels.empty());
  EXPECT_TRUE(p.figures.empty());
}

TEST(GuiCounterPanel, MeasuredWorkAndItsFlagsComeWithThePanel) {
  const CounterPanel fused = build_counter_panel(report().cases[0]);
  ASSERT_TRUE(fused.measured.has_value());
  EXPECT_NEAR(fused.measured->traffic_ratio, 1.01, 0.01);
  EXPECT_TRUE(fused.measured->flags.empty());
  const CounterPanel eager = build_counter_panel(report().cases[1]);
  ASSERT_TRUE(eager.measured.has_value());
  EXPECT_NEAR(eager.measured->traffic_ratio, 4.0, 0.05);
  ASSERT_EQ(eager.measured->flags.size(), 1u);
  EXPECT_NE(eager.measured->flags[0].find("more DRAM traffic"), std::string::npos);
  EXPECT_DOUBLE_EQ(eager.model_bytes, report().cases[1].derived->model_bytes);
}

TEST(GuiCounterPanel, TheReportFileCarriesWhatThePanelShows) {
  test::TempDir dir;
  const Report back = read_report_json(test::write_counters_report(dir.path()));
  ASSERT_EQ(back.cases.size(), report().cases.size());
  for (std::size_t i = 0; i < back.cases.size(); ++i) {
    const CounterPanel a = build_counter_panel(report().cases[i]),
                       b = build_counter_panel(back.cases[i]);
    EXPECT_EQ(a.state, b.state) << i;
    EXPECT_EQ(a.source, b.source) << i;
    EXPECT_EQ(a.unavailable, b.unavailable) << i;
    ASSERT_EQ(a.kernels.size(), b.kernels.size()) << i;
    for (std::size_t k = 0; k < a.kernels.size(); ++k)
      EXPECT_EQ(a.kernels[k].grid, b.kernels[k].grid);
    ASSERT_EQ(a.metrics.size(), b.metrics.size()) << i;
    for (std::size_t m = 0; m < a.metrics.size(); ++m) {
      EXPECT_EQ(a.metrics[m].metric, b.metrics[m].metric);
      EXPECT_DOUBLE_EQ(a.metrics[m].total, b.metrics[m].total);
    }
    EXPECT_EQ(a.measured.has_value(), b.measured.has_value()) << i;
    if (a.measured) EXPECT_EQ(a.measured->flags, b.measured->flags) << i;
  }
}

TEST(GuiCounterSideBySide, TwoVariantsTotalsWithTheRatio) {
  const CaseRecord &fused = report().cases[0], &eager = report().cases[1];
  const CounterSideBySide s = counters_side_by_side(fused, eager);
  ASSERT_TRUE(s.comparable());
  EXPECT_EQ(s.a_source, "kwb");
  EXPECT_DOUBLE_EQ(s.a_time_us, fused.timing->span.median);
  // The union of both sides' metrics, A's order first: the compute set only A has.
  const auto row = [&](const std::string& name) -> const SideBySideRow& {
    for (const auto& r : s.metrics)
      if (r.name == name) return r;
    throw std::runtime_error("no row " + name);
  };
  EXPECT_EQ(s.metrics.front().name, fused.counters->metrics.front());
  const SideBySideRow& read = row("dram__bytes_read.sum");
  EXPECT_DOUBLE_EQ(read.a, fused.counters->total.at("dram__bytes_read.sum"));
  EXPECT_DOUBLE_EQ(read.b, eager.counters->total.at("dram__bytes_read.sum"));
  EXPECT_DOUBLE_EQ(read.ratio, read.b / read.a);
  EXPECT_NEAR(read.ratio, 4.0 / 1.01, 0.05);
  EXPECT_EQ(read.a_text, format_metric_value("dram__bytes_read.sum", read.a));
  const SideBySideRow& ffma = row("sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
  EXPECT_TRUE(std::isfinite(ffma.a));
  EXPECT_TRUE(std::isnan(ffma.b));
  EXPECT_EQ(ffma.b_text, "-");
  EXPECT_TRUE(std::isnan(ffma.ratio));
  EXPECT_FALSE(s.figures.empty());
}

TEST(GuiCounterSideBySide, ASideWithoutCountersSaysWhy) {
  const CounterSideBySide none = counters_side_by_side(report().cases[0], report().cases[6]);
  EXPECT_FALSE(none.comparable());
  EXPECT_NE(none.b_source.find("--counters"), std::string::npos) << none.b_source;
  const CounterSideBySide refused = counters_side_by_side(report().cases[5], report().cases[0]);
  EXPECT_FALSE(refused.comparable());
  EXPECT_NE(refused.a_source.find("ERR_NVGPUCTRPERM"), std::string::npos) << refused.a_source;
}

TEST(GuiCounterPanel, MetricValuesPrintInTheirUnits) {
  EXPECT_EQ(format_metric_value("dram__bytes_read.sum", 1073741824.0), "1 GiB");
  EXPECT_EQ(format_metric_value("gpu__time_duration.sum", 356677), "357 us");
  EXPECT_EQ(format_metric_value("sm__inst_executed.sum", 1.234e9), "1.23 G");
  EXPECT_EQ(format_metric_value("sm__inst_executed.sum", 96), "96");
  EXPECT_EQ(format_metric_value("lts__t_sector_hit_rate.pct", 87.14), "87.1%");
  EXPECT_EQ(format_metric_value("dram__bytes_read.sum", kNoValue), "-");
}

}  // namespace
}  // namespace kwb::gui
