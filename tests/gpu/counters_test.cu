// Hardware counters read by kwb's own range-profiler path (harness/worker/counters/) against
// what the kernels must have done: a streaming copy's DRAM bytes, an FMA kernel's FMA count, a
// bf16 GEMM's tensor FLOPs (2*M*N*K), and through the case runner, a two-pass variant's traffic.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <execinfo.h>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/derive/ceilings.hpp"
#include "harness/derive/derive.hpp"
#include "harness/derive/measured_roofline.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/plan/metric_host.hpp"
#include "harness/worker/case_runner.hpp"
#include "harness/worker/counters/range_profiler.hpp"
#include "harness/worker/measure/cupti_tracer.hpp"
#include "harness/worker/measure/l2_flush.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

__global__ void copy_kernel(const float4* in, float4* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = in[i];
}

constexpr int kFmasPerThread = 1000;

__global__ void fma_kernel(float* out, float a, float b) {
  float x = threadIdx.x;
  for (int i = 0; i < kFmasPerThread; ++i) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(std::size_t bytes) { cuda_check(cudaMalloc(&ptr, bytes), "cudaMalloc"); }
  ~DeviceMemory() { cudaFree(ptr); }
};

// A crash inside CUPTI says where (addresses of libcupti frames at least).
void print_backtrace(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  std::fprintf(stderr, "signal %d, backtrace:\n", sig);
  backtrace_symbols_fd(frames, n, 2);
  std::_Exit(128 + sig);
}
const bool kBacktraceInstalled = (std::signal(SIGSEGV, print_backtrace), true);

const CounterAccess& access_or_skip() {
  // As the worker does: activity tracing starts before the context exists (KWB_TEST_NO_TRACER=1
  // leaves it off, to see whether the range profiler needs it).
  if (!std::getenv("KWB_TEST_NO_TRACER")) {
    std::string why;
    if (!CuptiTracer::instance().start(&why)) std::printf("CUPTI activity tracing did not start: %s\n", why.c_str());
  }
  cuda_check(cudaSetDevice(0), "cudaSetDevice");
  cuda_check(cudaFree(nullptr), "create the context");
  return counter_access(0);
}

#define KWB_REQUIRE_COUNTERS(access)                                               \
  do {                                                                             \
    if (!(access).unavailable.empty()) GTEST_SKIP() << (access).unavailable;       \
  } while (0)

std::map<std::string, double> totals(const MetricConfig& config, const RangeResult& r) {
  std::vector<KernelCounters> kernels;
  for (const auto& range : r.ranges) {
    KernelCounters k;
    for (std::size_t i = 0; i < config.metrics().size(); ++i) k.values[config.metrics()[i]] = range.values[i];
    kernels.push_back(k);
  }
  return total_over_kernels(kernels);
}

TEST(Counters, StreamingCopyDramBytesMatchTheBytesMoved) {
  KWB_REQUIRE_GPU();
  const CounterAccess& access = access_or_skip();
  KWB_REQUIRE_COUNTERS(access);
  constexpr std::size_t kBytes = std::size_t{1} << 30;  // 1 GiB each way: 20x the L2
  DeviceMemory in(kBytes), out(kBytes);
  cuda_check(cudaMemset(in.ptr, 1, kBytes), "fill");
  cudaStream_t stream;
  cuda_check(cudaStreamCreate(&stream), "stream");
  int l2 = 0;
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  L2Flusher clean(static_cast<std::size_t>(l2), FlushKind::clean);
  MetricConfig config(access.chip, {kDurationMetric, "dram__bytes_read.sum", "dram__bytes_write.sum"},
                      access.availability);
  const std::int64_t n = kBytes / sizeof(float4);
  ReplayPass pass{[&](cudaStream_t s) { clean.flush(s); },
                  [&](cudaStream_t s) {
                    copy_kernel<<<132 * 8, 512, 0, s>>>(static_cast<const float4*>(in.ptr),
                                                        static_cast<float4*>(out.ptr), n);
                  }};
  const RangeResult r = profile_ranges(config, pass, stream);
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_EQ(r.passes, config.passes());
  const auto t = totals(config, r);
  const double read = t.at("dram__bytes_read.sum"), write = t.at("dram__bytes_write.sum");
  std::printf("copy of %zu bytes: DRAM read %.0f (%.4f), written %.0f (%.4f), L2 %d bytes\n", kBytes, read,
              read / kBytes, write, write / kBytes, l2);
  EXPECT_NEAR(read / kBytes, 1.0, 0.02);
  EXPECT_NEAR((read + write) / (2.0 * kBytes), 1.0, 0.02);
  cudaStreamDestroy(stream);
}

__global__ void touch_kernel(float* out) { out[threadIdx.x] = 1.0f; }

// What the L2 still holds dirty after the counter pass's clean flush is written back inside the
// profiled range: measured with a range that writes one 128-byte line.
TEST(Counters, ARangeAfterTheCleanFlushWritesOnlyItsOwnBytes) {
  KWB_REQUIRE_GPU();
  const CounterAccess& access = access_or_skip();
  KWB_REQUIRE_COUNTERS(access);
  DeviceMemory out(4096);
  cudaStream_t stream;
  cuda_check(cudaStreamCreate(&stream), "stream");
  int l2 = 0;
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  L2Flusher clean(static_cast<std::size_t>(l2), FlushKind::clean);
  MetricConfig config(access.chip, {kDurationMetric, "dram__bytes_read.sum", "dram__bytes_write.sum"},
                      access.availability);
  auto launch = [&](cudaStream_t s) { touch_kernel<<<1, 32, 0, s>>>(static_cast<float*>(out.ptr)); };
  const auto t = totals(config, profile_ranges(config, {[&](cudaStream_t s) { clean.flush(s); }, launch}, stream));
  std::printf("after a clean flush: DRAM written %.0f, read %.0f\n", t.at("dram__bytes_write.sum"),
              t.at("dram__bytes_read.sum"));
  // H200: 6 KiB written, 5.5 KiB read (of a 60 MiB L2).
  EXPECT_LT(t.at("dram__bytes_write.sum"), 0.001 * l2);
  cudaStreamDestroy(stream);
}

TEST(Counters, FmaKernelCountsEveryFmaExactly) {
  KWB_REQUIRE_GPU();
  const CounterAccess& access = access_or_skip();
  KWB_REQUIRE_COUNTERS(access);
  constexpr int kBlocks = 264, kThreads = 256;
  DeviceMemory out(kBlocks * kThreads * sizeof(float));
  cudaStream_t stream;
  cuda_check(cudaStreamCreate(&stream), "stream");
  MetricConfig config(access.chip, {kDurationMetric, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"},
                      access.availability);
  ReplayPass pass{nullptr, [&](cudaStream_t s) {
                    fma_kernel<<<kBlocks, kThreads, 0, s>>>(static_cast<float*>(out.ptr), 0.999f, 0.5f);
                  }};
  const RangeResult r = profile_ranges(config, pass, stream, RangeKind::whole_launch);
  ASSERT_EQ(r.ranges.size(), 1u);
  const double ffma = totals(config, r).at("sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
  EXPECT_EQ(ffma, double(kBlocks) * kThreads * kFmasPerThread);
  cudaStreamDestroy(stream);
}

TEST(Counters, TwoKernelsGiveTwoRangesInLaunchOrder) {
  KWB_REQUIRE_GPU();
  const CounterAccess& access = access_or_skip();
  KWB_REQUIRE_COUNTERS(access);
  DeviceMemory out(1024 * 256 * sizeof(float));
  cudaStream_t stream;
  cuda_check(cudaStreamCreate(&stream), "stream");
  MetricConfig config(access.chip, {kDurationMetric, "sm__ctas_launched.sum"}, access.availability);
  ReplayPass pass{nullptr, [&](cudaStream_t s) {
                    fma_kernel<<<2, 256, 0, s>>>(static_cast<float*>(out.ptr), 0.9f, 0.1f);
                    fma_kernel<<<8, 256, 0, s>>>(static_cast<float*>(out.ptr), 0.9f, 0.1f);
                  }};
  const RangeResult r = profile_ranges(config, pass, stream);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[0].values[1], 2.0);  // blocks launched by each kernel, in launch order
  EXPECT_EQ(r.ranges[1].values[1], 8.0);
  cudaStreamDestroy(stream);
}

// Through the case runner, as `kwb run --counters` does: cold, CUPTI timer.
CaseRecord run_with_counters(const std::string& op, const std::string& variant, DType dtype, const Shape& shape,
                             const std::vector<std::string>& sets) {
  static CaseRunner runner(TimerKind::cupti, std::size_t{50} << 20);
  CaseRequest req;
  req.op = op;
  req.variant = variant;
  req.dtype = dtype;
  req.shape = shape;
  if (const Variant* v = Registry::instance().find_variant(op, variant)) req.tunables = default_tunables(*v, shape, dtype);
  req.mode = Mode::cold;
  req.preset = "quick";
  req.include_test_variants = true;
  const CounterRequest counters = parse_counter_request(sets, {});
  req.counter_sets = counters.sets;
  req.counter_metrics = counters.metrics;
  return runner.run(req);
}

TEST(Counters, BfGemmTensorFlopsAreTwiceMNK) {
  KWB_REQUIRE_GPU();
  const CounterAccess& access = access_or_skip();
  KWB_REQUIRE_COUNTERS(access);
  const std::int64_t m = 4096, n = 4096, k = 4096;
  const CaseRecord rec = run_with_counters("linear_bias_relu", "fused_v4_wgmma_tma_warp_specialized", DType::bf16,
                                           Shape{{{"m", AxisValue(m)}, {"n", AxisValue(n)}, {"k", AxisValue(k)}}},
                                           {"tensor"});
  ASSERT_EQ(rec.disposition, Disposition::passed) << rec.reason;
  ASSERT_TRUE(rec.counters.has_value());
  ASSERT_TRUE(rec.counters->unavailable.empty()) << rec.counters->unavailable;
  const auto tensor = measured_tensor_flops(rec.counters->total);
  ASSERT_TRUE(tensor.has_value());
  EXPECT_NEAR(*tensor / (2.0 * m * n * k), 1.0, 1e-3) << *tensor;
  for (const auto& kc : rec.counters->kernels) std::printf("  kernel %s\n", kc.name.c_str());
}

// test_colsum's simple variant reads x twice (a row-sum kernel, then a column-sum kernel): at
// 8192 x 8192 fp32 (256 MiB, five times the L2) its DRAM traffic is about twice the work model's,
// which the measured roofline flags.
TEST(Counters, AVariantThatReadsItsInputTwiceShowsATrafficRatioNearTwoAndIsFlagged) {
  KWB_REQUIRE_GPU();
  const CounterAccess& access = access_or_skip();
  KWB_REQUIRE_COUNTERS(access);
  CaseRecord rec = run_with_counters("test_colsum", "test_simple", DType::fp32,
                                     Shape{{{"rows", AxisValue(8192)}, {"cols", AxisValue(8192)}}}, {"memory"});
  ASSERT_EQ(rec.disposition, Disposition::passed) << rec.reason;
  ASSERT_TRUE(rec.counters && rec.counters->unavailable.empty());
  EXPECT_EQ(rec.counters->kernels.size(), 2u);
  DeviceInfo device = query_device(0);
  derive_metrics(rec, Registry::instance(), datasheet_ceilings(device), device.l2_bytes);
  ASSERT_TRUE(rec.derived && rec.derived->measured);
  const MeasuredWork& m = *rec.derived->measured;
  std::printf("traffic ratio %.3f: %s\n", m.traffic_ratio, m.flags.empty() ? "(no flag)" : m.flags[0].c_str());
  // Twice the input, and on an H200 about 27 MB more (2.097 to 2.101 over five runs): the same
  // extra the kernels' DRAM writes show against Nsight Compute's (docs/notebook/2026-11-26-profiling.md).
  EXPECT_GT(m.traffic_ratio, 1.9);
  EXPECT_LT(m.traffic_ratio, 2.2);
  ASSERT_FALSE(m.flags.empty());
  EXPECT_NE(m.flags[0].find("more DRAM traffic"), std::string::npos) << m.flags[0];
}

}  // namespace
}  // namespace kwb
