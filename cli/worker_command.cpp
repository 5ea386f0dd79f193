// `kwb __worker`: the process that owns the CUDA context (started by `kwb run`, not by people).
#include <csignal>

#include "cli/commands.hpp"
#include "harness/worker/worker_protocol.hpp"

namespace kwb::cli {

void add_worker_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("__worker", "The worker process (started by kwb run)");
  cmd->group("");  // an empty group hides it from --help
  static int device = 0;
  static std::string timer = "auto";
  static bool counters = false;
  cmd->add_option("--device", device);
  cmd->add_option("--timer", timer);
  cmd->add_flag("--counters", counters);
  cmd->callback([&exit_code] {
    // Ctrl-C and SIGTERM are the parent's to handle (a signal to the process group reaches the
    // worker too, and a case cut short would read as a crash); the parent ends the worker itself.
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    exit_code = worker_main(device, timer, counters);
  });
}

}  // namespace kwb::cli
