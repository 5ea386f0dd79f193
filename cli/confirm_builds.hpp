// Which kwb measures each side of `kwb compare --confirm`, and whether it can measure the cases.
//
// Each side must be re-measured by the build that produced its report: BASE's code against NEW's.
// `--base-kwb` and `--new-kwb` name those binaries; without them this kwb measures a side only when
// it was built from the git SHA that side's report records (the A/A case: two runs of one
// build). A binary given is asked for its `--version` and refused when it names another SHA than
// the report. Before any GPU work, each side's build plans every suspect case (`kwb run ...
// --list-cases`, the case's own flags): an op, variant, dtype, axis or tunable the build lacks is
// refused there, with that build's own message, instead of a skipped round later.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/catalogue/case_request.hpp"
#include "harness/session/worker_process.hpp"

namespace kwb::cli {

// A refusal of --confirm: the message says what, where and how to fix it (exit 2).
struct ConfirmRefusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One side's build: the binary and the environment its processes get.
struct SideBuild {
  std::string side;     // "BASE" or "NEW"
  std::string kwb;      // path of the binary
  std::string git_sha;  // what the binary says it was built from ("unknown" when it cannot tell)
  EnvironmentChanges environment;  // KWB_TEST_SLOWDOWN as the side's report had it
  std::string label() const;       // "./build/kwb (abc123)"
};

// What a program printed (stdout and stderr together) and how it ended; exit_code -1 when it did
// not end by itself within the time limit, or could not start.
struct CapturedRun {
  int exit_code = -1;
  std::string output;
};
CapturedRun capture_run(const std::vector<std::string>& argv, const EnvironmentChanges& environment,
                        double timeout_s = 60);

// The git SHA in `kwb --version`'s "0.1.0 (abc123)"; nothing when the output is not that.
std::optional<std::string> sha_from_version_output(const std::string& output);

// The build for `side` whose report records `report_sha`: `flag_path` when given (checked: an
// executable whose --version names that SHA), else `self_exe` when this build's SHA (`self_sha`)
// is the report's. Throws ConfirmRefusal naming the flag to pass.
SideBuild resolve_side_build(const std::string& side, const std::string& flag, const std::string& flag_path,
                             const std::string& report_sha, const std::string& report_name,
                             const std::string& self_exe, const std::string& self_sha);

// The `kwb run` arguments that plan exactly `request` (without the binary), ending in --list-cases.
std::vector<std::string> list_case_args(const CaseRequest& request);

// Throws ConfirmRefusal when `build` cannot plan `request` as the case `key` (the build's own
// message in it), e.g. an op or variant it does not have.
void check_build_measures(const SideBuild& build, const CaseRequest& request, const std::string& key);

}  // namespace kwb::cli
