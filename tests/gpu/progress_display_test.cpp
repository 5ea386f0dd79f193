// `kwb run`'s progress on a real sweep: with --progress bar, one line rewritten in place within
// the terminal's width (COLUMNS, as stderr is a pipe here), naming the case running, with only the
// failed cases left above it and nothing left of it at the end; with --progress lines, the plain
// line per case that logs have always had.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/terminal_screen.hpp"

namespace kwb {
namespace {

// Two real cases and two that fail verification (all zeros), at two shapes.
test::CommandResult sweep(const std::filesystem::path& out, const std::string& progress) {
  return test::run_command("COLUMNS=100 " + std::string(KWB_CLI_PATH) +
                           " run --op rmsnorm_fwd --variant fused_v2_vec16,test_wrong_all_zeros --include-test-variants"
                           " --dtype bf16 --axis rows=256 --axis cols=1024,4096 --preset quick --datasheet-ceilings"
                           " --progress " + progress + " --out " + out.string());
}

// The texts drawn on the bar's line: from each "\r" to the ESC[K that ends it.
std::vector<std::string> bar_draws(const std::string& written) {
  std::vector<std::string> draws;
  for (std::size_t at = written.find('\r'); at != std::string::npos; at = written.find('\r', at + 1)) {
    const std::size_t end = written.find("\x1b[K", at);
    if (end == std::string::npos) break;
    if (end > at + 1) draws.push_back(written.substr(at + 1, end - at - 1));
  }
  return draws;
}

TEST(ProgressDisplayGpu, BarStaysOnOneLineWithinTheWidthAndOnlyFailuresStayAboveIt) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const auto result = sweep(dir.path(), "bar");
  EXPECT_EQ(result.exit_code, 1) << "two cases fail verification:\n" << result.output;
  const std::vector<std::string> draws = bar_draws(result.output);
  ASSERT_FALSE(draws.empty()) << result.output;
  for (const std::string& d : draws) EXPECT_LE(d.size(), 99u) << "wider than COLUMNS - 1: " << d;
  EXPECT_TRUE(std::any_of(draws.begin(), draws.end(), [](const std::string& d) {
    return d.find(" 0/4 (0%)") != std::string::npos && d.find("rmsnorm_fwd:fused_v2_vec16:bf16:256x1024") != std::string::npos;
  })) << "the bar names the first case while it runs:\n" << result.output;
  const auto screen = test::terminal_screen(result.output);
  int failed_lines = 0;
  for (const std::string& row : screen) {
    EXPECT_EQ(row.find("elapsed "), std::string::npos) << "the bar was left on the screen: " << row;
    if (row.rfind("[", 0) == 0 && row.find("rmsnorm_fwd:") != std::string::npos) {
      EXPECT_NE(row.find("test_wrong_all_zeros"), std::string::npos) << "a passed case left a line: " << row;
      EXPECT_NE(row.find("failed"), std::string::npos) << row;
      ++failed_lines;
    }
  }
  EXPECT_EQ(failed_lines, 2) << "each failed case once, with its reason:\n" << result.output;
  EXPECT_NE(result.output.find("2 passed, 2 failed, 0 skipped"), std::string::npos) << result.output;
}

TEST(ProgressDisplayGpu, LinesStyleIsTheLogFormatWithNoControlSequences) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const auto result = sweep(dir.path(), "lines");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_EQ(result.output.find('\r'), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find('\x1b'), std::string::npos) << result.output;
  for (int i = 1; i <= 4; ++i)
    EXPECT_NE(result.output.find("[   " + std::to_string(i) + "/4] rmsnorm_fwd:"), std::string::npos)
        << "case " << i << ":\n" << result.output;
}

}  // namespace
}  // namespace kwb
