// The fake GPU worker of the session tests, shared with the desktop app's live-run tests
// (tests/gui/live_run_test.cpp): a session driven by it runs on CPU, deterministic, with a
// per-case delay the test controls, so progress, streaming and cancel are proven without a GPU.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "harness/session/case_executor.hpp"

namespace kwb::fakes {

// A fake worker: says hello as told, "runs" each case by waiting `delay` (or until abandoned)
// and returns a passed record with a seeded random median.
class FakeExecutor : public CaseExecutor {
 public:
  struct Shared {  // outlives the executor (the session owns and destroys it)
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<int> started;  // case indices, in the order run_case saw them
    int ceilings_measured = 0;
    // The short copy's reading (check_copy_ceiling); nullopt: it cannot run.
    std::optional<double> short_copy_gbps;
    int copy_checks = 0;
    bool hello_called = false;
  };

  FakeExecutor(std::shared_ptr<Shared> shared, std::chrono::milliseconds delay, std::uint64_t seed)
      : shared_(std::move(shared)), delay_(delay), rng_(seed) {
    hello_.has_gpu = true;
    hello_.device_count = 1;
    hello_.device.name = "Fake GPU";
    hello_.device.uuid = "GPU-fake";
    hello_.device.global_mem_bytes = std::int64_t(80) << 30;
    hello_.device.l2_bytes = 50 << 20;
    hello_.device.sm_count = 132;
    hello_.timer = "cupti";
  }

  WorkerHello hello_;
  std::chrono::milliseconds slow_case_delay_{0};  // for the case at slow_case_
  int slow_case_ = -1;
  // The counters every passed record carries (as the worker's counter passes would give them),
  // for cases that ask for some; none: records without counters.
  std::optional<CaseCounters> counters_;
  // When set, each case's counters come from it instead (per case: different reasons, say).
  std::function<std::optional<CaseCounters>(const CaseRequest&)> counters_for_;

  WorkerHello start() override {
    std::lock_guard lock(shared_->mutex);
    shared_->hello_called = true;
    return hello_;
  }

  std::optional<Ceilings> measure_ceilings(std::string*) override {
    std::lock_guard lock(shared_->mutex);
    ++shared_->ceilings_measured;
    Ceilings c;
    c.source = "measured";
    c.dram_copy_gbps = 3000;
    c.dram_read_gbps = 3300;
    c.fp32_tflops = 60;
    return c;
  }

  std::optional<CopyCheck> check_copy_ceiling(std::string* error) override {
    std::lock_guard lock(shared_->mutex);
    ++shared_->copy_checks;
    if (!shared_->short_copy_gbps) {
      if (error) *error = "the fake worker has no short copy";
      return std::nullopt;
    }
    return CopyCheck{*shared_->short_copy_gbps, "copy_blocks<1,1> 1024MiB dirty"};
  }

  CaseRecord run_case(const CaseRequest& request) override {
    {
      std::lock_guard lock(shared_->mutex);
      shared_->started.push_back(request.index);
    }
    shared_->changed.notify_all();
    const auto delay = request.index == slow_case_ ? slow_case_delay_ : delay_;
    std::unique_lock lock(shared_->mutex);
    const bool abandoned = shared_->changed.wait_for(lock, delay, [&] { return abandon_; });
    CaseRecord rec = record_for(request);
    if (abandoned) {
      abandon_ = false;
      rec.disposition = Disposition::failed;
      rec.reason = "cancelled: abandoned while it ran; the worker was ended";
      return rec;
    }
    rec.disposition = Disposition::passed;
    rec.timing = TimingResult{};
    rec.timing->span.median = std::uniform_real_distribution<double>(20, 900)(rng_);
    rec.timing->span.count = 10;
    if (!request.counter_metrics.empty()) rec.counters = counters_for_ ? counters_for_(request) : counters_;
    return rec;
  }

  void abandon() override {
    {
      std::lock_guard lock(shared_->mutex);
      abandon_ = true;
    }
    shared_->changed.notify_all();
  }

  int restarts() const override { return 0; }

 private:
  std::shared_ptr<Shared> shared_;
  std::chrono::milliseconds delay_;
  std::mt19937_64 rng_;
  bool abandon_ = false;
};

}  // namespace kwb::fakes
