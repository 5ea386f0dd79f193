// fork/exec with two pipes, poll() for deadlines, waitpid for the cause of death.
#include "harness/session/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace kwb {

namespace {

// The child's environment: the parent's, less the changed names, plus the values set. Built in the
// parent, before fork: between fork and exec a child of a threaded parent may not allocate.
std::vector<std::string> changed_environment(const EnvironmentChanges& changes) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(changes.begin(), changes.end(), [&](const auto& c) { return c.first == name; }))
      env.push_back(entry);
  }
  for (const auto& [name, value] : changes)
    if (value) env.push_back(name + "=" + *value);
  return env;
}

}  // namespace

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_path,
                             const EnvironmentChanges& environment) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (!log_path.parent_path().empty()) std::filesystem::create_directories(log_path.parent_path());
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    throw std::runtime_error("cannot open worker log " + log_path.string() + ": " + std::strerror(errno));
  signal(SIGPIPE, SIG_IGN);  // a dead worker must give EPIPE, not kill the parent

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_entries = changed_environment(environment);
  std::vector<char*> envp;
  for (const auto& e : env_entries) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Child: stdin from the parent, protocol on fd 3, stdout and stderr to the log.
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 3);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    if (environment.empty())
      execv(args[0], args.data());
    else
      execve(args[0], args.data(), envp.data());
    dprintf(2, "exec %s failed: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(log_fd);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
}

WorkerProcess::~WorkerProcess() {
  if (to_child_ >= 0) close(to_child_);
  kill();
  if (from_child_ >= 0) close(from_child_);
}

bool WorkerProcess::send_line(const std::string& line) {
  std::string data = line + "\n";
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = write(to_child_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

WorkerProcess::Status WorkerProcess::read_line(double timeout_s, std::string& line, int interrupt_fd) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Status::line;
    }
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left_ms <= 0) return Status::timeout;
    pollfd pfd[2] = {{from_child_, POLLIN, 0}, {interrupt_fd, POLLIN, 0}};
    const int ready = poll(pfd, interrupt_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left_ms, 1000)));
    if (ready <= 0) continue;  // EINTR (Ctrl-C): the case in flight finishes, then the run stops
    if (interrupt_fd >= 0 && (pfd[1].revents & POLLIN)) return Status::interrupted;
    if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char chunk[65536];
    const ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reap(true);
      return Status::exited;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void WorkerProcess::reap(bool wait) {
  if (pid_ <= 0 || wait_status_) return;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, wait ? 0 : WNOHANG);
  if (r == pid_) wait_status_ = status;
}

void WorkerProcess::kill() {
  if (pid_ > 0 && !wait_status_) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
}

std::string WorkerProcess::exit_description() {
  reap(false);
  if (!wait_status_) return "";
  const int s = *wait_status_;
  if (WIFEXITED(s)) return "exited with status " + std::to_string(WEXITSTATUS(s));
  if (WIFSIGNALED(s))
    return "killed by signal " + std::to_string(WTERMSIG(s)) + " (" + strsignal(WTERMSIG(s)) + ")";
  return "ended (wait status " + std::to_string(s) + ")";
}

std::string tail_of_file(const std::filesystem::path& path, std::size_t max_bytes, std::size_t from) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = std::max(from, size > max_bytes ? size - max_bytes : 0);
  if (start >= size) return "";
  in.seekg(static_cast<std::streamoff>(start));
  std::string out(size - start, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

std::string last_lines(const std::string& text, int lines) {
  const std::size_t last = text.find_last_not_of('\n');
  if (last == std::string::npos || lines <= 0) return "";
  std::size_t begin = 0;
  std::size_t pos = last;
  for (int n = 0; n < lines; ++n) {
    const std::size_t nl = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
    if (nl == std::string::npos) {
      begin = 0;
      break;
    }
    begin = nl + 1;
    pos = nl;
  }
  return text.substr(begin, last + 1 - begin);
}

}  // namespace kwb
