// CUPTI Range Profiler, target side (see range_profiler.hpp). Call order, from the CUDA 13
// headers: cuptiProfilerInitialize once; per collection Enable (on the context), counter-data
// image sized for the metrics and ranges, SetConfig (auto range, user replay), then per pass
// Start / launch / Stop until Stop says every pass was submitted, DecodeData, and one evaluation
// per range on the host; Disable last.
#include "harness/worker/counters/range_profiler.hpp"

#include <cuda.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/measure/cupti_tracer.hpp"

namespace kwb {
namespace {

// KWB_COUNTERS_TRACE=1 prints each profiler step to stderr (the worker's log): where CUPTI stops.
void trace(const char* step) {
  static const bool on = std::getenv("KWB_COUNTERS_TRACE") != nullptr;
  if (on) std::fprintf(stderr, "kwb counters: %s\n", step);
}

void check(CUptiResult r, const char* call) {
  trace(call);
  if (r != CUPTI_SUCCESS) throw CounterError(fmt::format("{} failed: {}", call, cupti_result_name(r)));
}

// The current context, through the runtime's driver entry point (the build links the runtime,
// never libcuda itself: CPU-only machines have no driver to link against).
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  cuda_check(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &status),
             "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
  if (!fn || status != cudaDriverEntryPointSuccess) throw CounterError("the driver has no cuCtxGetCurrent");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(fn)(&ctx) != CUDA_SUCCESS || !ctx)
    throw CounterError("no current CUDA context to profile");
  return ctx;
}

const char* level_name(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    default: return "unknown";
  }
}

// Why the device refuses profiling, from cuptiProfilerDeviceSupported; empty when it does not.
std::string unsupported_reason(int device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (cuptiProfilerDeviceSupported(&p) != CUPTI_SUCCESS || p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "";
  std::string why;
  auto add = [&](const char* what, CUpti_Profiler_Support_Level level) {
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      why += fmt::format("{}{}: {}", why.empty() ? "" : ", ", what, level_name(level));
  };
  add("architecture", p.architecture);
  add("SLI", p.sli);
  add("vGPU", p.vGpu);
  add("confidential computing", p.confidentialCompute);
  add("CMP", p.cmp);
  add("WSL", p.wsl);
  return why;
}

// cuptiProfilerInitialize, once per process; CUPTI's other profiler calls (the chip's name among
// them) crash without it.
CUptiResult initialise_profiler() {
  static const CUptiResult result = [] {
    trace("cuptiProfilerInitialize");
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    return cuptiProfilerInitialize(&init);
  }();
  return result;
}

CounterAccess open_access(int device) {
  CounterAccess access;
  if (CUptiResult r = initialise_profiler(); r != CUPTI_SUCCESS) {
    access.unavailable = fmt::format("the CUPTI profiler did not initialise ({})", cupti_result_name(r));
    return access;
  }
  access.chip = chip_name(device);
  trace("cuptiProfilerDeviceSupported");
  if (std::string why = unsupported_reason(device); !why.empty()) {
    access.unavailable = "this GPU's configuration does not allow counters (" + why + ")";
    return access;
  }
  try {
    CUpti_Profiler_GetCounterAvailability_Params p{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    p.ctx = current_context();
    trace("cuptiProfilerGetCounterAvailability");
    CUptiResult r = cuptiProfilerGetCounterAvailability(&p);
    if (r == CUPTI_SUCCESS) {
      access.availability.resize(p.counterAvailabilityImageSize);
      p.pCounterAvailabilityImage = access.availability.data();
      r = cuptiProfilerGetCounterAvailability(&p);
    }
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
      access.unavailable = "no permission to read GPU counters (ERR_NVGPUCTRPERM): the driver keeps them for "
                           "administrators. Run as root, or set the nvidia module option "
                           "NVreg_RestrictProfilingToAdminUsers=0 and reload the driver";
    else if (r != CUPTI_SUCCESS)
      access.unavailable = fmt::format("reading the counter availability failed ({}); another profiler (ncu, "
                                       "nsys) may hold the counters",
                                       cupti_result_name(r));
  } catch (const std::exception& e) {
    access.unavailable = e.what();
  }
  return access;
}

// Enable/Disable as one object.
struct Enabled {
  CUpti_RangeProfiler_Object* object = nullptr;
  explicit Enabled(CUcontext ctx) {
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = ctx;
    check(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    object = p.pRangeProfilerObject;
  }
  ~Enabled() {
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = object;
    cuptiRangeProfilerDisable(&p);
  }
  Enabled(const Enabled&) = delete;
  Enabled& operator=(const Enabled&) = delete;
};

}  // namespace

std::string chip_name(int index) {
  if (initialise_profiler() != CUPTI_SUCCESS) return "";
  trace("cuptiDeviceGetChipName");
  CUpti_Device_GetChipName_Params p{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  p.deviceIndex = static_cast<std::size_t>(index);
  if (cuptiDeviceGetChipName(&p) != CUPTI_SUCCESS || !p.pChipName) return "";
  return p.pChipName;
}

const CounterAccess& counter_access(int device) {
  static std::once_flag once;
  static CounterAccess access;
  std::call_once(once, [&] { access = open_access(device); });
  return access;
}

RangeResult profile_ranges(const MetricConfig& config, const ReplayPass& pass, cudaStream_t stream, RangeKind kind,
                           int max_kernels) {
  const bool whole = kind == RangeKind::whole_launch;
  if (whole) max_kernels = 1;
  // The SASS-instruction counters (the whole-launch ones) read zero while kernel activity is
  // traced: tracing pauses for these passes and resumes however they end.
  struct PausedTracing {
    bool on;
    explicit PausedTracing(bool on) : on(on) {
      if (on && !CuptiTracer::instance().pause()) {
        CuptiTracer::instance().resume();  // the kinds it did turn off
        throw CounterError("CUPTI activity tracing could not be paused, and the SASS-instruction counters read "
                           "zero while it runs");
      }
    }
    ~PausedTracing() {
      // A tracer that did not resume would fail every later case ("a sample recorded no kernel").
      if (on && !CuptiTracer::instance().resume())
        std::fprintf(stderr, "kwb worker: CUPTI activity tracing did not resume after the counter passes\n");
    }
  } paused(whole);
  trace("cuptiRangeProfilerEnable");
  Enabled profiler(current_context());
  std::vector<const char*> names;
  for (const auto& m : config.metrics()) names.push_back(m.c_str());

  CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = profiler.object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = static_cast<std::size_t>(max_kernels);
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_kernels);
  check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<std::uint8_t> data(size.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = profiler.object;
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

  CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = profiler.object;
  set.configSize = config.image().size();
  set.pConfig = config.image().data();
  set.counterDataImageSize = data.size();
  set.pCounterDataImage = data.data();
  set.range = whole ? CUPTI_UserRange : CUPTI_AutoRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = static_cast<std::size_t>(max_kernels);
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");

  RangeResult result;
  const int most = config.passes() + 2;  // CUPTI said how many; a few more mean it is not converging
  for (bool done = false; !done;) {
    if (result.passes == most)
      throw CounterError(fmt::format("the range profiler wanted more than {} passes for {} metrics that need {}",
                                     most, config.metrics().size(), config.passes()));
    if (pass.before) pass.before(stream);
    cuda_check(cudaStreamSynchronize(stream), "synchronize before a counter pass");
    trace("pass: start");
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = profiler.object;
    check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    if (whole) {
      CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
      push.pRangeProfilerObject = profiler.object;
      push.pRangeName = "launch";
      check(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
    }
    pass.launch(stream);
    cuda_check_launch("launch (counter pass)");
    if (whole) {
      CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
      pop.pRangeProfilerObject = profiler.object;
      check(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
    }
    cuda_check(cudaStreamSynchronize(stream), "synchronize after a counter pass");
    CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = profiler.object;
    check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    ++result.passes;
    done = stop.isAllPassSubmitted != 0;
  }

  CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = profiler.object;
  check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  if (decode.numOfRangeDropped > 0)
    throw CounterError(whole ? fmt::format("{} ranges of the whole-launch counters were dropped", decode.numOfRangeDropped)
                             : fmt::format("the launch ran more than {} kernels: {} ranges were dropped", max_kernels,
                                           decode.numOfRangeDropped));
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    range.pCounterDataImage = data.data();
    range.counterDataImageSize = data.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    check(cuptiRangeProfilerCounterDataGetRangeInfo(&range), "cuptiRangeProfilerCounterDataGetRangeInfo");
    result.ranges.push_back({range.rangeName ? range.rangeName : std::to_string(i), config.evaluate(data, i)});
  }
  return result;
}

}  // namespace kwb
