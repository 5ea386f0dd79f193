// A child process that runs cases, seen from the parent: start, send a line, wait for a line
// with a deadline, kill.
//
// Cases run in a worker so that a CUDA fault (which poisons the whole context) or a hung kernel
// costs one case, not the sweep: the parent never touches CUDA, records what went wrong and
// starts a fresh worker. The protocol is JSON Lines over the worker's stdin and a private
// stdout; everything else the worker prints (device printf, assert messages) goes to its log.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kwb {

// Variables to set (a value) or remove (nullopt) in a child's environment; the rest is inherited.
using EnvironmentChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

class WorkerProcess {
 public:
  // Starts argv[0] with argv; the worker's stderr is appended to `log_path`. `environment`
  // changes what the child inherits (a confirm run gives each build's worker its own
  // KWB_TEST_SLOWDOWN).
  WorkerProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_path,
                const EnvironmentChanges& environment = {});
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // False if the worker is gone.
  bool send_line(const std::string& line);

  enum class Status { line, timeout, exited, interrupted };
  // Waits up to `timeout_s` for one complete line. When `interrupt_fd` is given and becomes
  // readable (another thread wrote to it to abandon the wait), returns `interrupted` at once.
  Status read_line(double timeout_s, std::string& line, int interrupt_fd = -1);

  // SIGKILL and reap; safe to call twice.
  void kill();
  // "exited with status 3" / "killed by signal 6 (Aborted)"; empty while running.
  std::string exit_description();

 private:
  void reap(bool wait);
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  std::optional<int> wait_status_;
};

// The last `max_bytes` of a log file past byte `from` (what one worker wrote), for errors.
std::string tail_of_file(const std::filesystem::path& path, std::size_t max_bytes,
                         std::size_t from = 0);

// The last `lines` lines of `text`, without trailing newlines ("" for empty text).
std::string last_lines(const std::string& text, int lines);

}  // namespace kwb
