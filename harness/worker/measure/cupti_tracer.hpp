// CUPTI Activity tracing: exact GPU start/end of every kernel, tagged with the sample it ran in.
//
// Each sample pushes an external correlation id around its launches; CUPTI then emits one
// (external id, correlation id) pair per API call, and every CONCURRENT_KERNEL record carries
// the correlation id of the launch that made it. Joining the two gives each sample's kernels,
// however many the variant launches and on whatever stream. Only one CUPTI subscriber may
// exist per process: under Nsight Compute or Nsight Systems start() fails and the harness
// falls back to CUDA events (and says so in every record).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "harness/record/counters.hpp"
#include "harness/worker/measure/intervals.hpp"

namespace kwb {

struct KernelActivity {
  std::string name;  // demangled, without the parameter list
  KernelInterval interval;
  KernelLaunch launch;  // grid, block, registers and shared memory as launched
};

class CuptiTracer {
 public:
  static CuptiTracer& instance();

  // Registers the buffer callbacks and enables kernel and external-correlation records.
  // Call before the CUDA context exists. On failure returns false and sets *why.
  bool start(std::string* why);
  bool active() const { return active_; }
  void stop();
  // Activity records off and on again, for a while in which nothing is timed: CUPTI's range
  // profiler reads the SASS-instruction counters as zero while kernel activity is traced.
  // Both return false when CUPTI refused a kind (the caller must not trust what needed it).
  bool pause();
  bool resume();

  void push_sample(std::uint64_t external_id);
  void pop_sample();

  // Forces CUPTI to deliver everything recorded so far. The caller synchronizes the device
  // first (FlushAll issues no synchronization), and keeps this outside any timed interval.
  void flush();

  // Kernels of each external id delivered since the last call; clears them.
  std::map<std::uint64_t, std::vector<KernelActivity>> take_samples();
  // Records CUPTI dropped since the last call (a sample that lost records is invalid).
  std::size_t take_dropped();

  // Called from CUPTI's worker thread.
  void on_buffer(std::uint8_t* buffer, std::size_t valid_size);

 private:
  CuptiTracer() = default;
  bool active_ = false;
  std::mutex mutex_;
  std::map<std::uint32_t, std::uint64_t> external_by_correlation_;
  std::vector<std::pair<std::uint32_t, KernelActivity>> kernels_;  // (correlation id, kernel)
  std::map<std::string, std::string> demangled_;  // mangled -> short name, a small cache
};

std::string short_kernel_name(const char* mangled);

}  // namespace kwb
