// CUPTI Activity API plumbing: buffers, record parsing and the external-id join.
#include "harness/worker/measure/cupti_tracer.hpp"

#include <cuda.h>  // CUcontext in the callback signature (types only; libcuda is not linked)
#include <cupti.h>
#include <cxxabi.h>
#include <string_view>

#include <cstdlib>
#include <memory>

namespace kwb {
namespace {

constexpr std::size_t kBufferBytes = 8 << 20;  // 8 MB, about 50k kernel records

// External-correlation records are emitted only beside API records ("the activity API record
// will be preceded by a CUpti_ActivityExternalCorrelation record"): without the RUNTIME and
// DRIVER kinds no kernel could be joined to its sample. Libraries such as cuBLASLt launch
// through the driver API, hence both.
constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid_size) {
  CuptiTracer::instance().on_buffer(buffer, valid_size);
  std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return std::string(text ? text : "unknown CUPTI error") + " (" + std::to_string(r) + ")";
}

}  // namespace

std::string short_kernel_name(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : mangled;
  // Drop the parameter list: "void kwb::rmsnorm_v1<float>(float const*, ...)" -> "kwb::rmsnorm_v1<float>"
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    // "(anonymous namespace)" is part of the name, not its parameter list.
    static constexpr std::string_view kAnonymous = "(anonymous namespace)";
    if (name.compare(i, kAnonymous.size(), kAnonymous) == 0) {
      i += kAnonymous.size() - 1;
      continue;
    }
    if (name[i] == '(' && depth == 0) {
      name.resize(i);
      break;
    }
  }
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  return name;
}

CuptiTracer& CuptiTracer::instance() {
  static CuptiTracer tracer;
  return tracer;
}

bool CuptiTracer::start(std::string* why) {
  if (active_) return true;
  auto fail = [&](const char* step, CUptiResult r) {
    if (why) *why = std::string(step) + ": " + cupti_error(r);
    for (auto kind : kTracedKinds) cuptiActivityDisable(kind);
    return false;
  };
  if (auto r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS)
    return fail("cuptiActivityRegisterCallbacks", r);
  for (auto kind : kTracedKinds)
    if (auto r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS)
      return fail(("cuptiActivityEnable(kind " + std::to_string(kind) + ")").c_str(), r);
  active_ = true;
  return true;
}

bool CuptiTracer::pause() {
  if (!active_) return true;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  bool ok = true;
  for (auto kind : kTracedKinds) ok = cuptiActivityDisable(kind) == CUPTI_SUCCESS && ok;
  return ok;
}

bool CuptiTracer::resume() {
  if (!active_) return true;
  bool ok = true;
  for (auto kind : kTracedKinds) ok = cuptiActivityEnable(kind) == CUPTI_SUCCESS && ok;
  return ok;
}

void CuptiTracer::stop() {
  if (!active_) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (auto kind : kTracedKinds) cuptiActivityDisable(kind);
  active_ = false;
}

void CuptiTracer::push_sample(std::uint64_t id) {
  cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void CuptiTracer::pop_sample() {
  std::uint64_t id = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

void CuptiTracer::flush() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

void CuptiTracer::on_buffer(std::uint8_t* buffer, std::size_t valid_size) {
  std::lock_guard lock(mutex_);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (k->start == 0 || k->end < k->start) continue;  // incomplete (forced flush)
      auto it = demangled_.find(k->name);
      if (it == demangled_.end()) it = demangled_.emplace(k->name, short_kernel_name(k->name)).first;
      KernelLaunch launch;
      launch.grid[0] = k->gridX, launch.grid[1] = k->gridY, launch.grid[2] = k->gridZ;
      launch.block[0] = k->blockX, launch.block[1] = k->blockY, launch.block[2] = k->blockZ;
      launch.registers_per_thread = k->registersPerThread;
      launch.static_shared_bytes = k->staticSharedMemory;
      launch.dynamic_shared_bytes = k->dynamicSharedMemory;
      kernels_.push_back({k->correlationId, {it->second, {k->start, k->end}, launch}});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        external_by_correlation_[e->correlationId] = e->externalId;
    }
  }
}

std::map<std::uint64_t, std::vector<KernelActivity>> CuptiTracer::take_samples() {
  std::lock_guard lock(mutex_);
  std::map<std::uint64_t, std::vector<KernelActivity>> out;
  for (auto& [correlation, kernel] : kernels_) {
    auto it = external_by_correlation_.find(correlation);
    if (it != external_by_correlation_.end()) out[it->second].push_back(std::move(kernel));
    // Kernels launched outside any sample (L2 flushes, fills) have no external id: dropped.
  }
  kernels_.clear();
  external_by_correlation_.clear();
  return out;
}

std::size_t CuptiTracer::take_dropped() {
  std::size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  return dropped;
}

}  // namespace kwb
