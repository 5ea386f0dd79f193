// What a session tells the display, by style (see session_progress.hpp).
#include "cli/session_progress.hpp"

#include <sstream>

#include "cli/run_output.hpp"

namespace kwb::cli {
namespace {

ProgressStatus status_of(const SessionProgress& p) {
  return ProgressStatus{.done = p.done, .total = p.total, .failed = p.failed, .current = p.current, .eta_s = p.eta_s};
}

// print_progress's line without its newline.
std::string progress_line(const CaseRecord& record, std::size_t total, std::optional<double> eta_s) {
  std::ostringstream line;
  print_progress(line, record, total, eta_s);
  std::string text = line.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

SessionCallbacks progress_callbacks(ProgressDisplay& display, std::size_t total, const std::string& verb) {
  SessionCallbacks callbacks;
  callbacks.on_note = [&display, verb](const std::string& note) { display.line(verb + ": " + note); };
  switch (display.style()) {
    case ProgressStyle::bar:
      callbacks.on_started = [&display](const CaseRequest&, const SessionProgress& p) { display.status(status_of(p)); };
      callbacks.on_record = [&display, total](const CaseRecord& r, const SessionProgress& p) {
        // The bar has the estimate; the line that stays has the case and why it did not pass.
        if (r.disposition != Disposition::passed) display.line(progress_line(r, total, std::nullopt));
        display.status(status_of(p));
      };
      break;
    case ProgressStyle::lines:
      callbacks.on_record = [&display, total](const CaseRecord& r, const SessionProgress& p) {
        display.line(progress_line(r, total, p.eta_s));
      };
      break;
    case ProgressStyle::none:
      break;
  }
  return callbacks;
}

}  // namespace kwb::cli
