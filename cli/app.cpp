// The top-level parser: verbs, shared error handling, and exit codes.
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <filesystem>
#include <iostream>

#include "harness/catalogue/plugin_loader.hpp"
#include "harness/catalogue/registry.hpp"
#include "cli/commands.hpp"
#include "harness/plan/suggest.hpp"
#include "harness/record/version.hpp"

namespace kwb::cli {

std::string no_gpu_message(const std::string& verb, const std::string& reason) {
  return "kwb " + verb + ": no usable CUDA GPU on this machine (" + reason + ").\n"
         "Without a GPU you can still:\n"
         "  kwb list                          see every op, variant, axis and dtype\n"
         "  samples/                          open the committed reports measured on an H100 and two H200s\n"
         "                                    (h100-roofline-review/review.html, h100-smoke/report.json)\n"
         "  kwb report / compare / select      render, compare or rank those reports\n"
         "  kwb compare samples/h100-compare/base.json samples/h100-compare/slower.json\n"
         "                                    the regression gate on two runs that keep their samples\n"
         "  scripts/test.sh                   build and run the CPU tests (GPU tests report skipped)\n"
         "On a machine with a GPU, scripts/run.sh builds and runs the default sweep.";
}

std::string quoted_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i) out += ' ';
    if (a.find_first_of(" \t'\"$`\\") != std::string::npos) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += q + "'";
    } else {
      out += a;
    }
  }
  return out;
}

namespace {
std::string g_command_line;

const std::vector<std::string> kVerbs = {"list", "counters", "run", "tune", "profile", "ceilings", "compare", "report", "select", "merge", "history", "cache"};  // __worker is internal

// CLI11 says only "A subcommand is required" for `kwb lst`: name the word, the closest verb and
// the list. nullopt when argv starts with a verb or an option (--help, --version).
std::optional<std::string> verb_problem(int argc, char** argv) {
  const std::string commands = "commands: list, counters, run, tune, profile, ceilings, compare, report, select, merge, history, cache (see `kwb --help`)";
  if (argc < 2) return "a command is required; " + commands;
  const std::string first = argv[1];
  if (first.starts_with("-") || first == "__worker" ||
      std::find(kVerbs.begin(), kVerbs.end(), first) != kVerbs.end())
    return std::nullopt;
  std::string message = "unknown command '" + (first.size() > 60 ? first.substr(0, 57) + "..." : first) + "'";
  if (auto close = closest_match(first, kVerbs)) message += "; did you mean '" + *close + "'?";
  return message + "; " + commands;
}

}  // namespace

const std::string& invoked_command_line() { return g_command_line; }

int run_cli(int argc, char** argv) {
  g_command_line = quoted_command_line(argc, argv);
  // Registration mistakes are bugs in this build, not in the command line: say each one and stop
  // before anything runs, rather than letting a variant silently never appear.
  if (const auto problems = Registry::instance().problems(); !problems.empty()) {
    std::cerr << "kwb: the kernel catalogue of this build has " << problems.size()
              << " registration problem(s); fix them in reference/ or kernels/ and rebuild:\n";
    for (const auto& p : problems) std::cerr << "  " << p << "\n";
    return kExitBadInput;
  }
  // $KWB_PLUGINS: how a run hands its plugins to its workers (each a fresh `kwb __worker`), and a
  // way to name plugins for every verb at once. Loaded before any flag is read, so that a worker's
  // catalogue is its parent's.
  try {
    load_plugins_from_environment();
  } catch (const PluginError& e) {
    std::cerr << "kwb: " << e.what() << "\n";
    return kExitBadInput;
  }
  CLI::App app{"kwb: Kernel Workbench. Verifies GPU kernels against fp64 oracles, times them with "
               "CUPTI, and reports bandwidth, FLOP rate and roofline efficiency."};
  app.set_version_flag("--version", std::string(kToolVersion) + " (" + kGitSha + ")" +
                                       (kCompileCheckBuild ? ", compile-check build: measures nothing" : ""));
  app.require_subcommand(1);
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) self = argv[0];
  int exit_code = kExitOk;
  add_list_command(app, exit_code);
  add_counters_command(app, exit_code);
  add_run_command(app, exit_code, self);
  add_tune_command(app, exit_code, self);
  add_profile_command(app, exit_code, self);
  add_ceilings_command(app, exit_code, self);
  add_compare_command(app, exit_code, self);
  add_report_command(app, exit_code);
  add_select_command(app, exit_code);
  add_merge_command(app, exit_code);
  add_history_command(app, exit_code);
  add_cache_command(app, exit_code);
  add_worker_command(app, exit_code);
  if (auto problem = verb_problem(argc, argv)) {
    std::cerr << "kwb: " << *problem << "\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kwb: " << e.what() << "\n(see `kwb --help` or `kwb <verb> --help`)\n";
    return kExitBadInput;
  } catch (const std::exception& e) {  // a file that could not be written, a bug: say it, never abort
    std::cerr << "kwb: error: " << e.what() << "\n";
    return kExitCaseFailed;
  }
  return exit_code;
}

}  // namespace kwb::cli
