// gui/model/counter_figures: each named figure is its formula over the metrics it names (checked
// on seeded random values), is absent (NaN) without them, and is judged against its usual
// threshold on either side of it.
#include "gui/model/counter_figures.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/gui/counters_report.hpp"

namespace kwb::gui {
namespace {

const CounterFigure& figure(const std::vector<CounterFigure>& figures, const std::string& name) {
  for (const auto& f : figures)
    if (f.name == name) return f;
  throw std::runtime_error("no figure named " + name);
}

TEST(GuiCounterFigures, EachFigureIsItsFormulaOverRandomValues) {
  test::Jitter rng(7);
  for (int round = 0; round < 50; ++round) {
    // 1. Prepare: random counts, as a kernel might give them.
    std::map<std::string, double> v;
    for (const char* m :
         {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
          "smsp__sass_data_bytes_mem_global_op_ld.sum",
          "smsp__sass_data_bytes_mem_global_op_st.sum",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
          "lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum", "sm__warps_active.sum",
          "sm__cycles_active.sum", "sm__cycles_elapsed.sum", "smsp__issue_active.sum",
          "smsp__cycles_active.sum", "sm__pipe_tensor_cycles_active.sum"})
      v[m] = 1 + 1e9 * rng.uniform();
    // 2. Run.
    const auto f = counter_figures(v, "GH100");
    // 3. Verify: each figure against its definition.
    auto q = [&](const char* a, const char* b) { return v.at(a) / v.at(b); };
    EXPECT_DOUBLE_EQ(figure(f, "sectors per load request").value,
                     q("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                       "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
    EXPECT_DOUBLE_EQ(figure(f, "useful bytes per store sector").value,
                     q("smsp__sass_data_bytes_mem_global_op_st.sum",
                       "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"));
    EXPECT_DOUBLE_EQ(figure(f, "L1 hit rate (global loads)").value,
                     100 * q("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
                             "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
    const double hit = v.at("lts__t_sectors_lookup_hit.sum"),
                 miss = v.at("lts__t_sectors_lookup_miss.sum");
    EXPECT_DOUBLE_EQ(figure(f, "L2 hit rate").value, 100 * hit / (hit + miss));
    EXPECT_DOUBLE_EQ(figure(f, "achieved occupancy").value,
                     100 * q("sm__warps_active.sum", "sm__cycles_active.sum") / 64);
    EXPECT_DOUBLE_EQ(figure(f, "issue active").value,
                     100 * q("smsp__issue_active.sum", "smsp__cycles_active.sum"));
    EXPECT_DOUBLE_EQ(figure(f, "tensor pipe active").value,
                     100 * q("sm__pipe_tensor_cycles_active.sum", "sm__cycles_elapsed.sum"));
    EXPECT_DOUBLE_EQ(figure(f, "SM busy").value,
                     100 * q("sm__cycles_active.sum", "sm__cycles_elapsed.sum"));
  }
}

TEST(GuiCounterFigures, FiguresWithoutTheirMetricsAreAbsentAndInTheSameOrder) {
  const auto none = counter_figures({}, "GH100");
  const auto some = counter_figures(
      {{"lts__t_sectors_lookup_hit.sum", 3}, {"lts__t_sectors_lookup_miss.sum", 1}}, "GH100");
  ASSERT_EQ(none.size(), some.size());
  for (std::size_t i = 0; i < none.size(); ++i) {
    EXPECT_EQ(none[i].name, some[i].name) << "figures must line up across kernels";
    EXPECT_TRUE(std::isnan(none[i].value)) << none[i].name;
    EXPECT_EQ(none[i].verdict, Verdict::none) << none[i].name;
    EXPECT_EQ(format_figure(none[i]), "-");
    EXPECT_FALSE(none[i].meaning.empty()) << none[i].name;
    if (some[i].name == "L2 hit rate")
      EXPECT_EQ(format_figure(some[i]), "75.0%");
    else
      EXPECT_TRUE(std::isnan(some[i].value)) << some[i].name;
  }
}

TEST(GuiCounterFigures, VerdictsFollowTheUsualThresholds) {
  auto bytes_per_load_sector = [](double useful) {
    return figure(counter_figures({{"smsp__sass_data_bytes_mem_global_op_ld.sum", useful * 1000},
                                   {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1000}},
                                  "GH100"),
                  "useful bytes per load sector");
  };
  EXPECT_EQ(bytes_per_load_sector(32).verdict, Verdict::good);
  EXPECT_EQ(bytes_per_load_sector(20).verdict, Verdict::warn);
  EXPECT_EQ(bytes_per_load_sector(8).verdict, Verdict::bad);
  EXPECT_EQ(format_figure(bytes_per_load_sector(8)), "8.0 B");

  auto issue = [](double share) {
    return figure(counter_figures(
                      {{"smsp__issue_active.sum", share}, {"smsp__cycles_active.sum", 1}}, "GH100"),
                  "issue active");
  };
  EXPECT_EQ(issue(0.85).verdict, Verdict::warn);
  EXPECT_EQ(issue(0.85).verdict_text, "issue-bound");
  EXPECT_EQ(issue(0.30).verdict, Verdict::none);

  auto tensor = [](double share) {
    return figure(
        counter_figures(
            {{"sm__pipe_tensor_cycles_active.sum", share}, {"sm__cycles_elapsed.sum", 1}}, "GH100"),
        "tensor pipe active");
  };
  EXPECT_EQ(tensor(0.9).verdict, Verdict::good);
  EXPECT_EQ(tensor(0.6).verdict, Verdict::none);
  EXPECT_EQ(tensor(0.2).verdict, Verdict::warn);
  EXPECT_EQ(tensor(0).verdict, Verdict::none);  // no tensor work: nothing to judge

  // Achieved occupancy is judged against the launch's theoretical one, when known.
  auto occupancy = [](double warps, double theoretical) {
    return figure(counter_figures({{"sm__warps_active.sum", warps}, {"sm__cycles_active.sum", 1}},
                                  "GH100", theoretical),
                  "achieved occupancy");
  };
  EXPECT_EQ(occupancy(60, 1.0).verdict, Verdict::good);
  EXPECT_EQ(occupancy(40, 1.0).verdict, Verdict::warn);
  EXPECT_EQ(occupancy(16, 1.0).verdict, Verdict::bad);
  EXPECT_EQ(occupancy(16, 0.25).verdict, Verdict::good);  // 25% is all the launch allows
  EXPECT_EQ(occupancy(16, 0).verdict, Verdict::none);
}

TEST(GuiCounterFigures, OccupancyCountsTheChipsWarpsPerSm) {
  EXPECT_EQ(max_warps_per_sm("GH100"), 64);
  EXPECT_EQ(max_warps_per_sm("GA100"), 64);
  EXPECT_EQ(max_warps_per_sm("GA102"), 48);
  EXPECT_EQ(max_warps_per_sm("AD102"), 48);
  EXPECT_EQ(max_warps_per_sm("TU102"), 32);
  EXPECT_EQ(max_warps_per_sm(""), 64);
  const std::map<std::string, double> v = {{"sm__warps_active.sum", 24},
                                           {"sm__cycles_active.sum", 1}};
  EXPECT_DOUBLE_EQ(figure(counter_figures(v, "AD102"), "achieved occupancy").value, 50);
  EXPECT_DOUBLE_EQ(figure(counter_figures(v, "GH100"), "achieved occupancy").value, 37.5);
}

}  // namespace
}  // namespace kwb::gui
