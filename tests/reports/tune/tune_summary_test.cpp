// The tuning summary: configurations ranked per shape, the declared default found and beaten,
// failed and skipped configurations counted by reason, one variant per report, the JSON.
#include "reports/tune/tune_summary.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

CaseRecord config(const std::string& rows, std::int64_t stages, std::int64_t threads, double median_us,
                  Disposition d = Disposition::passed, const std::string& reason = "") {
  CaseRecord c;
  c.op = "rmsnorm_bwd";
  c.variant = "fused_v2_cp_async_row_groups";
  c.dtype = DType::bf16;
  c.shape = Shape{{{"rows", std::stoll(rows)}, {"cols", 4096}}};
  c.tunables = {{"stages", stages}, {"cta_threads", threads}};
  c.disposition = d;
  c.reason = reason;
  c.nvtx_range = c.op + ":" + c.variant + ":bf16:" + c.shape.to_compact() + ":" + to_assignments(c.tunables);
  if (d == Disposition::passed) {
    TimingResult t;
    t.span.median = median_us;
    t.span.p10 = 0.99 * median_us;
    t.span.p90 = 1.01 * median_us;
    t.span.noise = 0.004;
    t.span.count = 50;
    c.timing = t;
  }
  return c;
}

const TunableValues kDefaults = {{"stages", 3}, {"cta_threads", 512}};

Report tuning_report() {
  Report r;
  r.run.complete = true;
  r.cases = {config("16384", 3, 512, 165.0), config("16384", 2, 512, 160.5), config("16384", 4, 512, 171.0),
             config("16384", 3, 256, 0, Disposition::skipped, "the ring does not fit"),
             config("16384", 2, 256, 0, Disposition::failed, "3 mismatches, first at dx[7]"),
             config("4096", 3, 512, 50.0), config("4096", 2, 512, 52.0)};
  return r;
}

TEST(TuneSummary, RanksEachShapeFastestFirstAndMeasuresTheBestAgainstTheDefault) {
  const TuneSummary s = summarize_tuning(tuning_report(), kDefaults);
  EXPECT_EQ(s.op, "rmsnorm_bwd");
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.shapes.size(), 2u);
  const TunedShape& big = s.shapes[0];
  EXPECT_EQ(big.shape.at("rows"), 16384);
  ASSERT_EQ(big.ranked.size(), 3u);
  EXPECT_DOUBLE_EQ(big.ranked[0].median_us, 160.5);
  EXPECT_EQ(big.ranked[0].tunables, (TunableValues{{"stages", 2}, {"cta_threads", 512}}));
  EXPECT_DOUBLE_EQ(big.ranked[2].median_us, 171.0);
  ASSERT_TRUE(big.default_config.has_value());
  EXPECT_DOUBLE_EQ(big.default_config->median_us, 165.0);
  EXPECT_NEAR(*big.speedup_over_default(), 165.0 / 160.5, 1e-12);
  EXPECT_EQ(big.failed, 1);
  EXPECT_EQ(big.skipped, 1);
  EXPECT_EQ(big.reasons.at("the ring does not fit"), 1);
  EXPECT_EQ(big.reasons.at("3 mismatches, first at dx[7]"), 1);
  // The default wins the smaller shape: a speedup of exactly 1.
  EXPECT_DOUBLE_EQ(*s.shapes[1].speedup_over_default(), 1.0);
}

TEST(TuneSummary, ADefaultThatDependsOnTheShapeIsFoundAtEachShape) {
  // The variant's default: 2 stages at 16384 rows, 3 at 4096 (as a shape_default rule picks).
  const DefaultsAt defaults_at = [](const Shape& shape, DType) {
    return TunableValues{{"stages", shape.at("rows") == 16384 ? 2 : 3}, {"cta_threads", 512}};
  };
  const TuneSummary s = summarize_tuning(tuning_report(), defaults_at);
  ASSERT_EQ(s.shapes.size(), 2u);
  ASSERT_TRUE(s.shapes[0].default_config.has_value());
  EXPECT_DOUBLE_EQ(s.shapes[0].default_config->median_us, 160.5) << "16384 rows: the 2-stage case";
  EXPECT_DOUBLE_EQ(*s.shapes[0].speedup_over_default(), 1.0);
  ASSERT_TRUE(s.shapes[1].default_config.has_value());
  EXPECT_DOUBLE_EQ(s.shapes[1].default_config->median_us, 50.0) << "4096 rows: the 3-stage case";
}

TEST(TuneSummary, AnInterruptedSearchKeepsWhatItMeasuredAndSaysSo) {
  Report r = tuning_report();
  r.run.complete = false;
  r.cases.resize(2);  // the default and one other configuration were measured before the cut
  const TuneSummary s = summarize_tuning(r, kDefaults);
  EXPECT_FALSE(s.complete);
  ASSERT_EQ(s.shapes.size(), 1u);
  EXPECT_EQ(s.shapes[0].ranked.size(), 2u);
  Report without_default = tuning_report();
  without_default.cases.erase(without_default.cases.begin());
  EXPECT_FALSE(summarize_tuning(without_default, kDefaults).shapes[0].speedup_over_default().has_value())
      << "no default timed, no speedup claimed";
}

TEST(TuneSummary, OneVariantPerReport) {
  Report r = tuning_report();
  r.cases[3].variant = "fused_v1_persistent_vec16";
  EXPECT_THROW(summarize_tuning(r, kDefaults), std::invalid_argument);
}

TEST(TuneSummary, JsonHoldsEveryConfigurationTheTopNAndTheCounts) {
  Report r = tuning_report();
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.driver_release = "580.159.04";
  r.run.device = d;
  const auto j = tune_json(summarize_tuning(r, kDefaults), r, 2);
  EXPECT_EQ(j["schema"], "kwb.tune/1");
  EXPECT_EQ(j["device"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["driver"], "580.159.04");
  ASSERT_EQ(j["shapes"].size(), 2u);
  const auto& big = j["shapes"][0];
  EXPECT_EQ(big["shape"]["rows"], 16384);
  EXPECT_EQ(big["configurations"].size(), 3u);
  EXPECT_EQ(big["top"].size(), 2u);
  EXPECT_EQ(big["best"]["tunables"]["stages"], 2);
  EXPECT_EQ(big["default"]["median_us"], 165.0);
  EXPECT_NEAR(big["speedup_over_default"].get<double>(), 165.0 / 160.5, 1e-12);
  EXPECT_EQ(big["failed"], 1);
  EXPECT_EQ(big["skipped"], 1);
  EXPECT_EQ(big["reasons"].size(), 2u);
}

}  // namespace
}  // namespace kwb
