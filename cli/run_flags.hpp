// The flags of `kwb run` as written, and the run they describe: shared by `kwb run` and `kwb tune`
// (a run whose plan spans a variant's tunables).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_suite.hpp"
#include "harness/plan/planner.hpp"

namespace kwb::cli {

// The flags as written. Numbers are kept as text and parsed by flag_values, so that a negative
// or overflowing value gets a message instead of a wrap-around.
struct RunFlags {
  std::vector<std::string> ops, variants, dtypes, axes;
  std::string mode = "cold", flush = "dirty", preset = "default", out = "results", timer = "auto";
  std::string shapes = "default";
  std::string device = "0", seed = "1", case_timeout_s = "120";
  std::string devices;      // --devices all|0,1: one worker per GPU, one report
  std::string max_cases = std::to_string(PlanRequest::kDefaultMaxCases);
  bool include_test_variants = false;
  bool datasheet_ceilings = false;
  std::string suite;        // --suite FILE: the plan comes from a suite file
  std::string shard;        // --shard I/N: only plan positions k with k mod N == I
  bool list_cases = false;  // print the plan and exit, no GPU
  GivenRunFlags given;      // which flags were written out (a suite's values yield to them)
  std::string resume;       // --resume DIR: continue the sweep whose journal is DIR/journal.jsonl
  bool no_measure = false;  // with --resume: the reports from the journal alone, nothing measured
  std::vector<std::string> tuning;  // --tuning FILE: tune.json files whose best configurations apply
};

// Plans, runs and reports as `kwb run` does (journal, report.json/csv, progress and summary on the
// terminal, Ctrl-C handling); returns the exit code. `given_flags`: the plan flags written out,
// for the journal's header.
int run_from_flags(RunFlags f, const nlohmann::ordered_json& given_flags, const std::string& self_exe,
                   const std::string& command_line);

}  // namespace kwb::cli
