// The confirm run, in the order it refuses before measuring: suspects, settings, builds, cases the
// builds can plan, the GPU; then the rounds and the confirmed verdicts (see compare_confirm.hpp).
#include "cli/compare_confirm.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/confirm_builds.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/derive/ceilings.hpp"
#include "harness/record/version.hpp"
#include "harness/session/interleaved_runner.hpp"
#include "harness/session/supervisor.hpp"
#include "harness/worker/test_slowdown.hpp"
#include "reports/compare/confirm_decision.hpp"
#include "reports/compare/confirm_plan.hpp"
#include "reports/compare/match.hpp"

namespace kwb::cli {
namespace {

// KWB_TEST_SLOWDOWN as `report` was measured with it: set to its value, or removed.
EnvironmentChanges slowdown_environment(const Report& report, const std::string& name) {
  return {{kTestSlowdownEnv, test_slowdown_of(report, name)}};
}

std::string device_name(const Report& r) { return r.run.device ? r.run.device->name : ""; }

// The GPU both workers found, checked against the reports' (a confirmed verdict judges the GPU
// the reports were measured on); throws ConfirmRefusal.
void check_hellos(const WorkerHello& base, const WorkerHello& next, const Report& base_report) {
  for (const WorkerHello* h : {&base, &next})
    if (!h->has_gpu)
      throw ConfirmRefusal(fmt::format(
          "--confirm: no usable CUDA GPU on this machine ({}): --confirm re-measures the suspect cases on this "
          "machine's GPU. Run kwb compare --confirm on a machine with the GPU the reports were measured on ({}), or "
          "drop --confirm to judge from the reports alone",
          h->no_gpu_reason, device_name(base_report).empty() ? "not recorded" : device_name(base_report)));
  const std::string reports_gpu = device_name(base_report);
  if (!reports_gpu.empty() && base.device.name != reports_gpu)
    throw ConfirmRefusal(fmt::format("--confirm: this machine's GPU is {}, but the reports were measured on {}: a "
                                     "confirmed verdict must come from the GPU the reports judge. Run --confirm on "
                                     "a {}, or drop --confirm",
                                     base.device.name, reports_gpu, reports_gpu));
  if (base.timer != next.timer)
    throw ConfirmRefusal(fmt::format("--confirm: BASE's worker times with {} and NEW's with {}: both sides must use "
                                     "one timer (is a profiler attached to one of them?); run without a profiler",
                                     base.timer, next.timer));
}

// The rounds are judged here, by this kwb's work model of the case (figures and the roof rule, as
// `kwb run` judges its cases), so this kwb must know the op and its shape; throws ConfirmRefusal.
void check_judgeable(const CaseRequest& request, const std::string& key) {
  const Op* op = Registry::instance().find_op(request.op);
  std::string problem = op ? "" : fmt::format("it has no op '{}'", request.op);
  if (op) {
    try {
      op->work(request.shape, request.dtype);
    } catch (const std::exception& e) {
      problem = fmt::format("its op '{}' has no work model at this shape ({})", request.op, e.what());
    }
  }
  if (!problem.empty())
    throw ConfirmRefusal(fmt::format("--confirm: this kwb derives and judges each round of case {} against its roofs, "
                                     "but {}. Run kwb compare --confirm with the kwb of BASE's or NEW's build",
                                     key, problem));
}

}  // namespace

RoundProgress::RoundProgress(std::vector<std::string> keys, int rounds)
    : keys_(std::move(keys)), rounds_(static_cast<std::size_t>(std::max(rounds, 1))) {
  status_.total = keys_.size() * rounds_;
  if (!keys_.empty()) status_.current = running(0, 1);
}

std::string RoundProgress::running(std::size_t case_index, std::size_t round) const {
  return fmt::format("{} round {}/{}", keys_[case_index], round, rounds_);
}

ProgressStatus RoundProgress::after_round(std::size_t case_index, std::size_t rounds_done, bool lost) {
  const bool case_over = lost || rounds_done >= rounds_;
  status_.done = std::min(status_.total, case_index * rounds_ + (case_over ? rounds_ : rounds_done));
  status_.failed += lost;
  status_.current = !case_over                       ? running(case_index, rounds_done + 1)
                    : case_index + 1 < keys_.size() ? running(case_index + 1, 1)
                                                    : "";
  return status_;
}

std::optional<int> confirm_suspects(CompareReport& report, const Report& base, const Report& next,
                                    const DecisionSettings& settings, const ConfirmFlags& flags,
                                    const std::string& self_exe, ProgressDisplay& progress) {
  const std::vector<std::string> keys = suspect_keys(report);
  report.confirm = ConfirmInfo{0, flags.rounds, "", "", ""};
  if (keys.empty()) {
    progress.line("kwb compare: --confirm: no case to re-measure (no slower, faster or ambiguous verdict)");
    return std::nullopt;
  }
  std::filesystem::path log_dir;
  try {
    // 1. What to measure, under which settings.
    if (auto problem = confirm_settings_problem(base, next, report.base_name, report.new_name))
      throw ConfirmRefusal(*problem);
    std::map<std::string, const CaseRecord*> base_cases;
    for (const CaseRecord& r : base.cases) base_cases[case_key(r)] = &r;
    std::vector<CaseRequest> requests;
    for (const std::string& key : keys) {
      requests.push_back(confirm_request(*base_cases.at(key), base, report.base_name, static_cast<int>(requests.size())));
      check_judgeable(requests.back(), key);
    }

    // 2. Each side's build, and that it can measure every suspect.
    SideBuild base_build = resolve_side_build("BASE", "--base-kwb", flags.base_kwb, base.run.git_sha,
                                              report.base_name, self_exe, kGitSha);
    SideBuild new_build =
        resolve_side_build("NEW", "--new-kwb", flags.new_kwb, next.run.git_sha, report.new_name, self_exe, kGitSha);
    base_build.environment = slowdown_environment(base, report.base_name);
    new_build.environment = slowdown_environment(next, report.new_name);
    const bool one_build = base_build.kwb == new_build.kwb && base_build.environment == new_build.environment;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      check_build_measures(base_build, requests[i], keys[i]);
      if (!one_build) check_build_measures(new_build, requests[i], keys[i]);
    }

    // 3. The two workers on this GPU.
    log_dir = std::filesystem::temp_directory_path() / fmt::format("kwb-confirm-{}", ::getpid());
    auto supervisor = [&](const SideBuild& b, const char* log) {
      return Supervisor(SupervisorOptions{.worker_exe = b.kwb, .device = 0, .timer = "auto",
                                          .case_timeout_s = flags.case_timeout_s, .worker_log = log_dir / log,
                                          .environment = b.environment});
    };
    Supervisor base_worker = supervisor(base_build, "base-worker.log");
    Supervisor new_worker = supervisor(new_build, "new-worker.log");
    const WorkerHello base_hello = base_worker.start();
    const WorkerHello new_hello = new_worker.start();
    check_hellos(base_hello, new_hello, base);
    report.confirm = ConfirmInfo{static_cast<int>(keys.size()), flags.rounds, base_hello.device.name,
                                 base_build.label(), new_build.label()};
    progress.line(fmt::format("kwb compare: --confirm: re-measuring {} case{} on {}, {} interleaved rounds each, "
                              "timer {}; BASE by {}, NEW by {}",
                              keys.size(), keys.size() == 1 ? "" : "s", base_hello.device.name, flags.rounds,
                              base_hello.timer, base_build.label(), new_build.label()));

    // 4. The rounds, each record judged as `kwb run` judges its cases (figures and the roof rule,
    //    with the ceilings BASE's cases were derived with: the reports' GPU, checked above), then
    //    each suspect's confirmed verdict.
    const RoundJudging judging{base.run.ceilings ? *base.run.ceilings : datasheet_ceilings(base_hello.device),
                               base_hello.device.l2_bytes};
    bool lost = false;
    std::vector<bool> told_alone(keys.size(), false);
    RoundProgress rounds_shown(keys, flags.rounds);
    progress.status(rounds_shown.status());
    const std::vector<InterleavedCase> measured =
        run_interleaved(base_worker, new_worker, requests, flags.rounds, judging, [&](const InterleavedCase& c) {
          const InterleavedRound& r = c.rounds.back();
          const auto i = static_cast<std::size_t>(c.request.index);
          if (c.sides_alone && !told_alone[i]) {
            told_alone[i] = true;
            progress.line(fmt::format("  [{}/{}] {}: does not fit in device memory beside the other build's worker; "
                                      "each side measures it with the other's worker stopped",
                                      i + 1, keys.size(), keys[i]));
          }
          const bool round_lost = !timed_record(r.base) || !timed_record(r.next);
          const std::string line =
              fmt::format("  [{}/{}] round {}/{} {}: BASE {}, NEW {}", i + 1, keys.size(), c.rounds.size(),
                          flags.rounds, keys[i],
                          timed_record(r.base) ? fmt::format("{:.4g} us", r.base.timing->span.median)
                                               : std::string(to_string(r.base.disposition)),
                          timed_record(r.next) ? fmt::format("{:.4g} us", r.next.timing->span.median)
                                               : std::string(to_string(r.next.disposition)));
          // A line per round in a log; under a bar only a round not timed stays (it ends its case).
          if (progress.style() == ProgressStyle::lines || (progress.style() == ProgressStyle::bar && round_lost))
            progress.line(line);
          progress.status(rounds_shown.after_round(i, c.rounds.size(), round_lost));
          lost = lost || round_lost;
        });
    for (std::size_t i = 0; i < keys.size(); ++i)
      for (ComparedCase& c : report.cases)
        if (c.key == keys[i]) apply_confirmation(c, measured[i], settings);
    summarise(report);
    std::error_code ec;
    if (lost)
      progress.line(fmt::format("kwb compare: --confirm: a round was not timed on a side; the workers' logs are in {}",
                                log_dir.string()));
    else
      std::filesystem::remove_all(log_dir, ec);
  } catch (const std::runtime_error& e) {  // ConfirmRefusal, ReportError: what, where, how to fix
    std::error_code ec;
    if (!log_dir.empty()) std::filesystem::remove_all(log_dir, ec);
    progress.line(std::string("kwb compare: ") + e.what());
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace kwb::cli
