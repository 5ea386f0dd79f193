// Worker lifecycle: hello, cases, watchdog, restart after a fault.
#include "harness/session/supervisor.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/worker/worker_protocol.hpp"
#include "harness/record/record_json.hpp"

namespace kwb {
namespace {

constexpr double kHelloTimeoutS = 120;  // context creation and CUPTI start-up
using Json = nlohmann::ordered_json;

}  // namespace

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;  // abandon then waits for the case
}

Supervisor::~Supervisor() {
  if (worker_) worker_->send_line(R"({"cmd":"exit"})");
  for (int fd : wake_)
    if (fd >= 0) close(fd);
}

void Supervisor::abandon() {
  if (wake_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = write(wake_[1], &byte, 1);  // full pipe: already woken
  }
}

bool Supervisor::take_abandon() {
  if (wake_[0] < 0) return false;
  bool woken = false;
  char buf[64];
  while (read(wake_[0], buf, sizeof buf) > 0) woken = true;
  return woken;
}

namespace {

std::vector<std::string> worker_arguments(const SupervisorOptions& o) {
  std::vector<std::string> args{o.worker_exe, "__worker", "--device", std::to_string(o.device), "--timer", o.timer};
  if (o.counters) args.push_back("--counters");
  return args;
}

}  // namespace

WorkerHello Supervisor::spawn() {
  std::error_code ec;
  const auto size = std::filesystem::file_size(options_.worker_log, ec);
  log_offset_ = ec ? 0 : static_cast<std::size_t>(size);
  worker_ = std::make_unique<WorkerProcess>(
      worker_arguments(options_),
      options_.worker_log, options_.environment);
  WorkerHello hello;
  std::string line;
  const auto status = worker_->read_line(kHelloTimeoutS, line);
  if (status != WorkerProcess::Status::line) {
    hello.no_gpu_reason = "the worker process did not start (" +
                          (status == WorkerProcess::Status::timeout ? std::string("no answer in time")
                                                                    : worker_->exit_description()) +
                          "); its log: " + last_lines(tail_of_file(options_.worker_log, 4096, log_offset_), 5);
    worker_.reset();
    return hello;
  }
  Json msg;
  try {
    msg = Json::parse(line);
  } catch (const std::exception&) {
    hello.no_gpu_reason = "the worker answered something unreadable: " + line.substr(0, 200);
    worker_->kill();
    worker_.reset();
    return hello;
  }
  hello.device_count = msg.value("device_count", -1);
  if (msg.value("event", "") == "hello") {
    hello.has_gpu = true;
    hello.device = device_info_from_json(msg.at("device"));
    hello.timer = msg.value("timer", "");
    hello.timer_note = msg.value("timer_note", "");
  } else {
    hello.no_gpu_reason = msg.value("reason", msg.value("message", line));
    worker_.reset();
  }
  return hello;
}

WorkerHello Supervisor::start() { return spawn(); }

std::optional<Ceilings> Supervisor::measure_ceilings(std::string* error) {
  if (!worker_ && !spawn().has_gpu) {
    if (error) *error = "no worker";
    return std::nullopt;
  }
  worker_->send_line(R"({"cmd":"ceilings"})");
  std::string line;
  if (worker_->read_line(600, line) == WorkerProcess::Status::line) {
    const Json msg = Json::parse(line);
    if (msg.value("event", "") == "ceilings") return ceilings_from_json(msg.at("ceilings"));
    if (error) *error = msg.value("message", line);
  } else if (error) {
    *error = "the worker ended while measuring ceilings (" + worker_->exit_description() + ")";
  }
  worker_->kill();
  worker_.reset();
  return std::nullopt;
}

std::optional<CopyCheck> Supervisor::check_copy_ceiling(std::string* error) {
  if (!worker_ && !spawn().has_gpu) {
    if (error) *error = "no worker";
    return std::nullopt;
  }
  worker_->send_line(R"({"cmd":"copy_check"})");
  std::string line;
  if (worker_->read_line(120, line) == WorkerProcess::Status::line) {
    try {
      const Json msg = Json::parse(line);
      if (msg.value("event", "") == "copy_check")
        return CopyCheck{msg.at("copy_gbps").get<double>(), msg.at("method").get<std::string>()};
      if (error) *error = msg.value("message", line);
    } catch (const std::exception& e) {
      if (error) *error = std::string("unreadable answer from the worker: ") + e.what();
    }
  } else if (error) {
    *error = "the worker ended while checking the copy ceiling (" + worker_->exit_description() + ")";
  }
  worker_->kill();
  worker_.reset();
  return std::nullopt;
}

bool Supervisor::release_device() {
  if (!worker_) return true;
  worker_->send_line(R"({"cmd":"exit"})");
  std::string rest;
  // Until it has exited: the driver frees a process's device memory when its context goes. A
  // worker that does not end in time is killed, which frees it as surely.
  while (worker_->read_line(30, rest) == WorkerProcess::Status::line) {
  }
  worker_->kill();
  worker_.reset();
  released_ = true;
  return true;
}

CaseRecord Supervisor::lost_case(const CaseRequest& req, const std::string& what) {
  CaseRecord rec = record_for(req);
  rec.disposition = Disposition::failed;
  const std::string log = last_lines(tail_of_file(options_.worker_log, 4096, log_offset_), 4);
  rec.reason = what + (log.empty() ? "" : "; worker log: " + log);
  return rec;
}

CaseRecord Supervisor::run_case(const CaseRequest& req) {
  // An abandon() that came before this call ends this case (the caller meant the case it was
  // about to start); one that comes after the record arrived has nothing left to end.
  CaseRecord rec = run_case_in_worker(req);
  take_abandon();
  return rec;
}

CaseRecord Supervisor::run_case_in_worker(const CaseRequest& req) {
  if (!worker_) {
    if (!std::exchange(released_, false)) ++restarts_;
    const WorkerHello hello = spawn();
    if (!hello.has_gpu) return lost_case(req, "could not restart the worker: " + hello.no_gpu_reason);
  }
  // The hint first: the worker reads it before it starts the case (no answer comes for it).
  if (next_group_) {
    worker_->send_line(dump_json(Json{{"cmd", "prefetch"}, {"request", to_json(*next_group_)}}));
    next_group_.reset();
  }
  if (!worker_->send_line(dump_json(Json{{"cmd", "case"}, {"request", to_json(req)}}))) {
    worker_.reset();
    return lost_case(req, "the worker was gone before the case started");
  }
  std::optional<CaseRecord> record;
  bool worker_exiting = false;
  std::string line;
  while (!record) {
    const auto status = worker_->read_line(options_.case_timeout_s, line, wake_[0]);
    if (status == WorkerProcess::Status::interrupted && take_abandon()) {
      worker_->kill();
      worker_.reset();
      return lost_case(req, "cancelled: abandoned while it ran; the worker was ended");
    }
    if (status == WorkerProcess::Status::interrupted) continue;
    if (status == WorkerProcess::Status::timeout) {
      worker_->kill();
      worker_.reset();
      return lost_case(req, fmt::format("no result after {:.0f} s: the watchdog ended the worker "
                                        "(a hung kernel?); raise --case-timeout for slow cases",
                                        options_.case_timeout_s));
    }
    if (status == WorkerProcess::Status::exited) {
      const std::string how = worker_->exit_description();
      worker_.reset();
      return lost_case(req, "the worker process " + how + " during the case");
    }
    const Json msg = Json::parse(line);
    const std::string event = msg.value("event", "");
    if (event == "record") {
      record = case_from_json(msg.at("record"));
      worker_exiting = msg.value("worker_exiting", false);
    }
    // "started", "prepared" and anything else: keep waiting for the record, the watchdog's time
    // started again by each line (worker_protocol.hpp).
  }
  // A fault costs the worker its context: it exits right after the record. Reap it now so the
  // next case starts a fresh one instead of writing into a dead pipe.
  if (worker_exiting) {
    std::string rest;
    worker_->read_line(10, rest);  // until it has exited
    worker_->kill();
    worker_.reset();
  }
  return *record;
}

}  // namespace kwb
