// The seam the case runner calls: a group's oracle runs once, later groups with the same key read
// its answer from disk, and anything that changes the answer's inputs computes it again.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "harness/worker/oracle_cache/group_oracle.hpp"
#include "harness/worker/verify/sampling.hpp"
#include "tests/support/oracle_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::TempDir;

// rmsnorm_fwd at a shape large enough to be sampled, with its real oracle: what prepare_group does
// after the inputs reach the host, minus the GPU.
struct RealGroup {
  const Op& op = registered_op("rmsnorm_fwd");
  Shape shape{{{"rows", 65536}, {"cols", 512}}};
  std::uint64_t seed = 3;
  std::vector<TensorSpec> specs = op.tensors(shape, DType::bf16);
  SamplePlan plan = plan_sample(op, shape, specs, seed);
  std::vector<HostTensor> inputs;
  int oracle_calls = 0;

  RealGroup() {
    // The sampled slabs, as gathered: host inputs at the plan's dims.
    std::vector<TensorSpec> sampled = specs;
    for (auto& t : sampled) t.dims = plan.dims(t);
    inputs = host_inputs(sampled, seed);
  }
  std::vector<HostTensor> allocated_outputs() const {
    std::vector<HostTensor> out;
    for (const auto& t : specs)
      if (t.is_output) out.push_back({t.name, plan.dims(t), std::vector<double>(plan.elements(t), NAN)});
    return out;
  }
  OracleKeyParts parts() const { return {op.name, DType::bf16, shape, seed, plan}; }
  OracleFn oracle() {
    return [this](std::vector<HostTensor>& expected) {
      ++oracle_calls;
      run_sampled_oracle(op, shape, plan, inputs, expected);
    };
  }
};

void expect_same_answer_bits(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].values.size(), b[i].values.size());
    EXPECT_EQ(std::memcmp(a[i].values.data(), b[i].values.data(), a[i].values.size() * 8), 0) << a[i].name;
    ASSERT_EQ(a[i].abs_sum.size(), b[i].abs_sum.size());
    EXPECT_EQ(std::memcmp(a[i].abs_sum.data(), b[i].abs_sum.data(), a[i].abs_sum.size() * 8), 0);
    ASSERT_EQ(a[i].root_sum_sq.size(), b[i].root_sum_sq.size());
    EXPECT_EQ(std::memcmp(a[i].root_sum_sq.data(), b[i].root_sum_sq.data(), a[i].root_sum_sq.size() * 8), 0);
  }
}

TEST(GroupOracle, TheSecondRunReadsTheFirstRunsAnswerWithoutRunningTheOracle) {
  TempDir dir;
  RealGroup g;
  ASSERT_TRUE(g.plan.sampled) << g.plan.note;
  auto first = g.allocated_outputs();
  {
    OracleCache cache(dir.path(), std::uint64_t{1} << 30);
    EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), first, g.oracle()), OracleSource::computed);
  }
  EXPECT_EQ(g.oracle_calls, 1);
  EXPECT_FALSE(std::isnan(first[0].values[0]));
  OracleCache later_run(dir.path(), std::uint64_t{1} << 30);  // another process, another day
  auto second = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&later_run, g.parts(), key_inputs(g.inputs), second, g.oracle()), OracleSource::cache);
  EXPECT_EQ(g.oracle_calls, 1);
  expect_same_answer_bits(second, first);
}

TEST(GroupOracle, OtherInputValuesOrAnotherOracleVersionComputeAgain) {
  TempDir dir;
  RealGroup g;
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  auto out = g.allocated_outputs();
  expected_for_group(&cache, g.parts(), key_inputs(g.inputs), out, g.oracle());
  // A generator that changed one input value by one ulp: the key's input digest sees it.
  g.inputs[0].values[17] = std::nextafter(g.inputs[0].values[17], 10.0);
  out = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), out, g.oracle()), OracleSource::computed);
  EXPECT_EQ(g.oracle_calls, 2);
  // An edited oracle (another build's version hash).
  OracleKeyParts edited = g.parts();
  edited.oracle_version = "ffffffffffffffffffffffffffffffff";
  out = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&cache, edited, key_inputs(g.inputs), out, g.oracle()), OracleSource::computed);
  EXPECT_EQ(g.oracle_calls, 3);
  out = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&cache, edited, key_inputs(g.inputs), out, g.oracle()), OracleSource::cache);
  EXPECT_EQ(g.oracle_calls, 3);
}

TEST(GroupOracle, ACorruptEntryIsComputedAgainAndRebuilt) {
  TempDir dir;
  RealGroup g;
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  auto reference = g.allocated_outputs();
  expected_for_group(&cache, g.parts(), key_inputs(g.inputs), reference, g.oracle());
  const auto path = cache.entry_path(make_oracle_key(g.parts(), key_inputs(g.inputs), g.allocated_outputs()));
  ASSERT_TRUE(std::filesystem::exists(path));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);  // a run killed mid-copy, say
  auto again = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), again, g.oracle()), OracleSource::computed);
  EXPECT_EQ(g.oracle_calls, 2);
  expect_same_answer_bits(again, reference);
  auto rebuilt = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), rebuilt, g.oracle()), OracleSource::cache);
  expect_same_answer_bits(rebuilt, reference);
}

TEST(GroupOracle, WithoutACacheTheOracleAlwaysRuns) {
  RealGroup g;
  auto out = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(nullptr, g.parts(), key_inputs(g.inputs), out, g.oracle()), OracleSource::computed);
  EXPECT_EQ(expected_for_group(nullptr, g.parts(), key_inputs(g.inputs), out, g.oracle()), OracleSource::computed);
  EXPECT_EQ(g.oracle_calls, 2);
  EXPECT_EQ(to_string(OracleSource::cache), "cache");
  EXPECT_EQ(to_string(OracleSource::computed), "computed");
}

TEST(GroupOracle, AnOracleThatThrowsStoresNothing) {
  TempDir dir;
  RealGroup g;
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  auto out = g.allocated_outputs();
  EXPECT_THROW(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), out,
                                  [](std::vector<HostTensor>&) { throw std::invalid_argument("bad shape"); }),
               std::invalid_argument);
  EXPECT_EQ(cache.contents().entries, 0u);
}

TEST(GroupOracle, AStoredAnswerOfAnotherLayoutIsNotServed) {
  // An entry under the right key whose tensors do not fit what the verifier allocated (another
  // build's idea of the outputs) is computed again rather than handed over.
  TempDir dir;
  RealGroup g;
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  const auto outputs = g.allocated_outputs();
  const OracleKey key = make_oracle_key(g.parts(), key_inputs(g.inputs), outputs);
  std::vector<HostTensor> wrong = outputs;
  wrong[0].values.resize(3);
  ASSERT_EQ(cache.store(key, wrong), OracleCache::StoreResult::stored);
  auto out = g.allocated_outputs();
  EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), out, g.oracle()), OracleSource::computed);
  EXPECT_EQ(out[0].values.size(), outputs[0].values.size());
}

}  // namespace
}  // namespace kwb

namespace kwb {
namespace {

// Small answers are always kept; a large one only where the oracle took longer than reading it
// back would (kOracleMsWorthAMiB per MiB); one above a quarter of the bound is not even looked up.
TEST(GroupOracle, ALargeAnswerIsStoredOnlyWhereItsOracleCostMoreThanReadingItBack) {
  EXPECT_TRUE(worth_storing(kAlwaysStoredOracleBytes, 0.0));
  const std::uint64_t large = std::uint64_t{256} << 20;  // 256 MiB
  EXPECT_FALSE(worth_storing(large, 0.5 * 256 * kOracleMsWorthAMiB));
  EXPECT_TRUE(worth_storing(large, 2.0 * 256 * kOracleMsWorthAMiB));
  // Measured on an H100 machine: linear_cross_entropy's 12.6 GB answer (V = 128256) computed in
  // 20 s and read back in 29.3 s. Storing it costs every run time.
  EXPECT_FALSE(worth_storing(std::uint64_t{12633250410}, 20000.0));

  TempDir dir;
  OracleCache cache(dir.path(), std::uint64_t{1} << 40);
  RealGroup g;
  // A fast oracle filling a large answer: computed every time, never stored.
  const auto n = static_cast<std::int64_t>(large / sizeof(double));
  const auto big_outputs = [&] { return std::vector<HostTensor>{{"y", {n}, std::vector<double>(n, NAN)}}; };
  int calls = 0;
  const OracleFn fast = [&](std::vector<HostTensor>& out) {
    ++calls;
    for (std::size_t i = 0; i < out[0].values.size(); ++i) out[0].values[i] = static_cast<double>(i);
  };
  auto first = big_outputs();
  EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), first, fast), OracleSource::computed);
  auto second = big_outputs();
  EXPECT_EQ(expected_for_group(&cache, g.parts(), key_inputs(g.inputs), second, fast), OracleSource::computed);
  EXPECT_EQ(calls, 2);

  // Above a quarter of the bound: neither looked up nor stored, whatever the oracle cost.
  OracleCache small_bound(dir.path(), large);
  auto third = big_outputs();
  EXPECT_EQ(expected_for_group(&small_bound, g.parts(), key_inputs(g.inputs), third, fast), OracleSource::computed);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace kwb
