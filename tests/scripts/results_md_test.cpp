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

}  // namespace
}  // namespace kwb
