// Run-to-run spread from other reports of BASE's build: the largest relative difference of a
// case's median over the runs that timed it; cases no run timed have none; runs of another
// build or setup are refused with what differs and how to fix it.
#include <gtest/gtest.h>

#include "harness/record/json_node.hpp"
#include "reports/compare/run_spread.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace {

using test::empty_report;
using test::noisy_samples;
using test::scaled;
using test::timed_case;

// A report of the build "abc" whose cases a and b have medians scaled by these factors.
Report run(double a_factor, double b_factor) {
  const auto s = noisy_samples(1, 51, 100.0, 0.01);
  Report r = empty_report();
  r.cases = {timed_case("rms", "a", 1, scaled(s, a_factor)), timed_case("rms", "b", 1, scaled(s, b_factor))};
  return r;
}

TEST(CompareRunSpread, LargestRelativeDifferenceOfTheMediansOverTheRuns) {
  const Report base = run(1.0, 1.0), r2 = run(1.02, 0.99), r3 = run(0.96, 1.005);
  const auto spreads = run_to_run_spread({&base, "base.json"}, {{&r2, "r2.json"}, {&r3, "r3.json"}});
  ASSERT_EQ(spreads.size(), 2u);
  EXPECT_NEAR(spreads.at("rms:a:bf16:1x4096").spread, 0.04, 1e-12);
  EXPECT_EQ(spreads.at("rms:a:bf16:1x4096").runs, 2);
  EXPECT_NEAR(spreads.at("rms:b:bf16:1x4096").spread, 0.01, 1e-12);
}

TEST(CompareRunSpread, CasesNoRunTimedHaveNoSpread) {
  const Report base = run(1.0, 1.0);
  Report r2 = run(1.02, 1.0);
  r2.cases[1].timing.reset();  // skipped in that run
  r2.cases[1].disposition = Disposition::skipped;
  r2.cases[0].timing->samples_us.clear();  // medians are enough: a stripped run serves
  const auto spreads = run_to_run_spread({&base, "base.json"}, {{&r2, "r2.json"}});
  ASSERT_EQ(spreads.size(), 1u);
  EXPECT_NEAR(spreads.at("rms:a:bf16:1x4096").spread, 0.02, 1e-12);
  EXPECT_TRUE(run_to_run_spread({&base, "base.json"}, {}).empty());
}

TEST(CompareRunSpread, ARunOfAnotherBuildIsRefusedWithBothShas) {
  const Report base = run(1.0, 1.0);
  Report other = run(1.0, 1.0);
  other.run.git_sha = "def";
  try {
    run_to_run_spread({&base, "base.json"}, {{&other, "r2.json"}});
    FAIL() << "another build must be refused";
  } catch (const ReportError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("r2.json: run.git_sha: another build than BASE (base.json: abc, r2.json: def)"), std::string::npos) << m;
    EXPECT_NE(m.find("--base-runs takes more reports of BASE's build"), std::string::npos) << m;
  }
}

TEST(CompareRunSpread, ARunOnAnotherGpuOrWithOtherSettingsIsRefused) {
  const Report base = run(1.0, 1.0);
  Report h200 = run(1.0, 1.0);
  h200.run.device->name = "NVIDIA H200";
  h200.run.settings["flush"] = "clean";
  try {
    check_run_of_base_build({&base, "base.json"}, {&h200, "r2.json"});
    FAIL() << "another GPU must be refused";
  } catch (const ReportError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("r2.json: not measured like BASE: GPU (base.json: NVIDIA H100 80GB HBM3, r2.json: NVIDIA H200); "
                     "flush (base.json: dirty, r2.json: clean)"),
              std::string::npos)
        << m;
  }
}

TEST(CompareRunSpread, ACaseTwiceInARunIsRefused) {
  const Report base = run(1.0, 1.0);
  Report twice = run(1.0, 1.0);
  twice.cases.push_back(twice.cases[0]);
  EXPECT_THROW(run_to_run_spread({&base, "base.json"}, {{&twice, "r2.json"}}), ReportError);
}

}  // namespace
}  // namespace kwb
