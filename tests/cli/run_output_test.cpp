// The progress line of `kwb run`: the case, its result, the GPU that ran it (with --devices) and
// the estimate of the time left.
#include "cli/run_output.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace kwb::cli {
namespace {

std::string line_for(const CaseRecord& r, std::optional<double> eta) {
  std::ostringstream out;
  print_progress(out, r, 10, eta);
  return out.str();
}

TEST(RunOutput, ProgressLineNamesTheCaseTheGpuAndTheTimeLeft) {
  CaseRecord r;
  r.index = 3;
  r.nvtx_range = "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096";
  r.disposition = Disposition::passed;
  std::string line = line_for(r, std::nullopt);
  EXPECT_EQ(line.rfind("[   4/10] rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096", 0), 0u) << line;
  EXPECT_EQ(line.find("eta"), std::string::npos);
  EXPECT_EQ(line.find("gpu"), std::string::npos) << "one-GPU runs name no GPU";
  r.device = 1;
  line = line_for(r, 125.0);
  EXPECT_NE(line.find("gpu1"), std::string::npos) << line;
  EXPECT_NE(line.find("eta 2m05s"), std::string::npos) << line;
  EXPECT_NE(line_for(r, 7.4).find("eta 7s"), std::string::npos);
  EXPECT_EQ(line_for(r, 0.0).find("eta"), std::string::npos) << "nothing left: no estimate shown";
}

CaseRecord timed_case(std::string variant, Role role, std::string math, double median_us,
                      std::vector<std::string> uses = {}) {
  CaseRecord r;
  r.op = "linear_bias_relu";
  r.variant = std::move(variant);
  r.role = role;
  r.dtype = DType::fp32;
  r.shape = Shape{{{"m", 4096}, {"n", 4096}, {"k", 4096}}};
  r.math = std::move(math);
  r.uses = std::move(uses);
  r.disposition = Disposition::passed;
  TimingResult t;
  t.span.median = median_us;
  t.kernels_per_sample = 1;
  r.timing = t;
  r.derived = Derived{};
  return r;
}

// The line of the table that starts with `first` and holds `variant`.
std::string row_of(const std::string& table, const std::string& variant) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" " + variant + " ") != std::string::npos) return line;
  return "(no row for " + variant + ")";
}

TEST(RunOutput, SummaryTableHasMathAndUsesColumnsAndNamesOtherMathInTheSpeedup) {
  Report report;
  report.cases = {timed_case("baseline_cublas", Role::baseline, "fp32", 800, {"cuBLASLt"}),
                  timed_case("fused_v3_tf32", Role::fused, "tf32", 100),
                  timed_case("fused_v2_smem_tiled", Role::fused, "fp32", 1000),
                  timed_case("from_an_old_report", Role::fused, "", 400)};
  report.cases[0].derived->speedup_vs_baseline = 1.0;
  report.cases[0].derived->baseline_math = "fp32";
  report.cases[1].derived->speedup_vs_baseline = 8.0;
  report.cases[1].derived->baseline_math = "fp32";
  report.cases[2].derived->speedup_vs_baseline = 0.8;
  report.cases[2].derived->baseline_math = "fp32";
  report.cases[3].derived->speedup_vs_baseline = 2.0;
  report.cases[3].derived->baseline_math = "fp32";
  std::ostringstream out;
  print_summary(out, report);
  const std::string text = out.str();
  std::istringstream lines(text);
  std::string header;
  while (std::getline(lines, header) && header.rfind("op ", 0) != 0) {}
  for (const char* column : {" math ", " uses ", " speedup"})
    EXPECT_NE(header.find(column), std::string::npos) << column << " in: " << header;
  const std::string base = row_of(text, "baseline_cublas");
  EXPECT_NE(base.find(" fp32 "), std::string::npos) << base;
  EXPECT_NE(base.find(" cuBLASLt "), std::string::npos) << base;
  const std::string tf32 = row_of(text, "fused_v3_tf32");
  EXPECT_TRUE(tf32.ends_with("8.00x (tf32 vs fp32)")) << tf32;
  EXPECT_TRUE(row_of(text, "fused_v2_smem_tiled").ends_with("0.80x")) << text;
  // Unrecorded math: a dash, and no claim about the comparison.
  const std::string old = row_of(text, "from_an_old_report");
  EXPECT_TRUE(old.ends_with("2.00x")) << old;
  // The speedup section: the tf32 row says so and is followed by the fastest fp32 one.
  const auto section = text.find("Speedup of the fastest fused variant");
  ASSERT_NE(section, std::string::npos) << text;
  const std::string speedups = text.substr(section);
  const auto tf32_row = speedups.find("fused_v3_tf32");
  const auto like_row = speedups.find("from_an_old_report");  // faster than fused_v2 but unlabelled
  ASSERT_NE(tf32_row, std::string::npos) << speedups;
  EXPECT_EQ(like_row, std::string::npos) << "an unlabelled case is not the baseline's math: " << speedups;
  EXPECT_NE(speedups.find("(tf32 vs fp32)"), std::string::npos) << speedups;
  const auto smem_row = speedups.find("fused_v2_smem_tiled");
  ASSERT_NE(smem_row, std::string::npos) << speedups;
  EXPECT_LT(tf32_row, smem_row);
}

// A case is judged by the roof of its bound: a compute-bound case's rate in TFLOP/s and its % of the
// compute roof, a memory-bound one's in GB/s and its % of the DRAM roof, in the table and the
// progress line alike (never a compute-bound case's bandwidth against the DRAM roof).
TEST(RunOutput, TheRateAndRoofAreThoseOfTheCasesBound) {
  CaseRecord gemm = timed_case("fused_v3_tf32", Role::fused, "tf32", 100);
  gemm.derived->bound = "compute";
  gemm.derived->tflops = 412.5;
  gemm.derived->bandwidth_gbps = 149;
  gemm.derived->pct_of_roofline = 51.0;
  gemm.derived->pct_of_bandwidth_ceiling = 4.8;
  CaseRecord copy = timed_case("fused_v2_smem_tiled", Role::fused, "fp32", 1000);
  copy.derived->bound = "memory";
  copy.derived->tflops = 0.5;
  copy.derived->bandwidth_gbps = 2900;
  copy.derived->pct_of_roofline = 93.1;
  copy.derived->pct_of_bandwidth_ceiling = 93.1;
  Report report;
  report.cases = {gemm, copy};
  std::ostringstream out;
  print_summary(out, report);
  const std::string text = out.str();
  const std::string g = row_of(text, "fused_v3_tf32"), c = row_of(text, "fused_v2_smem_tiled");
  EXPECT_NE(g.find("412.5 TF/s   51.0"), std::string::npos) << g;
  EXPECT_EQ(g.find("149"), std::string::npos) << g;
  EXPECT_NE(c.find("2900 GB/s   93.1"), std::string::npos) << c;
  const std::string line = line_for(gemm, std::nullopt);
  EXPECT_NE(line.find("412.5 TF/s  51.0% of the compute roof"), std::string::npos) << line;
  EXPECT_NE(line_for(copy, std::nullopt).find("2900 GB/s  93.1% of the DRAM roof"), std::string::npos)
      << line_for(copy, std::nullopt);
}

}  // namespace
}  // namespace kwb::cli
