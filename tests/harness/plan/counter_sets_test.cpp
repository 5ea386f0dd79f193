// The counter sets and the parsing of --counters / --metrics, on CPU: an unknown set is refused
// with a did-you-mean, a metric not written as a full name is refused, repeats count once, the
// duration comes first, and nothing is collected when nothing is asked for. Whether the chip has
// the metrics is metric_host_test.cpp's.
#include "harness/plan/counter_sets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "harness/plan/setting_error.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::Mentions;

// The SettingError parse_counter_request gives; a test failure when none.
std::optional<SettingError> counter_request_refusal(const std::vector<std::string>& sets,
                                                    const std::vector<std::string>& metrics) {
  try {
    parse_counter_request(sets, metrics);
  } catch (const SettingError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a SettingError";
  return std::nullopt;
}

const CounterSet& set_named(const std::string& name) {
  for (const CounterSet& s : counter_sets())
    if (s.name == name) return s;
  throw std::runtime_error("no counter set " + name);
}

TEST(CounterSets, TheFourSetsOfTheIssueInListOrderEachWithDistinctFullNamesAndAnExplanation) {
  std::vector<std::string> names;
  for (const CounterSet& s : counter_sets()) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"memory", "compute", "tensor", "occupancy"}));
  for (const CounterSet& s : counter_sets()) {
    SCOPED_TRACE(s.name);
    EXPECT_FALSE(s.what.empty());
    EXPECT_FALSE(s.metrics.empty());
    EXPECT_EQ(std::set<std::string>(s.metrics.begin(), s.metrics.end()).size(), s.metrics.size()) << "a repeat";
    EXPECT_EQ(std::count(s.metrics.begin(), s.metrics.end(), kDurationMetric), 0)
        << "the duration rides along with every request, not in a set";
    for (const std::string& m : s.metrics) {
      // Raw counts only: a percentage costs passes of its own and cannot be summed over kernels.
      EXPECT_TRUE(m.ends_with(".sum")) << m;
      EXPECT_FALSE(metric_explanation(m).empty()) << m << " has no explanation for the Counters panel";
    }
  }
  EXPECT_FALSE(metric_explanation(kDurationMetric).empty());
  EXPECT_EQ(metric_explanation("dram__bytes_read.avg"), "") << "only the metrics kwb collects are explained";
}

TEST(CounterSets, TheMemorySetHoldsDramBytesBothWaysAndComputeTheFmaCount) {
  const auto& memory = set_named("memory").metrics;
  for (const char* m : {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_lookup_hit.sum",
                        "lts__t_sectors_lookup_miss.sum"})
    EXPECT_NE(std::find(memory.begin(), memory.end(), m), memory.end()) << m;
  const auto& compute = set_named("compute").metrics;
  EXPECT_NE(std::find(compute.begin(), compute.end(), "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"),
            compute.end());
}

TEST(ParseCounterRequest, NothingAskedCollectsNothingNotEvenTheDuration) {
  const CounterRequest r = parse_counter_request({}, {});
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(r.sets.empty());
  EXPECT_TRUE(r.extra_metrics.empty());
}

TEST(ParseCounterRequest, DurationFirstThenEachSetInTheOrderAskedThenTheExtraMetricsEachOnce) {
  const CounterRequest r =
      parse_counter_request({"tensor", "memory", "tensor"}, {"dram__bytes_read.sum", "l1tex__t_bytes.sum",
                                                              "l1tex__t_bytes.sum", "gpu__time_duration.sum"});
  EXPECT_EQ(r.sets, (std::vector<std::string>{"tensor", "memory"}));
  EXPECT_EQ(r.extra_metrics,
            (std::vector<std::string>{"dram__bytes_read.sum", "l1tex__t_bytes.sum", "gpu__time_duration.sum"}))
      << "the metrics as asked, each once";
  std::vector<std::string> expected{kDurationMetric};
  for (const char* set : {"tensor", "memory"})
    for (const std::string& m : set_named(set).metrics)
      if (std::find(expected.begin(), expected.end(), m) == expected.end()) expected.push_back(m);
  expected.push_back("l1tex__t_bytes.sum");  // dram__bytes_read.sum and the duration are there already
  EXPECT_EQ(r.metrics, expected);
}

TEST(ParseCounterRequest, SetsSharingAMetricCollectItOnce) {
  // compute and tensor both hold sm__cycles_elapsed.sum; compute and occupancy sm__cycles_active.sum.
  const CounterRequest r = parse_counter_request({"compute", "tensor", "occupancy"}, {});
  EXPECT_EQ(std::count(r.metrics.begin(), r.metrics.end(), "sm__cycles_elapsed.sum"), 1);
  EXPECT_EQ(std::count(r.metrics.begin(), r.metrics.end(), "sm__cycles_active.sum"), 1);
  EXPECT_EQ(std::set<std::string>(r.metrics.begin(), r.metrics.end()).size(), r.metrics.size());
}

TEST(ParseCounterRequest, MetricsAloneAreCollectedWithTheDuration) {
  const CounterRequest r = parse_counter_request({}, {"lts__t_sector_hit_rate.pct"});
  EXPECT_TRUE(r.sets.empty());
  EXPECT_EQ(r.metrics, (std::vector<std::string>{kDurationMetric, "lts__t_sector_hit_rate.pct"}));
}

TEST(ParseCounterRequest, AnyOrderOfRandomlyRepeatedSetsGivesEachMetricOnceAndTheDurationFirst) {
  std::mt19937_64 rng(29);
  std::vector<std::string> names;
  for (const CounterSet& s : counter_sets()) names.push_back(s.name);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::string> asked;
    const int n = 1 + static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) asked.push_back(names[rng() % names.size()]);
    const CounterRequest r = parse_counter_request(asked, {});
    SCOPED_TRACE(::testing::PrintToString(asked));
    ASSERT_FALSE(r.metrics.empty());
    EXPECT_EQ(r.metrics.front(), kDurationMetric);
    EXPECT_EQ(std::set<std::string>(r.metrics.begin(), r.metrics.end()).size(), r.metrics.size());
    std::set<std::string> want{kDurationMetric};
    for (const std::string& s : asked) for (const std::string& m : set_named(s).metrics) want.insert(m);
    EXPECT_EQ(std::set<std::string>(r.metrics.begin(), r.metrics.end()), want);
    // The sets in first-asked order, each once.
    std::vector<std::string> first_asked;
    for (const std::string& s : asked)
      if (std::find(first_asked.begin(), first_asked.end(), s) == first_asked.end()) first_asked.push_back(s);
    EXPECT_EQ(r.sets, first_asked);
  }
}

TEST(ParseCounterRequest, UnknownSetIsRefusedWithTheClosestAndTheList) {
  const auto e = counter_request_refusal({"memory", "memry"}, {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->setting, Setting::counters);
  const std::string message = e->what();
  EXPECT_TRUE(Mentions(message, "--counters"));
  EXPECT_TRUE(Mentions(message, "unknown counter set 'memry'"));
  EXPECT_TRUE(Mentions(message, "did you mean 'memory'?"));
  EXPECT_TRUE(Mentions(message, "memory, compute, tensor, occupancy"));
  EXPECT_TRUE(Mentions(message, "kwb counters --list"));
}

TEST(ParseCounterRequest, SetNamesAreCaseSensitiveAndAMetricIsNotASet) {
  EXPECT_TRUE(Mentions(counter_request_refusal({"Memory"}, {})->what(), "did you mean 'memory'?"));
  EXPECT_TRUE(Mentions(counter_request_refusal({"dram__bytes_read.sum"}, {})->what(), "unknown counter set"));
}

TEST(ParseCounterRequest, AMetricThatIsNotAFullNameIsRefusedSayingHowToWriteOne) {
  for (const std::string bad : {"dram__bytes_read", "dram__bytes_read.", ".sum", "dram bytes.sum", "dram__bytes-read.sum",
                                ""}) {
    const auto e = counter_request_refusal({"memory"}, {"l1tex__t_bytes.sum", bad});
    ASSERT_TRUE(e) << "'" << bad << "'";
    EXPECT_EQ(e->setting, Setting::metrics) << bad;
    const std::string message = e->what();
    EXPECT_TRUE(Mentions(message, "--metrics")) << bad;
    EXPECT_TRUE(Mentions(message, "not a full metric name")) << bad;
    EXPECT_TRUE(Mentions(message, "dram__bytes_read.sum")) << "the example of a full name";
  }
}

TEST(ParseCounterRequest, FullNamesWithSeveralDotsAreAccepted) {
  for (const std::string good : {"dram__bytes_read.sum.per_second", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                 "lts__t_sector_hit_rate.pct"})
    EXPECT_NO_THROW(parse_counter_request({}, {good})) << good;
}

}  // namespace
}  // namespace kwb
