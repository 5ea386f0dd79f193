// Runs the real `kwb` binary as a fuzzer needs it: in a process group of its own (a hang takes its
// worker down with it), with every GPU hidden, stdin and stdout on /dev/null, stderr kept, a
// wall-clock limit, and optionally a bound on its address space (memory without bound shows as a
// failed allocation instead of a machine brought to its knees); and the loop that runs a fuzzer's
// cases on two threads and tallies them. Shared by the flag fuzzer and the file fuzzer.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/temp_dir.hpp"

namespace kwb::test {

struct ProcessOutcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool hung = false;
  std::string err;     // what it wrote to stderr
};

// The environment with every GPU hidden: on a machine that has one, a fuzzed run that passes
// validation must still end at "no GPU" (exit 3) instead of measuring for hours.
inline std::vector<std::string> environment_without_gpus() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) env.push_back(*e);
  env.push_back("CUDA_VISIBLE_DEVICES=");
  return env;
}

// Runs argv in `cwd`; `max_address_bytes` 0: unbounded.
inline ProcessOutcome run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                                  double timeout_s, std::uint64_t max_address_bytes = 0) {
  const std::string err_path = (cwd / "stderr.txt").string();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  static const std::vector<std::string> env = environment_without_gpus();
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  ProcessOutcome o;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (chdir(cwd.c_str()) != 0) _exit(120);
    const int null_fd = open("/dev/null", O_RDWR);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null_fd < 0 || err_fd < 0) _exit(121);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(err_fd, 2);
    if (max_address_bytes) {
      const rlimit limit{max_address_bytes, max_address_bytes};
      setrlimit(RLIMIT_AS, &limit);
    }
    execve(args[0], args.data(), envp.data());
    _exit(122);
  }
  if (pid < 0) {
    o.err = "fork failed";
    return o;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      o.hung = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(-pid, SIGKILL);  // a worker left behind by a parent that exited
  if (!o.hung) {
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  }
  std::ifstream in(err_path);
  std::stringstream text;
  text << in.rdbuf();
  o.err = text.str();
  return o;
}

// A fuzzer's seed or run count from the environment (KWB_FUZZ_SEED, KWB_FUZZ_RUNS), else `fallback`.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// What every fuzzed run is judged for, whatever it fed the binary: a hang, a signal, and an exit 2
// that says nothing on stderr. Empty: none of these.
inline std::string basic_problem(const ProcessOutcome& o, double timeout_s) {
  if (o.hung) return "hung (no exit within " + std::to_string(static_cast<int>(timeout_s)) + " s)";
  if (o.signal) return "killed by signal " + std::to_string(o.signal);
  if (o.exit_code == 2 && o.err.find_first_not_of(" \n") == std::string::npos) return "exit 2 with nothing on stderr";
  return {};
}

// A fuzzer's runs, told apart: what failed (one line each) and how many exited 0 to 3.
struct FuzzTally {
  std::vector<std::string> failures;
  int exits[4] = {0, 0, 0, 0};
};

// Runs cases 0..count-1 on two threads, each in a temp working folder of its own:
// `run_case(i, cwd)` runs case i and returns its outcome and what is wrong with it (empty: nothing).
inline FuzzTally run_fuzz_cases(
    std::size_t count,
    const std::function<std::pair<ProcessOutcome, std::string>(std::size_t, const std::filesystem::path&)>& run_case) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  FuzzTally tally;
  auto worker = [&] {
    TempDir cwd;
    for (std::size_t i = next++; i < count; i = next++) {
      const auto [outcome, failure] = run_case(i, cwd.path());
      std::lock_guard lock(mutex);
      if (!failure.empty()) tally.failures.push_back(failure);
      else if (outcome.exit_code >= 0 && outcome.exit_code <= 3) ++tally.exits[outcome.exit_code];
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  return tally;
}

// An argument vector as a failure message shows it (long values cut).
inline std::string shown_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += " '" + (a.size() > 80 ? a.substr(0, 77) + "..." : a) + "'";
  return s;
}

}  // namespace kwb::test
