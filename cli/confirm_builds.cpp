// Finding and checking each side's kwb (see confirm_builds.hpp).
#include "cli/confirm_builds.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "harness/catalogue/case_identity.hpp"

namespace kwb::cli {
namespace {

bool known_sha(const std::string& sha) { return !sha.empty() && sha != "unknown"; }

// The first line of a program's message that says something (CLI11 and kwb print one).
std::string first_message_line(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
  return "(it printed nothing)";
}

}  // namespace

std::string SideBuild::label() const { return fmt::format("{} ({})", kwb, git_sha); }

CapturedRun capture_run(const std::vector<std::string>& argv, const EnvironmentChanges& environment, double timeout_s) {
  CapturedRun result;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  std::vector<std::string> env_entries;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(environment.begin(), environment.end(), [&](const auto& c) { return c.first == name; }))
      env_entries.push_back(entry);
  }
  for (const auto& [name, value] : environment)
    if (value) env_entries.push_back(name + "=" + *value);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_entries) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    result.output = fmt::format("cannot start {}: {}", argv[0], std::strerror(spawned));
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000))) <= 0) continue;
    char chunk[8192];
    const ssize_t n = read(out[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(chunk, static_cast<std::size_t>(n));
  }
  close(out[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) {
    result.output += fmt::format("\n(no end after {:.0f} s: ended)", timeout_s);
    return result;
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::optional<std::string> sha_from_version_output(const std::string& output) {
  // Exactly one line "VERSION (SHA)", as `kwb --version` prints it; another program's --version
  // ("true (GNU coreutils) 9.1") is not a kwb's.
  std::string line = output.substr(0, output.find('\n'));
  const auto open = line.find(" ("), space = line.find(' ');
  if (line.empty() || open == std::string::npos || open != space || line.back() != ')') return std::nullopt;
  std::string sha = line.substr(open + 2, line.size() - open - 3);
  if (sha.empty() || sha.find_first_of(" ()") != std::string::npos) return std::nullopt;
  return sha;
}

SideBuild resolve_side_build(const std::string& side, const std::string& flag, const std::string& flag_path,
                             const std::string& report_sha, const std::string& report_name,
                             const std::string& self_exe, const std::string& self_sha) {
  SideBuild b;
  b.side = side;
  if (flag_path.empty()) {
    if (!known_sha(report_sha) || !known_sha(self_sha) || report_sha != self_sha)
      throw ConfirmRefusal(fmt::format(
          "--confirm: {} ({}) was measured by a kwb built from {}, and this kwb is built from {}: {}'s cases must be "
          "re-measured by the build that produced them. Pass {} PATH, a kwb built from {} (for example: git worktree "
          "add ../kwb-{} {} and build it there)",
          side, report_name, known_sha(report_sha) ? report_sha : "an unrecorded revision (git_sha unknown)",
          known_sha(self_sha) ? self_sha : "an unrecorded revision (git_sha unknown)", side, flag,
          known_sha(report_sha) ? report_sha : "the revision that measured it", known_sha(report_sha) ? report_sha : "REV",
          known_sha(report_sha) ? report_sha : "REV"));
    b.kwb = self_exe;
    b.git_sha = self_sha;
    return b;
  }
  std::error_code ec;
  const std::filesystem::path path(flag_path);
  if (!std::filesystem::is_regular_file(path, ec) || access(flag_path.c_str(), X_OK) != 0)
    throw ConfirmRefusal(fmt::format("{} {}: not an executable file; pass the path of a kwb binary (e.g. "
                                     "../kwb-{}/build/kwb)", flag, flag_path, known_sha(report_sha) ? report_sha : "base"));
  b.kwb = std::filesystem::absolute(path, ec).string();
  const CapturedRun version = capture_run({b.kwb, "--version"}, {}, 30);
  const auto sha = version.exit_code == 0 ? sha_from_version_output(version.output) : std::nullopt;
  if (!sha)
    throw ConfirmRefusal(fmt::format("{} {}: `{} --version` did not print a kwb version ('{}'); pass a kwb binary",
                                     flag, flag_path, flag_path, first_message_line(version.output)));
  b.git_sha = *sha;
  if (known_sha(*sha) && known_sha(report_sha) && *sha != report_sha)
    throw ConfirmRefusal(fmt::format("{} {}: this kwb is built from {}, but {} ({}) was measured by one built from "
                                     "{}; pass a kwb built from {}",
                                     flag, flag_path, *sha, side, report_name, report_sha, report_sha));
  return b;
}

std::vector<std::string> list_case_args(const CaseRequest& r) {
  std::vector<std::string> a = {"run", "--op", r.op, "--variant", r.variant, "--dtype", std::string(to_string(r.dtype))};
  for (const auto& [name, value] : r.shape.axes) a.insert(a.end(), {"--axis", name + "=" + value.text()});
  for (const auto& [name, value] : r.tunables) a.insert(a.end(), {"--axis", name + "=" + std::to_string(value)});
  a.insert(a.end(), {"--mode", std::string(to_string(r.mode)), "--preset", r.preset, "--seed", std::to_string(r.seed)});
  if (r.mode == Mode::cold) a.insert(a.end(), {"--flush", std::string(to_string(r.flush))});
  // Only when not the default: a build from before graph launches plans stream cases without it.
  if (r.launch != LaunchKind::stream) a.insert(a.end(), {"--launch", std::string(to_string(r.launch))});
  if (r.include_test_variants) a.push_back("--include-test-variants");
  a.push_back("--list-cases");
  return a;
}

void check_build_measures(const SideBuild& build, const CaseRequest& request, const std::string& key) {
  std::vector<std::string> argv = {build.kwb};
  for (std::string& a : list_case_args(request)) argv.push_back(std::move(a));
  const CapturedRun planned = capture_run(argv, build.environment);
  std::istringstream lines(planned.output);
  std::string line;
  bool listed = false;
  while (std::getline(lines, line)) listed = listed || line == key;
  if (planned.exit_code == 0 && listed) return;
  const std::string flag = build.side == "BASE" ? "--base-kwb" : "--new-kwb";
  std::string command = build.kwb;
  for (const std::string& a : list_case_args(request)) command += " " + a;
  throw ConfirmRefusal(fmt::format(
      "--confirm: {}'s build {} cannot re-measure case {}: {}. Its report holds the case, so this is not the build "
      "that measured it: pass {} PATH, the kwb that did (the check that failed: {})",
      build.side, build.label(), key,
      planned.exit_code == 0 ? "it plans other cases for the case's flags" : first_message_line(planned.output), flag,
      command));
}

}  // namespace kwb::cli
