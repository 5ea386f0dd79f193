// The device state guard and the timed-output check on a real device: a change of each kind is
// seen and named, restore() puts the device-wide values back, and the bit-for-bit and scan
// checks find a poisoned output and accept a reproduced one.
#include "harness/worker/isolate/device_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/verify/timed_output.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
};

TEST(DeviceStateGuard, SeesEachChangeNamesItAndPutsTheDeviceBack) {
  KWB_REQUIRE_GPU();
  // 1. The baseline, and the same state read again: no change.
  Stream baseline_stream;
  const DeviceStateGuard guard(baseline_stream.s);
  EXPECT_EQ(describe_changes(guard.baseline(), guard.capture(baseline_stream.s)), "");

  // 2. Change a limit, the cache configuration and a stream's access policy window.
  int device = 0, max_persisting = 0, max_window = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device), "attribute");
  cuda_check(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device), "attribute");
  Stream case_stream;
  void* buffer = nullptr;
  cuda_check(cudaMalloc(&buffer, 1 << 20), "cudaMalloc");
  // The stack may grow by itself when a kernel needs more (no change), never shrink (a change).
  std::size_t stack = 0;
  cuda_check(cudaDeviceGetLimit(&stack, cudaLimitStackSize), "cudaDeviceGetLimit");
  cuda_check(cudaDeviceSetLimit(cudaLimitStackSize, stack + 1024), "cudaDeviceSetLimit");
  EXPECT_EQ(describe_changes(guard.baseline(), guard.capture(baseline_stream.s)), "") << "a grown stack is no change";
  cuda_check(cudaDeviceSetLimit(cudaLimitStackSize, stack / 2), "cudaDeviceSetLimit");
  cudaFuncCache cache = cudaFuncCachePreferNone;
  cuda_check(cudaDeviceGetCacheConfig(&cache), "cudaDeviceGetCacheConfig");
  const cudaFuncCache other = cache == cudaFuncCachePreferShared ? cudaFuncCachePreferL1 : cudaFuncCachePreferShared;
  cuda_check(cudaDeviceSetCacheConfig(other), "cudaDeviceSetCacheConfig");
  if (max_persisting > 0) {
    cuda_check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, static_cast<std::size_t>(max_persisting)),
               "cudaDeviceSetLimit");
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = buffer;
    attr.accessPolicyWindow.num_bytes = std::min<std::size_t>(1 << 20, static_cast<std::size_t>(max_window));
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cuda_check(cudaStreamSetAttribute(case_stream.s, cudaStreamAttributeAccessPolicyWindow, &attr), "attribute");
  }

  // 3. Each is named, with its values.
  const std::string changes = describe_changes(guard.baseline(), guard.capture(case_stream.s));
  EXPECT_TRUE(contains(changes, "cache configuration (cudaDeviceSetCacheConfig): ")) << changes;
  EXPECT_TRUE(contains(changes, "stack size per thread (cudaLimitStackSize): ")) << changes;
  if (max_persisting > 0) {
    EXPECT_TRUE(contains(changes, "persisting L2 limit (cudaLimitPersistingL2CacheSize): ")) << changes;
    EXPECT_TRUE(contains(changes, "stream access policy window (cudaStreamAttributeAccessPolicyWindow): none -> "
                                  "a window of 1 MiB (1048576 B)"))
        << changes;
  }

  // 4. restore() sets the device-wide values back (a fresh stream has no window).
  guard.restore();
  Stream fresh;
  EXPECT_EQ(describe_changes(guard.baseline(), guard.capture(fresh.s)), "");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the guard's reads leave no error for the next launch check";
  cudaFree(buffer);
}

TEST(TimedOutputCheck, FindsPoisonAndDifferencesAndAcceptsTheSameBits) {
  KWB_REQUIRE_GPU();
  Stream stream;
  // 1. A bf16 "output" holding verified values (a ramp of bit patterns, no poison among them).
  const std::int64_t n = (1 << 20) + 3;  // not a multiple of a warp or a block
  std::vector<std::uint16_t> host(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(0x3c00 + i % 512);
  void* out = nullptr;
  cuda_check(cudaMalloc(&out, n * 2), "cudaMalloc");
  auto write_verified = [&] {
    cuda_check(cudaMemcpy(out, host.data(), n * 2, cudaMemcpyHostToDevice), "copy");
  };
  write_verified();

  for (const bool varies : {false, true}) {
    SCOPED_TRACE(varies ? "through the oracle (varies run to run)" : "bit for bit");
    TimedOutputCheck check({{"y", out, n, ElemType::bf16}}, varies, stream.s);
    EXPECT_EQ(check.bit_for_bit(), !varies);
    // 2. Poisoned and left so: every element is reported as never written.
    check.poison(stream.s);
    cuda_check(cudaStreamSynchronize(stream.s), "sync");
    const auto all_poison = check.check(stream.s);
    ASSERT_TRUE(all_poison.has_value());
    EXPECT_TRUE(contains(*all_poison, std::to_string(n) + " of " + std::to_string(n))) << *all_poison;
    EXPECT_TRUE(contains(*all_poison, "never written")) << *all_poison;
    // 3. Written again with the same bits: nothing to report.
    check.poison(stream.s);
    write_verified();
    EXPECT_EQ(check.check(stream.s), std::nullopt);
    // 4. One element changed (not to poison): only the bit-for-bit check can see it, at its index.
    const std::uint16_t changed = 0x4000;
    cuda_check(cudaMemcpy(static_cast<std::uint16_t*>(out) + (n - 1), &changed, 2, cudaMemcpyHostToDevice), "copy");
    const auto one = check.check(stream.s);
    if (varies) {
      EXPECT_EQ(one, std::nullopt) << "the oracle re-verification, not the scan, judges values";
    } else {
      ASSERT_TRUE(one.has_value());
      EXPECT_TRUE(contains(*one, "1 of " + std::to_string(n) + " elements differ")) << *one;
      EXPECT_TRUE(contains(*one, "the first at element " + std::to_string(n - 1))) << *one;
    }
    write_verified();
  }
  cudaFree(out);
}

}  // namespace
}  // namespace kwb
