// CUPTI Profiler Host API wrappers (see metric_host.hpp). Every call fills a params struct whose
// structSize names the API version; a host object holds one chip's metric tables and, once
// metrics are added, one configuration, so each catalogue query and each configuration gets its
// own object.
#include "harness/plan/metric_host.hpp"

#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/plan/counter_sets.hpp"
#include "harness/plan/suggest.hpp"

namespace kwb {

std::string cupti_result_name(int code) {
  const char* text = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(code), &text) != CUPTI_SUCCESS || !text) text = "unknown";
  return fmt::format("{} ({})", text, code);
}

namespace {

void check(CUptiResult r, const char* call, const std::string& context) {
  if (r != CUPTI_SUCCESS)
    throw CounterError(fmt::format("{}: {} failed: {}", context, call, cupti_result_name(r)));
}

// One host object, deinitialised when it goes.
struct HostObject {
  CUpti_Profiler_Host_Object* object = nullptr;
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    const CUptiResult r = cuptiProfilerHostInitialize(&p);
    if (r != CUPTI_SUCCESS) {
      if (auto why = host_api_problem()) throw CounterError(*why);
      const auto chips = supported_chips();
      if (std::find(chips.begin(), chips.end(), chip) == chips.end())
        throw CounterError(unknown_name_message("chip", chip, chips) + " (CUPTI's chip names; a GPU's is in its "
                                                                        "report's device.chip)");
      check(r, "cuptiProfilerHostInitialize", "counters for chip " + chip);
    }
    object = p.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = object;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  // Adds metrics to the object's configuration; false when the chip cannot collect them.
  bool add(const std::vector<std::string>& metrics) {
    std::vector<const char*> names;
    for (const auto& m : metrics) names.push_back(m.c_str());
    CUpti_Profiler_Host_ConfigAddMetrics_Params p{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    p.pHostObject = object;
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    return cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS;
  }

  std::vector<std::uint8_t> config_image(const std::string& context) {
    CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = object;
    check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize", context);
    std::vector<std::uint8_t> image(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params p{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    p.pHostObject = object;
    p.configImageSize = image.size();
    p.pConfigImage = image.data();
    check(cuptiProfilerHostGetConfigImage(&p), "cuptiProfilerHostGetConfigImage", context);
    return image;
  }
};

int passes_of(std::vector<std::uint8_t>& image, const std::string& context) {
  CUpti_Profiler_Host_GetNumOfPasses_Params p{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  check(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses", context);
  return static_cast<int>(p.numOfPasses);
}

const char* type_name(CUpti_MetricType t) {
  switch (t) {
    case CUPTI_METRIC_TYPE_COUNTER: return "counter";
    case CUPTI_METRIC_TYPE_RATIO: return "ratio";
    case CUPTI_METRIC_TYPE_THROUGHPUT: return "throughput";
    default: return "?";
  }
}

std::vector<std::string> rollups(CUpti_Profiler_Host_Object* object, CUpti_MetricType type, const std::string& base) {
  CUpti_Profiler_Host_GetSubMetrics_Params p{CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
  p.pHostObject = object;
  p.metricType = type;
  p.pMetricName = base.c_str();
  std::vector<std::string> out;
  if (cuptiProfilerHostGetSubMetrics(&p) != CUPTI_SUCCESS) return out;
  for (std::size_t i = 0; i < p.numOfSubmetrics; ++i) out.push_back(p.ppSubMetrics[i]);
  return out;
}

}  // namespace

std::vector<std::string> supported_chips() {
  CUpti_Profiler_Host_GetSupportedChips_Params p{CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
  std::vector<std::string> out;
  if (cuptiProfilerHostGetSupportedChips(&p) != CUPTI_SUCCESS) return out;
  for (std::size_t i = 0; i < p.numChips; ++i) out.push_back(p.ppChipNames[i]);
  return out;
}

std::optional<std::string> host_api_problem() {
  CUpti_Profiler_Host_GetSupportedChips_Params p{CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
  const CUptiResult r = cuptiProfilerHostGetSupportedChips(&p);
  if (r == CUPTI_SUCCESS && p.numChips > 0) return std::nullopt;
  return fmt::format("CUPTI's profiler host API is not usable here ({}): it needs libnvperf_host.so beside "
                     "libcupti.so (the CUDA toolkit's lib64 or extras/CUPTI/lib64) on the library path",
                     r == CUPTI_SUCCESS ? std::string("it lists no chip") : cupti_result_name(r));
}

MetricCatalog::MetricCatalog(std::string chip) : chip_(std::move(chip)) {
  HostObject host(chip_, {});
  for (auto type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p{CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    p.pHostObject = host.object;
    p.metricType = type;
    check(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics", "metrics of chip " + chip_);
    for (std::size_t i = 0; i < p.numMetrics; ++i) {
      MetricInfo info{p.ppMetricNames[i], "", "", type_name(type)};
      CUpti_Profiler_Host_GetMetricProperties_Params props{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
      props.pHostObject = host.object;
      props.pMetricName = p.ppMetricNames[i];
      if (cuptiProfilerHostGetMetricProperties(&props) == CUPTI_SUCCESS) {
        if (props.pDescription) info.description = props.pDescription;
        if (props.pDimUnit) info.unit = props.pDimUnit;
      }
      bases_.push_back(std::move(info));
    }
  }
  std::sort(bases_.begin(), bases_.end(), [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; });
}

MetricCatalog::~MetricCatalog() = default;

std::optional<std::string> MetricCatalog::problem(const std::string& metric) const {
  // The base is the longest prefix that names a base metric and is followed by a dot (some base
  // names hold dots themselves).
  const MetricInfo* base = nullptr;
  for (std::size_t dot = metric.find('.'); dot != std::string::npos; dot = metric.find('.', dot + 1)) {
    const std::string prefix = metric.substr(0, dot);
    auto it = std::lower_bound(bases_.begin(), bases_.end(), prefix,
                               [](const MetricInfo& m, const std::string& n) { return m.name < n; });
    if (it != bases_.end() && it->name == prefix) base = &*it;
  }
  std::vector<std::string> names;
  for (const MetricInfo& m : bases_) names.push_back(m.name);
  // A bare base name collects nothing: say which rollup its type takes.
  const auto bare = std::lower_bound(bases_.begin(), bases_.end(), metric,
                                     [](const MetricInfo& m, const std::string& n) { return m.name < n; });
  if (!base && bare != bases_.end() && bare->name == metric)
    return fmt::format("{0} is a base metric of {1} (a {2}), not a full metric name: give it a rollup, e.g. {0}{3}",
                       metric, chip_, bare->type,
                       bare->type == "counter" ? ".sum" : bare->type == "ratio" ? ".pct" : ".avg.pct_of_peak_sustained_elapsed");
  if (!base) {
    const std::string given = metric.substr(0, metric.find('.'));
    const auto near = closest_match(given, names);
    return fmt::format("'{}' is not a metric of {}: no base metric '{}'{}", metric, chip_, given,
                       near ? fmt::format(" (did you mean '{}'?)", *near) : std::string(
                                  "; `kwb counters --list --all` shows every base metric"));
  }
  HostObject host(chip_, {});
  if (host.add({metric})) return std::nullopt;
  const auto type = base->type == "counter" ? CUPTI_METRIC_TYPE_COUNTER
                    : base->type == "ratio" ? CUPTI_METRIC_TYPE_RATIO
                                            : CUPTI_METRIC_TYPE_THROUGHPUT;
  const std::string rollup = metric.substr(base->name.size());
  const auto known = rollups(host.object, type, base->name);
  const auto near = closest_match(rollup, known);
  return fmt::format("'{}' is not a metric of {}: {} has no rollup '{}'{}", metric, chip_, base->name, rollup,
                     near ? fmt::format(" (did you mean '{}{}'?)", base->name, *near)
                          : fmt::format("; it has {}", fmt::join(known, ", ")));
}

int MetricCatalog::passes(const std::vector<std::string>& metrics) const {
  MetricConfig config(chip_, metrics);
  return config.passes();
}

int MetricCatalog::passes_as_collected(const std::vector<std::string>& metrics) const {
  const MetricsByRange split = split_by_range(metrics);
  return (split.per_kernel.empty() ? 0 : passes(split.per_kernel)) +
         (split.whole_launch.empty() ? 0 : passes(split.whole_launch));
}

struct MetricConfig::Host {
  HostObject object;
  Host(const std::string& chip, const std::vector<std::uint8_t>& availability) : object(chip, availability) {}
};

MetricConfig::MetricConfig(const std::string& chip, std::vector<std::string> metrics,
                           const std::vector<std::uint8_t>& availability)
    : host_(std::make_unique<Host>(chip, availability)), metrics_(std::move(metrics)) {
  const std::string context = fmt::format("counter configuration for {} ({} metrics)", chip, metrics_.size());
  if (metrics_.empty()) throw CounterError(context + ": no metric to collect");
  if (!host_->object.add(metrics_)) {
    // Say which: each metric alone.
    MetricCatalog catalogue(chip);
    for (const auto& m : metrics_)
      if (auto why = catalogue.problem(m)) throw CounterError(*why);
    throw CounterError(context + ": CUPTI refused the metrics together (each alone is accepted)");
  }
  image_ = host_->object.config_image(context);
  passes_ = passes_of(image_, context);
}

MetricConfig::~MetricConfig() = default;

std::vector<double> MetricConfig::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range) const {
  std::vector<const char*> names;
  for (const auto& m : metrics_) names.push_back(m.c_str());
  std::vector<double> values(metrics_.size(), 0.0);
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  p.pHostObject = host_->object.object;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  check(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues",
        fmt::format("evaluating range {} of the counter data", range));
  return values;
}

}  // namespace kwb
