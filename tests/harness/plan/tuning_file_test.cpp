// Tuning files at run time: the nearest tuned shape of the same dtype gives the configuration, an
// --axis naming a tunable keeps its value, malformed files are refused with the file named, and
// `kwb run --tuning` plans the tuned configurations (seen without a GPU through --list-cases).
#include "harness/plan/tuning_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/catalogue/registry.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

constexpr const char* kOp = "rmsnorm_bwd";
constexpr const char* kVariant = "fused_v2_cp_async_row_groups";

// A tune.json as `kwb tune` writes it, with the best configuration per (dtype, rows x cols).
std::string tune_json_text(const std::vector<std::tuple<std::string, int, int, int, int, int>>& bests,
                           const std::string& device = "NVIDIA H100 80GB HBM3") {
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const auto& [dtype, rows, cols, vpt, threads, stages] : bests)
    shapes.push_back({{"dtype", dtype},
                      {"shape", {{"rows", rows}, {"cols", cols}}},
                      {"shape_compact", std::to_string(rows) + "x" + std::to_string(cols)},
                      {"best", {{"tunables", {{"vectors_per_thread", vpt}, {"cta_threads", threads}, {"stages", stages}}},
                                {"median_us", 100.0}}}});
  return nlohmann::ordered_json{{"schema", "kwb.tune/1"}, {"op", kOp}, {"variant", kVariant}, {"device", device},
                                {"shapes", shapes}}
      .dump();
}

std::filesystem::path write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

Shape rows_cols(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

TEST(TuningFile, NearestShapeOfTheSameDtypeGivesTheConfiguration) {
  test::TempDir dir;
  const auto table = read_tuning_file(write(dir, "t.json", tune_json_text({{"bf16", 16384, 4096, 2, 512, 2},
                                                                            {"bf16", 4096, 16384, 4, 1024, 3},
                                                                            {"fp32", 16384, 4096, 1, 256, 4}})));
  EXPECT_EQ(table.device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(table.entries.size(), 3u);
  // Exactly tuned; near the first (log distance 0.5 + 0); near the second; another dtype.
  EXPECT_EQ(tuned_for(table, DType::bf16, rows_cols(16384, 4096))->at(2).second, 2);
  EXPECT_EQ(tuned_for(table, DType::bf16, rows_cols(8192, 4096))->at(2).second, 2);
  EXPECT_EQ(tuned_for(table, DType::bf16, rows_cols(4096, 12288))->at(0).second, 4);
  EXPECT_EQ(tuned_for(table, DType::fp32, rows_cols(100, 100))->at(1).second, 256);
  EXPECT_FALSE(tuned_for(table, DType::fp16, rows_cols(16384, 4096)).has_value()) << "no fp16 entry";
  // Tunables come in the variant's declaration order, as a planned case holds them.
  const Variant* v = Registry::instance().find_variant(kOp, kVariant);
  ASSERT_NE(v, nullptr);
  const auto tuned = *tuned_for(table, DType::bf16, rows_cols(16384, 4096));
  ASSERT_EQ(tuned.size(), v->tunables.size());
  for (std::size_t i = 0; i < tuned.size(); ++i) EXPECT_EQ(tuned[i].first, v->tunables[i].name);
}

TEST(TuningFile, MalformedFilesAreRefusedNamingTheFile) {
  test::TempDir dir;
  const auto refusal = [&](const std::string& text) {
    try {
      read_tuning_file(write(dir, "bad.json", text));
    } catch (const TuningError& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  EXPECT_NE(refusal("{not json").find("bad.json: not a tuning file"), std::string::npos);
  EXPECT_NE(refusal(R"({"schema": "kwb.selection/1"})").find("is not kwb.tune/1"), std::string::npos);
  std::string text = tune_json_text({{"bf16", 16384, 4096, 2, 512, 7}});
  EXPECT_NE(refusal(text).find("stages=7 is not a value"), std::string::npos) << refusal(text);
  text = tune_json_text({{"bf16", 16384, 4096, 2, 512, 2}});
  text.replace(text.find(kVariant), std::string(kVariant).size(), "fused_v9");
  EXPECT_NE(refusal(text).find("is not in this build's catalogue"), std::string::npos) << refusal(text);
}

TEST(TuningFile, RunPlansTheTunedConfigurationAndAnAxisKeepsItsValue) {
  test::TempDir dir;
  const auto file = write(dir, "t.json", tune_json_text({{"bf16", 16384, 4096, 1, 256, 2}}));
  const std::string base = test::shell_quote(KWB_CLI_PATH) + " run --op " + kOp + " --variant " + kVariant +
                           " --dtype bf16 --axis rows=16384 --axis cols=4096 --list-cases --tuning " +
                           test::shell_quote(file.string());
  auto r = test::run_command(base + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(":vectors_per_thread=1,cta_threads=256,stages=2"), std::string::npos) << r.output;
  r = test::run_command(base + " --axis stages=4 2>/dev/null");
  EXPECT_NE(r.output.find(":vectors_per_thread=1,cta_threads=256,stages=4"), std::string::npos) << r.output;
  r = test::run_command(test::shell_quote(KWB_CLI_PATH) + " run --op " + kOp + " --tuning " +
                        test::shell_quote((dir / "missing.json").string()) + " --list-cases");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("missing.json"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kwb
