// The ncu command of one case, word for word: a cold case (caches flushed by ncu), a hot one
// with choice axes and a tunable (an identity holding ',' and '=', quoted so a shell gives it
// back unchanged), a multi-kernel launch (skip and count follow it), and the refusals.
#include <gtest/gtest.h>

#include "harness/plan/planner.hpp"
#include "reports/profile/ncu_command.hpp"
#include "harness/record/shell_words.hpp"

namespace kwb {
namespace {

CaseRequest rmsnorm_case_in(Mode mode) {
  CaseRequest c;
  c.op = "rmsnorm_fwd";
  c.variant = "fused_v2_vec16";
  c.dtype = DType::bf16;
  c.shape = Shape{{{"rows", 16384}, {"cols", 4096}}};
  c.mode = mode;
  c.preset = "precise";  // the run under ncu is quick whatever the case's preset
  c.seed = 1;
  return c;
}

CaseRequest seq_sum_case() {
  CaseRequest c;
  c.op = "test_seq_sum";
  c.variant = "test_atomic_scatter";
  c.dtype = DType::fp32;
  c.shape = Shape{{{"batch", 2}, {"seq", 96}, {"heads", 3}, {"dim", 40}, {"layout", "bhsd"}, {"causal", "1"}}};
  c.tunables = {{"block", 256}};
  c.mode = Mode::hot;
  c.seed = 42;
  c.include_test_variants = true;
  return c;
}

NcuCommandSettings settings(int kernels) {
  NcuCommandSettings s;
  s.kwb = "/opt/kwb/bin/kwb";
  s.run_out = "results/ncu-run";
  s.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"};
  s.kernels_per_launch = kernels;
  return s;
}

TEST(NcuCommand, ColdCaseIsProfiledWithCachesFlushedAtTheGpusOwnClocks) {
  const NcuCommand cmd = build_ncu_command(rmsnorm_case_in(Mode::cold), settings(1));
  EXPECT_EQ(shell_join(cmd.argv),
            "ncu --target-processes all --nvtx --nvtx-include 'kwb@rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096/measure/' "
            "--launch-skip 1 --launch-count 1 --cache-control all --clock-control none "
            "--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw "
            "--print-units base /opt/kwb/bin/kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 "
            "--axis rows=16384 --axis cols=4096 --seed 1 --mode hot --preset quick --timer events "
            "--datasheet-ceilings --out results/ncu-run");
  EXPECT_EQ(cmd.nvtx_filter, "kwb@rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096/measure/");
  EXPECT_EQ(cmd.cache_control, "all");
  EXPECT_NE(cmd.note.find("--cache-control all"), std::string::npos) << cmd.note;
  EXPECT_NE(cmd.note.find("--clock-control none"), std::string::npos) << cmd.note;
}

TEST(NcuCommand, HotCaseKeepsTheCachesAndItsIdentityIsQuotedWhole) {
  const NcuCommand cmd = build_ncu_command(seq_sum_case(), settings(1));
  EXPECT_EQ(shell_join(cmd.argv),
            "ncu --target-processes all --nvtx --nvtx-include "
            "'kwb@test_seq_sum:test_atomic_scatter:fp32:2x96x3x40,layout=bhsd,causal=1:block=256/measure/' "
            "--launch-skip 1 --launch-count 1 --cache-control none --clock-control none "
            "--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw "
            "--print-units base /opt/kwb/bin/kwb run --op test_seq_sum --variant test_atomic_scatter --dtype fp32 "
            "--axis batch=2 --axis seq=96 --axis heads=3 --axis dim=40 --axis layout=bhsd --axis causal=1 "
            "--axis block=256 --seed 42 --include-test-variants --mode hot --preset quick --timer events "
            "--datasheet-ceilings --out results/ncu-run");
  EXPECT_EQ(cmd.cache_control, "none");
  // What a shell gives back from the printed line is the command itself.
  EXPECT_EQ(shell_split(shell_join(cmd.argv)), cmd.argv);
  EXPECT_EQ(cmd.nvtx_filter, "kwb@" + case_identity(seq_sum_case()) + "/measure/");
}

TEST(NcuCommand, PathsWithBlanksSurviveTheShell) {
  NcuCommandSettings s = settings(1);
  s.kwb = "/home/a user/kwb's build/kwb";
  s.run_out = "my results/run";
  const NcuCommand cmd = build_ncu_command(rmsnorm_case_in(Mode::cold), s);
  EXPECT_EQ(shell_split(shell_join(cmd.argv)), cmd.argv);
  EXPECT_NE(shell_join(cmd.argv).find(R"('/home/a user/kwb'\''s build/kwb')"), std::string::npos);
}

TEST(NcuCommand, AMultiKernelLaunchSkipsAndCountsAllItsKernels) {
  const NcuCommand cmd = build_ncu_command(rmsnorm_case_in(Mode::cold), settings(3));
  EXPECT_EQ(cmd.launch_skip, 3);
  EXPECT_EQ(cmd.launch_count, 3);
  const auto at = std::find(cmd.argv.begin(), cmd.argv.end(), "--launch-count");
  ASSERT_NE(at, cmd.argv.end());
  EXPECT_EQ(*(at + 1), "3");
  EXPECT_NE(cmd.note.find("the 3 kernels of the case's second launch"), std::string::npos) << cmd.note;
}

TEST(NcuCommand, RefusesWhatNcuCannotBeToldOrCannotProfile) {
  EXPECT_THROW(build_ncu_command(rmsnorm_case_in(Mode::cold), settings(0)), std::invalid_argument);
  CaseRequest slash = rmsnorm_case_in(Mode::cold);
  slash.variant = "fused/v2";
  try {
    build_ncu_command(slash, settings(1));
    ADD_FAILURE() << "an identity with '/' reads as two nested ranges to ncu";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds '/'"), std::string::npos) << e.what();
  }
}

TEST(NcuCommand, FileStemKeepsOnlyCharactersEveryFileSystemTakes) {
  EXPECT_EQ(ncu_file_stem("rope_fwd:fused_v1:bf16:1x8192x32x8x128,positions=index"),
            "ncu-rope_fwd_fused_v1_bf16_1x8192x32x8x128_positions_index");
}

}  // namespace
}  // namespace kwb
