// What the case runner's two source files share (case_runner.cpp: the phases of a case;
// case_runner_prefetch.cpp: the next group prepared ahead): a device allocation, the free device
// memory, why a case cannot run here, and the per-stage host timer. Private to the case runner.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "harness/catalogue/case_request.hpp"
#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/record/record.hpp"
#include "harness/worker/case_runner.hpp"

namespace kwb {
namespace case_runner_detail {

struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n) : bytes(n) {
    if (n) cuda_check(cudaMalloc(&ptr, n), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// cudaMemGetInfo's free bytes.
inline std::size_t free_device_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return free_bytes;
}

// Why this build or this request cannot run the case at all (nullopt: it can), before anything
// touches the device.
std::optional<std::string> refusal(const Op& op, const Variant& variant, const CaseRequest& req);

}  // namespace case_runner_detail

// Charges host time to the stage of the case now running (CaseStageTimes): enter() closes the
// stage before. A stage that throws keeps its time: the next enter() after the catch closes it.
class CaseRunner::StageTimer {
 public:
  explicit StageTimer(CaseStageTimes& times) : times_(times) {}
  void enter(double CaseStageTimes::*stage) {
    const auto now = std::chrono::steady_clock::now();
    times_.*current_ += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    current_ = stage;
  }
  // Host time spent for this case's group on the background thread (not wall time of the case).
  void add_background_oracle(double ms) { times_.oracle_background_ms += ms; }

 private:
  CaseStageTimes& times_;
  double CaseStageTimes::*current_ = &CaseStageTimes::setup_ms;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace kwb
