// CUPTI's profiler host API as kwb uses it, on CPU (it needs libcupti and libnvperf_host, no GPU):
// GH100's metrics, why a name is not one of them (with the closest base or rollup), the replay
// passes a request costs, and the configuration image the worker's range profiler takes. Where
// the host library cannot load, every test here says so and skips.
#include "harness/plan/metric_host.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "harness/plan/counter_sets.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::Mentions;

// H100 and H200 are both GH100: the chip the lent GPUs have.
constexpr const char* kChip = "GH100";

#define KWB_REQUIRE_HOST_API()                                     \
  do {                                                             \
    if (auto why = host_api_problem()) GTEST_SKIP() << *why;       \
  } while (0)

const MetricCatalog& gh100() {
  static const MetricCatalog catalogue(kChip);
  return catalogue;
}

// A set's metrics with the duration, as a run asks for them.
std::vector<std::string> request_of(const std::string& set) {
  return parse_counter_request({set}, {}).metrics;
}

TEST(MetricHost, SupportedChipsNameHopperAndAmpere) {
  KWB_REQUIRE_HOST_API();
  const auto chips = supported_chips();
  EXPECT_NE(std::find(chips.begin(), chips.end(), "GH100"), chips.end()) << ::testing::PrintToString(chips);
  EXPECT_NE(std::find(chips.begin(), chips.end(), "GA100"), chips.end()) << ::testing::PrintToString(chips);
}

TEST(MetricCatalog, Gh100ListsItsBaseMetricsSortedOnceEachWithTypeAndUnit) {
  KWB_REQUIRE_HOST_API();
  const auto& bases = gh100().base_metrics();
  EXPECT_EQ(gh100().chip(), kChip);
  ASSERT_GT(bases.size(), 100u);
  for (std::size_t i = 1; i < bases.size(); ++i) EXPECT_LT(bases[i - 1].name, bases[i].name) << "sorted, no repeat";
  const auto dram = std::find_if(bases.begin(), bases.end(), [](const MetricInfo& m) { return m.name == "dram__bytes_read"; });
  ASSERT_NE(dram, bases.end());
  EXPECT_EQ(dram->type, "counter");
  EXPECT_EQ(dram->unit, "byte");
  EXPECT_FALSE(dram->description.empty());
  for (const MetricInfo& m : bases) EXPECT_TRUE(m.type == "counter" || m.type == "ratio" || m.type == "throughput") << m.name;
}

TEST(MetricCatalog, EveryMetricOfEverySetAndTheDurationIsAMetricOfGh100) {
  KWB_REQUIRE_HOST_API();
  EXPECT_EQ(gh100().problem(kDurationMetric), std::nullopt);
  for (const CounterSet& s : counter_sets())
    for (const std::string& m : s.metrics) EXPECT_EQ(gh100().problem(m), std::nullopt) << s.name << ": " << m;
}

TEST(MetricCatalog, OtherRollupsOfAKnownBaseAreMetricsToo) {
  KWB_REQUIRE_HOST_API();
  for (const char* m : {"dram__bytes_read.max", "dram__bytes_read.sum.per_second", "lts__t_sector_hit_rate.pct",
                        "sm__throughput.avg.pct_of_peak_sustained_elapsed"})
    EXPECT_EQ(gh100().problem(m), std::nullopt) << m;
}

TEST(MetricCatalog, AnUnknownBaseNamesTheChipAndTheClosestBase) {
  KWB_REQUIRE_HOST_API();
  const auto why = gh100().problem("dram__byte_read.sum");
  ASSERT_TRUE(why);
  EXPECT_TRUE(Mentions(*why, "'dram__byte_read.sum' is not a metric of GH100"));
  EXPECT_TRUE(Mentions(*why, "no base metric 'dram__byte_read'"));
  EXPECT_TRUE(Mentions(*why, "did you mean 'dram__bytes_read'?"));
}

TEST(MetricCatalog, AnUnknownBaseWithNothingCloseSaysWhereTheListIs) {
  KWB_REQUIRE_HOST_API();
  const auto why = gh100().problem("zzzz_qqqq.sum");
  ASSERT_TRUE(why);
  EXPECT_TRUE(Mentions(*why, "no base metric 'zzzz_qqqq'"));
  EXPECT_FALSE(Mentions(*why, "did you mean"));
  EXPECT_TRUE(Mentions(*why, "kwb counters --list --all"));
}

TEST(MetricCatalog, AnUnknownRollupOfAKnownBaseNamesTheClosestRollup) {
  KWB_REQUIRE_HOST_API();
  const auto why = gh100().problem("dram__bytes_read.summ");
  ASSERT_TRUE(why);
  EXPECT_TRUE(Mentions(*why, "'dram__bytes_read.summ' is not a metric of GH100"));
  EXPECT_TRUE(Mentions(*why, "dram__bytes_read has no rollup '.summ'"));
  EXPECT_TRUE(Mentions(*why, "did you mean 'dram__bytes_read.sum'?"));
}

TEST(MetricCatalog, ABaseNameWithoutARollupIsToldToTakeOne) {
  KWB_REQUIRE_HOST_API();
  const auto why = gh100().problem("dram__bytes_read");
  ASSERT_TRUE(why);
  EXPECT_TRUE(Mentions(*why, "dram__bytes_read is a base metric of GH100"));
  EXPECT_TRUE(Mentions(*why, "dram__bytes_read.sum"));
  EXPECT_FALSE(Mentions(*why, "no base metric")) << "it is one";
}

// The pass counts of CUDA 13's CUPTI on GH100 (printed by `kwb counters --list`): a different
// CUPTI may pack counters differently, which this test then reports.
TEST(MetricCatalog, PassesOfTheSetsOnGh100) {
  KWB_REQUIRE_HOST_API();
  EXPECT_EQ(gh100().passes(request_of("memory")), 4);
  EXPECT_EQ(gh100().passes(request_of("occupancy")), 1);
  EXPECT_EQ(gh100().passes({kDurationMetric}), 1);
  for (const CounterSet& s : counter_sets()) {
    const int passes = gh100().passes(request_of(s.name));
    EXPECT_GE(passes, 1) << s.name;
    EXPECT_LE(passes, 5) << s.name << ": a set costs few passes (the header's promise)";
  }
}

TEST(MetricCatalog, ASetCostsNoMorePassesThanItsMetricsAloneAndNoFewerThanTheCostliest) {
  KWB_REQUIRE_HOST_API();
  for (const CounterSet& s : counter_sets()) {
    int sum = 0, most = 0;
    for (const std::string& m : s.metrics) {
      const int alone = gh100().passes({m});
      EXPECT_GE(alone, 1) << m;
      sum += alone;
      most = std::max(most, alone);
    }
    const int together = gh100().passes(s.metrics);
    EXPECT_LE(together, sum) << s.name;
    EXPECT_GE(together, most) << s.name;
  }
}

TEST(MetricCatalog, RandomUnionsOfSetsCostNoMoreThanTheirPartsAndNoLessThanEach) {
  KWB_REQUIRE_HOST_API();
  std::mt19937_64 rng(1029);
  std::vector<std::string> names;
  for (const CounterSet& s : counter_sets()) names.push_back(s.name);
  for (int trial = 0; trial < 6; ++trial) {
    const std::string a = names[rng() % names.size()], b = names[rng() % names.size()];
    const int pa = gh100().passes(request_of(a)), pb = gh100().passes(request_of(b));
    const int both = gh100().passes(parse_counter_request({a, b}, {}).metrics);
    EXPECT_LE(both, pa + pb) << a << " + " << b;
    EXPECT_GE(both, std::max(pa, pb)) << a << " + " << b;
  }
}

TEST(MetricConfig, BuildsAnImageWithTheCatalogsPassCountAndKeepsTheMetricOrder) {
  KWB_REQUIRE_HOST_API();
  const auto metrics = request_of("memory");
  const MetricConfig config(kChip, metrics);
  EXPECT_EQ(config.metrics(), metrics);
  EXPECT_FALSE(config.image().empty());
  EXPECT_EQ(config.passes(), gh100().passes(metrics));
}

TEST(MetricConfig, NoMetricIsRefused) {
  KWB_REQUIRE_HOST_API();
  try {
    MetricConfig config(kChip, {});
    ADD_FAILURE() << "an empty configuration was built";
  } catch (const CounterError& e) {
    EXPECT_TRUE(Mentions(e.what(), "no metric to collect"));
  }
}

TEST(MetricConfig, AMetricTheChipLacksIsNamedWithTheClosest) {
  KWB_REQUIRE_HOST_API();
  try {
    MetricConfig config(kChip, {kDurationMetric, "dram__bytes_red.sum"});
    ADD_FAILURE() << "a configuration with an unknown metric was built";
  } catch (const CounterError& e) {
    EXPECT_TRUE(Mentions(e.what(), "'dram__bytes_red.sum' is not a metric of GH100"));
    EXPECT_TRUE(Mentions(e.what(), "did you mean 'dram__bytes_read'?"));
  }
}

TEST(MetricHost, AnUnknownChipIsRefusedWithTheClosestName) {
  KWB_REQUIRE_HOST_API();
  for (const auto& make : std::vector<std::function<void()>>{[] { MetricCatalog c("GH10"); },
                                                            [] { MetricConfig c("GH10", {kDurationMetric}); }}) {
    try {
      make();
      ADD_FAILURE() << "chip GH10 was accepted";
    } catch (const CounterError& e) {
      EXPECT_TRUE(Mentions(e.what(), "unknown chip 'GH10'"));
      EXPECT_TRUE(Mentions(e.what(), "did you mean 'GH100'?"));
    }
  }
}

TEST(MetricHost, ResultCodesAreNamedWithTheirNumber) {
  KWB_REQUIRE_HOST_API();
  EXPECT_TRUE(Mentions(cupti_result_name(1), "CUPTI_ERROR_INVALID_PARAMETER (1)"));
}

}  // namespace
}  // namespace kwb
