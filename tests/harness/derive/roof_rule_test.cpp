// The roof rule (harness/derive/derive.hpp judge_roofs): a passed case above its roof by more
// than kRoofMargin fails with a reason naming the roof, keeping its figures; cold cases larger
// than the L2 against the DRAM roof at their mix, hot and L2-resident ones against the L2 copy
// ceiling, every case against its compute roof counted in executed FLOPs. Synthetic records of
// real ops, times chosen to land at stated percentages of the roofs.
#include "harness/derive/derive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "harness/derive/ceilings.hpp"

namespace kwb {
namespace roof_rule_test {
namespace {

constexpr std::int64_t kL2 = 50 << 20;  // an H100's L2

Ceilings h100_like() {
  Ceilings c;
  c.source = "measured";
  c.dram_copy_gbps = 3000;
  c.dram_read_gbps = 3200;
  c.l2_copy_gbps = 6695;
  c.fp32_tflops = 60;
  c.tensor_tflops = {{"bf16", 800}, {"fp16", 800}, {"tf32", 400}};
  return c;
}

CaseRecord record(const std::string& op, const std::string& variant, DType dtype, Shape shape, double median_us,
                  Mode mode = Mode::cold, std::string flush = "dirty") {
  CaseRecord r;
  r.op = op;
  r.variant = variant;
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.disposition = Disposition::passed;
  TimingResult t;
  t.mode = mode;
  t.flush = mode == Mode::hot ? "none" : std::move(flush);
  t.span.count = 50;
  t.span.median = median_us;
  r.timing = t;
  r.nvtx_range = op + ":" + variant + ":" + std::string(to_string(dtype)) + ":" + r.shape.to_compact();
  return r;
}

Shape rows_cols(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

// rmsnorm_fwd 16384 x 4096 bf16 (268 MB, beyond any L2) at the time that reads `pct` of its
// DRAM roof.
CaseRecord rmsnorm_at_pct_of_dram(double pct, const std::string& flush = "dirty") {
  CaseRecord probe = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 100.0);
  derive_metrics(probe, Registry::instance(), h100_like(), kL2);
  const double us = probe.derived->model_bytes / (probe.derived->bandwidth_roof_gbps * pct / 100) / 1e3;
  CaseRecord rec = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), us, Mode::cold, flush);
  derive_metrics(rec, Registry::instance(), h100_like(), kL2);
  return rec;
}

TEST(RoofRule, ColdCaseFarAboveTheDramRoofFailsNamingItAndKeepsItsFigures) {
  // 1. A timer cheat: 268 MB "moved" in 2 us (134 TB/s).
  CaseRecord rec = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 2.0);
  derive_metrics(rec, Registry::instance(), h100_like(), kL2);
  // 2. Judge it.
  EXPECT_TRUE(judge_roofs(rec, kL2));
  // 3. Failed, with the roof, the figure and what it means; nothing measured is lost.
  EXPECT_EQ(rec.disposition, Disposition::failed);
  EXPECT_NE(rec.reason.find("above its roof"), std::string::npos) << rec.reason;
  EXPECT_NE(rec.reason.find("DRAM roof"), std::string::npos) << rec.reason;
  EXPECT_NE(rec.reason.find("4474."), std::string::npos) << rec.reason;  // 134'222 / 3000 GB/s
  EXPECT_NE(rec.reason.find("3% margin"), std::string::npos) << rec.reason;
  EXPECT_NE(rec.reason.find("timed launches"), std::string::npos) << rec.reason;
  ASSERT_TRUE(rec.timing.has_value());
  ASSERT_TRUE(rec.derived.has_value());
  EXPECT_DOUBLE_EQ(rec.timing->span.median, 2.0);
  EXPECT_GT(rec.derived->bandwidth_gbps, 100000);
}

TEST(RoofRule, TheMarginIsThreePercentOfTheRoof) {
  CaseRecord within = rmsnorm_at_pct_of_dram(102.9);
  EXPECT_NEAR(within.derived->pct_of_bandwidth_ceiling, 102.9, 1e-9);
  EXPECT_FALSE(judge_roofs(within, kL2)) << within.reason;
  EXPECT_EQ(within.disposition, Disposition::passed);
  // Within the margin, above 100%: a warning, not a failure.
  const auto warnings = derive_warnings({within}, kL2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("102.9% of the DRAM roof"), std::string::npos) << warnings[0];

  CaseRecord beyond = rmsnorm_at_pct_of_dram(103.1);
  EXPECT_TRUE(judge_roofs(beyond, kL2));
  EXPECT_NE(beyond.reason.find("103.1% of the DRAM roof"), std::string::npos) << beyond.reason;
  EXPECT_TRUE(derive_warnings({beyond}, kL2).empty()) << "a failed case is not warned about again";
  EXPECT_TRUE(derive_warnings({rmsnorm_at_pct_of_dram(99.5)}, kL2).empty());
}

TEST(RoofRule, OnlyPassedCasesAreJudged) {
  CaseRecord rec = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 2.0);
  derive_metrics(rec, Registry::instance(), h100_like(), kL2);
  rec.disposition = Disposition::failed;
  rec.reason = "verification: 12 mismatches";
  EXPECT_FALSE(judge_roofs(rec, kL2));
  EXPECT_EQ(rec.reason, "verification: 12 mismatches") << "the first failure's reason stays";
  CaseRecord untimed = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 2.0);
  untimed.timing.reset();
  EXPECT_FALSE(roof_violation(untimed, kL2).has_value());
}

TEST(RoofRule, ColdCaseThatFitsInTheL2IsJudgedAgainstTheL2CopyCeiling) {
  // rmsnorm 1024 x 4096 bf16: 16.8 MB, fits in a 50 MiB L2. At 4 us: 4196 GB/s, 140% of the DRAM
  // roof, 63% of the L2 copy ceiling: its writes can still be in L2 when it ends.
  CaseRecord rec = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(1024, 4096), 4.0);
  derive_metrics(rec, Registry::instance(), h100_like(), kL2);
  EXPECT_TRUE(rec.derived->l2_resident);
  ASSERT_TRUE(rec.derived->pct_of_l2_ceiling.has_value());
  EXPECT_NEAR(*rec.derived->pct_of_l2_ceiling, 62.68, 0.01);
  EXPECT_FALSE(judge_roofs(rec, kL2)) << rec.reason;
  // The same case on a GPU whose L2 size is unknown: judged against DRAM, and fails.
  CaseRecord unknown_l2 = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(1024, 4096), 4.0);
  derive_metrics(unknown_l2, Registry::instance(), h100_like());
  EXPECT_FALSE(unknown_l2.derived->l2_resident);
  EXPECT_TRUE(judge_roofs(unknown_l2, 0));
  EXPECT_NE(unknown_l2.reason.find("DRAM roof"), std::string::npos) << unknown_l2.reason;
  // And far above the L2 ceiling too (0.5 us: 33.6 TB/s, 501%): fails, naming the L2 ceiling.
  CaseRecord cheat = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(1024, 4096), 0.5);
  derive_metrics(cheat, Registry::instance(), h100_like(), kL2);
  EXPECT_TRUE(judge_roofs(cheat, kL2));
  EXPECT_NE(cheat.reason.find("L2 copy ceiling"), std::string::npos) << cheat.reason;
  EXPECT_NE(cheat.reason.find("L2-resident"), std::string::npos) << cheat.reason;
}

TEST(RoofRule, HotCaseKeepsTheL2CopyCeilingWhateverItsSize) {
  // Hot, 268 MB at 60 us: 4474 GB/s, 149% of DRAM, 67% of L2: passes.
  CaseRecord hot = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 60.0, Mode::hot);
  derive_metrics(hot, Registry::instance(), h100_like(), kL2);
  EXPECT_FALSE(judge_roofs(hot, kL2)) << hot.reason;
  // At 31 us (8.66 TB/s, 130% of the L2 copy ceiling): inside the L2 roof's wider margin (a
  // read-heavy kernel may outrun a copy in L2), so it passes.
  CaseRecord near = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 31.0, Mode::hot);
  derive_metrics(near, Registry::instance(), h100_like(), kL2);
  ASSERT_TRUE(near.derived->pct_of_l2_ceiling.has_value());
  EXPECT_GT(*near.derived->pct_of_l2_ceiling, 120.0);
  EXPECT_FALSE(judge_roofs(near, kL2)) << near.reason;
  // At 20 us (13.4 TB/s, 200% of the L2 copy ceiling): fails.
  CaseRecord fast = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 20.0, Mode::hot);
  derive_metrics(fast, Registry::instance(), h100_like(), kL2);
  EXPECT_TRUE(judge_roofs(fast, kL2));
  EXPECT_NE(fast.reason.find("L2 copy ceiling (a hot case"), std::string::npos) << fast.reason;
  // Without an L2 ceiling a hot case has no bandwidth roof to break: only a warning.
  Ceilings no_l2 = h100_like();
  no_l2.l2_copy_gbps = 0;
  CaseRecord unjudged = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 20.0, Mode::hot);
  derive_metrics(unjudged, Registry::instance(), no_l2, kL2);
  EXPECT_FALSE(judge_roofs(unjudged, kL2));
  const auto warnings = derive_warnings({unjudged}, kL2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("hot mode"), std::string::npos) << warnings[0];
}

TEST(RoofRule, CleanFlushDiscountsTheWritesAnL2CanStillHold) {
  // At 110% of the DRAM roof under the clean flush: up to 50 MiB of its 134 MB of writes may
  // still be in L2 when it ends, so its DRAM traffic is at least 268 - 52 MB: ~89% of the roof.
  CaseRecord clean = rmsnorm_at_pct_of_dram(110, "clean");
  EXPECT_FALSE(judge_roofs(clean, kL2)) << clean.reason;
  CaseRecord dirty = rmsnorm_at_pct_of_dram(110, "dirty");
  EXPECT_TRUE(judge_roofs(dirty, kL2));
  // Far above even so: the reason says the discount was made.
  CaseRecord cheat = rmsnorm_at_pct_of_dram(300, "clean");
  EXPECT_TRUE(judge_roofs(cheat, kL2));
  EXPECT_NE(cheat.reason.find("clean flush"), std::string::npos) << cheat.reason;
}

// The share of a clean-flush case's executed bytes the roof rule counts: all but the writes an
// L2 can still hold when the kernel ends.
double clean_flush_share(const CaseRecord& rec) {
  const Derived& d = *rec.derived;
  return 1 - std::min(d.write_fraction * d.executed_bytes, static_cast<double>(kL2)) / d.executed_bytes;
}

TEST(RoofRule, WarningsReadTheDramFigureTheRuleJudges) {
  // 1. rmsnorm 16384 x 4096 bf16 under the clean flush: 52 MB of its 134 MB of writes may end in
  //    L2, so the rule counts ~80% of its bytes. Times that put the judged figure at 101.5%
  //    (within the margin) and at 110% counting every byte (89% judged).
  const double share = clean_flush_share(rmsnorm_at_pct_of_dram(100, "clean"));
  ASSERT_GT(share, 0.7);
  ASSERT_LT(share, 0.9);
  CaseRecord within = rmsnorm_at_pct_of_dram(101.5 / share, "clean");
  CaseRecord below = rmsnorm_at_pct_of_dram(110, "clean");
  // 2. The rule passes both.
  EXPECT_FALSE(judge_roofs(within, kL2)) << within.reason;
  EXPECT_FALSE(judge_roofs(below, kL2)) << below.reason;
  // 3. The warning names the figure the rule judged, not the one counting every byte.
  const auto w = derive_warnings({within}, kL2);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("101.5% of the DRAM roof (less the"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("within the 3% margin"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find(fmt::format("{:.1f}% counting them", within.derived->pct_of_bandwidth_ceiling)),
            std::string::npos) << w[0];
  // Above 100% only before the discount: explained as within its roof, never "within the margin".
  const auto b = derive_warnings({below}, kL2);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].find("margin"), std::string::npos) << b[0];
  EXPECT_NE(b[0].find("110.0% of the DRAM roof counting every byte"), std::string::npos) << b[0];
  EXPECT_NE(b[0].find(fmt::format("{:.1f}% less the", 110 * share)), std::string::npos) << b[0];
  EXPECT_NE(b[0].find("within its roof"), std::string::npos) << b[0];
  // 4. Past the margin by the judged figure: failed with that figure, and no warning.
  CaseRecord beyond = rmsnorm_at_pct_of_dram(103.5 / share, "clean");
  EXPECT_TRUE(judge_roofs(beyond, kL2));
  EXPECT_NE(beyond.reason.find("103.5% of the DRAM roof"), std::string::npos) << beyond.reason;
  EXPECT_TRUE(derive_warnings({beyond}, kL2).empty());
  // 5. The dirty flush discounts nothing: the warning's figure is the table's.
  const auto d = derive_warnings({rmsnorm_at_pct_of_dram(101.5)}, kL2);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("101.5% of the DRAM roof:"), std::string::npos) << d[0];
}

// newton_schulz 4096^2 bf16: the baseline executes the model's FLOPs, fused_v2 declares 5/6 of
// them (the symmetric Gram and polynomial blocks). At a time that puts the model's FLOPs at 105%
// of the tensor roof, the baseline fails on the compute roof and fused_v2 (87.5%) passes, while
// both report the same useful TFLOP/s.
TEST(RoofRule, ComputeRoofCountsTheExecutedWorkAndRatesTheUsefulWork) {
  const Shape shape = rows_cols(4096, 4096);
  const Op& op = *Registry::instance().find_op("newton_schulz");
  const double model_flops = op.work(shape, DType::bf16).flops;
  const double us = model_flops / (800 * 1.05) / 1e6;  // 105% of 800 TFLOP/s in model FLOPs
  CaseRecord base = record("newton_schulz", "baseline_eager_cublaslt", DType::bf16, shape, us);
  CaseRecord v2 = record("newton_schulz", "fused_v2_symmetric_halves_tf32", DType::bf16, shape, us);
  derive_metrics(base, Registry::instance(), h100_like(), kL2);
  derive_metrics(v2, Registry::instance(), h100_like(), kL2);
  // Useful rates: the same.
  EXPECT_DOUBLE_EQ(base.derived->tflops, v2.derived->tflops);
  EXPECT_NEAR(v2.derived->tflops, 840, 1e-6);
  // Executed: the model's for the baseline, less for fused_v2, and % of roof counts it.
  EXPECT_EQ(base.derived->executed_flops, model_flops);
  EXPECT_LT(v2.derived->executed_flops, model_flops);
  EXPECT_EQ(v2.derived->model_flops, model_flops);
  EXPECT_EQ(v2.derived->executed_bytes, v2.derived->model_bytes);
  EXPECT_EQ(base.derived->bound, "compute");
  EXPECT_NEAR(base.derived->pct_of_roofline, 105, 1e-9);
  EXPECT_NEAR(base.derived->pct_of_compute_roof, 105, 1e-9);
  const double executed_share = v2.derived->executed_flops / model_flops;
  EXPECT_NEAR(executed_share, 5.0 / 6, 0.001);
  EXPECT_NEAR(v2.derived->pct_of_roofline, 105 * executed_share, 1e-9);
  // The rule.
  EXPECT_TRUE(judge_roofs(base, kL2));
  EXPECT_NE(base.reason.find("105.0% of the compute roof (800.0 TFLOP/s"), std::string::npos) << base.reason;
  EXPECT_NE(base.reason.find("executed_work"), std::string::npos) << base.reason;
  EXPECT_FALSE(judge_roofs(v2, kL2)) << v2.reason;
  // Where a % of roof is shown, the executed share is named; not for a variant without one, nor
  // for a record made before executed work was recorded.
  EXPECT_EQ(executed_work_note(*v2.derived), "executed 83% of the model's FLOPs (% of roof counts it)");
  EXPECT_EQ(executed_work_note(*base.derived), "");
  Derived older;
  older.model_flops = model_flops;
  EXPECT_EQ(executed_work_note(older), "");
}

TEST(RoofRule, WithoutCeilingsNothingIsJudged) {
  CaseRecord rec = record("rmsnorm_fwd", "fused_v2_vec16", DType::bf16, rows_cols(16384, 4096), 2.0);
  derive_metrics(rec, Registry::instance(), Ceilings{}, kL2);
  EXPECT_FALSE(judge_roofs(rec, kL2)) << rec.reason;
}

}  // namespace
}  // namespace roof_rule_test
}  // namespace kwb
