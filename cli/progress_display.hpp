// Progress a person can read. On a terminal: one line at the bottom, rewritten in place ("\r",
// then ESC[K to clear what a longer line left), with a bar, done/total, the failures so far, what
// runs now, the elapsed time and an estimate of the rest, never wider than the terminal. In a log
// (CI, a pipe, a file): plain lines, one per finished case, that read the same in any viewer.
//
// The style is chosen once, at the start (`--progress bar|lines|none`, else by whether stderr is
// a terminal that understands the two control sequences), and the display is the one way a verb
// writes to stderr while it runs: a line that must stay (a failed case and its reason, a note, a
// warning) clears the bar, is printed and the bar drawn again under it, so nothing interleaves.
// finish() clears the bar before the verb prints its summary.
//
// Testable without a terminal: the display writes to any ostream, the width and the clock are
// options, and the bar line itself is a pure function (render_bar_line).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

namespace kwb::cli {

enum class ProgressStyle {
  bar,    // one line updated in place; only failed and skipped cases (and notes) stay above it
  lines,  // a line per finished case, as CI logs want them
  none,   // nothing per case; notes, warnings and the summary still print
};

// The help of every verb's --progress.
inline constexpr const char* kProgressFlagHelp =
    "How progress is shown on stderr: bar (one line updated in place: done/total, failures, the case running, "
    "elapsed, eta; failed and skipped cases stay above it), lines (a line per case, for logs) or none. Default: bar "
    "on a terminal, lines otherwise (a pipe, a file, CI, TERM=dumb)";

// `--progress` as given: "bar", "lines" or "none"; "auto": nullopt (chosen by the terminal).
// Anything else (an empty value too) is a FlagError that lists the choices.
std::optional<ProgressStyle> parse_progress_flag(const std::string& flag, const std::string& text);

// The style: `asked` when given; else bar where stderr is a terminal and TERM names one that
// moves to the line's start and clears to its end (set, and not "dumb"), else lines.
ProgressStyle choose_progress_style(std::optional<ProgressStyle> asked, bool stderr_is_tty, const char* term);
// The same for this process's stderr and TERM.
ProgressStyle choose_progress_style(std::optional<ProgressStyle> asked);

// The columns of stderr's terminal (TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_columns();

// A duration for people, to the second: "7s", "2m05s", "1h02m" (minutes from an hour on).
std::string format_duration(double seconds);

// What the bar shows at one moment.
struct ProgressStatus {
  std::size_t done = 0;    // units finished (cases; rounds for compare --confirm)
  std::size_t total = 0;
  std::size_t failed = 0;  // shown when above 0
  std::string current;     // what runs now ("" between units)
  // The caller's estimate of the time left, as of this status; none: the display estimates it
  // from its own elapsed time per finished unit.
  std::optional<double> eta_s;
};

// No estimate is shown before this many units have finished: the first few (a worker's start,
// the inputs of a new shape) say little about the rest.
inline constexpr std::size_t kEtaAfterUnits = 3;

// The bar line, at most `width` - 1 columns (a character in the last column makes some terminals
// wrap) and pure ASCII, so its length is its width: "[#####-----] 12/40 (30%)  1 failed  elapsed
// 1m05s  eta 2m31s  op:variant:dtype:shape". The case running is cut first ("..."), then the bar
// shrinks, then goes; `eta_s` none: no estimate.
std::string render_bar_line(const ProgressStatus& status, double elapsed_s, std::optional<double> eta_s, int width);

class ProgressDisplay {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    ProgressStyle style = ProgressStyle::lines;
    int width = 0;                           // 0: terminal_columns() at each redraw (a resize is followed)
    std::function<Clock::time_point()> now;  // null: Clock::now
    // With a bar, a thread redraws it this often (only when the line changed: once a second as
    // the elapsed time moves), so a long case still shows the time passing; 0: no thread.
    std::chrono::milliseconds tick{100};
  };

  ProgressDisplay(std::ostream& out, Options options);
  ~ProgressDisplay();  // finish()
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  ProgressStyle style() const { return options_.style; }

  // The bar's new contents, drawn now (bar style only; the first status shows the bar).
  void status(const ProgressStatus& status);
  // A line that stays (every style): in bar style the bar is cleared, the line printed and the
  // bar drawn again below it. `text` ends without a newline.
  void line(const std::string& text);
  // The bar drawn again when its text changed (the elapsed time, the estimate counting down); the
  // ticker thread calls it, tests may.
  void tick();
  // Clears the bar and stops the ticker; lines after it print plainly. Idempotent.
  void finish();

 private:
  Clock::time_point now() const;
  std::string render_locked() const;
  void draw_locked(bool force);

  std::ostream& out_;
  Options options_;
  Clock::time_point started_at_;
  mutable std::mutex mutex_;
  ProgressStatus status_;
  Clock::time_point status_at_;     // when status_ came
  std::optional<Clock::time_point> first_status_at_;  // for the display's own estimate
  std::optional<double> eta_at_status_;  // the estimate as of status_at_, counting down after it
  bool shown_ = false;              // the bar is on the screen
  bool finished_ = false;
  std::string drawn_;               // the text on the screen now
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace kwb::cli
