// qk_norm_bwd fused_v1_group_per_head_vec16: dq, dk and both weight gradients from one pass over
// q, k, dq_out, dk_out, then a small deterministic stage 2 for the weight gradients.
//
// Launch 1 (persistent grid, one wave): as the forward, a group of `lanes` threads holds one head
// vector (x and dy, 16-byte loads) in registers; it recomputes r = rsqrt(sum x^2 + eps) and the
// dot g.x (g = dy * w) with xor shuffles inside the group and writes
// dx = r * g - x * r^3 * (g.x). Each lane keeps fp32 sums of dy * x * r for its own elements
// over the head vectors its group visits (grid-stride, Q's then K's); at the end the groups of
// a warp are summed by shuffles, the warps of a block through shared memory in a fixed order,
// and each block writes one fp32 row of partials per tensor. Launch 2 sums the partial rows of
// each column in a fixed order (32 columns x 32 part-strides per block, then the 32 in order): the
// result does not depend on scheduling, and it stays a few microseconds where sum_partials'
// one thread per column would walk ~1000 rows serially. No float atomics anywhere.
//
// Napkin math at tokens 16384, heads 32, kv_heads 8, head_dim 128, bf16: 3 * 84 M elements * 2 B
// = 503 MB (q, k, dq_out, dk_out read, dq, dk written), ~168 us at 3.0 TB/s on H100; the
// partials (~1000 x 256 floats, 1 MB) are noise. Expected: >= 80% of the copy ceiling (the
// forward's kernel with a second input stream, a second shuffle sum and a short stage 2).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/qk_norm_fwd/head_vector_launch.cuh"
#include "reference/qk_norm.hpp"

namespace kwb {
namespace {

constexpr int kMaxParts = 4096;           // blocks of launch 1 (rows of partials) at most
constexpr int kWarps = kQkThreads / 32;
constexpr std::size_t kMaxSharedBytes = 48 * 1024;

// Partials: [gridDim.x][2][head_dim] fp32 (Q's row then K's row per block).
template <class T, int E, int A>
__global__ void __launch_bounds__(kQkThreads)
qk_norm_bwd_v1(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ q_weight,
               const T* __restrict__ k_weight, const T* __restrict__ dq_out, const T* __restrict__ dk_out,
               T* __restrict__ dq, T* __restrict__ dk, float* __restrict__ partials, std::int64_t q_vectors,
               std::int64_t k_vectors, int head_dim, int lanes, float eps) {
  using P = Pack<T, E>;
  extern __shared__ float warp_sums[];  // (kWarps, head_dim)
  const int lane = threadIdx.x & (lanes - 1);
  const int warp = threadIdx.x >> 5;
  const int groups_per_warp = 32 / lanes;
  const int groups_per_block = blockDim.x / lanes;
  // Warp-uniform loop bounds keep every lane of a warp in the shuffles.
  const std::int64_t warp_first = blockIdx.x * std::int64_t{groups_per_block} + warp * groups_per_warp;
  const std::int64_t my_offset = (threadIdx.x & 31) / lanes;
  const std::int64_t stride = std::int64_t{gridDim.x} * groups_per_block;
  const int accesses = head_dim / E;

  for (int which = 0; which < 2; ++which) {
    const bool is_q = which == 0;
    const P* x = reinterpret_cast<const P*>(is_q ? q : k);
    const P* dy = reinterpret_cast<const P*>(is_q ? dq_out : dk_out);
    const P* w = reinterpret_cast<const P*>(is_q ? q_weight : k_weight);
    P* dx = reinterpret_cast<P*>(is_q ? dq : dk);
    const std::int64_t vectors = is_q ? q_vectors : k_vectors;

    float acc[A][E];  // this lane's sums of dy * x * r
    P wv[A];          // this lane's slots of the weight
#pragma unroll
    for (int a = 0; a < A; ++a) {
      const int j = lane + a * lanes;
      if (j < accesses) wv[a] = w[j];
#pragma unroll
      for (int e = 0; e < E; ++e) acc[a][e] = 0;
    }

    for (std::int64_t base = warp_first; base < vectors; base += stride) {
      const std::int64_t v = base + my_offset;
      const bool valid = v < vectors;
      const std::int64_t first = v * accesses;  // in accesses
      P xr[A], dyr[A];  // (A, E)
      float sum_sq = 0, dot = 0;
#pragma unroll
      for (int a = 0; a < A; ++a) {
        const int j = lane + a * lanes;
        if (valid && j < accesses) {
          xr[a] = x[first + j];
          dyr[a] = dy[first + j];
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const float xf = to_float(xr[a].v[e]);
            sum_sq += xf * xf;
            dot += to_float(dyr[a].v[e]) * to_float(wv[a].v[e]) * xf;
          }
        }
      }
      for (int o = lanes / 2; o > 0; o >>= 1) {
        sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, o);
        dot += __shfl_xor_sync(0xffffffffu, dot, o);
      }
      const float r = rsqrtf(sum_sq + eps);
      const float c = r * r * r * dot;
#pragma unroll
      for (int a = 0; a < A; ++a) {
        const int j = lane + a * lanes;
        if (valid && j < accesses) {
          P out;
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const float xf = to_float(xr[a].v[e]), dyf = to_float(dyr[a].v[e]);
            out.v[e] = from_float<T>(r * dyf * to_float(wv[a].v[e]) - xf * c);
            acc[a][e] += dyf * xf * r;
          }
          dx[first + j] = out;
        }
      }
    }

    // Groups of a warp hold the same elements: sum them (xor offsets at and above `lanes`).
#pragma unroll
    for (int a = 0; a < A; ++a)
#pragma unroll
      for (int e = 0; e < E; ++e)
        for (int o = lanes; o < 32; o <<= 1) acc[a][e] += __shfl_xor_sync(0xffffffffu, acc[a][e], o);
    if ((threadIdx.x & 31) < lanes) {
#pragma unroll
      for (int a = 0; a < A; ++a) {
        const int j = lane + a * lanes;
        if (j < accesses)
#pragma unroll
          for (int e = 0; e < E; ++e) warp_sums[warp * head_dim + j * E + e] = acc[a][e];
      }
    }
    __syncthreads();
    float* row = partials + (std::int64_t{blockIdx.x} * 2 + which) * head_dim;
    for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
      float sum = 0;
      for (int w_i = 0; w_i < kWarps; ++w_i) sum += warp_sums[w_i * head_dim + d];
      row[d] = sum;
    }
    __syncthreads();  // warp_sums is written again for K
  }
}

// dq_weight[c] / dk_weight[c - head_dim] = sum over parts of partials[p][c], c < 2 * head_dim.
// Block (32 columns, 32 part strides); each thread's stride sum, then the 32 in fixed order.
constexpr int kStrides = 32;
__global__ void __launch_bounds__(32 * kStrides)
sum_weight_partials(const float* __restrict__ partials, int parts, int head_dim, float* __restrict__ dq_weight,
                    float* __restrict__ dk_weight) {
  __shared__ float sums[kStrides][32];  // (part stride, column)
  const int columns = 2 * head_dim;
  const int col = blockIdx.x * 32 + (threadIdx.x & 31);
  const int stride_index = threadIdx.x >> 5;
  float s = 0;
  if (col < columns)
    for (int p = stride_index; p < parts; p += kStrides) s += partials[std::int64_t{p} * columns + col];
  sums[stride_index][threadIdx.x & 31] = s;
  __syncthreads();
  if (stride_index == 0 && col < columns) {
    float total = 0;
    for (int i = 0; i < kStrides; ++i) total += sums[i][threadIdx.x];
    if (col < head_dim) dq_weight[col] = total;
    else dk_weight[col - head_dim] = total;
  }
}

std::size_t shared_bytes(std::int64_t head_dim) { return kWarps * static_cast<std::size_t>(head_dim) * 4; }

std::int64_t parts_needed(const QkNormDims& d, int lanes) {
  const std::int64_t vectors = d.max_vectors();
  const std::int64_t groups = kQkThreads / lanes;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxParts, (vectors + groups - 1) / groups));
}

// The tensors of one case, in the kernel's order.
template <class T>
struct Tensors {
  const T *q, *k, *q_weight, *k_weight, *dq_out, *dk_out;
  T *dq, *dk;
  float *dq_weight, *dk_weight;
};

template <class T, int E, int A>
void launch_plan(const LaunchArgs& a, const QkNormDims& d, const Tensors<T>& t, const HeadVectorPlan& plan) {
  const auto kernel = qk_norm_bwd_v1<T, E, A>;
  const std::size_t smem = shared_bytes(d.head_dim);
  // One wave: as many blocks as fit on the device at once, no more than there is work for.
  int device = 0, sms = 1, per_sm = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kQkThreads, smem);
  const int parts = static_cast<int>(std::min<std::int64_t>(parts_needed(d, plan.lanes),
                                                            std::max(1, sms * std::max(1, per_sm))));
  auto* partials = static_cast<float*>(a.workspace);
  kernel<<<parts, kQkThreads, smem, a.stream>>>(t.q, t.k, t.q_weight, t.k_weight, t.dq_out, t.dk_out, t.dq, t.dk,
                                                partials, d.q_vectors(), d.k_vectors(), static_cast<int>(d.head_dim),
                                                plan.lanes, static_cast<float>(kQkNormEps));
  const int columns = static_cast<int>(2 * d.head_dim);
  sum_weight_partials<<<(columns + 31) / 32, 32 * kStrides, 0, a.stream>>>(partials, parts, static_cast<int>(d.head_dim),
                                                                  t.dq_weight, t.dk_weight);
}

template <class T>
void launch(const LaunchArgs& a) {
  const QkNormDims d = QkNormDims::of(a.shape);
  const Tensors<T> t{a.tensor<const T>("q"),        a.tensor<const T>("k"),      a.tensor<const T>("q_weight"),
                     a.tensor<const T>("k_weight"), a.tensor<const T>("dq_out"), a.tensor<const T>("dk_out"),
                     a.tensor<T>("dq"),             a.tensor<T>("dk"),           a.tensor<float>("dq_weight"),
                     a.tensor<float>("dk_weight")};
  const std::uintptr_t bits = pointer_bits({t.q, t.k, t.q_weight, t.k_weight, t.dq_out, t.dk_out, t.dq, t.dk});
  with_head_vector_plan<T>(d.head_dim, bits, [&](auto elems, auto slots, const HeadVectorPlan& plan) {
    launch_plan<T, decltype(elems)::value, decltype(slots)::value>(a, d, t, plan);
  });
}

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const QkNormDims d = QkNormDims::of(s);
  const auto plan = plan_head_vectors(d.head_dim, dtype_size(dtype));
  // Parts grow with the lanes per head vector (fewer groups per block, more blocks), and the
  // launch may pick narrower accesses (more lanes) if pointers were misaligned: size for the
  // most parts any plan can use, a warp per vector. (Sizing for one lane under-allocated: the
  // blocks past it wrote out of bounds, which compute-sanitizer memcheck found on an H100.)
  const std::int64_t parts = plan ? parts_needed(d, 32) : 1;
  return static_cast<std::size_t>(parts) * 2 * static_cast<std::size_t>(d.head_dim) * 4;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "qk_norm_bwd",
    .name = "fused_v1_group_per_head_vec16",
    .role = Role::fused,
    .description = "dq, dk and per-block weight-gradient partials of Q and K in one launch (a group of up to "
                   "32 lanes per head vector, 16-byte loads), then a fixed-order stage 2",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const std::int64_t head_dim = QkNormDims::of(s).head_dim;
          if (!plan_head_vectors(head_dim, dtype_size(dtype))) return head_dim_reach_reason();
          if (shared_bytes(head_dim) > kMaxSharedBytes)
            return "head_dim above 1536: the per-warp weight-gradient sums exceed 48 KB of shared memory";
          return std::nullopt;
        },
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
