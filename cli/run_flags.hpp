// The flags of `kwb run` as written, and the run they describe: shared by `kwb run` and `kwb tune`
// (a run whose plan spans a variant's tunables).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/plan/run_request.hpp"

namespace kwb::cli {

// The flags as written: the plan's settings (--op .. --tuning, checked by the request layer,
// harness/plan/run_request.hpp) and what only the command line has. Numbers are kept as text and
// parsed strictly, so that a negative or overflowing value gets a message instead of a
// wrap-around.
struct RunFlags : RunSettings {
  std::string verb = "run";  // the verb the messages name ("tune" runs its search through here)
  std::string out = "results", timer = "auto";
  std::string device = "0", case_timeout_s = "120";
  std::string devices;      // --devices all|0,1: one worker per GPU, one report
  std::string shard;        // --shard I/N: only plan positions k with k mod N == I
  bool list_cases = false;  // print the plan and exit, no GPU
  bool time_report = false;  // print where the run's time went (stages of the session and the cases)
  std::string resume;       // --resume DIR: continue the sweep whose journal is DIR/journal.jsonl
  bool no_measure = false;  // with --resume: the reports from the journal alone, nothing measured
  // --columns: counter figures or metric totals added to the summary table (cli/run_columns.hpp);
  // what is printed only, so neither the plan nor the journal holds them.
  std::vector<std::string> columns;
  // --progress bar|lines|none (cli/progress_display.hpp); auto: a bar on a terminal, else lines.
  // How the run is shown, so not journaled: a resumed run chooses its own.
  std::string progress = "auto";
  // --oracle-cache DIR|off and --oracle-cache-max-bytes SIZE ("": the environment's or the
  // default, harness/worker/oracle_cache/oracle_cache_settings.hpp); chosen per run, not journaled.
  std::string oracle_cache, oracle_cache_max_bytes;
};

// Plans, runs and reports as `kwb run` does (journal, report.json/csv, progress and summary on the
// terminal, Ctrl-C handling); returns the exit code. `given_flags`: the plan flags written out,
// for the journal's header.
int run_from_flags(RunFlags f, const nlohmann::ordered_json& given_flags, const std::string& self_exe,
                   const std::string& command_line);

}  // namespace kwb::cli
