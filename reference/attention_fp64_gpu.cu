// attention_fwd's fp64 oracle on the GPU (reference/attention_fp64_gpu.hpp): one warp per query,
// the host oracle's arithmetic (reference/attention.cpp, attention_tile) in its two passes.
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>

#include "reference/attention_fp64_gpu.hpp"
#include "reference/oracle_gpu_support.hpp"

namespace kwb::ref {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kMaxDimsPerLane = 4;  // head_dim up to 128
constexpr const char* kSource = "reference/attention_fp64_gpu.cu";

struct Params {
  AttentionFp64Io io;
  std::int64_t batch, heads, kv_heads, head_dim;
  bool causal;
  std::int64_t window;
  double softcap;
};

// A butterfly: every lane ends with the same sum (a + b == b + a exactly), in a fixed order.
__device__ double warp_sum(double x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// AttentionMask's first_key / end_key (reference/attention.hpp), on the device.
__device__ std::int64_t first_key(const Params& p, std::int64_t i) {
  return p.window > 0 ? (i - p.window + 1 > 0 ? i - p.window + 1 : 0) : 0;
}
__device__ std::int64_t end_key(const Params& p, std::int64_t i, std::int64_t seq) {
  std::int64_t end = seq;
  if (p.causal) end = i + 1;
  else if (p.window > 0) end = i + p.window;
  return end < seq ? end : seq;
}

// The raw score q . k_j * scale of this lane's query and key j (every lane gets it).
__device__ double score_of(const double* qv, const double* kj, int per_lane, int lane, double scale) {
  double dot = 0;
  for (int t = 0; t < per_lane; ++t) dot += qv[t] * kj[lane + 32 * t];
  return scale * warp_sum(dot);
}

__global__ void attention_fp64_kernel(Params p) {
  const std::int64_t n = p.io.n, seq = p.io.seq, h = p.heads, d = p.head_dim;
  const std::int64_t query = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (query >= p.batch * n * h) return;  // the whole warp: one query per warp
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int per_lane = static_cast<int>(d / 32);
  const std::int64_t head = query % h, r = (query / h) % n, b = query / (h * n);
  const std::int64_t kv = head / (h / p.kv_heads), kv_stride = p.kv_heads * d;
  const std::int64_t i = p.io.rows[r];
  const double* k = p.io.k + (b * seq * p.kv_heads + kv) * d;
  const double* v = p.io.v + (b * seq * p.kv_heads + kv) * d;
  const double scale = 1.0 / sqrt(static_cast<double>(d));
  double qv[kMaxDimsPerLane];
  for (int t = 0; t < per_lane; ++t) qv[t] = p.io.q[query * d + lane + 32 * t];
  const std::int64_t lo = first_key(p, i), hi = end_key(p, i, seq);

  // Pass 1: the largest logit.
  double max_logit = -INFINITY;
  for (std::int64_t j = lo; j < hi; ++j) {
    const double s = score_of(qv, k + j * kv_stride, per_lane, lane, scale);
    max_logit = fmax(max_logit, p.softcap > 0 ? p.softcap * tanh(s / p.softcap) : s);
  }
  // Pass 2: the weights, O and the magnitudes' sums (attention_tile's names).
  double sum = 0, sum_pg2 = 0;
  double o[kMaxDimsPerLane] = {}, abs_sum[kMaxDimsPerLane] = {}, v2[kMaxDimsPerLane] = {}, gv[kMaxDimsPerLane] = {};
  for (std::int64_t j = lo; j < hi; ++j) {
    const double s = score_of(qv, k + j * kv_stride, per_lane, lane, scale);
    double l = s, g = s;
    if (p.softcap > 0) {
      const double th = tanh(s / p.softcap);
      l = p.softcap * th;
      g = s * (1 - th * th);
    }
    const double w = exp(l - max_logit);
    const double w2 = w * w, w2g2 = w2 * g * g, w2_1g2 = w2 + w2g2;
    sum += w;
    sum_pg2 += w2g2;
    const double* vj = v + j * kv_stride;
    for (int t = 0; t < per_lane; ++t) {
      const double x = vj[lane + 32 * t];
      o[t] += w * x;
      abs_sum[t] += w * fabs(x);
      v2[t] += w2_1g2 * x * x;
      gv[t] += w2g2 * x;
    }
  }
  const double inv = 1.0 / sum, inv2 = inv * inv;
  for (int t = 0; t < per_lane; ++t) {
    const std::int64_t at = query * d + lane + 32 * t;
    const double out = o[t] * inv;
    p.io.o[at] = out;
    p.io.o_abs_sum[at] = abs_sum[t] * inv;
    const double r2 = (v2[t] - 2 * out * gv[t] + out * out * sum_pg2) * inv2;
    p.io.o_root_sum_sq[at] = sqrt(fmax(r2, 0.0));
  }
  if (lane == 0) {
    const std::int64_t at = (b * h + head) * n + r;
    p.io.lse[at] = max_logit + log(sum);
    p.io.lse_root_sum_sq[at] = sqrt(sum_pg2) * inv;
  }
}

std::atomic<std::int64_t> g_runs{0};

}  // namespace

std::int64_t attention_fp64_gpu_runs() { return g_runs.load(); }

bool attention_fp64_gpu(const AttentionAxes& a, const AttentionFp64Io& io) {
  if (a.head_dim % 32 != 0 || a.head_dim > 32 * kMaxDimsPerLane || a.kv_heads < 1 || a.heads % a.kv_heads != 0)
    return false;  // shapes the op refuses anyway; the CPU says what it makes of them
  const std::int64_t queries = a.batch * io.n * a.heads;
  if (queries <= 0) return true;
  if (!on_oracle_device()) return false;
  const std::int64_t blocks = (queries + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0x7fffffff) return false;
  const auto failed = [](cudaError_t e, const char* step) {
    note_unexpected(kSource, e, step);
    cudaGetLastError();  // cleared: the caller's next check must not see ours
    return false;
  };
  const auto count = [](std::int64_t x) { return static_cast<std::size_t>(x); };
  const std::size_t q_elems = count(queries * a.head_dim), kv_elems = count(a.batch * io.seq * a.kv_heads * a.head_dim),
                    lse_elems = count(a.batch * a.heads * io.n);
  Scratch s;
  Params p{io, a.batch, a.heads, a.kv_heads, a.head_dim, a.causal, a.window, a.softcap};
  double *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr, *o_abs = nullptr, *o_rss = nullptr,
         *lse_rss = nullptr;
  std::int64_t* rows = nullptr;
  cudaError_t e = s.create_stream();
  if (e != cudaSuccess) return failed(e, "create a stream");
  if ((e = s.allocate(&q, q_elems)) != cudaSuccess || (e = s.allocate(&k, kv_elems)) != cudaSuccess ||
      (e = s.allocate(&v, kv_elems)) != cudaSuccess || (e = s.allocate(&rows, count(io.n))) != cudaSuccess ||
      (e = s.allocate(&o, q_elems)) != cudaSuccess || (e = s.allocate(&o_abs, q_elems)) != cudaSuccess ||
      (e = s.allocate(&o_rss, q_elems)) != cudaSuccess || (e = s.allocate(&lse, lse_elems)) != cudaSuccess ||
      (e = s.allocate(&lse_rss, lse_elems)) != cudaSuccess)
    return failed(e, "cudaMalloc");
  const auto up = [&](void* to, const void* from, std::size_t bytes) {
    return cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, s.stream());
  };
  if ((e = up(q, io.q, q_elems * sizeof(double))) != cudaSuccess ||
      (e = up(k, io.k, kv_elems * sizeof(double))) != cudaSuccess ||
      (e = up(v, io.v, kv_elems * sizeof(double))) != cudaSuccess ||
      (e = up(rows, io.rows, count(io.n) * sizeof(std::int64_t))) != cudaSuccess)
    return failed(e, "copy the inputs to the device");
  p.io.q = q, p.io.k = k, p.io.v = v, p.io.rows = rows;
  p.io.o = o, p.io.lse = lse, p.io.o_abs_sum = o_abs, p.io.o_root_sum_sq = o_rss, p.io.lse_root_sum_sq = lse_rss;
  attention_fp64_kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, s.stream()>>>(p);
  if ((e = cudaGetLastError()) != cudaSuccess) return failed(e, "launch the kernel");
  if ((e = cudaStreamSynchronize(s.stream())) != cudaSuccess) return failed(e, "run the kernel");
  // The outputs are only the caller's once every copy has landed: a failure leaves the CPU to
  // compute them all again (it writes every element).
  const auto down = [&](void* to, const void* from, std::size_t bytes) {
    return cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, s.stream());
  };
  if ((e = down(io.o, o, q_elems * sizeof(double))) != cudaSuccess ||
      (e = down(io.o_abs_sum, o_abs, q_elems * sizeof(double))) != cudaSuccess ||
      (e = down(io.o_root_sum_sq, o_rss, q_elems * sizeof(double))) != cudaSuccess ||
      (e = down(io.lse, lse, lse_elems * sizeof(double))) != cudaSuccess ||
      (e = down(io.lse_root_sum_sq, lse_rss, lse_elems * sizeof(double))) != cudaSuccess ||
      (e = cudaStreamSynchronize(s.stream())) != cudaSuccess)
    return failed(e, "copy the results to the host");
  ++g_runs;
  return true;
}

}  // namespace kwb::ref
