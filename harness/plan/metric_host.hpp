// The counters a GPU chip has, and the configuration that collects some of them: the CUPTI
// Profiler Host API, which needs no GPU. The run checks every requested metric against the
// chip before a case starts (unknown names with a did-you-mean), says how many replay passes
// each case will cost, and the worker builds its range-profiler configuration and evaluates the
// counter data here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kwb {

// A refusal of the host API (an unknown chip, a metric it cannot collect): what, and how to fix it.
struct CounterError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Chip names the installed CUPTI knows ("GA100", "GH100", ...); empty when its host API cannot
// be used here (host_api_problem says why).
std::vector<std::string> supported_chips();

// Why CUPTI's profiler host API cannot be used on this machine (its libnvperf_host missing or
// refusing to load: it lists no chip), with how to fix it; nullopt when it can.
std::optional<std::string> host_api_problem();

struct MetricInfo {
  std::string name;         // base name: dram__bytes_read
  std::string description;  // "# of bytes read from DRAM"
  std::string unit;         // "byte", "cycle", ...
  std::string type;         // "counter", "ratio" or "throughput"
};

// The metrics of one chip. Throws CounterError for a chip CUPTI does not know.
class MetricCatalog {
 public:
  explicit MetricCatalog(std::string chip);
  ~MetricCatalog();
  MetricCatalog(const MetricCatalog&) = delete;
  MetricCatalog& operator=(const MetricCatalog&) = delete;

  const std::string& chip() const { return chip_; }
  // Every base metric, sorted by name.
  const std::vector<MetricInfo>& base_metrics() const { return bases_; }
  // nullopt when the chip can collect `metric` (a full name: base and rollup); otherwise why
  // not, with the closest base name or rollup.
  std::optional<std::string> problem(const std::string& metric) const;
  // Replay passes collecting `metrics` together costs on this chip (without an availability
  // image: the GPU's own may only ever add passes for counters it lacks).
  int passes(const std::vector<std::string>& metrics) const;
  // The passes a case collecting `metrics` costs as the worker collects them: the per-kernel
  // metrics' and the whole-launch metrics' (counter_sets.hpp split_by_range), added.
  int passes_as_collected(const std::vector<std::string>& metrics) const;

 private:
  std::string chip_;
  std::vector<MetricInfo> bases_;
};

// A configuration that collects `metrics` on `chip`: its image (for the range profiler), the
// passes it needs, and the evaluation of counter data taken with it. `availability` is the GPU's
// counter-availability image (empty: none). Throws CounterError.
class MetricConfig {
 public:
  MetricConfig(const std::string& chip, std::vector<std::string> metrics,
               const std::vector<std::uint8_t>& availability = {});
  ~MetricConfig();
  MetricConfig(const MetricConfig&) = delete;
  MetricConfig& operator=(const MetricConfig&) = delete;

  const std::vector<std::string>& metrics() const { return metrics_; }
  const std::vector<std::uint8_t>& image() const { return image_; }
  int passes() const { return passes_; }
  // One value per metric, in metrics() order, for range `range` of the counter data.
  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range) const;

 private:
  struct Host;
  std::unique_ptr<Host> host_;
  std::vector<std::string> metrics_;
  std::vector<std::uint8_t> image_;
  int passes_ = 0;
};

// CUPTI's name for a result code, "CUPTI_ERROR_INVALID_PARAMETER (1)".
std::string cupti_result_name(int code);

}  // namespace kwb
