// attention_fwd's fp64 oracle on the GPU (reference/attention_fp64_gpu.cu) against the host
// oracle, which stays the ground truth (run with KWB_ORACLE_GPU=0): every output (O, lse) and
// every error magnitude, on causal and not, sliding windows (a band without causal), soft-caps,
// grouped-query and multi-query heads, head_dim 64 and 128, sequences of 1 to 300 and sampled
// rows anywhere in them; then one case through the oracle's own dispatch. The two sum in other
// orders, so they agree to rounding: within 1e-12 of each value's size (for O, of the size of the
// terms it sums).
#include "reference/attention_fp64_gpu.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/oracle_gpu.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb::ref {
namespace {

struct AttentionCase {
  std::int64_t batch, seq, heads, kv_heads, head_dim;
  const char* causal;
  std::int64_t window;
  const char* softcap;
  std::int64_t sampled;  // rows of the sequence the oracle answers for (at most seq)
};

Shape shape_of(const AttentionCase& c, std::int64_t seq) {
  return Shape{{{"batch", c.batch}, {"seq", seq}, {"heads", c.heads}, {"kv_heads", c.kv_heads},
                {"head_dim", c.head_dim}, {"causal", c.causal}, {"window", c.window}, {"softcap", c.softcap}}};
}

// The oracle's tensors at `rows` of the sequence: q and the outputs at the sampled rows, k and v whole.
struct Tensors {
  std::vector<std::int64_t> rows;
  std::vector<HostTensor> in, out;
};

Tensors tensors_of(const AttentionCase& c, std::uint64_t seed) {
  Tensors t;
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> all(static_cast<std::size_t>(c.seq));
  for (std::int64_t i = 0; i < c.seq; ++i) all[static_cast<std::size_t>(i)] = i;
  std::shuffle(all.begin(), all.end(), rng);
  t.rows.assign(all.begin(), all.begin() + c.sampled);
  std::sort(t.rows.begin(), t.rows.end());
  const std::int64_t n = c.sampled;
  const auto values = [&](std::int64_t count, double scale, std::uint64_t s) {
    auto v = test::random_values(static_cast<std::size_t>(count), s);
    for (double& x : v) x *= scale;
    return v;
  };
  t.in = {{"q", {c.batch, n, c.heads, c.head_dim}, values(c.batch * n * c.heads * c.head_dim, 1.5, seed + 1)},
          {"k", {c.batch, c.seq, c.kv_heads, c.head_dim}, values(c.batch * c.seq * c.kv_heads * c.head_dim, 1.5, seed + 2)},
          {"v", {c.batch, c.seq, c.kv_heads, c.head_dim}, values(c.batch * c.seq * c.kv_heads * c.head_dim, 1.0, seed + 3)}};
  t.out = {{"o", {c.batch, n, c.heads, c.head_dim}, std::vector<double>(static_cast<std::size_t>(c.batch * n * c.heads * c.head_dim), NAN)},
           {"lse", {c.batch, c.heads, n}, std::vector<double>(static_cast<std::size_t>(c.batch * c.heads * n), NAN)}};
  return t;
}

// The host oracle, as the op registers it.
void host_oracle(const AttentionCase& c, Tensors& t) {
  const test::ScopedOracleGpuSwitch off("0");
  registered_op("attention_fwd").positional_oracle(shape_of(c, c.sampled), t.rows, t.in, t.out);
}

// "" when every value of `gpu` is within 1e-12 of the larger magnitude of the pair (1e-300 floor),
// or of `scale` where given: an element of O is a sum of terms of both signs (p_j v_j), and its
// rounding is relative to the sum of their magnitudes (its abs_sum), not to what is left of it.
std::string difference(const char* what, const std::vector<double>& gpu, const std::vector<double>& cpu,
                       const std::vector<double>* scale = nullptr) {
  if (gpu.size() != cpu.size()) return std::string(what) + ": sizes differ";
  for (std::size_t e = 0; e < gpu.size(); ++e) {
    const double size = scale ? (*scale)[e] : 0.0;
    const double allowed = 1e-12 * std::max({std::fabs(gpu[e]), std::fabs(cpu[e]), size, 1e-300});
    if (!(std::fabs(gpu[e] - cpu[e]) <= allowed)) {
      char text[200];
      std::snprintf(text, sizeof text, "%s[%zu]: %.17g (GPU) vs %.17g (CPU)", what, e, gpu[e], cpu[e]);
      return text;
    }
  }
  return "";
}

void expect_agreement(const Tensors& gpu, const Tensors& cpu, const std::string& label) {
  EXPECT_EQ(difference("o", gpu.out[0].values, cpu.out[0].values, &cpu.out[0].abs_sum), "") << label;
  EXPECT_EQ(difference("o abs_sum", gpu.out[0].abs_sum, cpu.out[0].abs_sum), "") << label;
  EXPECT_EQ(difference("o root_sum_sq", gpu.out[0].root_sum_sq, cpu.out[0].root_sum_sq), "") << label;
  EXPECT_EQ(difference("lse", gpu.out[1].values, cpu.out[1].values), "") << label;
  EXPECT_EQ(difference("lse root_sum_sq", gpu.out[1].root_sum_sq, cpu.out[1].root_sum_sq), "") << label;
}

class AttentionFp64Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    KWB_REQUIRE_GPU();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    device_.emplace(0);
  }
  std::optional<test::ScopedOracleGpuDevice> device_;
};

TEST_F(AttentionFp64Gpu, AgreesWithTheHostOracleOnEveryMaskSoftCapAndHeadGrouping) {
  const std::vector<AttentionCase> cases = {
      {1, 1, 1, 1, 64, "0", 0, "0", 1},        {2, 3, 4, 1, 128, "1", 0, "0", 3},
      {1, 65, 2, 2, 64, "1", 0, "30", 17},     {1, 127, 4, 2, 128, "0", 0, "0", 127},
      {2, 129, 2, 1, 64, "1", 7, "0", 40},     {1, 200, 3, 1, 128, "0", 33, "50", 64},
      {1, 257, 2, 2, 128, "1", 64, "0", 100},  {1, 131, 2, 1, 64, "1", 1, "0", 131},
      {3, 300, 8, 2, 128, "1", 0, "50", 50},   {2, 96, 6, 3, 64, "0", 0, "30", 96},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const AttentionCase& c = cases[i];
    Tensors cpu = tensors_of(c, 100 + i), gpu = cpu;
    host_oracle(c, cpu);
    auto& o = gpu.out[0];
    auto& lse = gpu.out[1];
    o.abs_sum.assign(o.values.size(), NAN);
    o.root_sum_sq.assign(o.values.size(), NAN);
    lse.root_sum_sq.assign(lse.values.size(), NAN);
    const std::int64_t before = attention_fp64_gpu_runs();
    ASSERT_TRUE(attention_fp64_gpu(AttentionAxes::of(shape_of(c, c.sampled)),
                                   {gpu.in[0].values.data(), gpu.in[1].values.data(), gpu.in[2].values.data(),
                                    gpu.rows.data(), c.sampled, c.seq, o.values.data(), lse.values.data(),
                                    o.abs_sum.data(), o.root_sum_sq.data(), lse.root_sum_sq.data()}))
        << "case " << i;
    EXPECT_EQ(attention_fp64_gpu_runs(), before + 1);
    expect_agreement(gpu, cpu, "case " + std::to_string(i) + " " + shape_of(c, c.seq).to_compact());
  }
}

TEST_F(AttentionFp64Gpu, TheOraclesDispatchUsesItForALargeCaseOnTheThreadThatNamedTheDevice) {
  // 64 sampled rows x 8 heads x 128 dims x 2048 keys x 5: above the GPU's threshold.
  const AttentionCase c{1, 2048, 8, 2, 128, "1", 0, "50", 64};
  Tensors cpu = tensors_of(c, 7), gpu = cpu;
  host_oracle(c, cpu);
  const std::int64_t before = attention_fp64_gpu_runs();
  {
    const test::ScopedOracleGpuSwitch on("1");
    registered_op("attention_fwd").positional_oracle(shape_of(c, c.sampled), gpu.rows, gpu.in, gpu.out);
  }
  EXPECT_EQ(attention_fp64_gpu_runs(), before + 1) << "the dispatch sent it to the GPU";
  expect_agreement(gpu, cpu, "through the dispatch");
}

}  // namespace
}  // namespace kwb::ref
