// The GPU fp64 reference (reference/matmul_fp64_gpu.cu) against the CPU loop it stands in for,
// bit for bit (memcmp): small and odd shapes with every transpose, leading dimensions wider than
// the matrices, alpha != 1, beta 0 and 1 over a non-zero C, magnitudes or not, sums in blocks of
// k; one large product through matmul_fp64's own dispatch (on the thread that named the device,
// not on another); whole oracles of the ops that use it. The CPU stays the ground truth: it runs
// with KWB_ORACLE_GPU=0. A product the size of linear_cross_entropy's logits, and the oracles,
// print both paths' times (to quote, not asserted).
#include "reference/matmul_fp64_gpu.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "reference/matmul_fp64.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/oracle_gpu.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb::ref {
namespace {

using test::random_values;

using test::ScopedOracleGpuDevice;
using test::ScopedOracleGpuSwitch;

// The device current on this thread: the one a worker names for its oracles.
int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) ADD_FAILURE() << "cudaGetDevice failed";
  return device;
}

// "" when x and y hold the same bits, else where they first differ.
std::string bit_difference(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    return "sizes " + std::to_string(x.size()) + " and " + std::to_string(y.size());
  if (std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0) return "";
  for (std::size_t e = 0; e < x.size(); ++e)
    if (std::memcmp(&x[e], &y[e], sizeof(double)) != 0) {
      char text[160];
      std::snprintf(text, sizeof text, "first difference at element %zu: %a (GPU) vs %a (CPU)", e,
                    x[e], y[e]);
      return text;
    }
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One product's operands and outputs, stored with leading dimensions `pad` wider than needed.
struct Problem {
  std::int64_t m, n, k;
  bool ta, tb;
  std::int64_t lda, ldb, ldc;
  std::vector<double> a, b;
  std::vector<double> c, abs_sum, sum_sq;  // non-zero: beta 1 reads them

  Problem(std::int64_t m_, std::int64_t n_, std::int64_t k_, bool ta_, bool tb_, std::int64_t pad,
          std::uint64_t seed)
      : m(m_),
        n(n_),
        k(k_),
        ta(ta_),
        tb(tb_),
        lda((ta_ ? m_ : k_) + pad),
        ldb((tb_ ? k_ : n_) + pad),
        ldc(n_ + pad) {
    a = random_values(static_cast<std::size_t>((ta ? k : m) * lda), seed);
    b = random_values(static_cast<std::size_t>((tb ? n : k) * ldb), seed + 1);
    c = random_values(static_cast<std::size_t>(m * ldc), seed + 2);
    abs_sum = random_values(c.size(), seed + 3);
    sum_sq = random_values(c.size(), seed + 4);
  }
  MatrixView av() const { return {a.data(), lda, ta}; }
  MatrixView bv() const { return {b.data(), ldb, tb}; }
  std::string describe() const {
    std::ostringstream s;
    s << m << " x " << n << " x " << k << (ta ? " A^T" : " A") << (tb ? " B^T" : " B") << " lda "
      << lda << " ldb " << ldb << " ldc " << ldc;
    return s.str();
  }
};

// How one product is asked for: alpha, beta, magnitudes, and a k block (0: matmul_fp64's one sum).
struct Call {
  double alpha, beta;
  bool magnitudes;
  std::int64_t k_block;
};

// The CPU (KWB_ORACLE_GPU=0) and the GPU path forced on, each on its own copy of C: the same bits,
// padding included (neither writes it).
void expect_same_bits(const Problem& p, const Call& call) {
  Problem cpu = p, gpu = p;
  {
    const ScopedOracleGpuSwitch off("0");
    const TermMagnitudes mag{cpu.abs_sum.data(), cpu.sum_sq.data()};
    if (call.k_block > 0)
      matmul_fp64_k_blocks(p.m, p.n, p.k, call.k_block, cpu.av(), cpu.bv(), cpu.c.data(), p.ldc,
                           call.beta, call.magnitudes ? mag : TermMagnitudes{});
    else if (call.magnitudes)
      matmul_fp64(p.m, p.n, p.k, cpu.av(), cpu.bv(), cpu.c.data(), p.ldc, call.beta, mag);
    else
      matmul_fp64(p.m, p.n, p.k, cpu.av(), cpu.bv(), cpu.c.data(), p.ldc, call.alpha, call.beta);
  }
  const TermMagnitudes gpu_mag =
      call.magnitudes ? TermMagnitudes{gpu.abs_sum.data(), gpu.sum_sq.data()} : TermMagnitudes{};
  const double alpha = call.magnitudes || call.k_block > 0 ? 1.0 : call.alpha;
  ASSERT_TRUE(matmul_fp64_gpu(p.m, p.n, p.k, gpu.av(), gpu.bv(), gpu.c.data(), p.ldc, alpha,
                              call.beta, gpu_mag, call.k_block))
      << "the GPU path did not run: " << p.describe();
  const std::string where =
      p.describe() + ", alpha " + std::to_string(alpha) + " beta " + std::to_string(call.beta) +
      (call.magnitudes ? ", magnitudes" : "") +
      (call.k_block > 0 ? ", k blocks of " + std::to_string(call.k_block) : "");
  EXPECT_EQ(bit_difference(gpu.c, cpu.c), "") << "C: " << where;
  EXPECT_EQ(bit_difference(gpu.abs_sum, cpu.abs_sum), "") << "abs_sum: " << where;
  EXPECT_EQ(bit_difference(gpu.sum_sq, cpu.sum_sq), "") << "sum_sq: " << where;
}

TEST(MatmulFp64Gpu, SmallAndOddShapesMatchTheCpuBitForBit) {
  KWB_REQUIRE_GPU();
  const ScopedOracleGpuDevice device(current_device());  // this thread plays the worker's
  const std::int64_t sizes[] = {1, 3, 17, 64, 129, 300};
  const Call calls[] = {
      {1.0, 0.0, false, 0}, {-0.75, 0.0, false, 0}, {-0.75, 1.0, false, 0},  // C ignored, C read
      {1.0, 0.0, true, 0},  {1.0, 1.0, true, 0},                             // magnitudes
      {1.0, 1.0, true, 7},  {1.0, 0.0, false, 64},                           // sums in blocks of k
  };
  std::uint64_t seed = 11;
  for (const auto m : sizes)
    for (const auto n : sizes)
      for (const auto k : sizes)
        for (const bool ta : {false, true})
          for (const bool tb : {false, true}) {
            const Problem p(m, n, k, ta, tb, /*pad=*/5, seed += 10);
            for (const Call& call : calls) {
              expect_same_bits(p, call);
              if (HasFailure()) return;  // one failing shape says enough
            }
          }
}

// 512 x 4096 x 1024 (2^31 multiply-adds): matmul_fp64 sends it to the GPU by itself (the run
// count says so) and gets the CPU's bits, plain and with magnitudes.
TEST(MatmulFp64Gpu, ALargeProductThroughTheDispatchMatchesTheCpuBitForBit) {
  KWB_REQUIRE_GPU();
  const ScopedOracleGpuDevice device(current_device());   // this thread plays the worker's
  const Problem p(512, 4096, 1024, false, true, 0, 101);  // y = x W^T, as the linear layers ask
  for (const bool magnitudes : {false, true}) {
    Problem cpu = p, gpu = p;
    auto run = [&](Problem& q) {
      if (magnitudes)
        matmul_fp64(q.m, q.n, q.k, q.av(), q.bv(), q.c.data(), q.ldc, 1.0,
                    {q.abs_sum.data(), q.sum_sq.data()});
      else
        matmul_fp64(q.m, q.n, q.k, q.av(), q.bv(), q.c.data(), q.ldc, 1.5, 1.0);
    };
    {
      const ScopedOracleGpuSwitch off("0");
      const auto before = matmul_fp64_gpu_runs();
      run(cpu);
      EXPECT_EQ(matmul_fp64_gpu_runs(), before) << "KWB_ORACLE_GPU=0 keeps the product on the CPU";
    }
    {
      const ScopedOracleGpuSwitch unset(nullptr);
      const auto before = matmul_fp64_gpu_runs();
      run(gpu);
      EXPECT_EQ(matmul_fp64_gpu_runs(), before + 1) << "the dispatch used the GPU";
    }
    EXPECT_EQ(bit_difference(gpu.c, cpu.c), "") << "magnitudes " << magnitudes;
    EXPECT_EQ(bit_difference(gpu.abs_sum, cpu.abs_sum), "") << "magnitudes " << magnitudes;
    EXPECT_EQ(bit_difference(gpu.sum_sq, cpu.sum_sq), "") << "magnitudes " << magnitudes;
  }
}

// A thread that named no device (one computing oracles while a case is timed, say) keeps even a
// large product on the CPU, while the thread that named it uses the GPU.
TEST(MatmulFp64Gpu, OnlyTheThreadThatNamedTheDeviceUsesIt) {
  KWB_REQUIRE_GPU();
  const ScopedOracleGpuDevice device(current_device());
  const ScopedOracleGpuSwitch unset(nullptr);
  const Problem p(512, 512, 1024, false, false, 0, 301);
  Problem here = p, there = p;
  auto before = matmul_fp64_gpu_runs();
  std::thread other(
      [&] { matmul_fp64(p.m, p.n, p.k, there.av(), there.bv(), there.c.data(), p.ldc, 1.0, 0.0); });
  other.join();
  EXPECT_EQ(matmul_fp64_gpu_runs(), before) << "the other thread stayed on the CPU";
  matmul_fp64(p.m, p.n, p.k, here.av(), here.bv(), here.c.data(), p.ldc, 1.0, 0.0);
  EXPECT_EQ(matmul_fp64_gpu_runs(), before + 1) << "this thread used the GPU";
  EXPECT_EQ(bit_difference(here.c, there.c), "");
}

// linear_cross_entropy's logits for one chunk of its oracle at the default shape (1048 tokens of
// 4096, hidden 1024, vocab 32000), with magnitudes, in blocks of 128 of k as the oracle sums them:
// both paths timed (printed, not asserted), the same bits.
TEST(MatmulFp64Gpu, LinearCrossEntropySizedProductTimesBothPaths) {
  KWB_REQUIRE_GPU();
  const ScopedOracleGpuDevice device(current_device());  // this thread plays the worker's
  const std::int64_t m = 1048, n = 32000, k = 1024, block = 128;
  const auto a = random_values(static_cast<std::size_t>(m * k), 201);
  const auto b = random_values(static_cast<std::size_t>(k * n), 202);
  std::vector<double> c_cpu(static_cast<std::size_t>(m * n)), abs_cpu(c_cpu.size()),
      sq_cpu(c_cpu.size());
  std::vector<double> c_gpu(c_cpu.size()), abs_gpu(c_cpu.size()), sq_gpu(c_cpu.size());
  auto start = std::chrono::steady_clock::now();
  {
    const ScopedOracleGpuSwitch off("0");
    matmul_fp64_k_blocks(m, n, k, block, {a.data(), k}, {b.data(), n}, c_cpu.data(), n, 0.0,
                         {abs_cpu.data(), sq_cpu.data()});
  }
  const double cpu_s = seconds_since(start);
  start = std::chrono::steady_clock::now();
  const auto before = matmul_fp64_gpu_runs();
  {
    const ScopedOracleGpuSwitch unset(nullptr);
    matmul_fp64_k_blocks(m, n, k, block, {a.data(), k}, {b.data(), n}, c_gpu.data(), n, 0.0,
                         {abs_gpu.data(), sq_gpu.data()});
  }
  const double gpu_s = seconds_since(start);
  EXPECT_EQ(matmul_fp64_gpu_runs(), before + 1) << "the dispatch used the GPU";
  std::printf(
      "[ TIMING   ] fp64 product %lld x %lld x %lld with magnitudes, k in blocks of %lld: "
      "CPU %.3f s (%d threads), GPU %.3f s (copies included): %.1fx\n",
      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
      static_cast<long long>(block), cpu_s, oracle_threads(), gpu_s, cpu_s / gpu_s);
  EXPECT_EQ(bit_difference(c_gpu, c_cpu), "");
  EXPECT_EQ(bit_difference(abs_gpu, abs_cpu), "");
  EXPECT_EQ(bit_difference(sq_gpu, sq_cpu), "");
}

// An op's whole oracle, as the worker runs it, gives the same expected values (and magnitudes) on
// both paths, and the GPU path did run; both times printed.
TEST(MatmulFp64Gpu, OraclesGiveTheSameExpectedValuesOnBothPaths) {
  KWB_REQUIRE_GPU();
  const ScopedOracleGpuDevice device(current_device());  // this thread plays the worker's
  const std::vector<std::pair<std::string, Shape>> cases = {
      {"linear_bias_relu", Shape{{{"m", 1024}, {"n", 1536}, {"k", 1024}}}},
      {"swiglu_mlp_fwd", Shape{{{"m", 512}, {"d", 1024}, {"f", 2816}}}},
      {"newton_schulz", Shape{{{"rows", 1024}, {"cols", 1536}}}},
      {"linear_cross_entropy", Shape{{{"tokens", 1024}, {"hidden", 512}, {"vocab", 8000}}}},
  };
  for (const auto& [name, shape] : cases) {
    const Op& op = registered_op(name);
    const auto inputs = host_inputs(op.tensors(shape, DType::bf16), 7);
    std::vector<HostTensor> cpu, gpu;
    auto start = std::chrono::steady_clock::now();
    {
      const ScopedOracleGpuSwitch off("0");
      cpu = run_oracle(op, shape, inputs);
    }
    const double cpu_s = seconds_since(start);
    const auto before = matmul_fp64_gpu_runs();
    start = std::chrono::steady_clock::now();
    {
      const ScopedOracleGpuSwitch unset(nullptr);
      gpu = run_oracle(op, shape, inputs);
    }
    const double gpu_s = seconds_since(start);
    EXPECT_GT(matmul_fp64_gpu_runs(), before) << name << ": the oracle's products used the GPU";
    std::printf("[ TIMING   ] %s oracle at %s: CPU %.3f s, GPU %.3f s\n", name.c_str(),
                shape.to_assignments().c_str(), cpu_s, gpu_s);
    ASSERT_EQ(cpu.size(), gpu.size());
    for (std::size_t o = 0; o < cpu.size(); ++o) {
      EXPECT_EQ(bit_difference(gpu[o].values, cpu[o].values), "") << name << " " << cpu[o].name;
      EXPECT_EQ(bit_difference(gpu[o].abs_sum, cpu[o].abs_sum), "")
          << name << " " << cpu[o].name << " abs_sum";
      EXPECT_EQ(bit_difference(gpu[o].root_sum_sq, cpu[o].root_sum_sq), "")
          << name << " " << cpu[o].name << " rss";
    }
  }
}

// linear_cross_entropy's dW at sampled vocabulary rows, its product small enough for the CPU
// while the whole one runs on the GPU: the same bits as those rows of the whole answer.
TEST(MatmulFp64Gpu, SampledDwRowsOnTheCpuEqualTheWholeProductsRowsOnTheGpu) {
  KWB_REQUIRE_GPU();
  const ScopedOracleGpuDevice device(current_device());
  const ScopedOracleGpuSwitch unset(nullptr);
  const Op& op = registered_op("linear_cross_entropy");
  const Shape shape{{{"tokens", 200}, {"hidden", 1024}, {"vocab", 32000}}};
  const auto specs = op.tensors(shape, DType::bf16);
  const auto inputs = host_inputs(specs, 11);
  const SamplePlan plan = plan_sample(op, shape, specs, 11);
  ASSERT_TRUE(plan.sampled) << plan.note;
  const auto before_whole = matmul_fp64_gpu_runs();
  const auto whole = run_oracle(op, shape, inputs);
  EXPECT_EQ(matmul_fp64_gpu_runs(), before_whole + 3) << "the whole oracle's logits, dh and dW on the GPU";
  std::vector<HostTensor> sampled;
  for (const TensorSpec& t : specs)
    if (t.is_output) sampled.push_back({t.name, plan.dims(t), std::vector<double>(plan.elements(t), 0.0)});
  const auto before_sampled = matmul_fp64_gpu_runs();
  run_sampled_oracle(op, shape, plan, inputs, sampled);
  EXPECT_EQ(matmul_fp64_gpu_runs(), before_sampled + 2) << "the logits and dh on the GPU, the sampled dW on the CPU";
  const std::int64_t hidden = 1024;
  std::vector<double> rows, rows_abs, rows_rss;
  for (std::int64_t v : plan.indices)
    for (std::int64_t d = 0; d < hidden; ++d) {
      const auto at = static_cast<std::size_t>(v * hidden + d);
      rows.push_back(whole[2].values[at]);
      rows_abs.push_back(whole[2].abs_sum[at]);
      rows_rss.push_back(whole[2].root_sum_sq[at]);
    }
  EXPECT_EQ(bit_difference(sampled[2].values, rows), "");
  EXPECT_EQ(bit_difference(sampled[2].abs_sum, rows_abs), "");
  EXPECT_EQ(bit_difference(sampled[2].root_sum_sq, rows_rss), "");
  for (std::size_t o = 0; o < 2; ++o) {  // the loss and dh: whole
    EXPECT_EQ(bit_difference(sampled[o].values, whole[o].values), "") << o;
    EXPECT_EQ(bit_difference(sampled[o].abs_sum, whole[o].abs_sum), "") << o;
    EXPECT_EQ(bit_difference(sampled[o].root_sum_sq, whole[o].root_sum_sq), "") << o;
  }
}

}  // namespace
}  // namespace kwb::ref
