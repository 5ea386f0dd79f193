// kwb's counters beside ncu's: which metrics are counts held to the 2% agreement, the ratio per
// metric (ncu over kwb), and the table's verdicts.
#include <gtest/gtest.h>

#include "reports/profile/counter_comparison.hpp"

namespace kwb {
namespace {

CaseCounters counters(std::vector<std::string> metrics, std::map<std::string, double> total) {
  CaseCounters c;
  c.metrics = std::move(metrics);
  c.total = std::move(total);
  return c;
}

TEST(CounterComparison, CountsAreCheckedAndWhatVariesFromReplayToReplayIsNot) {
  for (const char* m : {"dram__bytes_read.sum", "lts__t_sectors_op_write.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                        "smsp__sass_data_bytes_mem_global_op_st.sum", "sm__inst_executed_pipe_fma.sum",
                        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                        "sm__ctas_launched.sum", "smsp__warps_launched.sum"})
    EXPECT_TRUE(is_agreement_count(m)) << m;
  for (const char* m : {"gpu__time_duration.sum", "sm__cycles_elapsed.sum", "sm__pipe_tensor_cycles_active.sum",
                        "lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum", "sm__warps_active.sum",
                        "lts__t_sector_hit_rate.pct", "dram__bytes_read.avg", "dram__bytes_write.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed"})
    EXPECT_FALSE(is_agreement_count(m)) << m;
}

TEST(CounterComparison, RatiosAndVerdictsPerMetric) {
  const CaseCounters kwb = counters({"gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_op_write.sum",
                                     "sm__inst_executed.sum", "sm__ops_path_tensor_src_fp16.sum"},
                                    {{"gpu__time_duration.sum", 1000}, {"dram__bytes_read.sum", 1e9},
                                     {"lts__t_sectors_op_write.sum", 5e8}, {"sm__inst_executed.sum", 0},
                                     {"sm__ops_path_tensor_src_fp16.sum", 0}});
  const CaseCounters ncu = counters({"gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_op_write.sum",
                                     "sm__inst_executed.sum", "lts__t_sectors_op_read.sum"},
                                    {{"gpu__time_duration.sum", 1100}, {"dram__bytes_read.sum", 1.019e9},
                                     {"lts__t_sectors_op_write.sum", 5.15e8}, {"sm__inst_executed.sum", 0},
                                     {"lts__t_sectors_op_read.sum", 31250000}});
  const auto rows = compare_counters(&kwb, ncu);
  ASSERT_EQ(rows.size(), 6u) << "ncu's metrics, then those only kwb has";
  EXPECT_EQ(rows[5].metric, "sm__ops_path_tensor_src_fp16.sum");
  EXPECT_FALSE(rows[5].ncu);
  EXPECT_DOUBLE_EQ(*rows[0].ratio, 1.1);
  EXPECT_FALSE(rows[0].checked) << "durations are not held to agreement";
  EXPECT_FALSE(rows[0].agrees);
  EXPECT_TRUE(*rows[1].agrees) << "1.9% off";
  EXPECT_FALSE(*rows[2].agrees) << "3% off";
  EXPECT_DOUBLE_EQ(*rows[3].ratio, 1.0) << "both 0 agree";
  EXPECT_FALSE(rows[4].kwb);
  EXPECT_FALSE(rows[4].agrees) << "not compared without kwb's value";

  const std::string table = comparison_table(rows);
  EXPECT_NE(table.find("dram__bytes_read.sum"), std::string::npos);
  EXPECT_NE(table.find("1000000000        1019000000    1.0190  ok"), std::string::npos) << table;
  EXPECT_NE(table.find("off by +3.00%"), std::string::npos) << table;
  EXPECT_NE(table.find("not compared"), std::string::npos) << table;
}

TEST(CounterComparison, WithoutKwbsOwnCountersOnlyNcusColumnIsFilled) {
  const CaseCounters ncu = counters({"dram__bytes_read.sum"}, {{"dram__bytes_read.sum", 42}});
  const auto rows = compare_counters(nullptr, ncu);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].kwb);
  EXPECT_EQ(*rows[0].ncu, 42);
  EXPECT_FALSE(rows[0].ratio);
}

}  // namespace
}  // namespace kwb
