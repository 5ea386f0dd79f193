// The two ways of checking a timed sample's output (see timed_output.hpp), and their words.
#include "harness/worker/verify/timed_output.hpp"

#include <fmt/format.h>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/host_tensor.hpp"

namespace kwb {
namespace {

// Free device memory left beside a copy of the verified outputs: the variant's launches (a
// library's workspace), the compare's counters and the driver's own needs.
constexpr std::size_t kCopyHeadroomBytes = std::size_t{256} << 20;

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

std::size_t DeviceOutput::bytes() const { return static_cast<std::size_t>(count) * elem_size(elem); }

std::optional<std::string> copy_does_not_fit(std::size_t bytes, std::size_t free_bytes) {
  if (bytes + kCopyHeadroomBytes <= free_bytes) return std::nullopt;
  return fmt::format("a device copy of the verified outputs needs {} beside {} of headroom, {} free", gib(bytes),
                     gib(kCopyHeadroomBytes), gib(free_bytes));
}

std::string describe_difference(const std::string& output, const CompareCounts& c, std::int64_t elements) {
  if (c.differing == 0) return "";
  std::string s = fmt::format("output '{}': {} of {} elements differ from the verified output", output, c.differing,
                              elements);
  if (c.unwritten > 0) s += fmt::format(", {} of them never written (still poison)", c.unwritten);
  if (c.first_differing >= 0) s += fmt::format("; the first at element {}", c.first_differing);
  return s;
}

std::string describe_scan(const std::string& output, const ScanCounts& c, std::int64_t verified_nonfinite,
                          std::int64_t elements) {
  std::string s;
  if (c.unwritten > 0)
    s = fmt::format("output '{}': {} of {} elements never written (still poison)", output, c.unwritten, elements);
  if (c.nonfinite > verified_nonfinite) {
    if (!s.empty()) s += "; ";
    s += fmt::format("output '{}': {} NaN/Inf elements where the verified output had {}", output, c.nonfinite,
                     verified_nonfinite);
  }
  return s;
}

TimedOutputCheck::TimedOutputCheck(std::vector<DeviceOutput> outputs, bool varies_run_to_run, cudaStream_t stream)
    : outputs_(std::move(outputs)), varies_(varies_run_to_run) {
  if (!varies_) {
    // Each output's copy starts on an allocation's alignment (256 bytes), as the output itself
    // does: the comparison reads elements as words of their size, and an fp32 output after a bf16
    // one of an odd count would otherwise sit 2 bytes off (compute-sanitizer: misaligned reads).
    std::size_t total = 0;
    for (const DeviceOutput& o : outputs_) {
      copy_offsets_.push_back(total);
      total += (o.bytes() + kCopyAlignment - 1) / kCopyAlignment * kCopyAlignment;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (auto why = copy_does_not_fit(total, free_bytes)) {
      no_copy_reason_ = *why;
    } else if (const cudaError_t status = cudaMalloc(&copy_, std::max<std::size_t>(total, 1)); status != cudaSuccess) {
      (void)cudaGetLastError();  // out of memory after all: checked through the oracle instead
      copy_ = nullptr;
      no_copy_reason_ = fmt::format("allocating a device copy of the verified outputs ({}) failed: {}", gib(total),
                                    cudaGetErrorString(status));
    } else {
      for (std::size_t i = 0; i < outputs_.size(); ++i)
        cuda_check(cudaMemcpyAsync(static_cast<unsigned char*>(copy_) + copy_offsets_[i], outputs_[i].ptr,
                                   outputs_[i].bytes(), cudaMemcpyDeviceToDevice, stream),
                   "copy the verified outputs");
      cuda_check(cudaStreamSynchronize(stream), "synchronize after copying the verified outputs");
      return;
    }
  }
  for (const DeviceOutput& o : outputs_)
    verified_nonfinite_.push_back(scan_output(o.ptr, o.count, o.elem, stream).nonfinite);
}

TimedOutputCheck::~TimedOutputCheck() { cudaFree(copy_); }

void TimedOutputCheck::poison(cudaStream_t stream) const {
  for (const DeviceOutput& o : outputs_)
    cuda_check(cudaMemsetAsync(o.ptr, poison_byte(o.elem), o.bytes(), stream), "poison outputs (timed check)");
}

std::optional<std::string> TimedOutputCheck::check(cudaStream_t stream) {
  ++checks_;
  std::string wrong;
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const DeviceOutput& o = outputs_[i];
    std::string what;
    if (copy_) {
      what = describe_difference(
          o.name, compare_bits(o.ptr, static_cast<unsigned char*>(copy_) + copy_offsets_[i], o.count, o.elem, stream),
          o.count);
    } else {
      what = describe_scan(o.name, scan_output(o.ptr, o.count, o.elem, stream), verified_nonfinite_[i], o.count);
    }
    if (what.empty()) continue;
    if (!wrong.empty()) wrong += "; ";
    wrong += what;
  }
  if (wrong.empty()) return std::nullopt;
  return wrong;
}

std::string TimedOutputCheck::summary() const {
  const std::string checked =
      fmt::format("the last sample of each of {} batch{} ran on poisoned outputs", checks_, checks_ == 1 ? "" : "es");
  if (copy_) return "bit-identical to the verified output: " + checked + ", compared on the device in every element";
  const std::string how = checked +
                          ", scanned on the device for poison and NaN/Inf in every element, and the last one "
                          "re-verified against the oracle as the first launch was";
  if (varies_) return "within tolerance (the variant varies run to run): " + how;
  return "re-verified against the oracle (" + no_copy_reason_ + "): " + how;
}

}  // namespace kwb
