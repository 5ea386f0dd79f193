// select_fastest on hand-made reports: the winner and margin by hand-computed values, what is
// excluded and counted, a lone candidate, tunable configurations as candidates of their own, and
// the noise verdict from p10-p90 ranges and from per-sample arrays.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "reports/select/selection.hpp"
#include "tests/reports/select/select_test_support.hpp"

namespace kwb {
namespace {

using select::select_fastest;
using test::excluded_case;
using test::summary_case;

TEST(Selection, FastestByMedianWithHandComputedMarginAndSpeedup) {
  Report r = test::empty_report();
  r.cases = {summary_case("rmsnorm_fwd", "baseline_eager", 16384, 400.0, 398.0, 402.0, Role::baseline),
             summary_case("rmsnorm_fwd", "fused_v1", 16384, 110.0, 109.0, 111.0),
             summary_case("rmsnorm_fwd", "fused_v2", 16384, 100.0, 99.0, 101.0)};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u);
  const auto& e = s.entries[0];
  EXPECT_EQ(e.winner().variant, "fused_v2");
  ASSERT_NE(e.runner_up(), nullptr);
  EXPECT_EQ(e.runner_up()->variant, "fused_v1");
  EXPECT_DOUBLE_EQ(e.margin_ratio, 1.1);
  EXPECT_NEAR(e.margin_pct, 10.0, 1e-9);
  EXPECT_TRUE(e.clear) << e.verdict_reason;  // 101 < 109: the ranges do not overlap
  EXPECT_EQ(e.rule, select::NoiseRule::p10_p90);
  ASSERT_TRUE(e.baseline.has_value());
  EXPECT_EQ(e.baseline->variant, "baseline_eager");
  ASSERT_TRUE(e.speedup_vs_baseline.has_value());
  EXPECT_DOUBLE_EQ(*e.speedup_vs_baseline, 4.0);
  EXPECT_EQ(e.ranked.size(), 3u);
  EXPECT_EQ(e.excluded_total(), 0);
  EXPECT_TRUE(s.used_p10_p90);
  EXPECT_FALSE(s.used_samples);
}

TEST(Selection, FailedSkippedAndUnverifiedCasesAreExcludedAndCountedByReason) {
  Report r = test::empty_report();
  r.cases = {summary_case("softmax_fwd", "slow_ok", 4096, 50.0, 49.0, 51.0),
             // Faster than the one that passed, but failed: must never win.
             excluded_case("softmax_fwd", "fast_wrong", 4096, Disposition::failed, "12 mismatches"),
             excluded_case("softmax_fwd", "fast_wrong2", 4096, Disposition::failed, "12 mismatches"),
             excluded_case("softmax_fwd", "needs_more_smem", 4096, Disposition::skipped, "cols above 8192"),
             excluded_case("softmax_fwd", "unchecked", 4096, Disposition::not_verified, "")};
  r.cases[1].timing->span.median = 1.0;
  r.cases[1].timing->span.count = 10;
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u);
  const auto& e = s.entries[0];
  EXPECT_EQ(e.winner().variant, "slow_ok");
  EXPECT_EQ(e.ranked.size(), 1u);
  EXPECT_EQ(e.excluded.at("failed"), 2);
  EXPECT_EQ(e.excluded.at("skipped"), 1);
  EXPECT_EQ(e.excluded.at("not verified"), 1);
  EXPECT_EQ(e.excluded_total(), 4);
  EXPECT_EQ(e.excluded_reasons.at("12 mismatches"), 2);
  EXPECT_EQ(e.excluded_reasons.at("cols above 8192"), 1);
  EXPECT_EQ(e.excluded_reasons.at("not verified"), 1) << "a case without a reason is counted under its kind";
  EXPECT_FALSE(e.baseline.has_value());
  EXPECT_FALSE(e.speedup_vs_baseline.has_value());
}

TEST(Selection, SingleCandidateHasNoRunnerUpAndIsClear) {
  Report r = test::empty_report();
  r.cases = {summary_case("rope_fwd", "fused", 2048, 12.0, 11.9, 12.1)};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].runner_up(), nullptr);
  EXPECT_TRUE(s.entries[0].clear);
  EXPECT_EQ(s.entries[0].rule, select::NoiseRule::single_candidate);
  EXPECT_EQ(s.entries[0].margin_pct, 0);
}

TEST(Selection, GroupWithNoPassedTimedCaseIsUnselectedNotAnEntry) {
  Report r = test::empty_report();
  r.cases = {summary_case("rope_fwd", "fused", 2048, 12.0, 11.9, 12.1),
             excluded_case("rope_fwd", "fused", 4096, Disposition::failed, "NaN in out"),
             excluded_case("rope_fwd", "baseline", 4096, Disposition::skipped, "too large")};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u);
  ASSERT_EQ(s.unselected.size(), 1u);
  EXPECT_EQ(s.unselected[0].shape.at("rows"), 4096);
  EXPECT_EQ(s.unselected[0].excluded.at("failed"), 1);
  EXPECT_EQ(s.unselected[0].excluded.at("skipped"), 1);
}

TEST(Selection, EachTunableConfigurationIsACandidateAndTheWinnerNamesIt) {
  Report r = test::empty_report();
  auto block = [&](std::int64_t b, double us) {
    CaseRecord c = summary_case("test_seq_sum", "test_atomic_scatter", 96, us, us - 0.5, us + 0.5);
    c.tunables = {{"block", b}};
    c.nvtx_range += ":block=" + std::to_string(b);
    return c;
  };
  r.cases = {block(128, 30.0), block(256, 20.0), block(512, 25.0)};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u) << "configurations of one variant share the shape's group";
  const auto& e = s.entries[0];
  EXPECT_EQ(e.ranked.size(), 3u);
  EXPECT_EQ(e.winner().tunables, (TunableValues{{"block", 256}}));
  EXPECT_EQ(select::candidate_label(e.winner()), "test_atomic_scatter[block=256]");
  EXPECT_EQ(e.runner_up()->tunables, (TunableValues{{"block", 512}}));
  EXPECT_NEAR(e.margin_pct, 25.0, 1e-9);
  ASSERT_EQ(s.per_op.size(), 1u);
  EXPECT_EQ(s.per_op[0].wins, (std::vector<std::pair<std::string, int>>{{"test_atomic_scatter", 1}}));
}

TEST(Selection, OverlappingP10P90IsWithinNoise) {
  Report r = test::empty_report();
  // 3% apart (above the 1% minimum margin) but the winner's p90 (104) is above the runner-up's p10 (101).
  r.cases = {summary_case("rmsnorm_fwd", "a", 16384, 100.0, 96.0, 104.0),
             summary_case("rmsnorm_fwd", "b", 16384, 103.0, 101.0, 106.0)};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_FALSE(s.entries[0].clear);
  EXPECT_EQ(s.entries[0].rule, select::NoiseRule::p10_p90);
  EXPECT_NE(s.entries[0].verdict_reason.find("overlap"), std::string::npos) << s.entries[0].verdict_reason;
}

TEST(Selection, MarginUnderTheMinimumIsWithinNoiseEvenWithTightRanges) {
  Report r = test::empty_report();
  r.cases = {summary_case("rmsnorm_fwd", "a", 16384, 100.0, 99.9, 100.1),
             summary_case("rmsnorm_fwd", "b", 16384, 100.5, 100.4, 100.6)};
  select::SelectSettings settings;
  EXPECT_FALSE(select_fastest(r.run, r.cases, settings).entries[0].clear);
  EXPECT_EQ(select_fastest(r.run, r.cases, settings).entries[0].rule, select::NoiseRule::min_margin);
  settings.min_margin = 0;  // the ranges alone decide: they do not overlap
  EXPECT_TRUE(select_fastest(r.run, r.cases, settings).entries[0].clear);
}

TEST(Selection, SamplesWhenPresentDecideThroughTheCompareVerdict) {
  Report r = test::empty_report();
  const auto fast = test::noisy_samples(1, 80, 100.0, 0.01);
  r.cases = {test::timed_case("rmsnorm_fwd", "slow", 16384, test::noisy_samples(2, 80, 110.0, 0.01)),
             test::timed_case("rmsnorm_fwd", "fast", 16384, fast),
             test::timed_case("rmsnorm_fwd", "fast_twin", 16384, test::noisy_samples(3, 80, 100.2, 0.01))};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 1u);
  const auto& e = s.entries[0];
  EXPECT_EQ(e.ranked.back().variant, "slow");
  // The two near-equal variants: whichever wins, the margin is under the minimum or within noise.
  EXPECT_FALSE(e.clear) << e.verdict_reason;

  select::SelectSettings zero;
  zero.min_margin = 0;
  Report two = r;
  two.cases.erase(two.cases.begin() + 2);  // fast against slow: 10% apart, 1% noise each
  const auto clear = select_fastest(two.run, two.cases, zero);
  EXPECT_EQ(clear.entries[0].winner().variant, "fast");
  EXPECT_EQ(clear.entries[0].rule, select::NoiseRule::samples);
  EXPECT_TRUE(clear.entries[0].clear) << clear.entries[0].verdict_reason;
  EXPECT_TRUE(clear.used_samples);

  Report twins = r;
  twins.cases.erase(twins.cases.begin());  // fast against its twin, 0.2% apart under 1% noise
  const auto noisy = select_fastest(twins.run, twins.cases, zero);
  EXPECT_EQ(noisy.entries[0].rule, select::NoiseRule::samples);
  EXPECT_FALSE(noisy.entries[0].clear) << noisy.entries[0].verdict_reason;
}

TEST(Selection, GroupsKeepPlanOrderAndSplitByDtypeAndModeAndPerOpWinsAreCounted) {
  Report r = test::empty_report();
  CaseRecord fp32 = summary_case("rmsnorm_fwd", "v1", 1024, 5.0, 4.9, 5.1);
  fp32.dtype = DType::fp32;
  CaseRecord hot = summary_case("rmsnorm_fwd", "v1", 2048, 5.0, 4.9, 5.1);
  hot.timing->mode = Mode::hot;
  r.cases = {summary_case("rmsnorm_fwd", "v1", 2048, 9.0, 8.9, 9.1), summary_case("softmax_fwd", "s", 2048, 3.0, 2.9, 3.1),
             summary_case("rmsnorm_fwd", "v2", 2048, 8.0, 7.9, 8.1), fp32, hot,
             summary_case("rmsnorm_fwd", "v2", 1024, 4.0, 3.9, 4.1)};
  const auto s = select_fastest(r.run, r.cases);
  ASSERT_EQ(s.entries.size(), 5u);
  EXPECT_EQ(s.entries[0].op, "rmsnorm_fwd");
  EXPECT_EQ(s.entries[0].shape.at("rows"), 2048);
  EXPECT_EQ(s.entries[0].winner().variant, "v2");
  EXPECT_EQ(s.entries[1].op, "softmax_fwd");
  EXPECT_EQ(s.entries[2].dtype, DType::fp32);
  EXPECT_EQ(s.entries[3].mode, Mode::hot);
  EXPECT_EQ(s.entries[3].ranked.size(), 1u);
  EXPECT_EQ(s.entries[4].shape.at("rows"), 1024);
  EXPECT_EQ(s.entries[4].winner().variant, "v2");
  ASSERT_EQ(s.per_op.size(), 2u);
  EXPECT_EQ(s.per_op[0].op, "rmsnorm_fwd");
  EXPECT_EQ(s.per_op[0].groups, 4);
  // Equal wins are listed by name.
  EXPECT_EQ(s.per_op[0].wins, (std::vector<std::pair<std::string, int>>{{"v1", 2}, {"v2", 2}}));
}

// --deterministic: a variant that varies run to run (or that the catalogue does not know) is no
// candidate, however fast; it is counted as excluded with the reason, and a group left with none
// is unselected. Without it every candidate still carries the catalogue's answer.
TEST(Selection, DeterministicOnlyLeavesOutVariantsThatVaryOrAreUnknown) {
  Report r = test::empty_report();
  r.cases = {summary_case("layernorm_bwd", "fused_atomic", 4096, 80.0, 79.0, 81.0),
             summary_case("layernorm_bwd", "fused_plugin", 4096, 90.0, 89.0, 91.0),
             summary_case("layernorm_bwd", "fused_static", 4096, 100.0, 99.0, 101.0),
             summary_case("layernorm_bwd", "fused_atomic", 8192, 150.0, 149.0, 151.0)};
  select::SelectSettings settings;
  settings.varies_run_to_run = [](const std::string& op, const std::string& variant) -> std::optional<bool> {
    EXPECT_EQ(op, "layernorm_bwd");
    if (variant == "fused_atomic") return true;
    if (variant == "fused_static") return false;
    return std::nullopt;  // fused_plugin: not in this catalogue
  };

  const auto all = select_fastest(r.run, r.cases, settings);
  ASSERT_EQ(all.entries.size(), 2u);
  EXPECT_EQ(all.entries[0].winner().variant, "fused_atomic");
  ASSERT_EQ(all.entries[0].ranked.size(), 3u);
  EXPECT_EQ(all.entries[0].ranked[0].varies_run_to_run, std::optional<bool>(true));
  EXPECT_EQ(all.entries[0].ranked[1].varies_run_to_run, std::nullopt);
  EXPECT_EQ(all.entries[0].ranked[2].varies_run_to_run, std::optional<bool>(false));

  settings.deterministic_only = true;
  const auto same_bits = select_fastest(r.run, r.cases, settings);
  ASSERT_EQ(same_bits.entries.size(), 1u);
  const auto& e = same_bits.entries[0];
  EXPECT_EQ(e.winner().variant, "fused_static");
  EXPECT_EQ(e.ranked.size(), 1u);
  EXPECT_EQ(e.excluded.at("varies run to run"), 1);
  EXPECT_EQ(e.excluded.at("run to run unknown"), 1);
  EXPECT_EQ(e.excluded_total(), 2);
  // The 8192-row group had only the varying variant: nothing to select there, and why.
  ASSERT_EQ(same_bits.unselected.size(), 1u);
  EXPECT_EQ(same_bits.unselected[0].excluded.at("varies run to run"), 1);

  // Nothing known (no catalogue to ask): every candidate is unknown, so none is admitted.
  settings.varies_run_to_run = nullptr;
  const auto unknown = select_fastest(r.run, r.cases, settings);
  EXPECT_TRUE(unknown.entries.empty());
  EXPECT_EQ(unknown.unselected.size(), 2u);
}

}  // namespace
}  // namespace kwb
