// The Markdown page of a comparison: result line, environment differences, summary per op, the
// table of changed cases (and not the unchanged ones), unmatched cases.
#include <gtest/gtest.h>

#include "reports/compare/compare_report.hpp"
#include "harness/record/atomic_file.hpp"
#include "reports/compare/compare_markdown.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::noisy_samples;
using test::scaled;
using test::timed_case;

struct Pair {
  Report base, next;
  CompareReport compared() const {
    CompareInputs in;
    in.base = &base;
    in.next = &next;
    return compare_reports(in);
  }
};

Pair sample(const std::string& new_gpu) {
  const auto s = noisy_samples(3, 100, 20.0, 0.01);
  Pair p{test::empty_report("NVIDIA H100 80GB HBM3"), test::empty_report(new_gpu)};
  p.base.cases = {timed_case("rms", "unchanged_v", 1, s), timed_case("rms", "slow_v", 1, s),
                  timed_case("soft", "gone_v", 1, s)};
  p.next.cases = {timed_case("rms", "unchanged_v", 1, s), timed_case("rms", "slow_v", 1, scaled(s, 1.25)),
                  timed_case("soft", "added_v", 1, s)};
  p.next.cases[1].reason = "a|b";
  return p;
}

bool markdown_has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CompareMarkdown, ShowsResultEnvironmentSummaryAndChangedCases) {
  const std::string md = compare_markdown(sample("NVIDIA H200").compared());
  EXPECT_TRUE(markdown_has(md, "**Result: regression**")) << md;
  EXPECT_TRUE(markdown_has(md, "## Environment differs")) << md;
  EXPECT_TRUE(markdown_has(md, "| GPU | NVIDIA H100 80GB HBM3 | NVIDIA H200 |")) << md;
  EXPECT_TRUE(markdown_has(md, "## Summary per op")) << md;
  EXPECT_TRUE(markdown_has(md, "| `rms` | ")) << md;
  EXPECT_TRUE(markdown_has(md, "| **(all)** | ")) << md;
  EXPECT_TRUE(markdown_has(md, "| slower | `rms:slow_v:bf16:1x4096` | 1.250 | +25.0% | [")) << md;
  EXPECT_FALSE(markdown_has(md, "unchanged_v")) << "an unchanged case is not a changed case:\n" << md;
  EXPECT_TRUE(markdown_has(md, "### Only in BASE (1)\n\n- `soft:gone_v:bf16:1x4096`")) << md;
  EXPECT_TRUE(markdown_has(md, "### Only in NEW (1)\n\n- `soft:added_v:bf16:1x4096`")) << md;
}

TEST(CompareMarkdown, SameEnvironmentAndNoChangeSaySo) {
  Pair p = sample("NVIDIA H100 80GB HBM3");
  p.next.cases[1] = p.base.cases[1];
  const std::string md = compare_markdown(p.compared());
  EXPECT_TRUE(markdown_has(md, "**Result: no regression**")) << md;
  EXPECT_TRUE(markdown_has(md, "Same GPU, driver, CUDA runtime")) << md;
  EXPECT_TRUE(markdown_has(md, "None: every matched case is the same.")) << md;
}

TEST(CompareMarkdown, FailureReasonWithPipesStaysInItsCell) {
  Pair p = sample("NVIDIA H100 80GB HBM3");
  p.next.cases[0].disposition = Disposition::failed;
  p.next.cases[0].reason = "got 1|2\nexpected 3";
  const std::string md = compare_markdown(p.compared());
  EXPECT_TRUE(markdown_has(md, "| failed | `rms:unchanged_v:bf16:1x4096` |")) << md;
  EXPECT_TRUE(markdown_has(md, "got 1\\|2 expected 3")) << md;
}

TEST(CompareMarkdown, SaysTheGateRulesTheThrottledLabelAndAFailOnResult) {
  Pair p = sample("NVIDIA H100 80GB HBM3");
  p.next.cases[1] = p.base.cases[1];
  p.base.cases[0].timing->clocks = ClockSummary{1980, 1980, 1980, 10, 100, 0, {}};
  p.next.cases[0].timing->clocks = ClockSummary{1400, 1980, 1980, 10, 100, 30, {}};
  p.next.cases[0].timing->samples_us = scaled(p.next.cases[0].timing->samples_us, 1.25);
  CompareInputs in;
  in.base = &p.base;
  in.next = &p.next;
  in.threshold_source = "thresholds: 1% for every op (--threshold)";
  in.fail_on = {FailOnClass::missing};
  in.fail_on_source = "fails on: slower and failed cases, and missing (from --fail-on)";
  const std::string md = compare_markdown(compare_reports(in));
  EXPECT_TRUE(markdown_has(md, "**Result: fails the gate: 1 missing from NEW**")) << md;
  EXPECT_TRUE(markdown_has(md, "- thresholds: 1% for every op (--threshold)\n")) << md;
  EXPECT_TRUE(markdown_has(md, "- fails on: slower and failed cases, and missing (from --fail-on)\n")) << md;
  EXPECT_TRUE(markdown_has(md, "| ambiguous (throttled) | `rms:unchanged_v:bf16:1x4096` |")) << md;
}

TEST(CompareMarkdown, WritesTheFile) {
  test::TempDir dir;
  const CompareReport r = sample("NVIDIA H200").compared();
  write_compare_markdown(dir / "compare.md", r);
  EXPECT_EQ(read_text_file(dir / "compare.md"), compare_markdown(r));
}

}  // namespace
}  // namespace kwb
