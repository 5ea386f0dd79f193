// Checks that the timed launches compute what verification saw: the verification half of "what is
// timed is what was verified".
//
// The last sample of every batch runs on poisoned outputs (harness/worker/measure/measure.hpp);
// after the batch, what that sample wrote is checked here, in one of two ways:
//  - bit for bit (deterministic variants): against a device copy of the verified outputs, every
//    element of every output (harness/worker/verify/device_compare.hpp). A variant whose result
//    depends only on its inputs must write the same bits every time.
//  - through the oracle: variants that declare run-to-run variation (Variant::varies_run_to_run:
//    float atomics, rows handed out by demand into split sums) may differ in the last bits, and a
//    deterministic variant whose copy does not fit in free device memory. After every batch the
//    device scan counts poison and NaN/Inf over every element (a sample that skipped work leaves
//    poison); after the last batch the caller re-verifies the output against the oracle with the
//    op's own tolerance, as the first launch was (needs_oracle_recheck()).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/elem_type.hpp"
#include "harness/worker/verify/device_compare.hpp"
#include "harness/worker/verify/device_scan.hpp"

namespace kwb {

// One output tensor on the device.
struct DeviceOutput {
  std::string name;
  void* ptr = nullptr;
  std::int64_t count = 0;  // elements
  ElemType elem = ElemType::fp32;
  std::size_t bytes() const;
};

class TimedOutputCheck {
 public:
  // Run right after verification passed, while the outputs hold the verified values: copies them
  // (deterministic variants, when the copy fits) or scans them (the NaN/Inf counts a timed
  // output may match). Throws CudaError.
  TimedOutputCheck(std::vector<DeviceOutput> outputs, bool varies_run_to_run, cudaStream_t stream);
  ~TimedOutputCheck();
  TimedOutputCheck(const TimedOutputCheck&) = delete;
  TimedOutputCheck& operator=(const TimedOutputCheck&) = delete;

  // Before the checked sample: every output to the poison pattern of its type.
  void poison(cudaStream_t stream) const;
  // After its batch: what it got wrong, nullopt when nothing.
  std::optional<std::string> check(cudaStream_t stream);

  bool bit_for_bit() const { return copy_ != nullptr; }
  // The caller re-verifies the last checked sample's output against the oracle.
  bool needs_oracle_recheck() const { return !bit_for_bit(); }
  std::int64_t checks() const { return checks_; }
  // How the timed output was checked, for the record (TimingResult::output_check).
  std::string summary() const;

 private:
  std::vector<DeviceOutput> outputs_;
  bool varies_ = false;
  void* copy_ = nullptr;           // the verified outputs, one after another; null: through the oracle
  std::vector<std::size_t> copy_offsets_;  // where each output's copy starts (kCopyAlignment apart)
  static constexpr std::size_t kCopyAlignment = 256;
  std::string no_copy_reason_;     // why a deterministic variant is checked through the oracle
  std::vector<std::int64_t> verified_nonfinite_;  // per output, oracle mode
  std::int64_t checks_ = 0;
};

// What a checked output got wrong, in words (pure; CPU-tested).
std::string describe_difference(const std::string& output, const CompareCounts& counts, std::int64_t elements);
std::string describe_scan(const std::string& output, const ScanCounts& counts, std::int64_t verified_nonfinite,
                          std::int64_t elements);

// Room for a device copy of `bytes`: nullopt when it fits in `free_bytes` beside the headroom kept
// for the variant and the driver, else why not (pure; CPU-tested).
std::optional<std::string> copy_does_not_fit(std::size_t bytes, std::size_t free_bytes);

}  // namespace kwb
