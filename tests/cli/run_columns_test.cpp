// `kwb run --columns`: names are checked against what the run collects before anything runs (an
// unknown one with a did-you-mean and the names there are), and the chosen figures and metric
// totals are added to the results table.
#include "cli/run_columns.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "cli/flag_values.hpp"
#include "cli/run_output.hpp"
#include "harness/derive/measured_roofline.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::cli {
namespace run_columns_test {
namespace {

std::string refusal(const std::vector<std::string>& names, const CounterRequest& request) {
  try {
    parse_counter_columns(names, request);
  } catch (const FlagError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(RunColumns, FiguresAndCollectedMetricsAreAcceptedOnceEach) {
  const CounterRequest memory = parse_counter_request({"memory"}, {});
  const auto columns =
      parse_counter_columns({"traffic_ratio", "l2_hit_rate", "dram__bytes_read.sum", "l2_hit_rate", "waves"}, memory);
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].name, "traffic_ratio");
  ASSERT_NE(columns[0].figure, nullptr);
  EXPECT_EQ(columns[2].name, "dram__bytes_read.sum");
  EXPECT_EQ(columns[2].figure, nullptr);
  EXPECT_TRUE(parse_counter_columns({}, CounterRequest{}).empty());
}

TEST(RunColumns, AnUnknownNameIsRefusedWithADidYouMeanAndTheNamesThereAre) {
  const std::string why = refusal({"l2_hit_rat"}, parse_counter_request({"memory"}, {}));
  EXPECT_NE(why.find("--columns"), std::string::npos) << why;
  EXPECT_NE(why.find("unknown column 'l2_hit_rat'"), std::string::npos) << why;
  EXPECT_NE(why.find("did you mean 'l2_hit_rate'?"), std::string::npos) << why;
  EXPECT_NE(why.find("traffic_ratio"), std::string::npos) << why;         // a figure
  EXPECT_NE(why.find("dram__bytes_read.sum"), std::string::npos) << why;  // a collected metric
}

TEST(RunColumns, ARunWithoutCountersRefusesColumnsAndSaysHowToCollectThem) {
  const std::string why = refusal({"traffic_ratio"}, parse_counter_request({}, {}));
  EXPECT_NE(why.find("collects none"), std::string::npos) << why;
  EXPECT_NE(why.find("--counters SET (memory, compute, tensor, occupancy)"), std::string::npos) << why;
}

TEST(RunColumns, AFigureOrMetricTheRunDoesNotCollectNamesTheSetThatWould) {
  const CounterRequest compute = parse_counter_request({"compute"}, {});
  std::string why = refusal({"l2_hit_rate"}, compute);
  EXPECT_NE(why.find("l2_hit_rate (L2 hit rate) needs lts__t_sectors_lookup_hit.sum, lts__t_sectors_lookup_miss.sum"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("add --counters memory"), std::string::npos) << why;
  why = refusal({"tensor_active"}, compute);
  EXPECT_NE(why.find("add --counters tensor"), std::string::npos) << why;
  why = refusal({"dram__bytes_write.sum"}, compute);
  EXPECT_NE(why.find("does not collect the metric 'dram__bytes_write.sum'; add --counters memory"), std::string::npos)
      << why;
  why = refusal({"lts__t_sectors_lookup_hit.pct"}, compute);
  EXPECT_NE(why.find("add --metrics lts__t_sectors_lookup_hit.pct"), std::string::npos) << why;
  // A near miss of a collected metric is a typo.
  why = refusal({"sm__inst_executed.sun"}, compute);
  EXPECT_NE(why.find("did you mean 'sm__inst_executed.sum'?"), std::string::npos) << why;
  // Launch figures need only counters of some set.
  EXPECT_EQ(parse_counter_columns({"registers", "waves", "kernels"}, compute).size(), 3u);
}

CaseRecord case_with(const std::string& variant, std::optional<double> dram_read, double model_bytes = 1e9) {
  CaseRecord r;
  r.op = "rmsnorm_fwd";
  r.variant = variant;
  r.dtype = DType::bf16;
  r.shape = Shape{{{"rows", 16384}, {"cols", 4096}}};
  r.disposition = Disposition::passed;
  TimingResult t;
  t.span.median = 100;
  r.timing = t;
  Derived d;
  d.model_bytes = model_bytes;
  r.derived = d;
  if (dram_read) {
    CaseCounters k;
    k.source = "cupti";
    KernelCounters kernel;
    kernel.values = {{"dram__bytes_read.sum", *dram_read}, {"dram__bytes_write.sum", 0.5e9},
                     {"lts__t_sectors_lookup_hit.sum", 1}, {"lts__t_sectors_lookup_miss.sum", 7}};
    k.kernels = {kernel};
    k.total = total_over_kernels(k.kernels);
    r.counters = k;
    derive_measured(r);
  }
  return r;
}

std::string row_of(const std::string& table, const std::string& variant) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" " + variant + " ") != std::string::npos) return line;
  return "(no row for " + variant + ")";
}

TEST(RunColumns, TheSummaryTableEndsWithTheChosenColumns) {
  // 1. Prepare: a case moving 1.37x its model, one without counters.
  Report report;
  report.cases = {case_with("fused_v2_vec16", 0.87e9), case_with("fused_v1_no_counters", std::nullopt)};
  const auto columns = parse_counter_columns({"traffic_ratio", "l2_hit_rate", "dram__bytes_read.sum"},
                                             parse_counter_request({"memory"}, {}));
  // 2. Run.
  std::ostringstream out;
  print_summary(out, report, columns);
  const std::string text = out.str();
  // 3. Verify: the header names the columns after the speedup; the rows hold their cells.
  std::istringstream lines(text);
  std::string blank, header;
  std::getline(lines, blank);
  std::getline(lines, header);
  const auto speedup = header.find("speedup");
  ASSERT_NE(speedup, std::string::npos) << text;
  EXPECT_LT(speedup, header.find("traffic_ratio"));
  EXPECT_LT(header.find("traffic_ratio"), header.find("l2_hit_rate"));
  EXPECT_LT(header.find("l2_hit_rate"), header.find("dram__bytes_read.sum"));
  const std::string with = row_of(text, "fused_v2_vec16");
  EXPECT_NE(with.find("1.37x"), std::string::npos) << with;
  EXPECT_NE(with.find("12.5%"), std::string::npos) << with;
  EXPECT_NE(with.find("870000000"), std::string::npos) << with;
  const std::string without = row_of(text, "fused_v1_no_counters");
  ASSERT_FALSE(without.empty());
  EXPECT_EQ(without.back(), '-') << without;
  // Each column's cells end where its header ends.
  EXPECT_EQ(with.find("1.37x") + 5, header.find("traffic_ratio") + std::string("traffic_ratio").size()) << text;
  // Without columns the table is as before.
  std::ostringstream plain;
  print_summary(plain, report);
  EXPECT_EQ(plain.str().find("traffic_ratio"), std::string::npos);
}

// ---- through the binary -------------------------------------------------------------------

TEST(RunColumnsCli, AnUnknownColumnIsRefusedBeforeAnythingRuns) {
  test::TempDir dir;
  const auto r = test::run_command(test::shell_quote(KWB_CLI_PATH) +
                                   " run --op rmsnorm_fwd --counters memory --columns traffic_ratio,l2_hit_rat --out " +
                                   test::shell_quote((dir / "out").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--columns: unknown column 'l2_hit_rat' (did you mean 'l2_hit_rate'?)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("no usable CUDA GPU"), std::string::npos) << "the worker was started:\n" << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "journal.jsonl"));
}

TEST(RunColumnsCli, ColumnsWithoutCountersAreRefusedAndKnownOnesPlan) {
  const auto refused = test::run_command(test::shell_quote(KWB_CLI_PATH) +
                                         " run --op rmsnorm_fwd --columns l2_hit_rate --list-cases");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("this run collects none"), std::string::npos) << refused.output;
  const auto planned = test::run_command(test::shell_quote(KWB_CLI_PATH) +
                                         " run --op rmsnorm_fwd --counters memory,occupancy --columns "
                                         "traffic_ratio,l2_hit_rate,achieved_occupancy,dram__bytes_read.sum "
                                         "--list-cases");
  EXPECT_EQ(planned.exit_code, 0) << planned.output;
}

}  // namespace
}  // namespace run_columns_test
}  // namespace kwb::cli
