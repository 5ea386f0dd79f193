// The house's include rules (tests/support/include_layering.hpp): the tree follows them, and a
// file that includes against the flow is caught with its file, line and the rule it breaks.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/include_layering.hpp"

namespace kwb::layering {
namespace {

TEST(IncludeLayering, EveryIncludeOfTheTreeFollowsTheTable) {
  const auto files = read_tree(KWB_SOURCE_DIR);
  ASSERT_GT(files.size(), 300u) << "the tree under " << KWB_SOURCE_DIR << " was not found";
  const auto violations = check_includes(files);
  for (const Violation& v : violations)
    ADD_FAILURE() << v.file << ":" << v.line << ": #include \"" << v.include << "\": " << v.why;
  EXPECT_TRUE(violations.empty());
}

TEST(IncludeLayering, AnEarlyStageIncludingALaterOneIsCaughtWithFileLineAndRule) {
  const std::vector<SourceFile> files = {
      {"harness/worker/verify/verify.cpp",
       "#include <vector>\n#include \"harness/record/record.hpp\"\n#include \"harness/session/session.hpp\"\n"}};
  const auto v = check_includes(files);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].file, "harness/worker/verify/verify.cpp");
  EXPECT_EQ(v[0].line, 3);
  EXPECT_EQ(v[0].include, "harness/session/session.hpp");
  EXPECT_NE(v[0].why.find("harness/worker may not include harness/session"), std::string::npos);
}

TEST(IncludeLayering, TheCatalogueIncludesNothingOfTheHarnessAbove) {
  const auto v = check_includes({{"harness/catalogue/registry.hpp", "#include \"harness/record/record.hpp\"\n"}});
  EXPECT_EQ(v.size(), 1u);
}

TEST(IncludeLayering, TheFrontEndsDoNotIncludeEachOther) {
  EXPECT_EQ(check_includes({{"gui/model/live_run.cpp", "#include \"cli/flag_values.hpp\"\n"}}).size(), 1u);
  EXPECT_EQ(check_includes({{"cli/run_command.cpp", "#include \"gui/model/live_run.hpp\"\n"}}).size(), 1u);
  EXPECT_TRUE(check_includes({{"gui/model/live_run.cpp", "#include \"harness/plan/planner.hpp\"\n"}}).empty());
}

TEST(IncludeLayering, KernelsSeeTheCatalogueAndTheirReferencesButNotTheReports) {
  EXPECT_TRUE(check_includes({{"kernels/rmsnorm/fused_v1.cu", "#include \"harness/catalogue/registry.hpp\"\n"
                                                               "#include \"reference/rmsnorm.hpp\"\n"}})
                  .empty());
  EXPECT_EQ(check_includes({{"kernels/rmsnorm/fused_v1.cu", "#include \"reports/review/review_model.hpp\"\n"}}).size(),
            1u);
}

TEST(IncludeLayering, ProductCodeNeverIncludesTests) {
  EXPECT_EQ(check_includes({{"harness/plan/planner.cpp", "#include \"tests/support/temp_dir.hpp\"\n"}}).size(), 1u);
}

TEST(IncludeLayering, RelativeAndAngleBracketIncludesAreHeldToTheSameTable) {
  EXPECT_EQ(check_includes({{"harness/worker/verify/verify.cpp", "#include \"../../session/session.hpp\"\n"}}).size(), 1u);
  EXPECT_EQ(check_includes({{"harness/catalogue/types.hpp", "#include <harness/session/session.hpp>\n"}}).size(), 1u);
}

TEST(IncludeLayering, AFolderOfTheHarnessThatNoRowCoversIsCaught) {
  const auto v = check_includes({{"harness/cache/cache.hpp", "#include <vector>\n"}});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].why.find("no row of the table"), std::string::npos);
}

TEST(IncludeLayering, RealOpsDoNotIncludeTheTestOnlyOps) {
  EXPECT_EQ(check_includes({{"reference/rmsnorm.cpp", "#include \"reference/testing/test_ops.hpp\"\n"}}).size(), 1u);
  EXPECT_TRUE(check_includes({{"reference/testing/colsum.cpp", "#include \"reference/rows_cols_op.hpp\"\n"}}).empty());
}

TEST(IncludeLayering, SystemAndPackageHeadersAreNotTheTablesBusiness) {
  EXPECT_TRUE(check_includes({{"harness/catalogue/types.hpp", "#include \"fmt/format.h\"\n#include <cuda_runtime.h>\n"}})
                  .empty());
}

}  // namespace
}  // namespace kwb::layering
