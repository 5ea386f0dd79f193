// rmsnorm_bwd fused_v1_persistent_vec16: dx in one pass, dweight from per-block partials.
//
// Launch 1 (persistent): a grid of a few blocks per SM; each block holds `groups` row groups of
// `tpr` threads and loops over the rows (row = (it * gridDim.x + blockIdx.x) * groups + group).
// A thread always owns the same columns (vectors lane, lane + tpr, ...), so its share of
// dweight = sum_rows dy * xhat stays in registers for the whole kernel; x and dy of a row are
// loaded once with 16-byte vectors into registers, both row sums (x^2 and w*dy*x) are reduced
// together (warp shuffles, plus one __syncthreads when a row spans several warps), and dx is
// written from registers. At the end the groups of a block add their column sums into the
// block's row of fp32 partials in the workspace, in group order.
// Launch 2: each column's partials summed in a fixed order (32 slices of the parts per column,
// then the 32 slice sums in order): no atomics, the same bits on every run of a given GPU.
//
// Napkin math (bf16 16384 x 4096): x, dy read and dx written = 3 x 128 MiB, weight 8 KiB,
// dweight 16 KiB: 403 MB, 133 us at a ~3030 GB/s copy ceiling (H100). The partials add
// parts x cols x 4 bytes twice (264 x 16 KiB x 2 = 8.7 MB, +2%) and a ~3 us second launch.
// Weight is re-read per row from L1/L2, never from DRAM. Expected: ~85-90% of copy at
// 4096-8192 columns (>= the 80% target); short rows (512) lower, ~75-85%: a warp per row with
// 2 vectors of x and dy per lane keeps 64 bytes per thread in flight, and each row's reduction
// stalls its warp with nothing else of its own to load.
//
// Any cols: the vector width V is the widest (16 bytes, else half of it, else one element) that
// divides cols, so every row starts on a vector boundary and a thread's columns never move
// between rows (cols = 4100 in bf16 runs 8-byte vectors). At most 16 elements per thread
// (8 with vectors of 1 or 2 elements; registers: x, dy and the fp32 column sums), 1024 threads
// per row: wider rows are refused (cols > 16384; cols > 8192 when odd, in fp32 when not a
// multiple of 4).
#include <algorithm>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kMaxParts = 1024;           // grid cap, so the workspace is known before launch
// VPT * V: x, dy and fp32 column sums in registers, under the 64 registers of a 1024-thread
// block: 16 elements (a few bytes spill in fp32 and bf16) with vectors of 4 or 8 elements, 8
// with vectors of 1 or 2 (more addresses per element: 16 spill hundreds of bytes).
constexpr int kMaxElemsPerThread = 16, kMaxElemsPerThreadNarrow = 8;
constexpr int kGroupThreadsTarget = 512;  // row groups per block: about this many threads

// Sum of two floats over a row group of `tpr` threads (a multiple of 32). Every group of the
// block calls it in the same iteration (the __syncthreads is block-wide); `scratch` is double
// buffered by iteration parity, so one barrier per row suffices: a warp that runs ahead writes
// the other buffer, and cannot come back to this one before every warp passed the next barrier.
__device__ __forceinline__ float2 group_sum2(float a, float b, int tpr, float2 (*scratch)[32], int parity) {
  a = warp_sum(a);
  b = warp_sum(b);
  if (tpr == 32) return make_float2(a, b);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) scratch[parity][warp] = make_float2(a, b);
  __syncthreads();
  const int warps = tpr >> 5, first = (threadIdx.x / tpr) * warps;
  const float2 v = lane < warps ? scratch[parity][first + lane] : make_float2(0.f, 0.f);
  return make_float2(warp_sum(v.x), warp_sum(v.y));
}

// V: elements per vector; VPT: vectors per thread (compile time: the row stays in registers).
template <class T, int V, int VPT>
__global__ void __launch_bounds__(kMaxThreads)
rmsnorm_bwd_v1(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy, T* __restrict__ dx,
               float* __restrict__ partials, std::int64_t rows, int cols, int tpr, float eps) {
  using P = Pack<T, V>;
  __shared__ float2 scratch[2][32];
  const int groups = blockDim.x / tpr;
  const int group = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const int nvec = cols / V;
  const P* wv = reinterpret_cast<const P*>(w);
  const float inv_cols = 1.0f / static_cast<float>(cols);

  float acc[VPT][V];  // (VPT, V): this thread's dweight columns, summed over its rows
#pragma unroll
  for (int i = 0; i < VPT; ++i)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[i][e] = 0.f;

  const std::int64_t row_stride = std::int64_t{gridDim.x} * groups;
  const std::int64_t iterations = (rows + row_stride - 1) / row_stride;  // the same for every thread
  for (std::int64_t it = 0; it < iterations; ++it) {
    const std::int64_t row = (it * gridDim.x + blockIdx.x) * groups + group;
    const bool valid = row < rows;
    const P* xr = reinterpret_cast<const P*>(x + row * cols);
    const P* dyr = reinterpret_cast<const P*>(dy + row * cols);
    P xv[VPT], dyv[VPT];  // (VPT, V) each; weight is re-read from L1 in each pass (registers)
    float sum_sq = 0.f, sum_gx = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = lane + i * tpr;
      if (valid && idx < nvec) {
        xv[i] = xr[idx];
        dyv[i] = dyr[idx];
        const P wp = wv[idx];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float xf = to_float(xv[i].v[e]);
          sum_sq += xf * xf;
          sum_gx += to_float(wp.v[e]) * to_float(dyv[i].v[e]) * xf;
        }
      }
    }
    const float2 sums = group_sum2(sum_sq, sum_gx, tpr, scratch, static_cast<int>(it & 1));
    if (!valid) continue;  // after the barrier: every thread reaches it each iteration
    const float rstd = rsqrtf(sums.x * inv_cols + eps);
    const float mean_gxhat = sums.y * rstd * inv_cols;  // mean over the row of w * dy * xhat
    P* dxr = reinterpret_cast<P*>(dx + row * cols);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = lane + i * tpr;
      if (idx < nvec) {
        const P wp = wv[idx];
        P out;
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float xhat = to_float(xv[i].v[e]) * rstd;
          const float d = to_float(dyv[i].v[e]);
          out.v[e] = from_float<T>(rstd * (to_float(wp.v[e]) * d - xhat * mean_gxhat));
          acc[i][e] += d * xhat;
        }
        dxr[idx] = out;
      }
    }
  }

  // The block's row of partials: group 0 writes, the others add in group order. __syncthreads
  // makes each group's global writes visible to the next group of the same block.
  float* part = partials + std::int64_t{blockIdx.x} * cols;
  for (int g = 0; g < groups; ++g) {
    if (group == g) {
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const int idx = lane + i * tpr;
        if (idx < nvec) {
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const int c = idx * V + e;
            part[c] = g == 0 ? acc[i][e] : part[c] + acc[i][e];
          }
        }
      }
    }
    if (groups > 1) __syncthreads();
  }
}

// dweight[c] = sum over p of partials[p, c]: a block covers 32 columns with 32 slices of the
// parts (slice s sums parts s, s + 32, ... in order), then one thread per column adds the 32
// slice sums in order. Coalesced 128-byte rows, and 32x the parallelism of a loop per column.
__global__ void __launch_bounds__(1024) sum_parts_by_column(const float* __restrict__ partials, int parts, int cols,
                                                            float* __restrict__ out) {
  __shared__ float slice_sums[32][33];  // (slice, column), padded against bank conflicts
  const int c = blockIdx.x * 32 + threadIdx.x;
  float sum = 0.f;
  if (c < cols)
    for (int p = threadIdx.y; p < parts; p += 32) sum += partials[std::int64_t{p} * cols + c];
  slice_sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.f;
    for (int s = 0; s < 32; ++s) total += slice_sums[s][threadIdx.x];
    out[c] = total;
  }
}

struct LaunchPlan {
  int vector_elems = 1;       // V
  int vectors_per_thread = 1;  // VPT
  int tpr = 32;                // threads per row group
  int groups = 1;              // row groups per block
};

std::optional<LaunchPlan> plan_for(std::int64_t cols, std::size_t elem_bytes) {
  const int full = static_cast<int>(16 / elem_bytes);
  LaunchPlan p;
  p.vector_elems = cols % full == 0 ? full : cols % (full / 2) == 0 ? full / 2 : 1;
  const int vpt_max = (p.vector_elems >= 4 ? kMaxElemsPerThread : kMaxElemsPerThreadNarrow) / p.vector_elems;
  const std::int64_t nvec = cols / p.vector_elems;
  auto threads = [&] { return (nvec + p.vectors_per_thread - 1) / p.vectors_per_thread; };
  p.vectors_per_thread = nvec >= 64 ? std::min(2, vpt_max) : 1;  // 2 vectors: more bytes in flight
  // Up to 512 threads before 4 vectors per thread (fp32 4 vectors x 4 spills registers).
  while (threads() > kGroupThreadsTarget && p.vectors_per_thread < std::min(4, vpt_max)) p.vectors_per_thread *= 2;
  while (threads() > kMaxThreads && p.vectors_per_thread < vpt_max) p.vectors_per_thread *= 2;
  if (threads() > kMaxThreads) return std::nullopt;
  p.tpr = static_cast<int>((threads() + 31) / 32 * 32);
  p.groups = std::max(1, kGroupThreadsTarget / p.tpr);
  return p;
}

std::int64_t parts_cap(std::int64_t rows, const LaunchPlan& p) {
  return std::min<std::int64_t>((rows + p.groups - 1) / p.groups, kMaxParts);
}

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  const auto plan = plan_for(cols, dtype_size(dtype));
  if (!plan) return 0;
  return static_cast<std::size_t>(parts_cap(rows, *plan)) * static_cast<std::size_t>(cols) * 4;
}

template <class T, int V, int VPT>
int launch_rows(const LaunchArgs& a, const LaunchPlan& p, std::int64_t rows, int cols) {
  auto* kernel = rmsnorm_bwd_v1<T, V, VPT>;
  const int threads = p.tpr * p.groups;
  int device = 0, sms = 1, resident = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, 0);
  const std::int64_t per_sm = a.tunables ? a.tunable("threads_per_sm") : 1024;
  const int wanted = std::max<int>(1, static_cast<int>(per_sm / threads));
  const std::int64_t blocks_per_sm = std::max(1, std::min(resident, wanted));
  const int grid = static_cast<int>(std::min<std::int64_t>(parts_cap(rows, p), blocks_per_sm * sms));
  kernel<<<grid, threads, 0, a.stream>>>(a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<const T>("dy"),
                                         a.tensor<T>("dx"), static_cast<float*>(a.workspace), rows, cols, p.tpr,
                                         static_cast<float>(kRmsNormEps));
  return grid;
}

// The (V, VPT) instantiations plan_for can ask for: V * VPT <= 16 with V >= 4 (bf16/fp16 16-byte
// vectors: VPT 1-2; 8-byte: 1-4; fp32 16-byte: 1-4), <= 8 with V of 2 (fp32) or 1.
template <class T>
int dispatch(const LaunchArgs& a, const LaunchPlan& p, std::int64_t rows, int cols) {
  constexpr int E = 16 / sizeof(T);
  const int vpt = p.vectors_per_thread;
  if (p.vector_elems == E) {
    if (vpt == 1) return launch_rows<T, E, 1>(a, p, rows, cols);
    if constexpr (E == 4) {
      if (vpt == 4) return launch_rows<T, E, 4>(a, p, rows, cols);
    }
    return launch_rows<T, E, 2>(a, p, rows, cols);
  }
  if (p.vector_elems == E / 2) {
    if (vpt == 1) return launch_rows<T, E / 2, 1>(a, p, rows, cols);
    if (vpt == 4) return launch_rows<T, E / 2, 4>(a, p, rows, cols);
    return launch_rows<T, E / 2, 2>(a, p, rows, cols);
  }
  switch (vpt) {
    case 1: return launch_rows<T, 1, 1>(a, p, rows, cols);
    case 2: return launch_rows<T, 1, 2>(a, p, rows, cols);
    case 4: return launch_rows<T, 1, 4>(a, p, rows, cols);
    default: return launch_rows<T, 1, 8>(a, p, rows, cols);
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols s = RowsCols::of(a.shape);
  const auto cols = static_cast<int>(s.cols);
  const auto plan = plan_for(cols, sizeof(T));
  if (!plan) return;  // refused before launch; see refuse()
  const int parts = dispatch<T>(a, *plan, s.rows, cols);
  const dim3 block(32, 32);
  sum_parts_by_column<<<static_cast<unsigned>((cols + 31) / 32), block, 0, a.stream>>>(
      static_cast<const float*>(a.workspace), parts, cols, a.tensor<float>("dweight"));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_bwd",
    .name = "fused_v1_persistent_vec16",
    .role = Role::fused,
    .description = "persistent blocks loop over rows in registers (16-byte vectors), dweight summed per thread, "
                   "then a deterministic sum of per-block partials: 2 launches",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          if (!plan_for(RowsCols::of(s).cols, dtype_size(dtype)))
            return "row does not fit in registers at 1024 threads: cols above 16384, or above 8192 when cols "
                   "is odd (in fp32: not a multiple of 4); use baseline_eager_23_launches";
          return std::nullopt;
        },
    .workspace_bytes = workspace_bytes,
    .tunables = {{"threads_per_sm", {1024, 2048, 512}, "resident threads per SM the grid aims for (fewer: fewer partials)"}},
});

}  // namespace
}  // namespace kwb
