// One bad setting, two front ends: the request layer refuses it once, in neutral words, and the
// command line says it with its flag (`--dtype`) while the app's Live run panel says it with the
// label of its field ("dtypes"). Proven on the real `kwb` binary and the panel's model.
#include <gtest/gtest.h>

#include "gui/model/live_run.hpp"
#include "harness/plan/run_request.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

// What `kwb run ARGS --list-cases` prints on stderr (it needs no GPU), without "kwb run: ".
std::string cli_refusal(const std::string& args) {
  const test::CommandResult r = test::run_command(test::shell_quote(KWB_CLI_PATH) + " run " + args + " --list-cases");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string prefix = "kwb run: ";
  EXPECT_EQ(r.output.rfind(prefix, 0), 0u) << r.output;
  std::string line = r.output.substr(prefix.size());
  return line.substr(0, line.find('\n'));
}

// What the panel says when started with `request` (nothing runs).
std::string panel_refusal(const LiveRunRequest& request) {
  Workbench wb;
  LiveRun live;
  EXPECT_FALSE(live.start(request, wb, [](int) -> std::unique_ptr<CaseExecutor> { return nullptr; }));
  return live.error();
}

TEST(SettingWording, TheSameBadDtypeIsSaidWithTheFlagOnTheCommandLineAndTheFieldLabelInTheApp) {
  // Prepare: the layer's one refusal of the setting.
  RunSettings settings;
  settings.dtypes = {"fp7"};
  std::optional<SettingError> refusal;
  try {
    plan_run(settings, Registry::instance());
  } catch (const SettingError& e) {
    refusal = e;
  }
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->setting, Setting::dtype);

  // Run: each front end with the same bad value.
  const std::string cli = cli_refusal("--dtype fp7");
  LiveRunRequest request;
  request.dtypes = "fp7";
  const std::string app = panel_refusal(request);

  // Verify: the same words, the setting named each front end's way.
  EXPECT_EQ(cli, "--dtype: unknown dtype 'fp7'; use fp32, fp16 or bf16");
  EXPECT_EQ(app, "dtypes: unknown dtype 'fp7'; use fp32, fp16 or bf16");
  EXPECT_EQ(cli, refusal->worded(command_line_name));
  EXPECT_EQ(app, refusal->worded(field_label));
}

TEST(SettingWording, MentionsOfOtherSettingsInsideAMessageFollowTheFrontEnd) {
  // An axis given twice: the message names the setting three times, each the front end's way.
  const std::string cli = cli_refusal("--op rmsnorm_fwd --axis rows=64 --axis rows=128");
  LiveRunRequest request;
  request.ops = "rmsnorm_fwd";
  request.axes = "rows=64 rows=128";
  const std::string app = panel_refusal(request);
  EXPECT_EQ(cli, "--axis: axis 'rows' is given twice; give all its values in one --axis, e.g. --axis "
                 "rows=512,4096 or a range rows=512:4096:x2");
  EXPECT_EQ(app, "axes: axis 'rows' is given twice; give all its values in one axes, e.g. axes "
                 "rows=512,4096 or a range rows=512:4096:x2");
}

TEST(SettingWording, ThePanelNamesItsFieldsByTheirLabelsAndOtherSettingsByTheirIds) {
  EXPECT_EQ(field_label(Setting::op), "ops");
  EXPECT_EQ(field_label(Setting::axis), "axes");
  EXPECT_EQ(field_label(Setting::suite), "suite file");
  EXPECT_EQ(field_label(Setting::max_cases), "max-cases") << "no field: the setting's id";
  // Refusals that are not about a setting (a suite file's line) are shown as they are.
  EXPECT_EQ(panel_message(std::invalid_argument("suites/t.yaml:3:1: entries: ...")), "suites/t.yaml:3:1: entries: ...");
}

}  // namespace
}  // namespace kwb::gui
