// A session shown on the progress display, per style: lines as a log has always read them, a bar
// that names the case running now with only failed and skipped cases left above it, or nothing
// per case; notes in every style. The last test drives a real Session with the fake worker.
#include "cli/session_progress.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cli/run_output.hpp"
#include "harness/plan/planner.hpp"
#include "tests/harness/session/fake_executor.hpp"
#include "tests/support/terminal_screen.hpp"

namespace kwb::cli {
namespace {

using namespace std::chrono_literals;

CaseRecord record(int index, std::string name, Disposition disposition, std::string reason = "") {
  CaseRecord r;
  r.index = index;
  r.nvtx_range = std::move(name);
  r.disposition = disposition;
  r.reason = std::move(reason);
  return r;
}

SessionProgress progress(std::size_t done, std::size_t total, std::size_t failed, std::string current,
                         std::optional<double> eta_s) {
  SessionProgress p;
  p.state = SessionState::running;
  p.done = done;
  p.total = total;
  p.failed = failed;
  p.current = std::move(current);
  p.eta_s = eta_s;
  return p;
}

std::string print_progress_text(const CaseRecord& r, std::size_t total, std::optional<double> eta_s) {
  std::ostringstream out;
  print_progress(out, r, total, eta_s);
  return out.str();
}

const CaseRecord kPassed = record(0, "rmsnorm_fwd:fused_v2_vec16:bf16:1024x4096", Disposition::passed);
const CaseRecord kFailed = record(1, "rmsnorm_fwd:fused_v1_naive:bf16:1024x4096", Disposition::failed,
                                  "verification: 12 of 4194304 elements outside tolerance");
const CaseRecord kSkipped = record(2, "rmsnorm_fwd:fused_v3_cluster:bf16:1024x4096", Disposition::skipped,
                                   "needs 232 KiB of shared memory per block; this GPU has 227");

// The bar's draws (each starts with "\r"), as the text drawn.
std::vector<std::string> bar_draws(const std::string& written) {
  std::vector<std::string> draws;
  std::size_t at = 0;
  while ((at = written.find('\r', at)) != std::string::npos) {
    const std::size_t end = written.find("\x1b[K", at);
    if (end == std::string::npos) break;
    if (end > at + 1) draws.push_back(written.substr(at + 1, end - at - 1));
    at = end;
  }
  return draws;
}

// Whether a draw of the bar shows `done` cases finished and names `running` (last, uncut).
bool bar_named(const std::string& written, std::size_t done, std::size_t total, const std::string& running) {
  const std::string count = fmt::format("] {}/{} (", done, total);
  for (const std::string& draw : bar_draws(written))
    if (draw.find(count) != std::string::npos && draw.ends_with(running)) return true;
  return false;
}

TEST(SessionProgress, LinesStyleWritesExactlyTheProgressLineOfEveryCase) {
  std::ostringstream out;
  ProgressDisplay display(out, {.style = ProgressStyle::lines, .width = 80, .tick = 0ms});
  const SessionCallbacks cb = progress_callbacks(display, 30, "kwb run");
  EXPECT_FALSE(cb.on_started) << "a log gets nothing when a case starts";
  cb.on_record(kPassed, progress(1, 3, 0, "", 125.0));
  cb.on_record(kFailed, progress(2, 3, 1, "", 62.0));
  cb.on_note("note: the timer is CUDA events");
  EXPECT_EQ(out.str(), print_progress_text(kPassed, 30, 125.0) + print_progress_text(kFailed, 30, 62.0) +
                           "kwb run: note: the timer is CUDA events\n");
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
}

TEST(SessionProgress, BarStyleKeepsOnlyFailedAndSkippedCasesAndNotesAboveTheBar) {
  std::ostringstream out;
  ProgressDisplay display(out, {.style = ProgressStyle::bar, .width = 100, .tick = 0ms});
  const SessionCallbacks cb = progress_callbacks(display, 3, "kwb tune");
  ASSERT_TRUE(cb.on_started);
  cb.on_started(CaseRequest{}, progress(0, 3, 0, kPassed.nvtx_range, std::nullopt));
  cb.on_record(kPassed, progress(1, 3, 0, "", 10.0));
  cb.on_note("note: counters not collected");
  cb.on_started(CaseRequest{}, progress(1, 3, 0, kFailed.nvtx_range, 10.0));
  cb.on_record(kFailed, progress(2, 3, 1, "", 5.0));
  cb.on_started(CaseRequest{}, progress(2, 3, 1, kSkipped.nvtx_range, 5.0));
  cb.on_record(kSkipped, progress(3, 3, 1, "", 0.0));
  display.finish();
  const auto screen = test::terminal_screen(out.str());
  const auto line_of = [](const CaseRecord& r) {
    std::string text = print_progress_text(r, 3, std::nullopt);
    text.pop_back();
    return text;
  };
  EXPECT_EQ(screen, (std::vector<std::string>{"kwb tune: note: counters not collected", line_of(kFailed),
                                              line_of(kSkipped), ""}))
      << out.str();
  EXPECT_NE(line_of(kFailed).find("outside tolerance"), std::string::npos) << "the line says why";
  // The bar named each case while it ran, with the count of those done before it.
  for (const CaseRecord* r : {&kPassed, &kFailed, &kSkipped})
    EXPECT_TRUE(bar_named(out.str(), static_cast<std::size_t>(r->index), 3, r->nvtx_range)) << r->nvtx_range;
}

TEST(SessionProgress, NoneStyleShowsNoCaseButStillTheNotes) {
  std::ostringstream out;
  ProgressDisplay display(out, {.style = ProgressStyle::none, .width = 80, .tick = 0ms});
  const SessionCallbacks cb = progress_callbacks(display, 3, "kwb run");
  EXPECT_FALSE(cb.on_started);
  EXPECT_FALSE(cb.on_record);
  cb.on_note("note: measuring ceilings");
  EXPECT_EQ(out.str(), "kwb run: note: measuring ceilings\n");
}

TEST(SessionProgress, ARealSessionsBarNamesEachCaseWhileItRuns) {
  PlanRequest req;
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=512,1024,4096,8192"), parse_axis_assignment("cols=4096")};
  const std::vector<CaseRequest> cases = plan_cases(req, Registry::instance());
  ASSERT_EQ(cases.size(), 4u);
  std::ostringstream out;
  {
    ProgressDisplay display(out, {.style = ProgressStyle::bar, .width = 200, .tick = 0ms});
    SessionOptions options;
    options.ceilings = CeilingsChoice::datasheet;
    auto shared = std::make_shared<fakes::FakeExecutor::Shared>();
    Session session(cases, options, std::make_unique<fakes::FakeExecutor>(shared, 1ms, 7),
                    progress_callbacks(display, cases.size(), "kwb run"));
    ASSERT_EQ(session.run().outcome, SessionOutcome::completed);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string name = fmt::format("rmsnorm_fwd:fused_v2_vec16:bf16:{}", cases[i].shape.to_compact());
    EXPECT_TRUE(bar_named(out.str(), i, 4, name)) << "no bar named " << name << " with " << i << " done:\n"
                                                 << out.str();
  }
  // Above the bar only the session's notes (the plan line); passed cases leave none, and the bar is
  // cleared at the end.
  const auto screen = test::terminal_screen(out.str());
  ASSERT_FALSE(screen.empty());
  EXPECT_EQ(screen.back(), "");
  for (std::size_t i = 0; i + 1 < screen.size(); ++i) EXPECT_EQ(screen[i].rfind("kwb run: ", 0), 0u) << screen[i];
}

}  // namespace
}  // namespace kwb::cli
