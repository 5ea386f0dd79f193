// Derived figures (bandwidth, FLOP rate, roofline position), speedups and warnings on synthetic
// records of the real rmsnorm_fwd op, checked against numbers worked out by hand.
#include "harness/derive/derive.hpp"
#include "harness/derive/ceilings.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kwb {
namespace derive_test {
namespace {

constexpr double kRel = 1e-12;

// rmsnorm_fwd 16384 x 4096 bf16: bytes = (2 * 16384 * 4096 + 4096) * 2 = 268'443'648,
// flops = 4 * 16384 * 4096 = 268'435'456.
constexpr double kBytes = 268443648.0;
constexpr double kFlops = 268435456.0;

Shape rmsnorm_shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

CaseRecord timed_record(const std::string& variant, Role role, DType dtype, Shape shape, double median_us,
                        Mode mode = Mode::cold, Disposition disposition = Disposition::passed) {
  CaseRecord r;
  r.op = "rmsnorm_fwd";
  r.variant = variant;
  r.role = role;
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.disposition = disposition;
  TimingResult t;
  t.mode = mode;
  t.span.count = 50;
  t.span.median = median_us;
  r.timing = t;
  r.nvtx_range = "rmsnorm_fwd:" + variant + ":" + std::string(to_string(dtype)) + ":" + r.shape.to_compact();
  return r;
}

Ceilings h100_like() {
  Ceilings c;
  c.source = "measured";
  c.dram_copy_gbps = 3000;
  c.dram_read_gbps = 3200;
  c.fp32_tflops = 60;
  c.tensor_tflops = {{"bf16", 800}, {"fp16", 800}, {"tf32", 400}};
  return c;
}

// ---- derive_metrics ---------------------------------------------------------------------

TEST(DeriveMetrics, RmsnormBf16AtOneHundredMicrosecondsIsMemoryBound) {
  // Prepare: a passed 16384 x 4096 bf16 case with a median span of 100 us.
  CaseRecord rec = timed_record("fused_v2_vec16", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 100.0);
  // Run.
  derive_metrics(rec, Registry::instance(), h100_like());
  // Verify against the hand-computed figures.
  ASSERT_TRUE(rec.derived.has_value());
  const Derived& d = *rec.derived;
  EXPECT_EQ(d.model_bytes, kBytes);
  EXPECT_EQ(d.model_flops, kFlops);
  EXPECT_NEAR(d.bandwidth_gbps, 2684.43648, 2684.43648 * kRel);  // bytes / us / 1e3
  EXPECT_NEAR(d.tflops, 2.68435456, 2.68435456 * kRel);          // flops / us / 1e6
  EXPECT_NEAR(d.intensity, kFlops / kBytes, kRel);
  EXPECT_EQ(d.bound, "memory");
  // The written share: y (16384 x 4096) of x + weight + y; a hair under a half, so the DRAM roof
  // is a hair above the 3000 GB/s copy: 1 / ((1 - w) / 3200 + w * (2 / 3000 - 1 / 3200)).
  const double w = 134217728.0 / kBytes;
  EXPECT_NEAR(d.write_fraction, w, kRel);
  const double roof = 1 / ((1 - w) / 3200 + w * (2.0 / 3000 - 1.0 / 3200));
  EXPECT_NEAR(d.bandwidth_roof_gbps, roof, roof * kRel);
  EXPECT_NEAR(roof, 3000, 0.01);
  // Roof at this intensity: intensity * 3000 GB/s = 2.9999 TFLOP/s, far below the 60 TFLOP/s.
  EXPECT_NEAR(d.roofline_tflops, kFlops / kBytes * roof / 1e3, kRel);
  EXPECT_NEAR(d.pct_of_bandwidth_ceiling, 100 * 2684.43648 / roof, kRel);  // about 89.48
  // Memory-bound: % of roofline equals % of the bandwidth ceiling.
  EXPECT_NEAR(d.pct_of_roofline, d.pct_of_bandwidth_ceiling, 1e-9);
  EXPECT_FALSE(d.speedup_vs_baseline.has_value());
}

TEST(DramRoof, CopyForEqualReadsAndWritesReadOnlyForNoWritesAndBetweenForAMix) {
  const Ceilings c = h100_like();  // copy 3000, read-only 3200
  EXPECT_NEAR(dram_roof_gbps(c, 0.5), 3000, 1e-9);
  EXPECT_NEAR(dram_roof_gbps(c, 0.0), 3200, 1e-9);
  // Two reads per write (SwiGLU forward): 1 / ((2/3) / 3200 + (1/3) * (2/3000 - 1/3200)).
  const double two_to_one = 1 / ((2.0 / 3) / 3200 + (1.0 / 3) * (2.0 / 3000 - 1.0 / 3200));
  EXPECT_NEAR(dram_roof_gbps(c, 1.0 / 3), two_to_one, 1e-9);
  EXPECT_GT(two_to_one, 3000);
  EXPECT_LT(two_to_one, 3200);
  // Without a write-only figure, write-heavy mixes keep the copy; so does a missing read-only figure.
  EXPECT_NEAR(dram_roof_gbps(c, 0.8), 3000, 1e-9);
  Ceilings no_read = c;
  no_read.dram_read_gbps = 0;
  EXPECT_NEAR(dram_roof_gbps(no_read, 0.2), 3000, 1e-9);
  EXPECT_EQ(dram_roof_gbps(Ceilings{}, 0.2), 0);
}

TEST(DramRoof, AWriteHeavyMixBlendsTheCopyIntoTheWriteOnlyStream) {
  Ceilings c = h100_like();  // copy 3000, read-only 3200
  c.dram_write_gbps = 3300;
  EXPECT_NEAR(dram_roof_gbps(c, 0.5), 3000, 1e-9);  // the copy, whatever the write figure
  EXPECT_NEAR(dram_roof_gbps(c, 1.0), 3300, 1e-9);  // writes alone
  // Three quarters written: half way in time per byte between the copy and the write stream.
  EXPECT_NEAR(dram_roof_gbps(c, 0.75), 1 / (0.5 / 3000 + 0.5 / 3300), 1e-9);
  EXPECT_GT(dram_roof_gbps(c, 0.9), dram_roof_gbps(c, 0.75));  // more written, a higher roof
  EXPECT_NEAR(dram_roof_gbps(c, 0.25), dram_roof_gbps(h100_like(), 0.25), 1e-9);  // the read side is unchanged
  c.dram_write_gbps = 2900;  // a write figure under the copy's never lowers the roof below it
  EXPECT_NEAR(dram_roof_gbps(c, 0.9), 3000, 1e-9);
}

TEST(DramRoof, ReadHeavyOpIsJudgedAgainstItsMixNotTheCopy) {
  // swiglu_fwd reads gate and up and writes one output: a third of its bytes are written.
  CaseRecord rec = timed_record("fused_v1_flat_vec16", Role::fused, DType::bf16,
                                Shape{{{"rows", 8192}, {"cols", 7168}}}, 100.0);
  rec.op = "swiglu_fwd";
  derive_metrics(rec, Registry::instance(), h100_like());
  ASSERT_TRUE(rec.derived.has_value());
  EXPECT_NEAR(rec.derived->write_fraction, 1.0 / 3, 1e-12);
  EXPECT_NEAR(rec.derived->bandwidth_roof_gbps, dram_roof_gbps(h100_like(), 1.0 / 3), 1e-9);
  EXPECT_NEAR(rec.derived->pct_of_bandwidth_ceiling,
              100 * rec.derived->bandwidth_gbps / rec.derived->bandwidth_roof_gbps, 1e-9);
}

TEST(DeriveMetrics, ComputeBoundWhenTheComputeRoofIsLower) {
  Ceilings slow_alu = h100_like();
  slow_alu.fp32_tflops = 1.0;  // below the 3 TFLOP/s the memory roof allows at ~1 FLOP/byte
  CaseRecord rec = timed_record("fused_v2_vec16", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 100.0);
  derive_metrics(rec, Registry::instance(), slow_alu);
  ASSERT_TRUE(rec.derived.has_value());
  EXPECT_EQ(rec.derived->bound, "compute");
  EXPECT_DOUBLE_EQ(rec.derived->roofline_tflops, 1.0);
  EXPECT_NEAR(rec.derived->pct_of_roofline, 268.435456, 268.435456 * kRel);
}

TEST(DeriveMetrics, FiguresScaleWithTheShapeAndDtype) {
  // fp32 1024 x 4096 at 10 us: bytes (2 * 1024 * 4096 + 4096) * 4 = 33'570'816.
  CaseRecord rec = timed_record("fused_v1_row_per_block", Role::fused, DType::fp32, rmsnorm_shape(1024, 4096), 10.0);
  derive_metrics(rec, Registry::instance(), h100_like());
  ASSERT_TRUE(rec.derived.has_value());
  EXPECT_EQ(rec.derived->model_bytes, 33570816.0);
  EXPECT_NEAR(rec.derived->bandwidth_gbps, 3357.0816, 3357.0816 * kRel);
  EXPECT_NEAR(rec.derived->tflops, 1.6777216, 1.6777216 * kRel);
}

TEST(DeriveMetrics, NotFilledWithoutTiming) {
  CaseRecord rec = timed_record("fused_v2_vec16", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 100.0);
  rec.timing.reset();
  derive_metrics(rec, Registry::instance(), h100_like());
  EXPECT_FALSE(rec.derived.has_value());

  CaseRecord zero = timed_record("fused_v2_vec16", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 0.0);
  derive_metrics(zero, Registry::instance(), h100_like());
  EXPECT_FALSE(zero.derived.has_value());

  CaseRecord unknown = timed_record("v", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 100.0);
  unknown.op = "no_such_op";
  derive_metrics(unknown, Registry::instance(), h100_like());
  EXPECT_FALSE(unknown.derived.has_value());
}

TEST(DeriveMetrics, WithoutCeilingsGivesRatesButNoPercentages) {
  CaseRecord rec = timed_record("fused_v2_vec16", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 100.0);
  derive_metrics(rec, Registry::instance(), Ceilings{});
  ASSERT_TRUE(rec.derived.has_value());
  EXPECT_NEAR(rec.derived->bandwidth_gbps, 2684.43648, 2684.43648 * kRel);
  EXPECT_TRUE(rec.derived->bound.empty());
  EXPECT_EQ(rec.derived->pct_of_bandwidth_ceiling, 0);
  EXPECT_EQ(rec.derived->pct_of_roofline, 0);
}

// ---- derive_speedups --------------------------------------------------------------------

TEST(DeriveSpeedups, UsesOnlyThePassedBaselineOfTheSameOpDtypeShapeAndMode) {
  // Prepare: the right baseline (300 us) comes last, after distractors that must be ignored.
  const Shape shape = rmsnorm_shape(16384, 4096);
  const std::string base = "baseline_eager_8_launches";
  std::vector<CaseRecord> records = {
      timed_record(base, Role::baseline, DType::bf16, shape, 1000.0, Mode::cold, Disposition::failed),
      timed_record(base, Role::baseline, DType::fp16, shape, 600.0),                     // other dtype
      timed_record(base, Role::baseline, DType::bf16, rmsnorm_shape(1024, 4096), 50.0),  // other shape
      timed_record(base, Role::baseline, DType::bf16, shape, 30.0, Mode::hot),           // other mode
      timed_record("fused_v1_row_per_block", Role::fused, DType::bf16, shape, 200.0),    // not a baseline
      timed_record(base, Role::baseline, DType::bf16, shape, 300.0),
      timed_record("fused_v2_vec16", Role::fused, DType::bf16, shape, 150.0),
  };
  for (auto& r : records) derive_metrics(r, Registry::instance(), h100_like());
  // Run.
  derive_speedups(records);
  // Verify.
  const Derived& fused_v2 = *records[6].derived;
  ASSERT_TRUE(fused_v2.speedup_vs_baseline.has_value());
  EXPECT_DOUBLE_EQ(*fused_v2.speedup_vs_baseline, 2.0);  // 300 / 150
  EXPECT_EQ(fused_v2.baseline_variant, base);
  ASSERT_TRUE(records[4].derived->speedup_vs_baseline.has_value());
  EXPECT_DOUBLE_EQ(*records[4].derived->speedup_vs_baseline, 1.5);  // 300 / 200
  EXPECT_DOUBLE_EQ(*records[5].derived->speedup_vs_baseline, 1.0);  // the baseline itself
  // The fp16 baseline has no fp16 fused partner but is its own baseline: 1.0, never 600/300.
  EXPECT_DOUBLE_EQ(*records[1].derived->speedup_vs_baseline, 1.0);
  // The hot baseline is compared with itself only.
  EXPECT_DOUBLE_EQ(*records[3].derived->speedup_vs_baseline, 1.0);
}

// A graph replay against a stream launch would credit the fused variant with the baseline's host
// launch gaps: a speedup is quoted only between cases launched the same way.
TEST(DeriveSpeedups, GraphReplaysAreComparedOnlyWithGraphReplays) {
  const Shape shape = rmsnorm_shape(1024, 4096);
  std::vector<CaseRecord> records = {
      timed_record("baseline_eager_8_launches", Role::baseline, DType::bf16, shape, 40.0),  // stream
      timed_record("fused_v2_vec16", Role::fused, DType::bf16, shape, 5.0),
  };
  records[1].timing->launch = LaunchKind::graph;
  for (auto& r : records) derive_metrics(r, Registry::instance(), h100_like());
  derive_speedups(records);
  EXPECT_FALSE(records[1].derived->speedup_vs_baseline.has_value());
  records[0].timing->launch = LaunchKind::graph;
  derive_speedups(records);
  ASSERT_TRUE(records[1].derived->speedup_vs_baseline.has_value());
  EXPECT_DOUBLE_EQ(*records[1].derived->speedup_vs_baseline, 8.0);
}

TEST(DeriveSpeedups, NoSpeedupWhenTheOnlyBaselineFailedOrIsMissing) {
  const Shape shape = rmsnorm_shape(4096, 5120);
  std::vector<CaseRecord> records = {
      timed_record("baseline_eager_8_launches", Role::baseline, DType::fp32, shape, 100.0, Mode::cold,
                   Disposition::failed),
      timed_record("fused_v2_vec16", Role::fused, DType::fp32, shape, 50.0),
      timed_record("fused_v1_row_per_block", Role::fused, DType::fp16, shape, 50.0),
  };
  for (auto& r : records) derive_metrics(r, Registry::instance(), h100_like());
  records[2].derived->speedup_vs_baseline = 9.0;  // stale: must be cleared
  records[2].derived->baseline_variant = "stale";
  derive_speedups(records);
  EXPECT_FALSE(records[1].derived->speedup_vs_baseline.has_value());
  EXPECT_TRUE(records[1].derived->baseline_variant.empty());
  EXPECT_FALSE(records[2].derived->speedup_vs_baseline.has_value());
  EXPECT_TRUE(records[2].derived->baseline_variant.empty());
}

TEST(DeriveSpeedups, CarryTheBaselinesMathSoATableCanSayTf32VsFp32) {
  const Shape shape = rmsnorm_shape(4096, 5120);
  std::vector<CaseRecord> records = {
      timed_record("baseline_eager_8_launches", Role::baseline, DType::fp32, shape, 100.0),
      timed_record("fused_v2_vec16", Role::fused, DType::fp32, shape, 50.0),
      timed_record("fused_v1_row_per_block", Role::fused, DType::fp16, shape, 50.0),  // no fp16 baseline
  };
  records[0].math = "fp32";
  records[1].math = "tf32";
  for (auto& r : records) derive_metrics(r, Registry::instance(), h100_like());
  records[2].derived->baseline_math = "stale";  // must be cleared with the speedup
  derive_speedups(records);
  EXPECT_EQ(records[1].derived->baseline_math, "fp32");
  EXPECT_EQ(records[0].derived->baseline_math, "fp32");
  EXPECT_EQ(records[2].derived->baseline_math, "");
}

TEST(DeriveSpeedups, LeavesRecordsWithoutDerivedFiguresAlone) {
  const Shape shape = rmsnorm_shape(4096, 5120);
  std::vector<CaseRecord> records = {
      timed_record("baseline_eager_8_launches", Role::baseline, DType::fp32, shape, 100.0),
      timed_record("fused_v2_vec16", Role::fused, DType::fp32, shape, 50.0),
  };
  derive_metrics(records[0], Registry::instance(), h100_like());
  derive_speedups(records);
  EXPECT_FALSE(records[1].derived.has_value());
}

TEST(DeriveMetrics, HotCaseGetsThePercentOfTheL2CeilingAndColdCaseDoesNot) {
  Ceilings ceilings = h100_like();
  ceilings.l2_copy_gbps = 6695;
  const Shape shape = rmsnorm_shape(1024, 4096);  // 16'785'408 bytes: 4196.4 GB/s at 4 us
  CaseRecord hot = timed_record("fused_v2_vec16", Role::fused, DType::bf16, shape, 4.0, Mode::hot);
  CaseRecord cold = timed_record("fused_v2_vec16", Role::fused, DType::bf16, shape, 4.0, Mode::cold);
  derive_metrics(hot, Registry::instance(), ceilings);
  derive_metrics(cold, Registry::instance(), ceilings);
  ASSERT_TRUE(hot.derived->pct_of_l2_ceiling.has_value());
  EXPECT_NEAR(*hot.derived->pct_of_l2_ceiling, 100.0 * hot.derived->bandwidth_gbps / 6695, 1e-9);
  EXPECT_NEAR(*hot.derived->pct_of_l2_ceiling, 62.68, 0.01);
  EXPECT_FALSE(cold.derived->pct_of_l2_ceiling.has_value()) << "a cold case's data comes from DRAM";
  CaseRecord no_l2 = timed_record("fused_v2_vec16", Role::fused, DType::bf16, shape, 4.0, Mode::hot);
  derive_metrics(no_l2, Registry::instance(), h100_like());
  EXPECT_FALSE(no_l2.derived->pct_of_l2_ceiling.has_value()) << "no L2 ceiling measured: absent";
}

// ---- derive_warnings --------------------------------------------------------------------

// A hot case above the DRAM roof, with no L2 ceiling measured to judge it by.
TEST(DeriveWarnings, FlagsFiguresAboveOneHundredPercentOfACeiling) {
  const Shape shape = rmsnorm_shape(1024, 4096);
  // 1024 x 4096 bf16 moves 16'785'408 bytes: at 4 us that is 4196 GB/s, 140% of 3000 GB/s.
  CaseRecord fast = timed_record("fused_v2_vec16", Role::fused, DType::bf16, shape, 4.0, Mode::hot);
  CaseRecord plausible = timed_record("fused_v1_row_per_block", Role::fused, DType::bf16, shape, 10.0, Mode::hot);
  CaseRecord untimed = timed_record("baseline_eager_8_launches", Role::baseline, DType::bf16, shape, 0.0);
  std::vector<CaseRecord> records = {fast, plausible, untimed};
  for (auto& r : records) derive_metrics(r, Registry::instance(), h100_like());
  ASSERT_GT(records[0].derived->pct_of_bandwidth_ceiling, 100.0);
  ASSERT_LT(records[1].derived->pct_of_bandwidth_ceiling, 100.0);

  const auto warnings = derive_warnings(records, 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(records[0].nvtx_range), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("140%"), std::string::npos) << warnings[0];
}

TEST(DeriveWarnings, FlagsAboveTheComputeRoofAlone) {
  CaseRecord rec = timed_record("fused_v2_vec16", Role::fused, DType::bf16, rmsnorm_shape(16384, 4096), 100.0);
  rec.derived = Derived{};
  rec.derived->pct_of_bandwidth_ceiling = 50;
  rec.derived->pct_of_compute_roof = 100.5;
  EXPECT_EQ(derive_warnings({rec}, 0).size(), 1u);
  rec.derived->pct_of_compute_roof = 100.0;  // exactly at the ceiling is plausible
  EXPECT_TRUE(derive_warnings({rec}, 0).empty());
}

// Under the clean flush the warnings read the DRAM figure the roof rule judges:
// tests/harness/derive/roof_rule_test.cpp (RoofRule.WarningsReadTheDramFigureTheRuleJudges).

TEST(ComputeUnit, TensorResolvesToTheCaseDtypeAndFp32ToTf32) {
  EXPECT_EQ(compute_unit_for("tensor", DType::bf16), "tensor_bf16");
  EXPECT_EQ(compute_unit_for("tensor", DType::fp16), "tensor_fp16");
  EXPECT_EQ(compute_unit_for("tensor", DType::fp32), "tensor_tf32");
  EXPECT_EQ(compute_unit_for("fp32", DType::bf16), "fp32");
  EXPECT_EQ(compute_unit_for("tensor_fp16", DType::bf16), "tensor_fp16");
  Ceilings c;
  c.fp32_tflops = 50;
  c.tensor_tflops = {{"bf16", 700}, {"fp16", 650}, {"tf32", 350}};
  EXPECT_EQ(compute_roof_tflops(c, compute_unit_for("tensor", DType::fp32)), 350);
  EXPECT_EQ(compute_roof_tflops(c, compute_unit_for("tensor", DType::bf16)), 700);
}

}  // namespace
}  // namespace derive_test
}  // namespace kwb
