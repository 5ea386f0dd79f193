// docs/results.md is what scripts/results_md.py makes of the committed samples now (the page cannot
// drift from them), and a figure above 100% of its roof is shown with its note, never dropped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::shell_quote;

const std::string kSource = KWB_SOURCE_DIR;
const std::string kRegenerate = "python3 scripts/results_md.py > docs/results.md";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool have_python3() { return test::run_command("python3 --version").exit_code == 0; }

test::CommandResult results_md(const std::string& extra_args = "") {
  return test::run_command("python3 " + shell_quote(kSource + "/scripts/results_md.py") + extra_args);
}

TEST(ResultsMarkdown, DocsPageIsWhatTheCommittedSamplesGenerateNow) {
  if (!have_python3()) GTEST_SKIP() << "no python3 on the PATH: cannot run scripts/results_md.py";
  const std::filesystem::path page = kSource + "/docs/results.md";
  ASSERT_TRUE(std::filesystem::exists(page)) << "docs/results.md is missing: " << kRegenerate;
  const auto r = results_md();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.output == read_file(page))
      << "docs/results.md differs from what the committed samples give: regenerate it with " << kRegenerate;
}

TEST(ResultsMarkdown, AFigureAboveItsRoofIsShownWithItsNote) {
  if (!have_python3()) GTEST_SKIP() << "no python3 on the PATH: cannot run scripts/results_md.py";
  // 1. Prepare: a tree whose one sample is the committed linear ladder with its winner (the vendor
  //    GEMM, 94.6% of roof) planted at 103.4%.
  test::TempDir root;
  std::filesystem::create_directories(root / "samples/planted");
  auto report = nlohmann::json::parse(read_file(kSource + "/samples/h100-linear-ladder/report.json"));
  bool planted = false;
  for (auto& c : report["cases"])
    if (c["variant"] == "vendor_cublaslt_relu_bias_epilogue") {
      c["derived"]["pct_of_roofline"] = 103.4;
      planted = true;
    }
  ASSERT_TRUE(planted) << "the ladder sample no longer holds vendor_cublaslt_relu_bias_epilogue";
  std::ofstream(root / "samples/planted/report.json") << report.dump();
  // 2. Run.
  const auto r = results_md(" --root " + shell_quote(root.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 3. Verify: flagged in the op's table, listed with the note, and not called absent.
  EXPECT_NE(r.output.find("| **103.4%, [above the roof](#figures-above-100-of-a-roof)** |"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| linear_bias_relu:vendor_cublaslt_relu_bias_epilogue:bf16:8192x8192x8192 | 103.4% |"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("never a win"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("No timed case of the committed samples is above 100%"), std::string::npos) << r.output;
}

// A sweep's wall time is the sum of its parts' (shares of the ops run one after another), read from
// the reports by scripts/sweep_time.py; the page shows each sweep once with its parts' sums.
TEST(ResultsMarkdown, ASweepsWallTimeIsTheSumOfItsPartsAndThePageShowsIt) {
  if (!have_python3()) GTEST_SKIP() << "no python3 on the PATH: cannot run scripts/sweep_time.py";
  // 1. Prepare: three reports made from the committed ladder (8 cases: 6 passed, 2 skipped), each
  //    given the session stages and per-case stage times a run records; two are the parts of one
  //    cold sweep, one a warm sweep whose cases all read the oracle cache.
  test::TempDir root;
  std::filesystem::create_directories(root / "samples/planted");
  const auto ladder = nlohmann::json::parse(read_file(kSource + "/samples/h100-linear-ladder/report.json"));
  auto write_part = [&](const std::string& name, double cases_s, double measure_ms, bool cached) {
    auto report = ladder;
    report["run"]["session_stages"] = {{{"stage", "start workers"}, {"seconds", 0.5}},
                                       {{"stage", "ceilings"}, {"seconds", 2.0}},
                                       {{"stage", "cases"}, {"seconds", cases_s}}};
    for (auto& c : report["cases"]) {
      c["stages"] = {{"inputs_ms", 100.0}, {"oracle_ms", cached ? 0.0 : 400.0}, {"measure_ms", measure_ms}};
      if (cached) c["verify"]["oracle_source"] = "cache";
    }
    const auto path = root / (name + ".json");
    std::ofstream(path) << report.dump();
    return path.string();
  };
  const auto cold1 = write_part("cold1", 10.0, 1000.0, false);
  const auto cold2 = write_part("cold2", 20.0, 500.0, false);
  const auto warm = write_part("warm", 7.5, 500.0, true);
  const auto json_path = root / "samples/planted/sweep-time.json";
  // 2. Run.
  const auto made = test::run_command("python3 " + shell_quote(kSource + "/scripts/sweep_time.py") + " --out " +
                                      shell_quote(json_path.string()) + " cold=" + shell_quote(cold1) +
                                      " cold=" + shell_quote(cold2) + " warm=" + shell_quote(warm));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto r = results_md(" --root " + shell_quote(root.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 3. Verify: the parts as the reports say, and the page's rows the sums (cold: walls 12.5 + 22.5,
  //    stages 8 cases x 2 parts; warm: every oracle from the cache).
  const auto parts = nlohmann::json::parse(read_file(json_path))["parts"];
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_DOUBLE_EQ(parts[0]["wall_s"].get<double>(), 12.5);
  EXPECT_EQ(parts[0]["dispositions"]["passed"], 6);
  EXPECT_EQ(parts[0]["dispositions"]["skipped"], 2);
  EXPECT_DOUBLE_EQ(parts[1]["stages_s"]["measure"].get<double>(), 4.0);
  EXPECT_EQ(parts[2]["oracle_from_cache"], 8);
  EXPECT_NE(r.output.find("| cold | NVIDIA H100 80GB HBM3 | `afb490d4e22e` | 2026-11-23 | 2 | 16 | 12 / 0 / 4 | 35.0 s = "
                          "0.6 min | 4.0 | 1.6 | 6.4 | 0.0 | 12.0 | 0.0 | 0 |"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| warm | NVIDIA H100 80GB HBM3 | `afb490d4e22e` | 2026-11-23 | 1 | 8 | 6 / 0 / 2 | 10.0 s = "
                          "0.2 min | 2.0 | 0.8 | 0.0 | 0.0 | 4.0 | 0.0 | 8 |"),
            std::string::npos)
      << r.output;
  // A report without the session stages is refused with what to do.
  auto old = ladder;
  std::ofstream(root / "old.json") << old.dump();
  const auto refused = test::run_command("python3 " + shell_quote(kSource + "/scripts/sweep_time.py") + " --out " +
                                         shell_quote((root / "x.json").string()) +
                                         " cold=" + shell_quote((root / "old.json").string()) + " 2>&1");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("has no run.session_stages"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace kwb
