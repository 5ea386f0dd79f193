// Counter figures from recorded counter values: each figure is its formula of the counts (drawn
// at random from a fixed seed), absent without its counters, judged against its threshold, and a
// case's figures join its counters' total with its measured roofline.
#include "harness/derive/counter_figures.hpp"

#include <gtest/gtest.h>

#include <random>

#include "harness/derive/measured_roofline.hpp"

namespace kwb {
namespace {

double value_of(const std::vector<CounterFigure>& figures, const std::string& id) {
  const CounterFigure* f = find_figure(figures, id);
  EXPECT_NE(f, nullptr) << "no figure " << id;
  return f ? f->value : -1;
}

std::map<std::string, double> random_memory_and_compute_counts(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> count(1e5, 1e9);
  std::map<std::string, double> v;
  for (const char* m : {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_lookup_hit.sum",
                        "lts__t_sectors_lookup_miss.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "smsp__cycles_active.sum",
                        "sm__cycles_elapsed.sum", "sm__cycles_active.sum"})
    v[m] = std::floor(count(rng));
  // The parts of a whole stay below it.
  std::uniform_real_distribution<double> part(0.05, 0.95);
  v["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] =
      std::floor(part(rng) * v["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]);
  v["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = std::floor(v["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / 4);
  v["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 8 * v["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"];
  v["smsp__sass_data_bytes_mem_global_op_ld.sum"] = 32 * v["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"];
  v["smsp__sass_data_bytes_mem_global_op_st.sum"] = 12 * v["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"];
  v["smsp__issue_active.sum"] = std::floor(part(rng) * 0.8 * v["smsp__cycles_active.sum"]);
  v["sm__pipe_tensor_cycles_active.sum"] = std::floor(part(rng) * v["sm__cycles_elapsed.sum"]);
  v["sm__warps_active.sum"] = std::floor(part(rng) * 64 * v["sm__cycles_active.sum"]);
  return v;
}

TEST(CounterFigures, EachFigureIsItsFormulaOfTheCounts) {
  std::mt19937_64 rng(20261126);
  for (int trial = 0; trial < 20; ++trial) {
    // 1. Prepare random counts.
    const auto v = random_memory_and_compute_counts(rng);
    auto at = [&](const char* m) { return v.at(m); };
    // 2. Run.
    const auto f = counter_figures(v);
    // 3. Verify against the formulas written out here.
    EXPECT_EQ(value_of(f, "dram_read"), at("dram__bytes_read.sum"));
    EXPECT_EQ(value_of(f, "dram_write"), at("dram__bytes_write.sum"));
    EXPECT_DOUBLE_EQ(value_of(f, "l2_hit_rate"),
                     100 * at("lts__t_sectors_lookup_hit.sum") /
                         (at("lts__t_sectors_lookup_hit.sum") + at("lts__t_sectors_lookup_miss.sum")));
    EXPECT_DOUBLE_EQ(value_of(f, "l1_hit_rate"), 100 * at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum") /
                                                     at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
    EXPECT_DOUBLE_EQ(value_of(f, "ld_sectors_per_request"), at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") /
                                                                at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
    EXPECT_DOUBLE_EQ(value_of(f, "st_sectors_per_request"), 8);
    EXPECT_DOUBLE_EQ(value_of(f, "ld_bytes_per_sector"), 32);
    EXPECT_DOUBLE_EQ(value_of(f, "st_bytes_per_sector"), 12);
    EXPECT_DOUBLE_EQ(value_of(f, "issue_active"), 100 * at("smsp__issue_active.sum") / at("smsp__cycles_active.sum"));
    EXPECT_DOUBLE_EQ(value_of(f, "tensor_active"),
                     100 * at("sm__pipe_tensor_cycles_active.sum") / at("sm__cycles_elapsed.sum"));
    EXPECT_DOUBLE_EQ(value_of(f, "achieved_occupancy"),
                     100 * at("sm__warps_active.sum") / at("sm__cycles_active.sum") / 64);
    EXPECT_DOUBLE_EQ(value_of(f, "sm_busy"), 100 * at("sm__cycles_active.sum") / at("sm__cycles_elapsed.sum"));
  }
}

TEST(CounterFigures, AFigureIsAbsentWithoutItsCountersOrWithANothingDenominator) {
  const auto only_reads = counter_figures({{"dram__bytes_read.sum", 1e9}});
  ASSERT_EQ(only_reads.size(), 1u);
  EXPECT_EQ(only_reads[0].id, "dram_read");
  EXPECT_EQ(only_reads[0].label, "DRAM read");
  EXPECT_EQ(only_reads[0].unit, "B");
  // Hits without misses: no rate. No store requests: no sectors per store request.
  const auto partial = counter_figures({{"lts__t_sectors_lookup_hit.sum", 10},
                                        {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0},
                                        {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0}});
  EXPECT_TRUE(partial.empty());
  EXPECT_TRUE(counter_figures({}).empty());
}

TEST(CounterFigures, ThresholdsJudgeWastedSectorsIssueBoundKernelsTailsAndIdleWarps) {
  // 1. Prepare: 16 useful bytes a sector, 90% issue active, 1.25 waves, achieved 20% of a 100% theoretical.
  const std::map<std::string, double> v = {
      {"smsp__sass_data_bytes_mem_global_op_ld.sum", 16 * 1000.0},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1000},
      {"smsp__sass_data_bytes_mem_global_op_st.sum", 32 * 500.0},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 500},
      {"smsp__issue_active.sum", 900},
      {"smsp__cycles_active.sum", 1000},
      {"sm__warps_active.sum", 0.2 * 64 * 1000},
      {"sm__cycles_active.sum", 1000},
      {"sm__maximum_warps_per_active_cycle_pct", 100},
      {"launch__waves_per_multiprocessor", 1.25},
      {"launch__registers_per_thread", 40}};
  // 2. Run.
  const auto f = counter_figures(v);
  // 3. Verify each verdict and that the attention ones say why.
  auto verdict = [&](const std::string& id) { return find_figure(f, id)->verdict; };
  EXPECT_EQ(verdict("ld_bytes_per_sector"), FigureVerdict::attention);
  EXPECT_NE(find_figure(f, "ld_bytes_per_sector")->verdict_text.find("50%"), std::string::npos);
  EXPECT_EQ(verdict("st_bytes_per_sector"), FigureVerdict::fine);
  EXPECT_EQ(verdict("issue_active"), FigureVerdict::attention);
  EXPECT_EQ(verdict("achieved_occupancy"), FigureVerdict::attention);
  EXPECT_EQ(verdict("theoretical_occupancy"), FigureVerdict::none);
  EXPECT_EQ(verdict("waves"), FigureVerdict::attention);
  EXPECT_NE(find_figure(f, "waves")->verdict_text.find("last of 2 waves is 25% full"), std::string::npos);
  EXPECT_EQ(verdict("registers"), FigureVerdict::none);
  EXPECT_DOUBLE_EQ(value_of(f, "registers"), 40);
  // Full waves and busy warps are fine.
  const auto g = counter_figures({{"launch__waves_per_multiprocessor", 6.5},
                                  {"sm__warps_active.sum", 0.9 * 64 * 1000},
                                  {"sm__cycles_active.sum", 1000},
                                  {"sm__maximum_warps_per_active_cycle_pct", 100}});
  EXPECT_EQ(find_figure(g, "waves")->verdict, FigureVerdict::fine);
  EXPECT_EQ(find_figure(g, "achieved_occupancy")->verdict, FigureVerdict::fine);
  EXPECT_EQ(find_figure(counter_figures({{"launch__waves_per_multiprocessor", 0.4}}), "waves")->verdict,
            FigureVerdict::attention);
}

TEST(CounterFigures, EveryFigureExplainsItselfAndCollectabilityFollowsItsMetrics) {
  for (const FigureSpec& spec : figure_specs()) {
    EXPECT_FALSE(spec.label.empty()) << spec.id;
    EXPECT_FALSE(spec.explanation.empty()) << spec.id;
    EXPECT_EQ(find_figure_spec(spec.id), &spec);
  }
  EXPECT_EQ(find_figure_spec("l2_hit_rat"), nullptr);
  const FigureSpec& l2 = *find_figure_spec("l2_hit_rate");
  EXPECT_TRUE(figure_collectable(l2, {"lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum"}));
  EXPECT_FALSE(figure_collectable(l2, {"lts__t_sectors_lookup_hit.sum"}));
  const FigureSpec& flops = *find_figure_spec("measured_flops");
  EXPECT_TRUE(figure_collectable(flops, {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum"}));
  EXPECT_FALSE(figure_collectable(flops, {"dram__bytes_read.sum"}));
  EXPECT_TRUE(figure_collectable(*find_figure_spec("waves"), {}));
  // Thresholds name the measured roofline's own constants.
  EXPECT_NE(find_figure_spec("traffic_ratio")->threshold.find("1.10"), std::string::npos);
}

TEST(CounterFigures, ValuesReadInTheirUnits) {
  auto text = [](const std::string& id, double value) {
    CounterFigure f;
    f.id = id;
    f.unit = find_figure_spec(id)->unit;
    f.value = value;
    return figure_value_text(f);
  };
  EXPECT_EQ(text("dram_read", 3.0 * (1 << 30)), "3 GiB");
  EXPECT_EQ(text("dram_read", 512), "512 B");
  EXPECT_EQ(text("l2_hit_rate", 62.54), "62.5%");
  EXPECT_EQ(text("traffic_ratio", 1.372), "1.37x");
  EXPECT_EQ(text("measured_flops", 2.5e12), "2.5 TFLOP");
  EXPECT_EQ(text("ld_sectors_per_request", 4), "4.00");
  EXPECT_EQ(text("registers", 168), "168");
  EXPECT_EQ(text("kernels", 3), "3");
  EXPECT_EQ(metric_value_text(268435456), "268435456");
  EXPECT_EQ(metric_value_text(0.123456), "0.1235");
}

// ---- a case's figures ---------------------------------------------------------------------

KernelCounters kernel(double duration, std::map<std::string, double> values, std::int64_t registers, double waves,
                      double occupancy) {
  KernelCounters k;
  k.name = "k";
  k.values = std::move(values);
  k.values["gpu__time_duration.sum"] = duration;
  KernelLaunch l;
  l.registers_per_thread = registers;
  l.waves = waves;
  l.theoretical_occupancy = occupancy;
  k.launch = l;
  return k;
}

CaseRecord case_with_counters(Mode mode, double model_bytes, double dram_read, double dram_write) {
  CaseRecord c;
  c.op = "rmsnorm_fwd";
  c.variant = "fused_v1";
  TimingResult t;
  t.mode = mode;
  c.timing = t;
  Derived d;
  d.model_bytes = model_bytes;
  d.model_flops = 1e9;
  d.executed_flops = 1e9;
  d.bound = "memory";  // the traffic ratio is judged for memory-bound cases
  c.derived = d;
  CaseCounters k;
  k.source = "cupti";
  k.kernels = {kernel(30, {{"dram__bytes_read.sum", dram_read / 2}, {"dram__bytes_write.sum", dram_write / 2}}, 32, 4, 1.0),
               kernel(10, {{"dram__bytes_read.sum", dram_read / 2}, {"dram__bytes_write.sum", dram_write / 2},
                           {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 4e8}},
                      96, 0.5, 0.5)};
  k.total = total_over_kernels(k.kernels);
  c.counters = k;
  derive_measured(c);
  return c;
}

TEST(CaseFigures, JoinTheKernelCountTheMeasuredRooflineAndTheTotalsLaunchFigures) {
  // 1. Prepare: a cold case beyond the L2 that moves 1.37 times its 1 GB model, in two kernels.
  const CaseRecord c = case_with_counters(Mode::cold, 1e9, 0.87e9, 0.5e9);
  // 2. Run.
  const auto f = case_figures(c);
  // 3. Verify.
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, "kernels");
  EXPECT_EQ(f[0].value, 2);
  EXPECT_DOUBLE_EQ(value_of(f, "traffic_ratio"), 1.37);
  EXPECT_EQ(find_figure(f, "traffic_ratio")->verdict, FigureVerdict::attention);
  EXPECT_NE(find_figure(f, "traffic_ratio")->verdict_text.find("37% more"), std::string::npos);
  EXPECT_DOUBLE_EQ(value_of(f, "measured_flops"), 8e8);  // an FMA counts 2
  EXPECT_DOUBLE_EQ(value_of(f, "flop_ratio"), 0.8);
  EXPECT_DOUBLE_EQ(value_of(f, "measured_intensity"), 8e8 / 1.37e9);
  EXPECT_DOUBLE_EQ(value_of(f, "dram_read"), 0.87e9);
  // Registers: the most any kernel uses; waves and theoretical occupancy weighted by duration.
  EXPECT_EQ(value_of(f, "registers"), 96);
  EXPECT_DOUBLE_EQ(value_of(f, "waves"), (30 * 4 + 10 * 0.5) / 40);
  EXPECT_DOUBLE_EQ(value_of(f, "theoretical_occupancy"), (30 * 100 + 10 * 50) / 40.0);
}

TEST(CounterFigures, SmBusyUnderItsFloorIsWorthALook) {
  auto busy = [](double active) {
    return *find_figure(counter_figures({{"sm__cycles_active.sum", active}, {"sm__cycles_elapsed.sum", 1000}}),
                        "sm_busy");
  };
  EXPECT_EQ(busy(950).verdict, FigureVerdict::fine);
  EXPECT_EQ(busy(700).verdict, FigureVerdict::fine);
  EXPECT_EQ(busy(690).verdict, FigureVerdict::attention);
  EXPECT_NE(busy(400).verdict_text.find("40%"), std::string::npos) << busy(400).verdict_text;
  EXPECT_EQ(find_figure(counter_figures({{"sm__cycles_active.sum", 1}}), "sm_busy"), nullptr);
}

TEST(CaseFigures, AKernelsValuesAreItsMetricsAndItsLaunchTheMetricsFirst) {
  KernelCounters k;
  k.values = {{"sm__warps_active.sum", 30 * 1000.0}, {"sm__cycles_active.sum", 1000}};
  KernelLaunch launch;
  launch.registers_per_thread = 40;
  launch.theoretical_occupancy = 0.5;
  launch.waves = 2;
  k.launch = launch;
  auto v = kernel_values(k);
  EXPECT_EQ(v.at("launch__registers_per_thread"), 40);
  EXPECT_EQ(v.at("sm__maximum_warps_per_active_cycle_pct"), 50);
  EXPECT_EQ(v.at("sm__warps_active.sum"), 30000);
  // Judged against its own launch: 30 of 64 warps is 47% of a 50% theoretical, fine.
  EXPECT_EQ(find_figure(counter_figures(v), "achieved_occupancy")->verdict, FigureVerdict::fine);
  // An imported launch value (Nsight Compute's) is kept over the recorded launch.
  k.values["launch__registers_per_thread"] = 64;
  EXPECT_EQ(kernel_values(k).at("launch__registers_per_thread"), 64);
  k.launch.reset();
  EXPECT_EQ(kernel_values(k), k.values);
}

TEST(CaseFigures, BesideItsOwnCountersAnImportHasTheCountersFiguresButNotTheMeasuredRoofline) {
  // 1. Prepare: a case with its own counters and the same values imported from Nsight Compute.
  CaseRecord c = case_with_counters(Mode::cold, 1e9, 0.87e9, 0.5e9);
  CaseCounters ncu = *c.counters;
  ncu.source = "ncu";
  c.ncu_counters = ncu;
  // 2. Run.
  const auto own = case_figures(c, *c.counters), imported = case_figures(c, *c.ncu_counters);
  // 3. Verify: the own counters give what the review shows; the import the same counter figures,
  // none of the measured roofline (derived from the own counters alone).
  const auto review = case_figures(c);
  ASSERT_EQ(own.size(), review.size());
  for (std::size_t i = 0; i < own.size(); ++i) EXPECT_EQ(own[i].id, review[i].id);
  for (const char* id : {"traffic_ratio", "measured_flops", "flop_ratio", "measured_intensity"}) {
    EXPECT_NE(find_figure(own, id), nullptr) << id;
    EXPECT_EQ(find_figure(imported, id), nullptr) << id;
  }
  EXPECT_EQ(imported.size() + 4, own.size());
  for (const CounterFigure& f : imported) EXPECT_DOUBLE_EQ(value_of(own, f.id), f.value) << f.id;
}

TEST(CaseFigures, TrafficRatioIsJudgedOnlyForColdCasesBeyondTheL2) {
  EXPECT_EQ(find_figure(case_figures(case_with_counters(Mode::cold, 1e9, 0.5e9, 0.5e9)), "traffic_ratio")->verdict,
            FigureVerdict::fine);
  const CaseRecord hot = case_with_counters(Mode::hot, 1e9, 0.01e9, 0.02e9);
  EXPECT_EQ(find_figure(case_figures(hot), "traffic_ratio")->verdict, FigureVerdict::none);
  CaseRecord resident = case_with_counters(Mode::cold, 1e9, 2e9, 1e9);
  resident.derived->l2_resident = true;
  EXPECT_EQ(find_figure(case_figures(resident), "traffic_ratio")->verdict, FigureVerdict::none);
}

TEST(CaseFigures, NoneWithoutCountersOrWhenTheyCouldNotBeRead) {
  CaseRecord c = case_with_counters(Mode::cold, 1e9, 0.5e9, 0.5e9);
  CaseRecord without = c;
  without.counters.reset();
  EXPECT_TRUE(case_figures(without).empty());
  EXPECT_EQ(figure_counters(without), nullptr);
  CaseRecord refused = c;
  refused.counters->unavailable = "ERR_NVGPUCTRPERM: no permission";
  EXPECT_TRUE(case_figures(refused).empty());
  // Imported from Nsight Compute, under its launch metric names: read the same way.
  CaseRecord imported = without;
  CaseCounters ncu;
  ncu.source = "ncu";
  KernelCounters k;
  k.values = {{"lts__t_sectors_lookup_hit.sum", 3}, {"lts__t_sectors_lookup_miss.sum", 1},
              {"launch__registers_per_thread", 72}};
  ncu.kernels = {k};
  ncu.total = total_over_kernels(ncu.kernels);
  imported.ncu_counters = ncu;
  const auto f = case_figures(imported);
  EXPECT_EQ(figure_counters(imported), &*imported.ncu_counters);
  EXPECT_DOUBLE_EQ(value_of(f, "l2_hit_rate"), 75);
  EXPECT_EQ(value_of(f, "registers"), 72);
}

TEST(MeasuredRoofline, FlopCountersCountAnFmaTwiceAndTensorOperationsOnce) {
  const std::map<std::string, double> total = {{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 10},
                                               {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 3},
                                               {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1000}};
  EXPECT_EQ(measured_flops(total), 1023);
  EXPECT_EQ(measured_tensor_flops(total), 1000);
  EXPECT_FALSE(measured_flops({{"dram__bytes_read.sum", 1}}).has_value());
}

}  // namespace
}  // namespace kwb
