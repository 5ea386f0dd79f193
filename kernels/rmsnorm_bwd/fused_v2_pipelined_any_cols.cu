// rmsnorm_bwd fused_v2_pipelined_any_cols: v1 with the next row's loads in flight, independent
// row groups, 16-byte vectors at any cols, and the dweight partials combined in shared memory.
//
// Why v1 stops at 74% of copy (16384 x 4096 bf16): its 1024-thread block (64 registers per
// thread: one block per SM) runs every row group in lockstep (a block-wide __syncthreads per
// row), and each group loads a row, waits, reduces, writes dx, and only then loads the next
// row: the whole SM alternates between a load phase and a reduce/store phase, and DRAM idles in
// the second. v2 changes that:
//  1. Software pipeline: a group issues the loads of its next row (x, dy) before it reduces and
//     writes the current one, so loads are always in flight (2 rows per thread in registers).
//  2. Independent groups: a row spanning several warps is reduced with a named barrier of that
//     group only (bar.sync 1 + group, tpr threads), so groups drift apart and their phases
//     interleave; a warp per row (cols <= 32 vectors per thread's share) needs no barrier.
//  3. Short rows: a warp per row up to 512 columns (32 lanes x 16 elements), 32 rows per block
//     in flight, no barrier at all.
//  4. dweight partials: the groups of a block add their column sums in shared memory in group
//     order (v1 did it in global memory, one L2 round trip per group in series: 32 of them at
//     512 columns), then the block writes one coalesced row of partials.
// Napkin math (bf16 16384 x 4096): 403 MB at a 3031 GB/s copy ceiling = 133 us. Little's law:
// ~3 TB/s x ~1 us DRAM latency = ~3 MB in flight, ~23 KB per SM. v1 already had 64 KB per SM
// in flight during its load phase but none during its reduce/store phase; v2 keeps 1024 threads
// x (x + dy of the next row, 32 bytes) = 32 KB of loads outstanding while the current row is
// reduced and its dx stored, so DRAM sees a continuous stream: expected ~85-90% of copy
// (150-157 us, vs 180) at 4096-8192 columns, of which stage 2 is ~2-3 us (132 partial rows x
// 16 KiB) and the partials ~1% of the traffic. 4100 / 5124: the same as 4096 (16-byte body,
// v1 ran 8-byte vectors: 63%). 16384 columns: ~80-85% (1024 threads per row, sums in shared).
// Short rows, 16384 x 512 (50 MB, 17 us at copy): a warp per row, 32 rows per block, ~4 rows
// per warp over the grid; the fixed ~3-4 us (stage 2 + its launch gap) and the last row's
// imbalance cap it near 80%: expected ~60-70% (v1 29%, which also serialised 32 L2 round trips
// for its partials). 1024 columns (bf16): 4 warps per row, 8 rows per block (2 and 15 at
// vectors_per_thread = 2): ~70-80% (v1 47%).
// 1024 x 4096 (one wave, 25 MB): launch latency and pipeline fill dominate: ~40-50% (v1 20%).
//
// Any cols: a row whose start is not 16-byte aligned is split into a head (up to E - 1
// elements before its first 16-byte boundary), a body of 16-byte vectors and a tail, as in
// rmsnorm fused_v3. A thread must own the same columns on every row to keep its dweight sums in
// registers, and the head length depends on row * cols mod E. The row stride of a group (grid x
// groups) is therefore made a multiple of E / gcd(cols, E): every row a group visits has the
// same head, so its column mapping never changes (different groups may differ; the partials
// are per column). Head and tail elements (at most 2E - 2) belong to one thread each.
// Assumes x, weight, dy and dx start on 16-byte boundaries (cudaMalloc); the launch checks it.
//
// Limits: at most 16 elements per thread (2 bf16/fp16 vectors, 4 fp32 ones) and 1024 threads
// per row: cols < 2049 x E (bf16/fp16 <= 16391, fp32 <= 16387), else refused.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "catalogue/device_types.cuh"
#include "catalogue/registry.hpp"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/rmsnorm_bwd/column_sum.cuh"
#include "kernels/rmsnorm_bwd/fused_v2_plan.hpp"
#include "reference/rmsnorm.hpp"

namespace kwb {
namespace {

using namespace rmsnorm_bwd_v2;

// Synchronises the `count` threads (a multiple of 32) of one row group.
__device__ __forceinline__ void group_barrier(int id, int count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// Sum of two floats over a row group of `tpr` threads. scratch is double buffered by row
// parity: a warp that runs ahead writes the other buffer and cannot come back to this one
// before every warp of its group passed the next barrier (so after all read this one).
__device__ __forceinline__ float2 group_sum2(float a, float b, int tpr, int group, float2 (*scratch)[32], int parity) {
  a = warp_sum(a);
  b = warp_sum(b);
  if (tpr == 32) return make_float2(a, b);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) scratch[parity][warp] = make_float2(a, b);
  group_barrier(1 + group, tpr);
  const int warps = tpr >> 5, first = group * warps;
  const float2 v = lane < warps ? scratch[parity][first + lane] : make_float2(0.f, 0.f);
  return make_float2(warp_sum(v.x), warp_sum(v.y));
}

// E elements of w starting at `p`, whose address is only `align` bytes aligned.
template <class T, int E>
__device__ __forceinline__ Pack<T, E> load_weight(const T* p, int align) {
  Pack<T, E> out;
  if (align >= 16) return *reinterpret_cast<const Pack<T, E>*>(p);
  if (align >= 8 && E * sizeof(T) >= 8) {
    constexpr int N = 8 / sizeof(T);
#pragma unroll
    for (int k = 0; k < E / N; ++k) {
      const auto half = *reinterpret_cast<const Pack<T, N>*>(p + k * N);
#pragma unroll
      for (int e = 0; e < N; ++e) out.v[k * N + e] = half.v[e];
    }
    return out;
  }
#pragma unroll
  for (int e = 0; e < E; ++e) out.v[e] = p[e];
  return out;
}

// A group's fixed row layout: [head | body of nvec 16-byte vectors | tail].
struct RowLayout {
  int head, nvec, tail_start, edge_count, w_align;
};

// One row's share of this thread: VPT body vectors of x and dy, and its head/tail element.
template <class T, int VPT>
struct RowRegs {
  Pack<T, 16 / sizeof(T)> x[VPT], dy[VPT];
  float xe, dye;
};

template <class T, int VPT>
__device__ __forceinline__ void load_row(RowRegs<T, VPT>& r, const T* __restrict__ x, const T* __restrict__ dy,
                                         std::int64_t row, int cols, const RowLayout& L, int lane, int tpr,
                                         int edge_col) {
  using P = Pack<T, 16 / sizeof(T)>;
  const std::int64_t base = row * cols;
  const P* xb = reinterpret_cast<const P*>(x + base + L.head);
  const P* dyb = reinterpret_cast<const P*>(dy + base + L.head);
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = lane + i * tpr;
    if (idx < L.nvec) {
      r.x[i] = xb[idx];
      r.dy[i] = dyb[idx];
    }
  }
  r.xe = 0.f;
  r.dye = 0.f;
  if (lane < L.edge_count) {
    r.xe = to_float(x[base + edge_col]);
    r.dye = to_float(dy[base + edge_col]);
  }
}

// Bound: the launch bound (512 or 1024; 512 leaves 128 registers per thread for VPT * E = 16).
// At 1024 threads (64 registers) two rows of 16 elements plus 16 fp32 column sums spill, so
// there the column sums live in shared memory (16 x 1024 floats = 64 KiB, one slot per thread
// and element: only the owning thread touches it, no barrier).
template <int VPT, int E, int Bound>
constexpr bool kSumsInShared = Bound == 1024 && VPT * E == 16;

// Floats of dynamic shared memory: the block's column sums (several groups) and, when
// kSumsInShared, the per-thread column sums.
constexpr int colsum_floats(int cols, int groups) { return groups > 1 ? (cols + 3) / 4 * 4 : 0; }

template <class T, int VPT, int Bound>
__global__ void __launch_bounds__(Bound, 1)
rmsnorm_bwd_v2(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy, T* __restrict__ dx,
               float* __restrict__ partials, std::int64_t rows, int cols, int tpr, float eps) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  constexpr bool kShared = kSumsInShared<VPT, E, Bound>;
  extern __shared__ float4 dynamic_smem[];  // [colsum | per-thread column sums]
  __shared__ float2 scratch[2][32];
  const int groups = blockDim.x / tpr;
  const int group = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  float* colsum = reinterpret_cast<float*>(dynamic_smem);
  float* sums_s = colsum + colsum_floats(cols, groups) + threadIdx.x;  // [(i * E + e) * blockDim.x]
  const std::int64_t start = std::int64_t{blockIdx.x} * groups + group;
  const std::int64_t stride = std::int64_t{gridDim.x} * groups;  // a multiple of E / gcd(cols, E)

  RowLayout L;
  const int misalign = static_cast<int>((start * cols) % E);  // the same for every row of the group
  L.head = min(cols, misalign == 0 ? 0 : E - misalign);
  L.nvec = (cols - L.head) / E;
  L.tail_start = L.head + L.nvec * E;
  L.edge_count = L.head + (cols - L.tail_start);
  const int head_bytes = L.head * static_cast<int>(sizeof(T));
  L.w_align = L.head == 0 ? 16 : (head_bytes & -head_bytes);  // lowest set bit
  const int edge_col = lane < L.head ? lane : L.tail_start + (lane - L.head);
  const float inv_cols = 1.0f / static_cast<float>(cols);

  float acc[VPT][E];  // this thread's dweight columns, summed over the group's rows
#pragma unroll
  for (int i = 0; i < VPT; ++i)
#pragma unroll
    for (int e = 0; e < E; ++e) {
      if constexpr (kShared) sums_s[(i * E + e) * blockDim.x] = 0.f;
      else acc[i][e] = 0.f;
    }
  float edge_acc = 0.f;

  RowRegs<T, VPT> cur;
  if (start < rows) load_row(cur, x, dy, start, cols, L, lane, tpr, edge_col);
  int parity = 0;
  for (std::int64_t row = start; row < rows; row += stride, parity ^= 1) {  // uniform over the group
    // The next row's loads go out first: they are in flight while this row is reduced and written.
    RowRegs<T, VPT> next;
    if (row + stride < rows) load_row(next, x, dy, row + stride, cols, L, lane, tpr, edge_col);

    const float we = lane < L.edge_count ? to_float(w[edge_col]) : 0.f;
    float sum_sq = cur.xe * cur.xe, sum_gx = we * cur.dye * cur.xe;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = lane + i * tpr;
      if (idx < L.nvec) {
        const P wp = load_weight<T, E>(w + L.head + idx * E, L.w_align);
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const float xf = to_float(cur.x[i].v[e]);
          sum_sq += xf * xf;
          sum_gx += to_float(wp.v[e]) * to_float(cur.dy[i].v[e]) * xf;
        }
      }
    }
    const float2 sums = group_sum2(sum_sq, sum_gx, tpr, group, scratch, parity);
    const float rstd = rsqrtf(sums.x * inv_cols + eps);
    const float mean_gxhat = sums.y * rstd * inv_cols;  // mean over the row of w * dy * xhat

    const std::int64_t base = row * cols;
    P* dxb = reinterpret_cast<P*>(dx + base + L.head);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = lane + i * tpr;
      if (idx < L.nvec) {
        const P wp = load_weight<T, E>(w + L.head + idx * E, L.w_align);
        P out;
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const float xhat = to_float(cur.x[i].v[e]) * rstd;
          const float d = to_float(cur.dy[i].v[e]);
          out.v[e] = from_float<T>(rstd * (to_float(wp.v[e]) * d - xhat * mean_gxhat));
          if constexpr (kShared) sums_s[(i * E + e) * blockDim.x] += d * xhat;
          else acc[i][e] += d * xhat;
        }
        dxb[idx] = out;
      }
    }
    if (lane < L.edge_count) {
      const float xhat = cur.xe * rstd;
      dx[base + edge_col] = from_float<T>(rstd * (we * cur.dye - xhat * mean_gxhat));
      edge_acc += cur.dye * xhat;
    }
    cur = next;
  }

  // The block's row of partials. Several groups: group 0 writes the shared row, the others add
  // in group order, then one coalesced copy. Every group covers every column (head + body + tail).
  float* part = partials + std::int64_t{blockIdx.x} * cols;
  float* dst = groups > 1 ? colsum : part;
  for (int g = 0; g < groups; ++g) {
    if (group == g) {
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const int idx = lane + i * tpr;
        if (idx < L.nvec) {
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const int c = L.head + idx * E + e;
            const float v = kShared ? sums_s[(i * E + e) * blockDim.x] : acc[i][e];
            dst[c] = g == 0 ? v : dst[c] + v;
          }
        }
      }
      if (lane < L.edge_count) dst[edge_col] = g == 0 ? edge_acc : dst[edge_col] + edge_acc;
    }
    if (groups > 1) __syncthreads();
  }
  if (groups > 1)
    for (int c = threadIdx.x; c < cols; c += blockDim.x) part[c] = colsum[c];
}

std::size_t workspace_bytes(const Shape& s, DType) {
  return static_cast<std::size_t>(workspace_parts(s.at("rows"))) * static_cast<std::size_t>(s.at("cols")) * 4;
}

template <class T, int VPT, int Bound>
int launch_rows(const LaunchArgs& a, const LaunchPlan& p, std::int64_t rows, int cols, std::int64_t threads_per_sm) {
  auto* kernel = rmsnorm_bwd_v2<T, VPT, Bound>;
  constexpr int E = 16 / sizeof(T);
  const int smem = 4 * (colsum_floats(cols, p.groups) + (kSumsInShared<VPT, E, Bound> ? VPT * E * p.block : 0));
  if (smem > 48 * 1024) cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int device = 0, sms = 1, resident = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, p.block, smem);
  const int wanted = std::max<int>(1, static_cast<int>(threads_per_sm / p.block));
  const std::int64_t blocks_per_sm = std::max(1, std::min(resident, wanted));
  const auto grid = static_cast<int>(parts_for(rows, cols, sizeof(T), p, blocks_per_sm * sms));
  kernel<<<grid, p.block, smem, a.stream>>>(static_cast<const T*>(a.tensors[0]), static_cast<const T*>(a.tensors[1]),
                                            static_cast<const T*>(a.tensors[2]), static_cast<T*>(a.tensors[3]),
                                            static_cast<float*>(a.workspace), rows, cols, p.tpr,
                                            static_cast<float>(kRmsNormEps));
  return grid;
}

template <class T, int Bound>
int dispatch_vpt(const LaunchArgs& a, const LaunchPlan& p, std::int64_t rows, int cols, std::int64_t per_sm) {
  if (p.vectors_per_thread == 1) return launch_rows<T, 1, Bound>(a, p, rows, cols, per_sm);
  if constexpr (sizeof(T) == 4) {
    if (p.vectors_per_thread == 4) return launch_rows<T, 4, Bound>(a, p, rows, cols, per_sm);
  }
  return launch_rows<T, 2, Bound>(a, p, rows, cols, per_sm);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

int tunable_or(const LaunchArgs& a, const char* name, int fallback) {
  return a.tunables ? static_cast<int>(a.tunable(name)) : fallback;
}

void launch(const LaunchArgs& a) {
  const std::int64_t rows = a.shape.at("rows");
  const auto cols = static_cast<int>(a.shape.at("cols"));
  if (!aligned16(a.tensors[0]) || !aligned16(a.tensors[2]) || !aligned16(a.tensors[3]) || !aligned16(a.tensors[1]))
    throw std::invalid_argument("fused_v2_pipelined_any_cols needs 16-byte aligned x, weight, dy and dx");
  const int vpt_pref = tunable_or(a, "vectors_per_thread", 1);
  const int block_pref = tunable_or(a, "block_threads", 1024);
  const int per_sm = tunable_or(a, "threads_per_sm", 2048);
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto plan = plan_for(cols, sizeof(T), vpt_pref, block_pref);
    if (!plan) return;  // refused before launch; see refuse()
    const int parts = plan->block <= 512 ? dispatch_vpt<T, 512>(a, *plan, rows, cols, per_sm)
                                         : dispatch_vpt<T, 1024>(a, *plan, rows, cols, per_sm);
    launch_sum_parts_by_column(static_cast<const float*>(a.workspace), parts, cols,
                               static_cast<float*>(a.tensors[4]), a.stream);
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_bwd",
    .name = "fused_v2_pipelined_any_cols",
    .role = Role::fused,
    .description = "v1 with the next row's x, dy loads issued before the current row's reduction, row groups "
                   "synchronised by named barriers (a warp per short row), 16-byte vectors at any cols (head/tail), "
                   "block partials combined in shared memory, then a deterministic column sum: 2 launches",
    .launch = launch,
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          if (!plan_for(s.at("cols"), dtype_size(dtype), 1, 1024))
            return "row does not fit in registers at 1024 threads x 16 elements: cols above 16391 (fp32: 16387); "
                   "use baseline_eager_23_launches";
          return std::nullopt;
        },
    .workspace_bytes = workspace_bytes,
    .tunables = {{"vectors_per_thread", {1, 2}, "16-byte vectors of x and dy per thread per row (rows needing more get more)"},
                 {"block_threads", {1024, 512}, "threads per block aimed for (several row groups per block)"},
                 {"threads_per_sm", {2048, 1024}, "resident threads per SM the grid aims for (fewer: fewer partials)"}},
});

}  // namespace
}  // namespace kwb
