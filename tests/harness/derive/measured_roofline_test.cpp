// The measured roofline from recorded counter values, on CPU: DRAM bytes and FLOPs from the
// counter totals (an FMA counts 2), the traffic ratio against the work model and its flags (only
// for cold cases beyond the L2), and the tensor FLOPs against the model and against the work the
// variant declares it executes.
#include "harness/derive/measured_roofline.hpp"

#include <gtest/gtest.h>

#include <random>

#include "harness/derive/ceilings.hpp"
#include "harness/derive/derive.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace measured_roofline_test {
namespace {

using test::Mentions;

// A passed, derived case with counters whose total is `total`.
CaseRecord measured_case(std::map<std::string, double> total, double model_bytes, double model_flops,
                         Mode mode = Mode::cold, bool l2_resident = false, std::string bound = "memory") {
  CaseRecord r;
  r.op = "some_op";
  r.disposition = Disposition::passed;
  r.timing = TimingResult{};
  r.timing->mode = mode;
  r.timing->span.median = 100;
  Derived d;
  d.model_bytes = model_bytes;
  d.model_flops = model_flops;
  d.executed_bytes = model_bytes;
  d.executed_flops = model_flops;
  d.l2_resident = l2_resident;
  d.bound = std::move(bound);
  r.derived = d;
  CaseCounters c;
  c.source = "cupti";
  c.chip = "GH100";
  KernelCounters k;
  k.name = "kernel";
  k.values = total;
  c.kernels = {k};
  c.total = std::move(total);
  r.counters = c;
  return r;
}

std::map<std::string, double> dram(double read, double write) {
  return {{"dram__bytes_read.sum", read}, {"dram__bytes_write.sum", write}};
}

// ---- figures from counter totals ------------------------------------------------------------

TEST(MeasuredFigures, DramBytesAreReadPlusWrittenAndNeedBoth) {
  EXPECT_EQ(measured_dram_bytes(dram(3e8, 1e8)), 4e8);
  EXPECT_EQ(measured_dram_bytes({{"dram__bytes_read.sum", 3e8}}), std::nullopt);
  EXPECT_EQ(measured_dram_bytes({{"dram__bytes_write.sum", 3e8}}), std::nullopt);
  EXPECT_EQ(measured_dram_bytes({}), std::nullopt);
}

TEST(MeasuredFigures, AnFmaCountsTwoFlopsAnAddOrMultiplyOne) {
  EXPECT_EQ(measured_flops({{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 1000}}), 2000);
  EXPECT_EQ(measured_flops({{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 1000},
                            {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 30},
                            {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 7}}),
            2037);
  EXPECT_EQ(measured_flops({{"sm__sass_thread_inst_executed_op_dfma_pred_on.sum", 5},
                            {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", 3}}),
            16);
}

TEST(MeasuredFigures, TensorFlopsAddEveryInputPathAndCountInTheTotal) {
  const std::map<std::string, double> t = {{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 6e9},
                                           {"sm__ops_path_tensor_src_fp16.sum", 1e9},
                                           {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 2e9},
                                           {"sm__ops_path_tensor_src_fp8.sum", 0},
                                           {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 50}};
  EXPECT_EQ(measured_tensor_flops(t), 9e9);
  EXPECT_EQ(measured_flops(t), 9e9 + 100);
}

TEST(MeasuredFigures, NoFlopCounterIsNoFigureNotZero) {
  EXPECT_EQ(measured_flops(dram(1, 1)), std::nullopt);
  EXPECT_EQ(measured_tensor_flops({{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 4}}), std::nullopt);
  // A collected zero is a figure: the kernel did no FP32 arithmetic.
  EXPECT_EQ(measured_flops({{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 0}}), 0.0);
}

// ---- the traffic ratio and its flags -----------------------------------------------------------

TEST(DeriveMeasured, AStreamingCaseAtItsModelHasRatioOneAndNoFlag) {
  CaseRecord r = measured_case(dram(2.0e8, 1.01e8), 3e8, 0);
  derive_measured(r);
  ASSERT_TRUE(r.derived->measured);
  const MeasuredWork& m = *r.derived->measured;
  EXPECT_DOUBLE_EQ(m.dram_bytes, 3.01e8);
  EXPECT_DOUBLE_EQ(m.traffic_ratio, 3.01e8 / 3e8);
  EXPECT_FALSE(m.flops);
  EXPECT_FALSE(m.intensity);
  EXPECT_TRUE(m.flags.empty()) << m.flags[0];
}

TEST(DeriveMeasured, AColdCaseBeyondTheL2ThatReadsItsInputTwiceIsFlaggedWithItsExcess) {
  CaseRecord r = measured_case(dram(4e8, 1e8), 3e8, 0);  // model: 2e8 read + 1e8 written
  derive_measured(r);
  ASSERT_TRUE(r.derived->measured);
  const MeasuredWork& m = *r.derived->measured;
  EXPECT_NEAR(m.traffic_ratio, 5.0 / 3, 1e-12);
  ASSERT_EQ(m.flags.size(), 1u);
  EXPECT_TRUE(Mentions(m.flags[0], "moves 67% more DRAM traffic than the work model"));
  EXPECT_TRUE(Mentions(m.flags[0], "ratio 1.67"));
}

TEST(DeriveMeasured, TheThresholdIsTenPercentAndCanBeChanged) {
  for (const auto& [ratio, flagged] : std::vector<std::pair<double, bool>>{{1.09, false}, {1.11, true}}) {
    CaseRecord r = measured_case(dram(ratio * 1e9, 0), 1e9, 0);
    derive_measured(r);
    EXPECT_EQ(r.derived->measured->flags.size(), flagged ? 1u : 0u) << ratio;
  }
  CaseRecord r = measured_case(dram(1.3e9, 0), 1e9, 0);
  derive_measured(r, 1.5);
  EXPECT_TRUE(r.derived->measured->flags.empty()) << "a threshold of 1.5 lets 1.3 pass";
}

TEST(DeriveMeasured, AColdCaseThatMovesFarLessThanItsModelIsFlagged) {
  CaseRecord r = measured_case(dram(5e8, 2e8), 1e9, 0);
  derive_measured(r);
  ASSERT_EQ(r.derived->measured->flags.size(), 1u);
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "moves only 70% of the work model's DRAM bytes"));
  CaseRecord fine = measured_case(dram(6e8, 3.1e8), 1e9, 0);  // 0.91
  derive_measured(fine);
  EXPECT_TRUE(fine.derived->measured->flags.empty());
}

TEST(DeriveMeasured, HotAndL2ResidentCasesAreNeverFlaggedForTraffic) {
  // Their data need not come from DRAM at all: any ratio is what the L2 left.
  for (const double ratio : {0.01, 3.0}) {
    CaseRecord hot = measured_case(dram(ratio * 1e9, 0), 1e9, 0, Mode::hot);
    CaseRecord resident = measured_case(dram(ratio * 1e9, 0), 1e9, 0, Mode::cold, /*l2_resident=*/true);
    derive_measured(hot);
    derive_measured(resident);
    EXPECT_DOUBLE_EQ(hot.derived->measured->traffic_ratio, ratio);
    EXPECT_TRUE(hot.derived->measured->flags.empty()) << ratio;
    EXPECT_DOUBLE_EQ(resident.derived->measured->traffic_ratio, ratio);
    EXPECT_TRUE(resident.derived->measured->flags.empty()) << ratio;
  }
}

TEST(DeriveMeasured, ComputeBoundCasesShowTheirTrafficRatioUnflagged) {
  // A GEMM re-reads its tiles from DRAM by design (1.85x its model for a 4096^3 bf16 one on an
  // H200): the ratio is a figure, not a finding.
  CaseRecord gemm = measured_case(dram(1.85e9, 0), 1e9, 0, Mode::cold, false, "compute");
  derive_measured(gemm);
  EXPECT_DOUBLE_EQ(gemm.derived->measured->traffic_ratio, 1.85);
  EXPECT_TRUE(gemm.derived->measured->flags.empty());
}

TEST(DeriveMeasured, RandomColdRatiosAreFlaggedExactlyOutsideTheBand) {
  std::mt19937_64 rng(9029);
  std::uniform_real_distribution<double> ratio(0.5, 2.5), model(1e6, 1e11), share(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const double q = ratio(rng), bytes = model(rng), read = share(rng);
    CaseRecord r = measured_case(dram(q * bytes * read, q * bytes * (1 - read)), bytes, 0);
    derive_measured(r);
    const MeasuredWork& m = *r.derived->measured;
    EXPECT_NEAR(m.traffic_ratio, q, 1e-9 * q);
    const bool outside = m.traffic_ratio > kTrafficRatioThreshold || m.traffic_ratio < kTrafficRatioFloor;
    EXPECT_EQ(m.flags.size(), outside ? 1u : 0u) << "ratio " << m.traffic_ratio;
  }
}

TEST(DeriveMeasured, IntensityIsMeasuredFlopsOverMeasuredBytes) {
  auto total = dram(1e9, 1e9);
  total["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] = 5e8;
  CaseRecord r = measured_case(total, 2e9, 2e9);
  derive_measured(r);
  const MeasuredWork& m = *r.derived->measured;
  EXPECT_EQ(m.flops, 1e9);
  EXPECT_EQ(m.flop_ratio, 0.5);
  EXPECT_EQ(m.intensity, 0.5);
  EXPECT_TRUE(m.flags.empty()) << "CUDA-core FLOPs are not compared with the model: " << m.flags[0];
}

// ---- tensor FLOPs against the model and the variant's declared work -------------------------

std::map<std::string, double> tensor(double flops) { return {{"sm__ops_path_tensor_src_tf32_dst_fp32.sum", flops}}; }

TEST(DeriveMeasured, TensorFlopsAtTheModelAreNotFlagged) {
  CaseRecord r = measured_case(tensor(1.02e12), 1e9, 1e12);
  derive_measured(r);
  EXPECT_NEAR(*r.derived->measured->flop_ratio, 1.02, 1e-12);
  EXPECT_TRUE(r.derived->measured->flags.empty());
}

TEST(DeriveMeasured, TensorFlopsFarFromTheModelAreFlagged) {
  CaseRecord r = measured_case(tensor(0.8e12), 1e9, 1e12);
  derive_measured(r);
  ASSERT_EQ(r.derived->measured->flags.size(), 1u);
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "executes 0.8x the work model's FLOPs on the tensor pipes"));
  EXPECT_FALSE(Mentions(r.derived->measured->flags[0], "declares"));
}

TEST(DeriveMeasured, AVariantThatDeclaresFiveSixthsAndExecutesThemIsSaidToDoAsItDeclares) {
  CaseRecord r = measured_case(tensor(1e12 * 5 / 6), 1e9, 1e12);
  r.derived->executed_flops = 1e12 * 5 / 6;
  derive_measured(r);
  ASSERT_EQ(r.derived->measured->flags.size(), 1u);
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "executes 0.833x the work model's FLOPs"));
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "as the variant declares (0.833x)"));
}

TEST(DeriveMeasured, AVariantThatDeclaresFiveSixthsButExecutesTheWholeModelIsFlaggedAgainstItsDeclaration) {
  CaseRecord r = measured_case(tensor(1e12), 1e9, 1e12);
  r.derived->executed_flops = 1e12 * 5 / 6;
  derive_measured(r);
  ASSERT_EQ(r.derived->measured->flags.size(), 1u);
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "executes 1x the work model's FLOPs"));
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "the variant declares 0.833x"));
  EXPECT_FALSE(Mentions(r.derived->measured->flags[0], "as the variant declares"));
}

TEST(DeriveMeasured, TensorFlopsAreComparedOnlyWhereTheTensorPipesDoMostOfTheArithmetic) {
  auto total = tensor(1e9);
  total["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] = 1e9;  // 2e9 CUDA-core FLOPs
  CaseRecord r = measured_case(total, 1e9, 1e12);
  derive_measured(r);
  EXPECT_EQ(r.derived->measured->flops, 3e9);
  EXPECT_TRUE(r.derived->measured->flags.empty());
}

// ---- when there is nothing to measure -------------------------------------------------------

TEST(DeriveMeasured, NoCountersUnreadCountersOrNoByteOrFlopCounterLeaveItAbsent) {
  CaseRecord none = measured_case(dram(1, 1), 1, 0);
  none.counters.reset();
  CaseRecord unread = measured_case(dram(1, 1), 1, 0);
  unread.counters->unavailable = "ERR_NVGPUCTRPERM";
  CaseRecord no_kernels = measured_case(dram(1, 1), 1, 0);
  no_kernels.counters->kernels.clear();
  CaseRecord occupancy_only = measured_case({{"sm__warps_active.sum", 1e6}}, 1, 0);
  CaseRecord underived = measured_case(dram(1, 1), 1, 0);
  underived.derived.reset();
  for (CaseRecord* r : {&none, &unread, &no_kernels, &occupancy_only, &underived}) {
    derive_measured(*r);
    EXPECT_TRUE(!r->derived || !r->derived->measured);
  }
}

// ---- through derive_metrics, on the real ops' work models ------------------------------------

Ceilings h100_like() {
  Ceilings c;
  c.source = "measured";
  c.dram_copy_gbps = 3000;
  c.dram_read_gbps = 3200;
  c.fp32_tflops = 60;
  c.tensor_tflops = {{"bf16", 800}, {"fp16", 800}, {"tf32", 400}};
  return c;
}

TEST(DeriveMeasured, DeriveMetricsAddsTheMeasuredPointAgainstTheOpsWorkModel) {
  // rmsnorm_fwd 16384 x 4096 bf16: (2 * 16384 * 4096 + 4096) * 2 = 268'443'648 bytes, beyond a 50 MiB L2.
  const double model = 268443648.0;
  CaseRecord r = measured_case(dram(2 * model, model / 2), 0, 0);
  r.op = "rmsnorm_fwd";
  r.variant = "fused_v2_vec16";
  r.dtype = DType::bf16;
  r.shape = Shape{{{"rows", 16384}, {"cols", 4096}}};
  r.derived.reset();
  derive_metrics(r, Registry::instance(), h100_like(), 50 << 20);
  ASSERT_TRUE(r.derived && r.derived->measured);
  EXPECT_DOUBLE_EQ(r.derived->measured->traffic_ratio, 2.5);
  ASSERT_EQ(r.derived->measured->flags.size(), 1u);
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "moves 150% more DRAM traffic"));
}

TEST(DeriveMeasured, NewtonSchulzSymmetricHalvesExecutingItsDeclaredFlopsIsSaidToDoAsItDeclares) {
  CaseRecord r = measured_case({}, 0, 0);
  r.op = "newton_schulz";
  r.variant = "fused_v2_symmetric_halves_tf32";
  r.dtype = DType::fp32;
  r.shape = Shape{{{"rows", 4096}, {"cols", 4096}}};
  r.derived.reset();
  // The FLOPs it declares, as the tensor pipes would count them.
  const Variant* v = Registry::instance().find_variant(r.op, r.variant);
  ASSERT_TRUE(v && v->executed_work);
  const double declared = v->executed_work(r.shape, r.dtype).flops;
  r.counters->total = tensor(declared);
  r.counters->kernels[0].values = r.counters->total;
  derive_metrics(r, Registry::instance(), h100_like(), 50 << 20);
  ASSERT_TRUE(r.derived && r.derived->measured);
  const double ratio = *r.derived->measured->flop_ratio;
  EXPECT_GT(ratio, 0.8);
  EXPECT_LT(ratio, 0.87) << "about 5/6 of the model's FLOPs at a square shape";
  ASSERT_EQ(r.derived->measured->flags.size(), 1u);
  EXPECT_TRUE(Mentions(r.derived->measured->flags[0], "as the variant declares"));
}

// ---- the measured point on the roofline ---------------------------------------------------------

TEST(MeasuredPoint, ExecutedFlopsOverMeasuredBytesAtTheExecutedRate) {
  // 1. Prepare: 1.5x the model's 3e8 bytes; 5/6 of its 6e9 FLOPs executed on the tensor pipes.
  std::map<std::string, double> total = dram(3e8, 1.5e8);
  total["sm__ops_path_tensor_src_bf16_dst_fp32.sum"] = 5e9;
  CaseRecord r = measured_case(total, 3e8, 6e9, Mode::cold, false, "compute");
  derive_measured(r);
  // 2. Run.
  const auto p = measured_point(r);
  // 3. Verify: on the line of the DRAM bandwidth it drew (rate / intensity = bytes / time).
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->flops_measured);
  EXPECT_DOUBLE_EQ(p->intensity, 5e9 / 4.5e8);
  EXPECT_DOUBLE_EQ(p->tflops, 5e9 / 100 / 1e6);
  EXPECT_NEAR(p->tflops / p->intensity * 1e3, 4.5e8 / 100 / 1e3, 1e-9);  // GB/s
  EXPECT_TRUE(p->flagged) << "5/6 of the model's FLOPs on the tensor pipes is flagged";
}

TEST(MeasuredPoint, WithoutFlopCountersTheModelsFlopsStandIn) {
  CaseRecord r = measured_case(dram(2.4e8, 1.2e8), 3e8, 6e8);
  derive_measured(r);
  const auto p = measured_point(r);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->flops_measured);
  EXPECT_DOUBLE_EQ(p->intensity, 6e8 / 3.6e8);
  EXPECT_DOUBLE_EQ(p->tflops, 6e8 / 100 / 1e6);  // the model point's height
  EXPECT_TRUE(p->flagged) << "1.2x the model's bytes, cold, beyond the L2";
  CaseRecord within = measured_case(dram(2e8, 1e8), 3e8, 6e8);
  derive_measured(within);
  EXPECT_FALSE(measured_point(within)->flagged);
}

TEST(MeasuredPoint, TensorCountersThatCountedNothingLeaveTheModelsFlops) {
  // An op of the CUDA cores measured with the memory and tensor sets: its tensor pipes did nothing.
  std::map<std::string, double> total = dram(2e8, 1e8);
  total["sm__ops_path_tensor_src_bf16_dst_fp32.sum"] = 0;
  CaseRecord r = measured_case(total, 3e8, 6e8);
  derive_measured(r);
  ASSERT_TRUE(r.derived->measured);
  EXPECT_FALSE(r.derived->measured->flops.has_value()) << "0 FLOPs counted is no measurement of them";
  const auto p = measured_point(r);
  ASSERT_TRUE(p.has_value()) << "the point stays on the roofline, at the model's FLOPs";
  EXPECT_FALSE(p->flops_measured);
  EXPECT_DOUBLE_EQ(p->intensity, 6e8 / 3e8);
  // A report written before that rule (flops 0 recorded) is drawn the same way.
  r.derived->measured->flops = 0.0;
  ASSERT_TRUE(measured_point(r).has_value());
  EXPECT_DOUBLE_EQ(measured_point(r)->intensity, 6e8 / 3e8);
}

TEST(MeasuredPoint, NoneWithoutMeasuredBytesATimeOrAPlaceOnLogAxes) {
  CaseRecord flops_only = measured_case({{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 100}}, 3e8, 6e8);
  derive_measured(flops_only);
  ASSERT_TRUE(flops_only.derived->measured);
  EXPECT_FALSE(measured_point(flops_only).has_value()) << "no DRAM bytes: no intensity";
  CaseRecord untimed = measured_case(dram(2e8, 1e8), 3e8, 6e8);
  derive_measured(untimed);
  untimed.timing.reset();
  EXPECT_FALSE(measured_point(untimed).has_value());
  CaseRecord no_flops = measured_case(dram(2e8, 1e8), 3e8, 0);  // a copy: no FLOPs, no log-axis place
  derive_measured(no_flops);
  EXPECT_FALSE(measured_point(no_flops).has_value());
  CaseRecord uncounted = measured_case(dram(2e8, 1e8), 3e8, 6e8);
  EXPECT_FALSE(measured_point(uncounted).has_value()) << "derive_measured not run: nothing measured";
}

}  // namespace
}  // namespace measured_roofline_test
}  // namespace kwb
