// rmsnorm_fwd test_state_persisting_l2 (TEST ONLY): a correct RMSNorm that leaves the device in a
// state of its own making, as a variant tuned with the L2 persistence controls would: prepare()
// raises the persisting L2 limit to the device's maximum (cudaLimitPersistingL2CacheSize) and
// every launch sets an access policy window over x on the stream it was given, with persisting
// hits. Left alone, the set-aside and the persisting lines would stay for every later case in the
// worker (an RMSNorm of 4096 x 4096 read 47.5 us after such a variant against 24.9 us in a fresh
// process). The harness must fail it with "changed device state" naming both, and put the state
// back so that the next case times as in a fresh process. Hidden from `list` and default sweeps
// (`--include-test-variants`).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/testing/simple_rmsnorm.cuh"

namespace kwb {
namespace {

// The window every launch sets: over x, as large as the device allows.
struct PersistingWindow {
  std::size_t max_window_bytes = 0;
};

std::shared_ptr<void> raise_persisting_limit(const LaunchArgs&) {
  int device = 0, max_persisting = 0, max_window = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device),
             "cudaDevAttrMaxPersistingL2CacheSize");
  cuda_check(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device),
             "cudaDevAttrMaxAccessPolicyWindowSize");
  if (max_persisting <= 0 || max_window <= 0)
    throw std::runtime_error("TEST ONLY variant test_state_persisting_l2 needs a GPU with persisting L2 "
                             "(cudaDevAttrMaxPersistingL2CacheSize is 0 here)");
  cuda_check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, static_cast<std::size_t>(max_persisting)),
             "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)");
  return std::make_shared<PersistingWindow>(PersistingWindow{static_cast<std::size_t>(max_window)});
}

template <class T>
void launch_with_window(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = const_cast<T*>(a.tensor<const T>("x"));
  attr.accessPolicyWindow.num_bytes =
      std::min(a.state_as<PersistingWindow>().max_window_bytes, static_cast<std::size_t>(rows * cols) * sizeof(T));
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cuda_check(cudaStreamSetAttribute(a.stream, cudaStreamAttributeAccessPolicyWindow, &attr),
             "cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow)");
  testing::launch_simple_rmsnorm<T>(a);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_state_persisting_l2",
    .role = Role::fused,
    .description = "TEST ONLY: correct, but raises the persisting L2 limit and sets a persisting access policy "
                   "window on its stream",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_with_window<T>(a); }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
    .prepare = raise_persisting_limit,
});

}  // namespace
}  // namespace kwb
