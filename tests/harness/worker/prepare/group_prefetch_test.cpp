// The host half of a group's preparation on a background thread (group_prefetch.hpp): the same
// answer as on the worker's thread, at the lowest CPU priority, and never on the GPU: an oracle
// step the worker's thread would run there is handed back instead.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "harness/catalogue/oracle_device.hpp"
#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "harness/worker/prepare/group_prefetch.hpp"
#include "reference/matmul_fp64.hpp"
#include "tests/support/oracle_gpu.hpp"
#include "tests/support/oracle_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

int this_threads_nice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

// rmsnorm_fwd fp32 at a sampled shape: the bytes its inputs' sampled slabs hold on the host, as
// copy_for_verification would have read them from the device.
struct SampledGroup {
  const Op& op = registered_op("rmsnorm_fwd");
  CaseRequest request;
  std::vector<TensorSpec> specs;
  SamplePlan plan;
  std::vector<std::vector<unsigned char>> raw;

  SampledGroup() {
    request.op = op.name;
    request.dtype = DType::fp32;
    request.shape = Shape{{{"rows", 65536}, {"cols", 384}}};
    request.seed = 11;
    specs = op.tensors(request.shape, request.dtype);
    plan = plan_sample(op, request.shape, specs, request.seed);
    raw.resize(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].is_output) continue;
      const ElemType type = specs[i].elem_type(request.dtype);
      const auto values = test::random_values(static_cast<std::size_t>(plan.elements(specs[i])), 100 + i);
      raw[i].resize(values.size() * elem_size(type));
      encode_elements(values.data(), type, static_cast<std::int64_t>(values.size()), raw[i].data());
    }
  }
  GroupOracle on_this_thread() const { return oracle_for_group(op, request, specs, plan, raw, nullptr, nullptr); }
};

TEST(GroupPrefetch, TheBackgroundAnswerIsTheWorkersThreadsToTheBit) {
  const SampledGroup group;
  ASSERT_TRUE(group.plan.sampled) << "the shape is meant to be sampled";
  const GroupOracle here = group.on_this_thread();
  GroupPrefetch prefetch("rmsnorm_fwd|fp32|...", [&] { return group.on_this_thread(); });
  EXPECT_EQ(prefetch.key(), "rmsnorm_fwd|fp32|...");
  std::string why;
  const std::optional<GroupOracle> there = prefetch.take(&why);
  ASSERT_TRUE(there.has_value()) << why;
  EXPECT_GT(prefetch.background_ms(), 0.0);
  EXPECT_EQ(there->plan.indices, here.plan.indices);
  EXPECT_EQ(there->source, OracleSource::computed);
  ASSERT_EQ(there->expected.size(), here.expected.size());
  for (std::size_t i = 0; i < here.expected.size(); ++i) {
    const auto& a = here.expected[i].values;
    const auto& b = there->expected[i].values;
    ASSERT_EQ(a.size(), b.size());
    ASSERT_GT(a.size(), 0u);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << here.expected[i].name;
    EXPECT_FALSE(std::isnan(a.front())) << "the oracle filled the output";
  }
}

TEST(GroupPrefetch, TheThreadRunsAtTheLowestPriorityAndIsMarkedBackground) {
  const int mine = this_threads_nice();
  int theirs = 0;
  bool background = false;
  GroupPrefetch prefetch("k", [&] {
    theirs = this_threads_nice();
    background = oracle_in_background();
    return GroupOracle{};
  });
  ASSERT_TRUE(prefetch.take(nullptr).has_value());
  EXPECT_EQ(theirs, 19);
  EXPECT_TRUE(background);
  EXPECT_EQ(this_threads_nice(), mine) << "the caller's thread keeps its priority";
  EXPECT_FALSE(oracle_in_background());
}

// 512^3 multiply-adds: a product the worker's thread would make on the GPU (kGpuMinMultiplyAdds).
void big_product() {
  const std::int64_t n = 512;
  const auto a = test::random_values(n * n, 1), b = test::random_values(n * n, 2);
  std::vector<double> c(n * n);
  ref::matmul_fp64(n, n, n, {a.data(), n}, {b.data(), n}, c.data(), n);
  if (c[0] == 0.0) throw std::logic_error("the product was not made");
}

TEST(GroupPrefetch, AProductTheWorkersThreadMakesOnTheGpuIsHandedBackNotMadeOnTheCpu) {
  const test::ScopedOracleGpuSwitch on("1");
  GroupPrefetch prefetch("k", [] {
    big_product();
    return GroupOracle{};
  });
  std::string why;
  EXPECT_FALSE(prefetch.take(&why).has_value());
  EXPECT_NE(why.find("512 x 512 x 512"), std::string::npos) << why;
  EXPECT_NE(why.find("GPU"), std::string::npos) << why;
  EXPECT_NO_THROW(big_product()) << "outside the background thread the CPU makes it (no device named here)";
}

TEST(GroupPrefetch, WithTheOraclesGpuSwitchedOffTheBackgroundMakesTheProductItself) {
  const test::ScopedOracleGpuSwitch off("0");
  GroupPrefetch prefetch("k", [] {
    big_product();
    return GroupOracle{};
  });
  std::string why;
  EXPECT_TRUE(prefetch.take(&why).has_value()) << why;
}

TEST(GroupPrefetch, EveryOracleStepAboveTheGpuThresholdIsHandedBackFromTheBackground) {
  const test::ScopedOracleGpuSwitch on("1");
  EXPECT_FALSE(oracle_step_on_gpu(kGpuMinMultiplyAdds, "a step")) << "no device named on this thread";
  const BackgroundOracleScope background;
  EXPECT_THROW(oracle_step_on_gpu(kGpuMinMultiplyAdds, "attention_fwd's oracle"), OracleNeedsDevice);
  EXPECT_FALSE(oracle_step_on_gpu(kGpuMinMultiplyAdds / 2, "a small step")) << "small steps stay on the CPU";
  const test::ScopedOracleGpuSwitch off("0");
  EXPECT_FALSE(oracle_step_on_gpu(kGpuMinMultiplyAdds, "a step")) << "the GPU switched off: the CPU makes it";
}

TEST(GroupPrefetch, AnErrorOfTheWorkIsSaidNotThrown) {
  GroupPrefetch prefetch("k", []() -> GroupOracle { throw std::invalid_argument("no such tensor"); });
  std::string why;
  EXPECT_FALSE(prefetch.take(&why).has_value());
  EXPECT_EQ(why, "no such tensor");
}

// The cache is keyed by the inputs' bytes as copied back: a hit neither decodes them nor runs the
// oracle, and gives the computed answer to the bit; one byte changed is a miss.
TEST(GroupPrefetch, ACachedAnswerIsFoundFromTheRawBytesWithoutRunningTheOracle) {
  test::TempDir dir;
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  SampledGroup group;
  Op counting = group.op;
  int calls = 0;
  counting.oracle = [&](const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    ++calls;
    group.op.oracle(shape, in, out);
  };
  auto run = [&] { return oracle_for_group(counting, group.request, group.specs, group.plan, group.raw, &cache, nullptr); };
  const GroupOracle first = run();
  ASSERT_EQ(first.source, OracleSource::computed);
  ASSERT_EQ(calls, 1);
  const GroupOracle second = run();
  EXPECT_EQ(second.source, OracleSource::cache);
  EXPECT_EQ(calls, 1) << "the oracle ran on a hit";
  ASSERT_EQ(second.expected.size(), first.expected.size());
  for (std::size_t i = 0; i < first.expected.size(); ++i)
    EXPECT_EQ(std::memcmp(first.expected[i].values.data(), second.expected[i].values.data(),
                          first.expected[i].values.size() * sizeof(double)), 0);
  group.raw[0][5] ^= 0x01;  // one bit of x's sampled slabs
  EXPECT_EQ(run().source, OracleSource::computed);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace kwb
