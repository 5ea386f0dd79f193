// The progress display: the style chosen once, the bar line as a pure function of what it shows,
// and the display that keeps it at the bottom of the terminal while lines scroll above it.
#include "cli/progress_display.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/flag_values.hpp"

namespace kwb::cli {
namespace {

// "\r" to the line's start, ESC[K to clear from there to its end: the two sequences every
// terminal but a "dumb" one understands (no colours, no cursor movement between lines).
constexpr const char* kLineStart = "\r";
constexpr const char* kClearToEnd = "\x1b[K";

// The bar's marks: it takes what the rest of the line leaves, within these.
constexpr std::size_t kMinMarks = 10;
constexpr std::size_t kMaxMarks = 30;
// A case name cut shorter than this says nothing: it is left out instead.
constexpr std::size_t kMinCaseColumns = 12;

std::string bar_of(std::size_t done, std::size_t total, std::size_t marks) {
  const std::size_t filled = total == 0 ? 0 : std::min(marks, marks * done / total);
  return "[" + std::string(filled, '#') + std::string(marks - filled, '-') + "]";
}

}  // namespace

std::optional<ProgressStyle> parse_progress_flag(const std::string& flag, const std::string& text) {
  if (text == "auto") return std::nullopt;
  if (text == "bar") return ProgressStyle::bar;
  if (text == "lines") return ProgressStyle::lines;
  if (text == "none") return ProgressStyle::none;
  throw FlagError(fmt::format("{}: unknown value {}; use bar (one line updated in place), lines (a line per case, "
                              "for logs) or none (the summary only), or leave it out to choose by the terminal",
                              flag, shown(text)));
}

ProgressStyle choose_progress_style(std::optional<ProgressStyle> asked, bool stderr_is_tty, const char* term) {
  if (asked) return *asked;
  const bool capable = term != nullptr && *term != '\0' && std::string(term) != "dumb";
  return stderr_is_tty && capable ? ProgressStyle::bar : ProgressStyle::lines;
}

ProgressStyle choose_progress_style(std::optional<ProgressStyle> asked) {
  return choose_progress_style(asked, ::isatty(STDERR_FILENO) == 1, std::getenv("TERM"));
}

int terminal_columns() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  int columns = 0;
  if (const char* text = std::getenv("COLUMNS"); text && parse_whole(text, columns) && columns > 0) return columns;
  return 80;
}

std::string format_duration(double seconds) {
  const long long s = std::isfinite(seconds) && seconds > 0 ? std::llround(seconds) : 0;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
}

std::string render_bar_line(const ProgressStatus& s, double elapsed_s, std::optional<double> eta_s, int width) {
  const std::size_t max = width > 1 ? static_cast<std::size_t>(width - 1) : 1;
  const std::size_t percent = s.total == 0 ? 0 : std::min<std::size_t>(100, s.done * 100 / s.total);
  std::string info = fmt::format("{}/{} ({}%)", s.done, s.total, percent);
  if (s.failed > 0) info += fmt::format("  {} failed", s.failed);
  info += "  elapsed " + format_duration(elapsed_s);
  if (eta_s) info += "  eta " + format_duration(*eta_s);
  // What the line holds besides the marks: "[", "]", a space, the figures, and the case.
  const std::size_t rest = 3 + info.size() + (s.current.empty() ? 0 : 2 + s.current.size());
  const std::size_t marks = std::clamp<std::size_t>(max > rest ? max - rest : 0, kMinMarks, kMaxMarks);
  std::string line = bar_of(s.done, s.total, marks) + " " + info;
  if (line.size() > max) line = info;                  // a narrow terminal: the figures without the bar
  if (line.size() > max) return line.substr(0, max);  // a very narrow one: cut
  if (!s.current.empty()) {
    const std::size_t room = max - line.size();
    if (room >= 2 + s.current.size()) line += "  " + s.current;
    else if (room >= 2 + kMinCaseColumns) line += "  " + s.current.substr(0, room - 5) + "...";
  }
  return line;
}

ProgressDisplay::ProgressDisplay(std::ostream& out, Options options) : out_(out), options_(std::move(options)) {
  started_at_ = now();
  if (options_.style == ProgressStyle::bar && options_.tick.count() > 0)
    ticker_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      while (!stopping_) {
        stop_.wait_for(lock, options_.tick, [this] { return stopping_; });
        if (!stopping_) draw_locked(false);
      }
    });
}

ProgressDisplay::~ProgressDisplay() { finish(); }

ProgressDisplay::Clock::time_point ProgressDisplay::now() const {
  return options_.now ? options_.now() : Clock::now();
}

void ProgressDisplay::status(const ProgressStatus& status) {
  std::lock_guard lock(mutex_);
  if (options_.style != ProgressStyle::bar || finished_) return;
  const Clock::time_point t = now();
  if (!first_status_at_) first_status_at_ = t;
  status_ = status;
  status_at_ = t;
  eta_at_status_.reset();
  if (status.done >= kEtaAfterUnits && status.done < status.total) {
    if (status.eta_s) {
      eta_at_status_ = *status.eta_s;
    } else {  // the display's own: its time per finished unit so far, for each unit left
      const double per_unit = std::chrono::duration<double>(t - *first_status_at_).count() / double(status.done);
      eta_at_status_ = per_unit * double(status.total - status.done);
    }
  }
  shown_ = true;
  draw_locked(true);
}

void ProgressDisplay::line(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (options_.style == ProgressStyle::bar && shown_ && !finished_) {
    // Under the display's lock, the bar cleared, the line, the bar again: nothing else this
    // process prints can come between them.
    drawn_ = render_locked();
    out_ << kLineStart << kClearToEnd << text << "\n" << kLineStart << drawn_ << kClearToEnd << std::flush;
    return;
  }
  out_ << text << "\n" << std::flush;
}

void ProgressDisplay::tick() {
  std::lock_guard lock(mutex_);
  draw_locked(false);
}

void ProgressDisplay::finish() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (shown_) out_ << kLineStart << kClearToEnd << std::flush;
  shown_ = false;
  drawn_.clear();
}

std::string ProgressDisplay::render_locked() const {
  const Clock::time_point t = now();
  const double elapsed_s = std::chrono::duration<double>(t - started_at_).count();
  std::optional<double> eta_s;
  if (eta_at_status_)  // counts down between statuses, never below 0
    eta_s = std::max(0.0, *eta_at_status_ - std::chrono::duration<double>(t - status_at_).count());
  return render_bar_line(status_, elapsed_s, eta_s, options_.width > 0 ? options_.width : terminal_columns());
}

void ProgressDisplay::draw_locked(bool force) {
  if (!shown_ || finished_) return;
  std::string text = render_locked();
  if (!force && text == drawn_) return;
  out_ << kLineStart << text << kClearToEnd << std::flush;
  drawn_ = std::move(text);
}

}  // namespace kwb::cli
