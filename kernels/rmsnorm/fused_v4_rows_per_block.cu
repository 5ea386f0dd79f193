// rmsnorm_fwd fused_v4_rows_per_block: v3's 16-byte any-cols rows, several rows per block, a
// warp per row for short rows, a few warps per row (never the whole block) for long ones.
//
// Two gaps of v2/v3: short rows (16384 x 512) stay well short of copy, and one-wave grids
// (1024 x 4096) run slower in v3 than in v2. Both have the same cause: a block
// handles one row, so a short row is a 64-thread block whose time goes to launching the block
// and to block_sum's two __syncthreads (for 1 KiB of data), and at one wave every SM runs its
// ~8 blocks through load -> barrier -> barrier -> store in lock step, with nothing to overlap.
// Here:
//   - A row belongs to a group of `tpr` threads: one warp while the row fits in 8 vectors per
//     lane (cols <= 2048 bf16/fp16, 1024 fp32), else the fewest warps that give <= 4 vectors
//     per lane. A warp-wide row reduces with shuffles only, no barrier at all; a multi-warp row
//     syncs only its own warps (a named barrier, bar.sync id, tpr), so the groups of a block
//     drift apart and one group's loads overlap another's reduction and stores.
//   - Blocks are persistent (grid = resident blocks, each group loops over rows), so short rows
//     stop paying a block launch each, and each thread issues 2-8 independent 16-byte loads.
//   - Any cols as in v3: a scalar head to the row's first 16-byte boundary, a 16-byte body, a
//     scalar tail; the weight loads take the widest access its offset allows.
// Expected: 16384 x 512 bf16 at ~85-90% of copy (a warp per row, 2 vectors per lane, 8 rows
// per 256-thread block in flight); 1024 x 4096 at least as fast as v2 (its 16 MB are
// latency-bound: ~4.3 us of transfer at 3.9 TB/s plus a DRAM round trip); large shapes as v3
// (~98%). Measured: docs/results.md.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/row_in_registers.cuh"
#include "kernels/rmsnorm/rms_row_vectors.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kBlockThreads = 256;  // blocks of short rows; a longer row's group is the block
constexpr int kMaxThreads = 1024;

// Sum over a row group of `tpr` threads (a multiple of 32; groups are warp-aligned). Only the
// group's warps synchronise (named barrier 1 + group; 0 is __syncthreads). `scratch` is double
// buffered by the group's iteration parity, so one barrier per row suffices: a warp that runs
// ahead writes the other buffer and cannot return to this one before all the group's warps
// passed the next barrier, i.e. finished reading this one.
__device__ __forceinline__ float group_sum(float v, int tpr, float (*scratch)[kMaxThreads / 32], int parity) {
  v = warp_sum(v);
  if (tpr == 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, group = threadIdx.x / tpr;
  const int warps = tpr >> 5, first = group * warps;
  if (lane == 0) scratch[parity][warp] = v;
  asm volatile("bar.sync %0, %1;" ::"r"(1 + group), "r"(tpr) : "memory");
  v = lane < warps ? scratch[parity][first + lane] : 0.0f;
  return warp_sum(v);
}

// VPT: 16-byte vectors per thread (compile time: the row stays in registers). MaxThreads: the
// block size bound, 256 unless a long row's group needs more (a 1024 bound caps registers at
// 64, which spills 8 vectors per thread). Up to 4 vectors, 256-thread blocks are held to 64
// registers so that 4 fit per SM: 1024 x 4096 needs 512 blocks, one wave on 132 SMs.
template <class T, int VPT, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads, (VPT <= 4 && MaxThreads == 256) ? 4 : 1)
rmsnorm_fwd_v4(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, std::int64_t rows, int cols,
               int tpr, float eps) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  __shared__ float scratch[2][kMaxThreads / 32];
  const int groups = blockDim.x / tpr;
  const int group = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  const std::int64_t stride = std::int64_t{gridDim.x} * groups;
  int parity = 0;
  for (std::int64_t row = std::int64_t{blockIdx.x} * groups + group; row < rows; row += stride, parity ^= 1) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    // Row layout: [head | body of nvec 16-byte vectors | tail]; y shares x's alignment.
    const int misalign = static_cast<int>(reinterpret_cast<std::uintptr_t>(xr) & 15) / sizeof(T);
    const int head = min(cols, misalign == 0 ? 0 : E - misalign);
    const int nvec = (cols - head) / E;
    const int tail_start = head + nvec * E;
    const int w_align = head == 0 ? 16 : (head * sizeof(T)) & -(head * sizeof(T));  // lowest set bit
    const P* xb = reinterpret_cast<const P*>(xr + head);
    P* yb = reinterpret_cast<P*>(yr + head);

    P v[VPT];  // (VPT, E): this thread's body vectors
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = lane + i * tpr;
      if (idx < nvec) v[i] = xb[idx];
    }
    const int edge_count = head + (cols - tail_start);  // <= 2 (E - 1) < 32 <= tpr
    const int edge_col = lane < head ? lane : tail_start + (lane - head);
    const float edge = lane < edge_count ? to_float(xr[edge_col]) : 0.0f;

    float sum_sq = edge * edge;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      if (lane + i * tpr < nvec) {
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const float f = to_float(v[i].v[e]);
          sum_sq += f * f;
        }
      }
    }
    const float inv_rms = rsqrtf(group_sum(sum_sq, tpr, scratch, parity) * inv_cols + eps);

    if (lane < edge_count) yr[edge_col] = from_float<T>(edge * inv_rms * to_float(w[edge_col]));
    store_scaled_row(yb, v, inv_rms, lane, tpr, nvec,
                     [&](int idx) { return load_pack_aligned<T, E>(w + head + idx * E, w_align); });
  }
}

struct LaunchPlan {
  int vectors_per_thread = 1;
  int tpr = 32;  // threads per row
  int block = kBlockThreads;
};

// Up to 256 vectors: a warp per row with the fewest vectors per lane (1, 2, 4 or 8). Longer
// rows: 4 vectors per thread and as many warps as that takes, up to 1024 threads.
std::optional<LaunchPlan> plan_for(std::int64_t cols, std::size_t elem_bytes) {
  const std::int64_t nvec = cols / (16 / static_cast<std::int64_t>(elem_bytes));  // a misaligned row has fewer
  LaunchPlan p;
  if (nvec <= 32 * 8) {
    while (32 * p.vectors_per_thread < nvec) p.vectors_per_thread *= 2;
    return p;
  }
  p.vectors_per_thread = 4;
  const std::int64_t threads = (nvec + 3) / 4;
  if (threads > kMaxThreads) return std::nullopt;
  p.tpr = static_cast<int>((threads + 31) / 32 * 32);
  // A block of whole groups: 256 threads when a group divides it, else one group.
  p.block = kBlockThreads % p.tpr == 0 ? kBlockThreads : p.tpr;
  return p;
}

template <class T, int VPT, int MaxThreads>
void launch_plan(const LaunchArgs& a, const RowsCols& s, const LaunchPlan& p) {
  auto* kernel = rmsnorm_fwd_v4<T, VPT, MaxThreads>;
  const std::int64_t rows = s.rows;
  const int groups = p.block / p.tpr;
  int device = 0, sms = 1, resident = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, p.block, 0);
  const std::int64_t needed = (rows + groups - 1) / groups;
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(needed, std::int64_t{std::max(resident, 1)} * sms));
  kernel<<<grid, p.block, 0, a.stream>>>(a.tensor<const T>("x"), a.tensor<const T>("weight"),
                                         a.tensor<T>("y"), rows, static_cast<int>(s.cols),
                                         p.tpr, static_cast<float>(kRmsNormEps));
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols s = RowsCols::of(a.shape);
  const auto plan = plan_for(s.cols, sizeof(T));
  if (!plan) return;  // refused before launch; see refuse()
  switch (plan->vectors_per_thread) {
    case 1: launch_plan<T, 1, kBlockThreads>(a, s, *plan); break;
    case 2: launch_plan<T, 2, kBlockThreads>(a, s, *plan); break;
    case 4:
      if (plan->block <= kBlockThreads) launch_plan<T, 4, kBlockThreads>(a, s, *plan);
      else launch_plan<T, 4, kMaxThreads>(a, s, *plan);
      break;
    default: launch_plan<T, 8, kBlockThreads>(a, s, *plan); break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "fused_v4_rows_per_block",
    .role = Role::fused,
    .description = "v3's any-cols 16-byte rows, persistent blocks of several rows: a warp per short row "
                   "(shuffles only), a few warps per long row (named barrier per row group)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const std::int64_t cols = RowsCols::of(s).cols;
          if (cols > 2147483647) return "cols above 2^31-1 do not fit the int column index";
          if (!plan_for(cols, dtype_size(dtype)))
            return "cols too long for 4 vectors per thread at 1024 threads; use fused_v1_row_per_block";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
