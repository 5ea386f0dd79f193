// A session's progress on a ProgressDisplay: the callbacks `kwb run` and `kwb tune` give their
// session, so both show a run the same way.
#pragma once

#include <cstddef>
#include <string>

#include "cli/progress_display.hpp"
#include "harness/session/session.hpp"

namespace kwb::cli {

// Bar style: the bar follows each case's start (it names the case now running) and end; a failed
// or skipped case leaves its line (print_progress's, with the reason) above the bar, a passed one
// none. Lines style: print_progress's line for every finished case, with the estimate of the
// rest, exactly as a log has always read. None: no case. Every style: the session's notes,
// "<verb>: <note>". `total`: the count the lines' "[i/total]" use (a shard counts the whole plan).
SessionCallbacks progress_callbacks(ProgressDisplay& display, std::size_t total, const std::string& verb);

}  // namespace kwb::cli
