// The probes of the device state (what each reads and how it is set back), the guard around each
// case, and the wording of a change.
#include "harness/worker/isolate/device_state.hpp"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>

#include "harness/catalogue/cuda_check.hpp"

namespace kwb {
namespace {

// How one value is read, shown and set back. `restore` is empty for the stream's attributes (each
// case gets a fresh stream instead).
struct Probe {
  std::string name;
  std::function<cudaError_t(int device, cudaStream_t stream, std::uint64_t* out)> read;
  std::function<std::string(std::uint64_t)> show;
  std::function<cudaError_t(int device, std::uint64_t value)> restore;
  bool grows_on_demand = false;
};

std::string show_count(std::uint64_t v) { return std::to_string(v); }
std::string show_signed(std::uint64_t v) { return std::to_string(static_cast<std::int64_t>(v)); }
std::string show_pointer(std::uint64_t v) { return v ? fmt::format("{:#x}", v) : "none"; }

std::string show_cache_config(std::uint64_t v) {
  switch (static_cast<cudaFuncCache>(v)) {
    case cudaFuncCachePreferNone: return "prefer none";
    case cudaFuncCachePreferShared: return "prefer shared";
    case cudaFuncCachePreferL1: return "prefer L1";
    case cudaFuncCachePreferEqual: return "prefer equal";
  }
  return "cudaFuncCache " + std::to_string(v);
}

std::string show_sync_policy(std::uint64_t v) {
  switch (static_cast<cudaSynchronizationPolicy>(v)) {
    case cudaSyncPolicyAuto: return "auto";
    case cudaSyncPolicySpin: return "spin";
    case cudaSyncPolicyYield: return "yield";
    case cudaSyncPolicyBlockingSync: return "blocking sync";
  }
  return "policy " + std::to_string(v);
}

std::string show_flags(std::uint64_t v) { return fmt::format("{:#x}", v); }

Probe limit_probe(std::string name, cudaLimit limit, std::function<std::string(std::uint64_t)> show,
                  bool grows_on_demand = false) {
  return {std::move(name),
          [limit](int, cudaStream_t, std::uint64_t* out) {
            std::size_t v = 0;
            const cudaError_t status = cudaDeviceGetLimit(&v, limit);
            *out = v;
            return status;
          },
          std::move(show),
          [limit](int, std::uint64_t v) { return cudaDeviceSetLimit(limit, static_cast<std::size_t>(v)); },
          grows_on_demand};
}

// The stream attribute `id` of `stream`, reduced to one number by `pick`.
template <class Pick>
std::function<cudaError_t(int, cudaStream_t, std::uint64_t*)> stream_attribute(cudaStreamAttrID id, Pick pick) {
  return [id, pick](int, cudaStream_t stream, std::uint64_t* out) {
    cudaStreamAttrValue value{};
    const cudaError_t status = cudaStreamGetAttribute(stream, id, &value);
    *out = pick(value);
    return status;
  };
}

const std::vector<Probe>& probes() {
  static const std::vector<Probe> all = [] {
    std::vector<Probe> p;
    // 1. Device limits.
    p.push_back(limit_probe("stack size per thread (cudaLimitStackSize)", cudaLimitStackSize, show_bytes, true));
    p.push_back(limit_probe("printf FIFO (cudaLimitPrintfFifoSize)", cudaLimitPrintfFifoSize, show_bytes));
    p.push_back(limit_probe("malloc heap (cudaLimitMallocHeapSize)", cudaLimitMallocHeapSize, show_bytes));
    // Device-side synchronisation went with CUDA Dynamic Parallelism 2: from sm_90 on the sync-depth
    // limit is "not supported on this architecture", and asking for it is an API error that
    // compute-sanitizer reports in every case (and fails the run on).
    int device = 0, major = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (major < 9)
      p.push_back(limit_probe("device runtime sync depth (cudaLimitDevRuntimeSyncDepth)", cudaLimitDevRuntimeSyncDepth,
                              show_count));
    p.push_back(limit_probe("device runtime pending launches (cudaLimitDevRuntimePendingLaunchCount)",
                            cudaLimitDevRuntimePendingLaunchCount, show_count));
    p.push_back(limit_probe("L2 fetch granularity (cudaLimitMaxL2FetchGranularity)", cudaLimitMaxL2FetchGranularity,
                            show_bytes));
    p.push_back(limit_probe("persisting L2 limit (cudaLimitPersistingL2CacheSize)", cudaLimitPersistingL2CacheSize,
                            show_bytes));
    // 2. Device-wide configuration.
    p.push_back({"cache configuration (cudaDeviceSetCacheConfig)",
                 [](int, cudaStream_t, std::uint64_t* out) {
                   cudaFuncCache c = cudaFuncCachePreferNone;
                   const cudaError_t status = cudaDeviceGetCacheConfig(&c);
                   *out = static_cast<std::uint64_t>(c);
                   return status;
                 },
                 show_cache_config,
                 [](int, std::uint64_t v) { return cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(v)); }});
    p.push_back({"device flags (cudaSetDeviceFlags)",
                 [](int, cudaStream_t, std::uint64_t* out) {
                   unsigned flags = 0;
                   const cudaError_t status = cudaGetDeviceFlags(&flags);
                   // Without cudaDeviceLmemResizeToMax: the driver sets it on its own when a CUDA
                   // graph is instantiated (the harness's --launch graph does, for every case), and
                   // it only keeps the largest local-memory allocation instead of shrinking it.
                   *out = flags & ~static_cast<unsigned>(cudaDeviceLmemResizeToMax);
                   return status;
                 },
                 show_flags, [](int, std::uint64_t v) { return cudaSetDeviceFlags(static_cast<unsigned>(v)); }});
    p.push_back({"current device (cudaSetDevice)",
                 [](int, cudaStream_t, std::uint64_t* out) {
                   int d = 0;
                   const cudaError_t status = cudaGetDevice(&d);
                   *out = static_cast<std::uint64_t>(d);
                   return status;
                 },
                 show_count, [](int, std::uint64_t v) { return cudaSetDevice(static_cast<int>(v)); }});
    p.push_back({"current memory pool (cudaDeviceSetMemPool)",
                 [](int device, cudaStream_t, std::uint64_t* out) {
                   cudaMemPool_t pool = nullptr;
                   const cudaError_t status = cudaDeviceGetMemPool(&pool, device);
                   *out = reinterpret_cast<std::uintptr_t>(pool);
                   return status;
                 },
                 show_pointer,
                 [](int device, std::uint64_t v) {
                   return cudaDeviceSetMemPool(device, reinterpret_cast<cudaMemPool_t>(static_cast<std::uintptr_t>(v)));
                 }});
    p.push_back({"default memory pool's release threshold (cudaMemPoolAttrReleaseThreshold)",
                 [](int device, cudaStream_t, std::uint64_t* out) {
                   cudaMemPool_t pool = nullptr;
                   cudaError_t status = cudaDeviceGetDefaultMemPool(&pool, device);
                   std::uint64_t v = 0;
                   if (status == cudaSuccess) status = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &v);
                   *out = v;
                   return status;
                 },
                 show_bytes,
                 [](int device, std::uint64_t v) {
                   cudaMemPool_t pool = nullptr;
                   cudaError_t status = cudaDeviceGetDefaultMemPool(&pool, device);
                   if (status == cudaSuccess) status = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &v);
                   return status;
                 }});
    // 3. The case's stream (not restored: the next case gets a fresh one).
    p.push_back({"stream access policy window (cudaStreamAttributeAccessPolicyWindow)",
                 stream_attribute(cudaStreamAttributeAccessPolicyWindow,
                                  [](const cudaStreamAttrValue& v) {
                                    return static_cast<std::uint64_t>(v.accessPolicyWindow.num_bytes);
                                  }),
                 [](std::uint64_t v) { return v ? "a window of " + show_bytes(v) : std::string("none"); }, {}});
    p.push_back({"stream priority (cudaStreamAttributePriority)",
                 [](int, cudaStream_t stream, std::uint64_t* out) {
                   int priority = 0;
                   const cudaError_t status = cudaStreamGetPriority(stream, &priority);
                   *out = static_cast<std::uint64_t>(static_cast<std::int64_t>(priority));
                   return status;
                 },
                 show_signed, {}});
    p.push_back({"stream synchronization policy (cudaStreamAttributeSynchronizationPolicy)",
                 stream_attribute(cudaStreamAttributeSynchronizationPolicy,
                                  [](const cudaStreamAttrValue& v) { return static_cast<std::uint64_t>(v.syncPolicy); }),
                 show_sync_policy, {}});
    p.push_back({"stream memory sync domain (cudaStreamAttributeMemSyncDomain)",
                 stream_attribute(cudaStreamAttributeMemSyncDomain,
                                  [](const cudaStreamAttrValue& v) { return static_cast<std::uint64_t>(v.memSyncDomain); }),
                 show_count, {}});
    return p;
  }();
  return all;
}

}  // namespace

std::string show_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1024 * 1024;
  if (bytes < kMiB) return std::to_string(bytes) + " B";
  return fmt::format("{:.4g} MiB ({} B)", static_cast<double>(bytes) / kMiB, bytes);
}

std::string describe_changes(const DeviceState& before, const DeviceState& after) {
  if (before.values.size() != after.values.size())
    throw std::logic_error("describe_changes: the two readings hold different values");
  std::string out;
  for (std::size_t i = 0; i < before.values.size(); ++i) {
    const StateValue& b = before.values[i];
    const StateValue& a = after.values[i];
    if (b.value == a.value) continue;
    if (b.grows_on_demand && b.value && a.value && *a.value > *b.value) continue;
    if (!out.empty()) out += "; ";
    out += b.name + ": " + (b.value ? b.shown : "unreadable") + " -> " + (a.value ? a.shown : "unreadable");
  }
  return out;
}

DeviceStateGuard::DeviceStateGuard(cudaStream_t fresh_stream) {
  cuda_check(cudaGetDevice(&device_), "cudaGetDevice");
  int persisting_max = 0;
  if (cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device_) != cudaSuccess) {
    (void)cudaGetLastError();
    persisting_max = 0;
  }
  has_persisting_l2_ = persisting_max > 0;
  baseline_ = capture(fresh_stream);
}

DeviceState DeviceStateGuard::capture(cudaStream_t stream) const {
  DeviceState state;
  for (const Probe& probe : probes()) {
    StateValue v{probe.name, std::nullopt, "", probe.grows_on_demand};
    std::uint64_t raw = 0;
    if (probe.read(device_, stream, &raw) == cudaSuccess) {
      v.value = raw;
      v.shown = probe.show(raw);
    } else {
      (void)cudaGetLastError();  // a getter's refusal is no launch error for the next check to find
    }
    state.values.push_back(std::move(v));
  }
  return state;
}

void DeviceStateGuard::restore() const {
  const auto& all = probes();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const StateValue& want = baseline_.values[i];
    if (!all[i].restore || !want.value) continue;  // a stream's value, or one the device never reported
    std::uint64_t now = 0;
    if (all[i].read(device_, nullptr, &now) != cudaSuccess)
      (void)cudaGetLastError();  // unreadable now: set it back regardless
    else if (now == *want.value)
      continue;
    const cudaError_t status = all[i].restore(device_, *want.value);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw CudaError(status, "set " + want.name + " back to " + want.shown);
    }
  }
  if (has_persisting_l2_) cuda_check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
}

}  // namespace kwb
