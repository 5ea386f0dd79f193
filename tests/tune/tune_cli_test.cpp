// `kwb tune` without a GPU: what it plans (every combination of the variant's declared tunables, or
// the values --axis gives), and the refusals: no tunables, unknown names, a bad --top.
#include <gtest/gtest.h>

#include "catalogue/registry.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::run_command;
using test::shell_quote;

test::CommandResult tune(const std::string& args) { return run_command(shell_quote(KWB_CLI_PATH) + " tune " + args); }

std::size_t lines_of(const std::string& text, const std::string& prefix) {
  std::size_t n = 0, at = 0;
  while ((at = text.find("\n" + prefix, at)) != std::string::npos) ++n, ++at;
  return n + (text.rfind(prefix, 0) == 0);
}

TEST(TuneCli, PlansEveryCombinationOfTheDeclaredTunables) {
  const Variant* v = Registry::instance().find_variant("rmsnorm_bwd", "fused_v2_cp_async_row_groups");
  ASSERT_NE(v, nullptr);
  ASSERT_FALSE(v->tunables.empty());
  std::size_t combinations = 1;
  for (const Tunable& t : v->tunables) combinations *= t.values.size();
  const auto r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --dtype bf16 --axis rows=16384 "
                      "--axis cols=4096 --list-cases 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines_of(r.output, "rmsnorm_bwd:fused_v2_cp_async_row_groups:bf16:16384x4096:"), combinations) << r.output;
  // A tunable named with --axis keeps the values given; the others still span every value.
  const auto narrowed = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --dtype bf16 --axis rows=16384 "
                             "--axis cols=4096 --axis stages=2 --list-cases 2>/dev/null");
  std::size_t stages_values = 0;
  for (const Tunable& t : v->tunables)
    if (t.name == "stages") stages_values = t.values.size();
  ASSERT_GT(stages_values, 1u);
  EXPECT_EQ(lines_of(narrowed.output, "rmsnorm_bwd:"), combinations / stages_values) << narrowed.output;
}

TEST(TuneCli, RefusesAVariantWithoutTunablesUnknownNamesAndABadTop) {
  auto r = tune("--op rmsnorm_fwd --variant fused_v2_vec16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("declares no tunables"), std::string::npos) << r.output;
  r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_group");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("did you mean 'fused_v2_cp_async_row_groups'"), std::string::npos) << r.output;
  r = tune("--op rmsnorm_bwx --variant fused_v2_cp_async_row_groups");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown op 'rmsnorm_bwx'"), std::string::npos) << r.output;
  r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --top 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--top"), std::string::npos) << r.output;
}

TEST(TuneCli, WithoutAGpuSaysSoAndWritesNoSummary) {
  test::TempDir dir;
  const auto out = dir / "t";
  const auto r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --dtype bf16 --axis rows=64 "
                      "--axis cols=4096 --out " + shell_quote(out.string()));
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is present: this test is for machines without one";
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no usable CUDA GPU"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out / "tune.json"));
}

}  // namespace
}  // namespace kwb
