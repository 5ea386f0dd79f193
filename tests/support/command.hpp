// Runs a shell command as a user would and captures what it prints, for the tests that drive
// the real `kwb` binary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kwb::test {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed by one
  std::string output;  // stdout and stderr together
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

}  // namespace kwb::test
