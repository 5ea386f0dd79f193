// The verbs of `kwb`, each in its own file. Exit codes: 0 success, 1 a case failed, 2 bad input
// (flags, names, ranges, shapes too large), 3 no usable GPU, 130 interrupted.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kwb::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCaseFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNoGpu = 3;
inline constexpr int kExitInterrupted = 130;

// Each add_* registers a subcommand and returns a pointer to the int it will set as exit code
// when its callback runs.
void add_list_command(CLI::App& app, int& exit_code);
void add_counters_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code, const std::string& self_exe);
void add_ceilings_command(CLI::App& app, int& exit_code, const std::string& self_exe);
void add_worker_command(CLI::App& app, int& exit_code);
// `kwb compare`: exit 0 no regression, 1 slower or failed in NEW, 2 bad input (cli/compare_command.cpp).
// With --confirm it re-measures suspect cases in `self_exe`'s workers (cli/compare_confirm.hpp).
void add_compare_command(CLI::App& app, int& exit_code, const std::string& self_exe);
// `kwb report`: the review report (HTML, Markdown) of one report.json (cli/report_command.cpp).
void add_report_command(CLI::App& app, int& exit_code);
// `kwb select`: fastest verified variant per shape; exit 0 selected, 1 nothing to select from, 2 bad
// input (cli/select_command.cpp).
void add_select_command(CLI::App& app, int& exit_code);
// `kwb history add|show`: the result history in SQLite (cli/history_command.cpp).
void add_history_command(CLI::App& app, int& exit_code);

// `kwb cache show|clear`: the oracle cache's location and contents, and emptying it
// (cli/cache_command.cpp).
void add_cache_command(CLI::App& app, int& exit_code);

// `kwb merge`: shard reports -> one report; exit 0 merged, 1 shards missing, 2 bad input
// (cli/merge_command.cpp).
void add_merge_command(CLI::App& app, int& exit_code);

// `kwb tune`: a run over every combination of one variant's tunables, then tune.json
// (cli/tune_command.cpp).
void add_tune_command(CLI::App& app, int& exit_code, const std::string& self_exe);

// `kwb profile`: the Nsight Compute command of one case, run with --run and its CSV imported into
// the case's record (cli/profile_command.cpp).
void add_profile_command(CLI::App& app, int& exit_code, const std::string& self_exe);

// What to say when there is no GPU: the reason and what can be done instead.
std::string no_gpu_message(const std::string& verb, const std::string& reason);

// The whole command line, shell-quoted where needed, for the report.
std::string quoted_command_line(int argc, char** argv);

// The command line this process was started with (set by run_cli).
const std::string& invoked_command_line();

// Runs the CLI on argv; returns the exit code. main() is just this.
int run_cli(int argc, char** argv);

}  // namespace kwb::cli
