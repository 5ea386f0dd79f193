// The progress display: the style chosen from the flag and the terminal, durations for people,
// the bar line within the terminal's width, and the display as a terminal shows it (the bar
// rewritten in place, lines above it whole and once, nothing left when it finishes), on an
// injected clock.
#include "cli/progress_display.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "cli/flag_values.hpp"
#include "tests/support/terminal_screen.hpp"

namespace kwb::cli {
namespace {

using namespace std::chrono_literals;
using Clock = ProgressDisplay::Clock;

// A clock the test moves by hand.
struct FakeClock {
  std::atomic<Clock::rep> ticks{0};
  Clock::time_point now() const { return Clock::time_point(Clock::duration(ticks.load())); }
  void advance(Clock::duration d) { ticks += d.count(); }
  std::function<Clock::time_point()> function() {
    return [this] { return now(); };
  }
};

ProgressDisplay::Options bar_options(FakeClock& clock, int width = 80) {
  return {.style = ProgressStyle::bar, .width = width, .now = clock.function(), .tick = 0ms};
}

const std::string kCase = "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096";

// ---- the style ------------------------------------------------------------------------------

TEST(ProgressFlag, NamesTheThreeStylesAndAutoLeavesTheChoiceToTheTerminal) {
  EXPECT_EQ(parse_progress_flag("--progress", "bar"), ProgressStyle::bar);
  EXPECT_EQ(parse_progress_flag("--progress", "lines"), ProgressStyle::lines);
  EXPECT_EQ(parse_progress_flag("--progress", "none"), ProgressStyle::none);
  EXPECT_EQ(parse_progress_flag("--progress", "auto"), std::nullopt);
}

TEST(ProgressFlag, UnknownValueIsRefusedWithTheFlagTheValueAndTheChoices) {
  try {
    parse_progress_flag("--progress", "fancy");
    FAIL() << "'fancy' was accepted";
  } catch (const FlagError& e) {
    const std::string what = e.what();
    for (const char* part : {"--progress", "'fancy'", "bar", "lines", "none"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " missing from: " << what;
  }
  EXPECT_THROW(parse_progress_flag("--progress", "Bar"), FlagError) << "values are exact, as every flag's";
  EXPECT_THROW(parse_progress_flag("--progress", ""), FlagError) << "an empty value is no style";
}

TEST(ProgressStyleChoice, BarOnlyOnATerminalThatCanRewriteALineAndTheFlagWins) {
  EXPECT_EQ(choose_progress_style(std::nullopt, true, "xterm-256color"), ProgressStyle::bar);
  EXPECT_EQ(choose_progress_style(std::nullopt, false, "xterm-256color"), ProgressStyle::lines) << "a pipe or a file";
  EXPECT_EQ(choose_progress_style(std::nullopt, true, "dumb"), ProgressStyle::lines);
  EXPECT_EQ(choose_progress_style(std::nullopt, true, ""), ProgressStyle::lines);
  EXPECT_EQ(choose_progress_style(std::nullopt, true, nullptr), ProgressStyle::lines) << "TERM unset";
  EXPECT_EQ(choose_progress_style(ProgressStyle::bar, false, nullptr), ProgressStyle::bar);
  EXPECT_EQ(choose_progress_style(ProgressStyle::lines, true, "xterm"), ProgressStyle::lines);
  EXPECT_EQ(choose_progress_style(ProgressStyle::none, true, "xterm"), ProgressStyle::none);
}

// ---- durations and the bar line ---------------------------------------------------------------

TEST(FormatDuration, SecondsThenMinutesThenHoursRoundedToTheSecond) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(7.4), "7s");
  EXPECT_EQ(format_duration(7.6), "8s");
  EXPECT_EQ(format_duration(59.6), "1m00s") << "rounds into the next unit";
  EXPECT_EQ(format_duration(125), "2m05s");
  EXPECT_EQ(format_duration(3599.4), "59m59s");
  EXPECT_EQ(format_duration(3725), "1h02m");
  EXPECT_EQ(format_duration(100 * 3600 + 59), "100h00m");
  EXPECT_EQ(format_duration(-3), "0s");
  EXPECT_EQ(format_duration(std::nan("")), "0s");
}

TEST(BarLine, ShowsTheBarCountsFailuresTimesAndTheCaseRunning) {
  const ProgressStatus s{.done = 12, .total = 40, .failed = 1, .current = kCase};
  const std::string line = render_bar_line(s, 65, 151, 160);
  EXPECT_EQ(line.rfind("[", 0), 0u) << line;
  for (const std::string& part : std::vector<std::string>{"#", "-]", " 12/40 (30%)", "  1 failed", "elapsed 1m05s",
                                                          "eta 2m31s", kCase})
    EXPECT_NE(line.find(part), std::string::npos) << part << " missing from: " << line;
  EXPECT_EQ(line.substr(line.size() - kCase.size()), kCase) << "the case comes last, where a cut costs least";
  const ProgressStatus clean{.done = 3, .total = 40};
  const std::string no_failures = render_bar_line(clean, 5, std::nullopt, 160);
  EXPECT_EQ(no_failures.find("failed"), std::string::npos) << no_failures;
  EXPECT_EQ(no_failures.find("eta"), std::string::npos) << "no estimate given, none shown: " << no_failures;
}

TEST(BarLine, TheBarFillsInProportionToTheCasesDone) {
  for (const auto& [done, total] : {std::pair<std::size_t, std::size_t>{0, 7}, {7, 7}, {3, 12}, {5, 0}}) {
    const std::string line = render_bar_line({.done = done, .total = total}, 1, std::nullopt, 80);
    const std::size_t close = line.find(']');
    ASSERT_NE(close, std::string::npos) << line;
    const auto filled = static_cast<std::size_t>(std::count(line.begin(), line.begin() + close, '#'));
    const std::size_t marks = close - 1;
    EXPECT_EQ(filled, total == 0 ? 0 : marks * done / total) << line;
  }
}

TEST(BarLine, NeverWiderThanTheTerminalLessOneColumnAtAnyWidth) {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 2000; ++trial) {
    const int width = std::uniform_int_distribution<int>(1, 220)(rng);
    const std::size_t total = std::uniform_int_distribution<std::size_t>(0, 100000)(rng);
    ProgressStatus s{.done = total == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, total)(rng),
                     .total = total,
                     .failed = std::uniform_int_distribution<std::size_t>(0, 3)(rng) == 0 ? std::size_t{17} : 0,
                     .current = std::string(std::uniform_int_distribution<std::size_t>(0, 200)(rng), 'c')};
    const std::optional<double> eta =
        trial % 2 ? std::optional<double>(std::uniform_real_distribution<double>(0, 4e5)(rng)) : std::nullopt;
    const std::string line = render_bar_line(s, std::uniform_real_distribution<double>(0, 4e5)(rng), eta, width);
    ASSERT_LE(line.size(), static_cast<std::size_t>(std::max(width - 1, 1))) << "width " << width << ": " << line;
    for (char c : line) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "not printable ASCII in: " << line;
    if (width >= 60) EXPECT_NE(line.find(std::to_string(s.done) + "/" + std::to_string(s.total)), std::string::npos)
        << "width " << width << ": " << line;
  }
}

TEST(BarLine, ALongCaseIsCutWithAnEllipsisAndTheFiguresStayWhole) {
  const ProgressStatus s{.done = 81, .total = 1835, .failed = 2, .current = kCase + ", " + kCase};
  const std::string line = render_bar_line(s, 270, 6000, 80);
  EXPECT_LE(line.size(), 79u);
  EXPECT_NE(line.find("81/1835 (4%)"), std::string::npos) << line;
  EXPECT_NE(line.find("eta 1h40m"), std::string::npos) << line;
  EXPECT_EQ(line.substr(line.size() - 3), "...") << line;
  EXPECT_NE(line.find("rmsnorm_fwd:"), std::string::npos) << "at least the op is named: " << line;
  const std::string narrow = render_bar_line(s, 270, 6000, 50);
  EXPECT_LE(narrow.size(), 49u);
  EXPECT_EQ(narrow.find('['), std::string::npos) << "a narrow terminal drops the bar before the figures: " << narrow;
  EXPECT_NE(narrow.find("81/1835"), std::string::npos) << narrow;
}

// ---- the display ----------------------------------------------------------------------------

TEST(ProgressDisplay, BarIsRewrittenInPlaceWithCarriageReturnAndClearToEndOfLine) {
  FakeClock clock;
  std::ostringstream out;
  ProgressDisplay display(out, bar_options(clock, 72));
  display.status({.done = 0, .total = 10, .current = kCase});
  clock.advance(2s);
  display.status({.done = 1, .total = 10, .current = "softmax_fwd:fused_v1_online:fp32:4096x4096"});
  const std::string written = out.str();
  EXPECT_EQ(written.rfind("\r", 0), 0u) << "each draw starts at the line's start";
  EXPECT_NE(written.find("\x1b[K"), std::string::npos) << "and clears what a longer line left";
  EXPECT_EQ(written.find('\n'), std::string::npos) << "the bar never scrolls";
  const auto screen = test::terminal_screen(written);
  ASSERT_EQ(screen.size(), 1u);
  EXPECT_LE(screen[0].size(), 71u);
  EXPECT_NE(screen[0].find("1/10"), std::string::npos) << screen[0];
  EXPECT_NE(screen[0].find("softmax_fwd"), std::string::npos) << screen[0];
  EXPECT_EQ(screen[0].find("rmsnorm_fwd"), std::string::npos) << "the earlier case is gone: " << screen[0];
  EXPECT_NE(screen[0].find("elapsed 2s"), std::string::npos) << screen[0];
}

TEST(ProgressDisplay, ALineStaysAboveTheBarOnceAndTheBarIsGoneAfterFinish) {
  FakeClock clock;
  std::ostringstream out;
  ProgressDisplay display(out, bar_options(clock));
  display.status({.done = 0, .total = 3, .current = kCase});
  const std::string failure = "[   1/3] " + kCase + " failed  3 mismatches (first at [0, 7])";
  display.line(failure);
  display.status({.done = 1, .total = 3, .failed = 1, .current = "next:case"});
  display.line("kwb run: note: a note");
  clock.advance(1s);
  display.status({.done = 2, .total = 3, .failed = 1, .current = "last:case"});
  auto screen = test::terminal_screen(out.str());
  ASSERT_EQ(screen.size(), 3u) << out.str();
  EXPECT_EQ(screen[0], failure);
  EXPECT_EQ(screen[1], "kwb run: note: a note");
  EXPECT_NE(screen[2].find("2/3"), std::string::npos) << "the bar under them: " << screen[2];
  EXPECT_NE(screen[2].find("1 failed"), std::string::npos) << screen[2];
  display.finish();
  display.line("3 passed");  // after finish: a plain line where the bar was
  screen = test::terminal_screen(out.str());
  EXPECT_EQ(screen, (std::vector<std::string>{failure, "kwb run: note: a note", "3 passed", ""})) << out.str();
  const std::string tail = out.str().substr(out.str().rfind("3 passed") - 4);
  EXPECT_EQ(tail, "\r\x1b[K3 passed\n") << "the last bar cleared, then the line with no escape of its own";
}

TEST(ProgressDisplay, EstimateAppearsOnlyAfterAFewCasesAndCountsDownBetweenThem) {
  FakeClock clock;
  std::ostringstream out;
  ProgressDisplay display(out, bar_options(clock, 120));
  auto bar = [&] { return test::terminal_screen(out.str()).back(); };
  for (std::size_t done = 0; done < kEtaAfterUnits; ++done) {
    display.status({.done = done, .total = 10, .current = "c", .eta_s = 100.0});
    EXPECT_EQ(bar().find("eta"), std::string::npos) << "after " << done << " cases: " << bar();
  }
  display.status({.done = kEtaAfterUnits, .total = 10, .current = "c", .eta_s = 70.0});
  EXPECT_NE(bar().find("eta 1m10s"), std::string::npos) << bar();
  clock.advance(10s);
  display.tick();
  EXPECT_NE(bar().find("eta 1m00s"), std::string::npos) << "a long case: the estimate counts down: " << bar();
  EXPECT_NE(bar().find("elapsed 10s"), std::string::npos) << bar();
  clock.advance(5min);
  display.tick();
  EXPECT_NE(bar().find("eta 0s"), std::string::npos) << "never below zero: " << bar();
}

TEST(ProgressDisplay, WithoutTheCallersEstimateTheDisplayTakesItsOwnTimePerUnit) {
  FakeClock clock;
  std::ostringstream out;
  ProgressDisplay display(out, bar_options(clock, 120));
  display.status({.done = 0, .total = 10});
  clock.advance(30s);
  display.status({.done = 3, .total = 10});  // 10 s a unit so far, 7 left
  EXPECT_NE(test::terminal_screen(out.str()).back().find("eta 1m10s"), std::string::npos) << out.str();
}

TEST(ProgressDisplay, TickRedrawsOnlyWhenTheLineChanged) {
  FakeClock clock;
  std::ostringstream out;
  ProgressDisplay display(out, bar_options(clock));
  display.tick();
  EXPECT_TRUE(out.str().empty()) << "no bar before the first status";
  display.status({.done = 0, .total = 4, .current = "c"});
  const std::size_t after_status = out.str().size();
  clock.advance(300ms);
  display.tick();
  EXPECT_EQ(out.str().size(), after_status) << "the same second: nothing written";
  clock.advance(1s);
  display.tick();
  EXPECT_GT(out.str().size(), after_status) << "a new second: drawn again";
}

TEST(ProgressDisplay, LinesAndNoneStylesDrawNoBarAndWriteNoEscapes) {
  for (const ProgressStyle style : {ProgressStyle::lines, ProgressStyle::none}) {
    std::ostringstream out;
    ProgressDisplay display(out, {.style = style, .width = 80, .tick = 0ms});
    display.status({.done = 1, .total = 2, .current = kCase});
    display.line("kwb run: note: plain");
    display.finish();
    EXPECT_EQ(out.str(), "kwb run: note: plain\n");
  }
}

// A stream whose writes and reads are locked, for the one test with a live ticker thread
// (recursive: the base class's xsputn may call overflow).
class LockedBuffer : public std::stringbuf {
 public:
  std::string text() {
    std::lock_guard lock(mutex_);
    return str();
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard lock(mutex_);
    return std::stringbuf::xsputn(s, n);
  }
  int_type overflow(int_type c) override {
    std::lock_guard lock(mutex_);
    return std::stringbuf::overflow(c);
  }

 private:
  std::recursive_mutex mutex_;
};

TEST(ProgressDisplay, TheTickerShowsTimePassingDuringALongCaseAndStopsAtFinish) {
  FakeClock clock;
  LockedBuffer buffer;
  std::ostream out(&buffer);
  ProgressDisplay display(out, {.style = ProgressStyle::bar, .width = 80, .now = clock.function(), .tick = 5ms});
  display.status({.done = 0, .total = 2, .current = kCase});
  clock.advance(42s);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (buffer.text().find("elapsed 42s") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_NE(buffer.text().find("elapsed 42s"), std::string::npos) << "no draw without an event";
  display.finish();
  const std::string finished = buffer.text();
  clock.advance(10s);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(buffer.text(), finished) << "the ticker is stopped";
  EXPECT_EQ(test::terminal_screen(finished), std::vector<std::string>{""}) << "nothing left on the line";
}

}  // namespace
}  // namespace kwb::cli
