// Micro-benchmarks for the ceilings: copies and reads over 1 and 2 GiB under both flushes (each
// the best of several kernels), an L2 copy, an FFMA loop, cuBLASLt GEMMs; and the short copy that
// re-checks a cached copy ceiling.
//
// Napkin math: copy moves 2 x 1 or 2 GiB (read + write) per launch, read-only moves 1 or 2 GiB; the FFMA
// kernel does 2 FLOPs per FMA; a GEMM of m = n = k = 8192 does 2 * 8192^3 FLOPs. All inputs
// are random (never zeros: a GEMM on zeros runs faster than on real data).
#include <cublasLt.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/worker/measure/ceilings_measure.hpp"
#include "harness/worker/measure/stream_kernels.cuh"
#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/prepare/device_fill.hpp"

namespace kwb {
namespace {

// UNROLL independent 16-byte loads in flight per thread before the stores: a plain one-load
// loop leaves the memory system under-occupied and would set the ceiling too low (seen: 3.95
// against 4.2 TB/s on an H200), making kernels appear above 100% of it.
template <int UNROLL>
__global__ void copy_stream(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) out[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) out[i] = in[i];
}

// Each block copies a contiguous chunk (blockDim.x * UNROLL vectors) per step, then jumps by
// the grid: reads and writes of a block stay on the same DRAM pages, as a row-wise kernel's do.
template <int UNROLL>
__global__ void copy_chunks(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t n) {
  const std::size_t chunk = std::size_t{blockDim.x} * UNROLL;
  for (std::size_t base = blockIdx.x * chunk; base < n; base += std::size_t{gridDim.x} * chunk) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const std::size_t i = base + u * blockDim.x + threadIdx.x;
      if (i < n) v[u] = in[i];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const std::size_t i = base + u * blockDim.x + threadIdx.x;
      if (i < n) out[i] = v[u];
    }
  }
}

// No grid-stride loop: one block per blockDim.x * UNROLL vectors, as the elementwise kernels of
// the catalogue launch (mhc_post_res_fwd, with 5 reads to 4 writes, moved 3046 GB/s on an H100
// where every persistent copy above read under 2900 and the driver's copy 3033). The ceiling
// must be at least what such a kernel moves; `spread` > 1 splits the arrays into that many
// parts and has each thread copy the same vector of every part, so its loads go to distant pages
// at once, as a kernel mixing several tensors does.
template <int UNROLL, int SPREAD>
__global__ void copy_blocks(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t n) {
  const std::size_t part = n / SPREAD;  // the tail past SPREAD * part is copied by part 0's threads
  const std::size_t base = blockIdx.x * std::size_t{blockDim.x} * UNROLL + threadIdx.x;
  uint4 v[UNROLL * SPREAD];
#pragma unroll
  for (int p = 0; p < SPREAD; ++p)
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const std::size_t i = base + u * std::size_t{blockDim.x};
      if (i < part) v[p * UNROLL + u] = in[p * part + i];
    }
#pragma unroll
  for (int p = 0; p < SPREAD; ++p)
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const std::size_t i = base + u * std::size_t{blockDim.x};
      if (i < part) out[p * part + i] = v[p * UNROLL + u];
    }
  for (std::size_t i = SPREAD * part + base; i < n; i += std::size_t{gridDim.x} * blockDim.x * UNROLL)
    out[i] = in[i];
}

// The write-only ceiling's kernels: stores of a value no case compares against, nothing loaded.
// UNROLL stores of 16 bytes per thread, grid-stride (a persistent grid) or one block per chunk.
template <int UNROLL>
__global__ void write_unrolled(uint4* __restrict__ out, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const uint4 v{0x3C003C00u, 0x3C003C00u, 0x3C003C00u, 0x3C003C00u};
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride)
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) out[i + u * stride] = v;
  for (; i < n; i += stride) out[i] = v;
}

template <int UNROLL>
__global__ void write_blocks(uint4* __restrict__ out, std::size_t n) {
  const std::size_t base = blockIdx.x * std::size_t{blockDim.x} * UNROLL + threadIdx.x;
  const uint4 v{0x3C003C00u, 0x3C003C00u, 0x3C003C00u, 0x3C003C00u};
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const std::size_t i = base + u * std::size_t{blockDim.x};
    if (i < n) out[i] = v;
  }
}

// `passes` copies of n = mask + 1 vectors (a power of two); each pass starts its threads at a
// rotated offset, so no pass repeats the addresses of the one before it in the same thread.
__global__ void l2_copy(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t mask,
                        int passes) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t tid = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (int p = 0; p < passes; ++p) {
    const std::size_t rotate = std::size_t(p) * 7 * blockDim.x;
    for (std::size_t i = tid; i <= mask; i += stride) {
      const std::size_t j = (i + rotate) & mask;
      out[j] = in[j];
    }
  }
}

constexpr int kFmaChains = 8;
constexpr int kFmaIterations = 4096;

// kFmaChains independent FMA chains per thread keep every FP32 pipe busy.
__global__ void ffma_loop(float* out, float seed) {
  float acc[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) acc[c] = seed + threadIdx.x * 1e-7f + c;
  const float a = 0.999999f, b = 1e-7f;
  for (int i = 0; i < kFmaIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) acc[c] = fmaf(acc[c], a, b);
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) sum += acc[c];
  if (sum == 12345.0f) out[0] = sum;  // keep the loop alive
}

MeasureSettings ceiling_settings(Mode mode = Mode::hot) {
  MeasureSettings s;
  s.mode = mode;
  s.rule = *stopping_preset("default");
  s.rule.min_samples = 20;
  s.keep_samples = false;
  return s;
}

// The quick preset's burst, cold: a short warm-up and 10 or more samples over 20 ms or more. The
// tensor ceilings' bursts and the session-start copy check both take it.
MeasureSettings quick_cold_settings() {
  MeasureSettings s;
  s.mode = Mode::cold;
  s.rule = *stopping_preset("quick");
  s.keep_samples = false;
  return s;
}

double rate_per_us(double amount, const TimingResult& t) { return amount / t.span.median; }

struct LtGemm {
  cudaDataType_t data;
  cublasComputeType_t compute;
  DType fill_dtype;
};

// The tensor-core ceiling of one operand type: the best rate cuBLASLt reaches over a few square
// and flat shapes and its first few heuristic algorithms, each timed as the catalogue's cases are
// (cold: the dirty flush between samples). A GEMM's rate follows the SM clock, and the clock
// follows the GPU's power and temperature: back-to-back GEMMs heat it into its power limit (a hot
// 8192^3 bf16 GEMM: 694 TFLOP/s on an H100, against 779 for a cold-timed case of the same library),
// and a median over a measurement that runs after a minute of other ceilings sat 3-7% under a
// tf32 case that followed seconds of host work at 1980 MHz: a case above 100% of its roof. So each
// algorithm is timed after a rest, in a short burst like a case's, and its rate is its best
// sample: what the hardware was seen to do at its highest clock. The SM clock of the best
// measurement is kept beside the rate, so a case can be set against the clock its roof ran at.
constexpr std::chrono::milliseconds kGemmRest{250};

struct GemmCeiling {
  double tflops = 0;
  double sm_mhz = 0;  // the mean SM clock of the measurement that set tflops; 0 without NVML
};

GemmCeiling gemm_ceiling(const LtGemm& g, cudaStream_t stream, TimerKind timer, L2Flusher* flusher) {
  struct Mnk {
    int m, n, k;
  };
  constexpr Mnk kShapes[] = {{2048, 4096, 4096}, {4096, 4096, 4096}, {8192, 8192, 8192}};
  constexpr int kAlgos = 3;
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtCreate failed");
  const std::size_t esize = g.data == CUDA_R_32F ? 4 : 2;
  const std::size_t elems = std::size_t(8192) * 8192;  // the largest operand of the shapes
  void *a, *b, *c, *ws;
  const std::size_t ws_bytes = 64 << 20;
  cuda_check(cudaMalloc(&a, elems * esize), "cudaMalloc A");
  cuda_check(cudaMalloc(&b, elems * esize), "cudaMalloc B");
  cuda_check(cudaMalloc(&c, elems * esize), "cudaMalloc C");
  cuda_check(cudaMalloc(&ws, ws_bytes), "cudaMalloc workspace");
  const Distribution normal{Distribution::Kind::normal, 0, 1};
  cuda_check(fill_random(a, elems, g.fill_dtype, normal, 7, 1, stream), "fill A");
  cuda_check(fill_random(b, elems, g.fill_dtype, normal, 7, 2, stream), "fill B");

  GemmCeiling best;
  for (const Mnk& shape : kShapes) {
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, g.compute, CUDA_R_32F);
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;  // "TN": the fast layout
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa);
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb);
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatrixLayoutCreate(&la, g.data, shape.k, shape.m, shape.k);
    cublasLtMatrixLayoutCreate(&lb, g.data, shape.k, shape.n, shape.k);
    cublasLtMatrixLayoutCreate(&lc, g.data, shape.m, shape.n, shape.m);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                         sizeof ws_bytes);
    cublasLtMatmulHeuristicResult_t heuristics[kAlgos]{};
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, kAlgos, heuristics, &found);
    for (int i = 0; i < found; ++i) {
      const float alpha = 1, beta = 0;
      auto launch = [&](cudaStream_t s) {
        // A launch that fails would leave a short, empty sample: rated by its best sample, the
        // ceiling must never see one.
        if (cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &heuristics[i].algo, ws, ws_bytes, s) !=
            CUBLAS_STATUS_SUCCESS)
          throw std::runtime_error("cublasLtMatmul failed while measuring the tensor ceiling");
      };
      // The rest lets the power and the clock come back from the last burst; the burst is the
      // quick preset's (a short warm-up, at least 10 samples over 20 ms or more).
      std::this_thread::sleep_for(kGemmRest);
      const auto t = measure(launch, stream, quick_cold_settings(), timer, flusher);
      if (!(t.span.min > 0)) continue;  // no sample time: nothing to rate
      const double tflops = 2.0 * shape.m * double(shape.n) * shape.k / t.span.min / 1e6;
      if (tflops > best.tflops) best = {tflops, t.clocks ? t.clocks->sm_mean_mhz : 0.0};
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(ws);
  cublasLtDestroy(lt);
  return best;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

// The measurement stream, destroyed on every path out of a measurement: a failed allocation or
// launch throws from anywhere in it, and whoever called it (the worker answering the session's
// short copy, a test) must not be left a stream it cannot reach.
struct ScopedStream {
  cudaStream_t stream = nullptr;
  ScopedStream() { cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~ScopedStream() { cudaStreamDestroy(stream); }
  ScopedStream(const ScopedStream&) = delete;
  ScopedStream& operator=(const ScopedStream&) = delete;
};

// The DRAM streams' buffers: 1 or 2 GiB each way (less on a small card), the source random.
struct DramBuffers {
  void* in = nullptr;
  void* out = nullptr;
  unsigned* sink = nullptr;
  std::size_t max_bytes = 0;
  DramBuffers(const DeviceInfo& device, std::size_t cap, cudaStream_t stream) {
    max_bytes = std::min(cap, static_cast<std::size_t>(device.global_mem_bytes) / 8);
    cuda_check(cudaMalloc(&in, max_bytes), "cudaMalloc");
    cuda_check(cudaMalloc(&out, max_bytes), "cudaMalloc");
    cuda_check(cudaMalloc(&sink, sizeof(unsigned)), "cudaMalloc");
    cuda_check(fill_random(in, max_bytes / 4, DType::fp32, {}, 3, 0, stream), "fill");
  }
  ~DramBuffers() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(sink);
  }
  DramBuffers(const DramBuffers&) = delete;
  DramBuffers& operator=(const DramBuffers&) = delete;
};

// One way to stream `bytes` through DRAM: a copy (read + write) or a read-only pass.
struct StreamMethod {
  std::string name;
  std::function<void(cudaStream_t, std::size_t bytes)> launch;
  bool events_timer = false;  // CUPTI sees no kernel (the driver's copy): CUDA events time it
};

std::vector<StreamMethod> copy_methods(const DeviceInfo& device, const DramBuffers& b) {
  const auto* in = static_cast<const uint4*>(b.in);
  auto* out = static_cast<uint4*>(b.out);
  const int sms = device.sm_count;
  auto persistent = [=](auto kernel, int blocks_per_sm, int threads) {
    return [=](cudaStream_t s, std::size_t bytes) { kernel<<<sms * blocks_per_sm, threads, 0, s>>>(in, out, bytes / 16); };
  };
  auto per_chunk = [=](auto kernel, int unroll, int spread) {
    return [=](cudaStream_t s, std::size_t bytes) {
      const std::size_t vecs = bytes / 16, per_block = std::size_t{256} * unroll;
      kernel<<<static_cast<unsigned>((vecs / spread + per_block - 1) / per_block), 256, 0, s>>>(in, out, vecs);
    };
  };
  return {
      {"copy_stream<1> 8x512", persistent(copy_stream<1>, 8, 512)},
      {"copy_stream<4> 4x512", persistent(copy_stream<4>, 4, 512)},
      {"copy_stream<8> 2x512", persistent(copy_stream<8>, 2, 512)},
      {"copy_chunks<4> 8x256", persistent(copy_chunks<4>, 8, 256)},
      {"copy_chunks<2> 4x512", persistent(copy_chunks<2>, 4, 512)},
      {"copy_chunks<8> 4x256", persistent(copy_chunks<8>, 4, 256)},
      {"copy_blocks<1,1>", per_chunk(copy_blocks<1, 1>, 1, 1)},
      {"copy_blocks<2,1>", per_chunk(copy_blocks<2, 1>, 2, 1)},
      {"copy_blocks<1,4>", per_chunk(copy_blocks<1, 4>, 1, 4)},
      // The driver's own copy. CUPTI records no kernel for it, so CUDA events time it: their
      // launch latency (microseconds against a copy of hundreds) can only lower this figure
      // (four copies between one pair of events measured no higher on an H100).
      {"cudaMemcpyAsync",
       [=](cudaStream_t s, std::size_t bytes) {
         cuda_check(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
       },
       true},
  };
}

// The write-only ceiling: store kernels at the launch shapes the reads use, and the driver's memset
// (no kernel that CUPTI sees: CUDA events time it, as the driver's copy).
std::vector<StreamMethod> write_methods(const DeviceInfo& device, const DramBuffers& b) {
  auto* out = static_cast<uint4*>(b.out);
  const int sms = device.sm_count;
  auto blocks = [=](auto kernel, int unroll) {
    return [=](cudaStream_t s, std::size_t bytes) {
      const std::size_t vecs = bytes / 16, per_block = std::size_t{256} * unroll;
      kernel<<<static_cast<unsigned>((vecs + per_block - 1) / per_block), 256, 0, s>>>(out, vecs);
    };
  };
  return {
      {"write_unrolled<1> 8x512", [=](cudaStream_t s, std::size_t bytes) { write_unrolled<1><<<sms * 8, 512, 0, s>>>(out, bytes / 16); }},
      {"write_unrolled<4> 4x512", [=](cudaStream_t s, std::size_t bytes) { write_unrolled<4><<<sms * 4, 512, 0, s>>>(out, bytes / 16); }},
      {"write_blocks<1>", blocks(write_blocks<1>, 1)},
      {"write_blocks<4>", blocks(write_blocks<4>, 4)},
      {"cudaMemsetAsync",
       [=](cudaStream_t s, std::size_t bytes) { cuda_check(cudaMemsetAsync(out, 0x3C, bytes, s), "cudaMemsetAsync"); },
       true},
  };
}

// The read-only ceiling is the best of several read kernels, as the copy ceiling is of several
// copies: one grid-stride kernel with one load in flight (the only one before) could sit below
// what a case reads, and a read-heavy case would then read above its roof. Launch shapes (a
// persistent grid, a block per chunk), loads in flight (1, 4, 8) and vector widths (16 and 8
// bytes).
std::vector<StreamMethod> read_methods(const DeviceInfo& device, const DramBuffers& b) {
  const auto* in = static_cast<const uint4*>(b.in);
  unsigned* sink = b.sink;
  const int sms = device.sm_count;
  auto blocks = [=](auto kernel, int unroll) {
    return [=](cudaStream_t s, std::size_t bytes) {
      const std::size_t vecs = bytes / 16, per_block = std::size_t{256} * unroll;
      kernel<<<static_cast<unsigned>((vecs + per_block - 1) / per_block), 256, 0, s>>>(in, vecs, sink);
    };
  };
  return {
      {"read_stream 8x512",
       [=](cudaStream_t s, std::size_t bytes) { read_stream<<<sms * 8, 512, 0, s>>>(in, bytes / 16, sink); }},
      {"read_unrolled<16B,4> 4x512",
       [=](cudaStream_t s, std::size_t bytes) {
         read_unrolled<uint4, 4><<<sms * 4, 512, 0, s>>>(in, bytes / 16, sink);
       }},
      {"read_unrolled<16B,8> 2x512",
       [=](cudaStream_t s, std::size_t bytes) {
         read_unrolled<uint4, 8><<<sms * 2, 512, 0, s>>>(in, bytes / 16, sink);
       }},
      {"read_unrolled<8B,8> 4x512",
       [=](cudaStream_t s, std::size_t bytes) {
         read_unrolled<uint2, 8><<<sms * 4, 512, 0, s>>>(reinterpret_cast<const uint2*>(in), bytes / 8, sink);
       }},
      {"read_blocks<2>", blocks(read_blocks<2>, 2)},
      {"read_blocks<4>", blocks(read_blocks<4>, 4)},
  };
}

// GB/s of one method over `bytes` (counting `passes_per_byte` bytes moved per byte: 2 for a copy).
double stream_gbps(const StreamMethod& m, std::size_t bytes, double passes_per_byte, cudaStream_t stream,
                   const MeasureSettings& settings, TimerKind timer, L2Flusher* flusher) {
  const auto t = measure([&](cudaStream_t s) { m.launch(s, bytes); }, stream, settings,
                         m.events_timer ? TimerKind::events : timer, flusher);
  return rate_per_us(passes_per_byte * double(bytes), t) / 1e3;
}

}  // namespace

Ceilings measure_ceilings(const DeviceInfo& device, TimerKind timer) {
  Ceilings c;
  c.source = "measured";
  c.measured_at = today_utc();
  const ScopedStream owned_stream;  // declared first: outlives the buffers that work on it
  cudaStream_t stream = owned_stream.stream;

  // 1. Tensor-core rates through cuBLASLt, first: the minute of DRAM and FMA ceilings below
  //    warms the GPU, and a warm GPU reaches its power limit, and a lower clock, sooner.
  {
    L2Flusher gemm_flush(static_cast<std::size_t>(device.l2_bytes), FlushKind::dirty);
    const std::pair<const char*, LtGemm> types[] = {
        {"bf16", {CUDA_R_16BF, CUBLAS_COMPUTE_32F, DType::bf16}},
        {"fp16", {CUDA_R_16F, CUBLAS_COMPUTE_32F, DType::fp16}},
        {"tf32", {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, DType::fp32}}};
    for (const auto& [name, type] : types) {
      const GemmCeiling g = gemm_ceiling(type, stream, timer, &gemm_flush);
      c.tensor_tflops[name] = g.tflops;
      if (g.sm_mhz > 0) c.tensor_sm_mhz[name] = g.sm_mhz;
    }
  }

  // 2. DRAM streams over 1 and 2 GiB (less on a small card), in cold mode like the cases they are
  //    the ceiling of, under both flushes. Each ceiling is the best of every method, size and
  //    flush, ERT style: what the GPU can do, not what one configuration happens to reach; a cold
  //    case above it, under either flush, is a bug to find. Every figure is kept for the record.
  L2Flusher dirty(static_cast<std::size_t>(device.l2_bytes), FlushKind::dirty);
  L2Flusher clean(static_cast<std::size_t>(device.l2_bytes), FlushKind::clean);
  const DramBuffers buffers(device, std::size_t{2} << 30, stream);
  const std::size_t max_bytes = buffers.max_bytes;
  auto keep = [](double gbps, const std::string& name, double& best, std::string& best_name,
                 std::map<std::string, double>& all) {
    all[name] = gbps;
    if (gbps > best) {
      best = gbps;
      best_name = name;
    }
  };
  const std::vector<StreamMethod> copies = copy_methods(device, buffers);
  const std::vector<StreamMethod> reads = read_methods(device, buffers);
  const std::vector<StreamMethod> writes = write_methods(device, buffers);
  for (std::size_t bytes : {std::min(std::size_t{1} << 30, max_bytes), max_bytes}) {
    const std::string size = std::to_string(bytes >> 20) + "MiB";
    for (L2Flusher* flusher : {&dirty, &clean}) {
      const std::string tag = " " + size + " " + std::string(to_string(flusher->kind()));
      for (const StreamMethod& m : copies)
        keep(stream_gbps(m, bytes, 2.0, stream, ceiling_settings(Mode::cold), timer, flusher), m.name + tag,
             c.dram_copy_gbps, c.dram_copy_method, c.dram_copy_by_method);
      for (const StreamMethod& m : reads)
        keep(stream_gbps(m, bytes, 1.0, stream, ceiling_settings(Mode::cold), timer, flusher), m.name + tag,
             c.dram_read_gbps, c.dram_read_method, c.dram_read_by_method);
      for (const StreamMethod& m : writes)
        keep(stream_gbps(m, bytes, 1.0, stream, ceiling_settings(Mode::cold), timer, flusher), m.name + tag,
             c.dram_write_gbps, c.dram_write_method, c.dram_write_by_method);
    }
  }
  void* in = buffers.in;
  void* out = buffers.out;
  unsigned* sink = buffers.sink;

  // 2b. L2: a copy whose source and destination (a power of two each, together 1/8 to 1/4 of
  //     the L2) stay in L2, hot; many passes per launch so the ramp of a microseconds-long pass
  //     does not set the figure (one pass alone read 4.3 TB/s on an H100). Best of a few shapes.
  std::size_t half_set = std::size_t{1} << 20;
  while (half_set * 2 <= static_cast<std::size_t>(device.l2_bytes) / 8) half_set *= 2;
  c.l2_working_set_bytes = static_cast<std::int64_t>(2 * half_set);
  constexpr int kL2Passes = 64;
  for (int blocks_per_sm : {2, 4, 8}) {
    const auto t = measure([&](cudaStream_t s) {
      l2_copy<<<device.sm_count * blocks_per_sm, 256, 0, s>>>(
          static_cast<const uint4*>(in), static_cast<uint4*>(out), half_set / 16 - 1, kL2Passes);
    }, stream, ceiling_settings(Mode::hot), timer, nullptr);
    c.l2_copy_gbps = std::max(c.l2_copy_gbps, rate_per_us(2.0 * kL2Passes * double(half_set), t) / 1e3);
  }

  // 3. FP32 FMA rate on the CUDA cores.
  const int fma_blocks = device.sm_count * 16, fma_threads = 256;
  const auto fma = measure([&](cudaStream_t s) {
    ffma_loop<<<fma_blocks, fma_threads, 0, s>>>(reinterpret_cast<float*>(sink), 1.0f);
  }, stream, ceiling_settings(), timer, nullptr);
  const double fmas = double(fma_blocks) * fma_threads * kFmaChains * kFmaIterations;
  c.fp32_tflops = rate_per_us(2 * fmas, fma) / 1e6;
  return c;
}

}  // namespace kwb

namespace kwb {

CopyCheck check_copy_ceiling(const DeviceInfo& device, TimerKind timer) {
  const ScopedStream owned_stream;  // declared first: outlives the buffers that work on it
  cudaStream_t stream = owned_stream.stream;
  CopyCheck check;
  {
    // Every copy method once, at 1 GiB under the cases' default dirty flush, with the quick
    // preset's short warm-up and few samples: about a second, against the minute a full
    // measurement takes.
    L2Flusher dirty(static_cast<std::size_t>(device.l2_bytes), FlushKind::dirty);
    const DramBuffers buffers(device, std::size_t{1} << 30, stream);
    const MeasureSettings settings = quick_cold_settings();
    const std::string tag = " " + std::to_string(buffers.max_bytes >> 20) + "MiB dirty";
    for (const StreamMethod& m : copy_methods(device, buffers)) {
      const double gbps = stream_gbps(m, buffers.max_bytes, 2.0, stream, settings, timer, &dirty);
      if (gbps > check.copy_gbps) {
        check.copy_gbps = gbps;
        check.method = m.name + tag;
      }
    }
  }
  return check;
}

}  // namespace kwb
